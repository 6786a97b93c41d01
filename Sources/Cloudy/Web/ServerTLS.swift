import NIOCore
import NIOSSL
import NIOTLS

#if canImport(Glibc)
    import Glibc
#endif

/// The TLS side of a web config, ready for connections: one `NIOSSLContext` (built once per
/// read of the web config, shared by every connection) and the client-certificate policy.
/// Go's five client-auth policies on BoringSSL:
/// - NoClientCert: no certificate asked;
/// - RequestClientCert: asked, not required, accepted as sent;
/// - RequireAnyClientCert: required, accepted as sent;
/// - VerifyClientCertIfGiven: asked, verified when sent against the client CA (without one:
///   the system's trust store);
/// - RequireAndVerifyClientCert: required and verified.
/// `client_allowed_sans` is checked once the handshake has verified the chain (`ClientSANCheck`).
final class ServerTLS: Sendable {
    let context: NIOSSLContext
    let clientAuth: WebConfig.ClientAuth
    let allowedSANs: [String]

    init(_ settings: WebConfig.TLSSettings) throws {
        context = try settings.context ?? Self.makeContext(settings)
        clientAuth = settings.clientAuth
        allowedSANs = settings.clientAllowedSANs
    }

    static func configuration(_ settings: WebConfig.TLSSettings) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: settings.certificateChain.map { .certificate($0) },
            privateKey: .privateKey(settings.privateKey))
        configuration.minimumTLSVersion = settings.minimumVersion
        configuration.maximumTLSVersion = settings.maximumVersion
        if let suites = settings.cipherSuites { configuration.cipherSuiteValues = suites }
        if let curves = settings.curves { configuration.curves = curves }
        switch settings.clientAuth {
        case .noClientCert:
            configuration.certificateVerification = .none
        case .requestClientCert, .verifyClientCertIfGiven:
            configuration.certificateVerification = .optionalVerification
        case .requireAnyClientCert, .requireAndVerifyClientCert:
            configuration.certificateVerification = .noHostnameVerification
        }
        if settings.clientAuth.verifiesCertificate {
            // No client CA (VerifyClientCertIfGiven only): the system's trust store, as Go's
            // crypto/tls verifies against when ClientCAs is nil.
            configuration.trustRoots =
                settings.clientCAs.isEmpty ? .default : .certificates(settings.clientCAs)
        }
        // Tell clients which CAs to pick a certificate for (curl, Prometheus do); Go sends no
        // list for the system's store, nor does Cloudy.
        configuration.sendCANameList = settings.clientAuth.verifiesCertificate && !settings.clientCAs.isEmpty
        return configuration
    }

    static func makeContext(_ settings: WebConfig.TLSSettings) throws -> NIOSSLContext {
        try NIOSSLContext(configuration: configuration(settings))
    }

    /// Adds the TLS handler (and the SAN check when configured) at the front of a connection.
    func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        let handler: NIOSSLServerHandler
        if clientAuth.requiresCertificate && !clientAuth.verifiesCertificate || clientAuth == .requestClientCert {
            // Asked for but taken as sent: no chain check (the handshake still proves the client
            // holds the certificate's key).
            handler = NIOSSLServerHandler(context: context) { _, promise in promise.succeed(.certificateVerified) }
        } else {
            handler = NIOSSLServerHandler(context: context)
        }
        try pipeline.addHandler(PlainHTTPOnTLSPort())
        try pipeline.addHandler(handler)
        if !allowedSANs.isEmpty {
            try pipeline.addHandler(ClientSANCheck(allowed: allowedSANs))
        }
    }
}

/// Looks at the first byte a client sends to the TLS port: a TLS connection starts with a
/// handshake record (0x16) and goes on to the TLS handler; anything else (most likely a plain
/// HTTP request) is answered 400 in plain text, as Go's servers do, and the connection closed.
final class PlainHTTPOnTLSPort: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let answer =
        "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
        + "Client sent an HTTP request to an HTTPS server.\n"

    /// The 400 is written: whatever else the client sent before the close is dropped.
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        if first == 0x16 {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        answered = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: Self.answer))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// Closes a connection whose client certificate carries none of `client_allowed_sans`, right
/// after the handshake and before any request is read.
final class ClientSANCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let allowed: [String]
    private var passed = false

    init(allowed: [String]) {
        self.allowed = allowed
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
                .peerCertificate
            if let certificate, Self.names(of: certificate).contains(where: allowed.contains) {
                passed = true
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            } else {
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard passed else { return }  // nothing is read before the check
        context.fireChannelRead(data)
    }

    /// The certificate's subject alternative names as the toolkit compares them: DNS names,
    /// e-mail addresses, IP addresses in text, URIs.
    static func names(of certificate: NIOSSLCertificate) -> [String] {
        certificate._subjectAlternativeNames().compactMap { name -> String? in
            let bytes = Array(name.contents)
            switch name.nameType {
            case .dnsName, .email, .uri:
                return String(decoding: bytes, as: UTF8.self)
            case .ipAddress:
                return ipAddress(bytes)
            default:
                return nil
            }
        }
    }

    static func ipAddress(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var text = [CChar](repeating: 0, count: 64)
        let ok = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count)) }
        guard ok != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
