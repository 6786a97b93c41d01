import Foundation
import XCTest

@testable import Cloudy

/// Clients that do not play along, against the real binary: one that pipelines requests and
/// never reads, more connections than `--web.max-connections`, a 1 MB header line and a TLS
/// ClientHello sent to the plain port. The process stays up and its memory bounded, and an
/// ordinary scrape still answers.
final class HostileClientsEndToEndTests: FakeWeatherTestCase {
    func exporter(_ arguments: [String] = []) throws -> ExporterProcess {
        let exporter = try ExporterProcess(
            config: ResilienceTests.config(url: fake.baseURL, interval: "1h"), extraArguments: arguments)
        try exporter.waitFor("/readyz")
        return exporter
    }

    func testHostileClientsDoNotHurtTheServer() throws {
        let exporter = try exporter()

        let huge = try RawConnection(port: exporter.port)
        huge.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n")
        let hugeAnswer = huge.readUntilClosed()
        XCTAssertTrue(
            hugeAnswer.text.hasPrefix("HTTP/1.1 431") || hugeAnswer.text.hasPrefix("HTTP/1.1 400"), hugeAnswer.text)
        XCTAssertTrue(hugeAnswer.closed)

        let longLine = try RawConnection(port: exporter.port)
        longLine.send("GET /\(String(repeating: "a", count: 200_000)) HTTP/1.1\r\nHost: x\r\n\r\n")
        let longAnswer = longLine.readUntilClosed()
        XCTAssertTrue(
            longAnswer.text.hasPrefix("HTTP/1.1 431") || longAnswer.text.hasPrefix("HTTP/1.1 400")
                || longAnswer.text.hasPrefix("HTTP/1.1 414"), longAnswer.text)

        let garbage = try RawConnection(port: exporter.port)
        garbage.send([0x00, 0x01, 0xFF, 0xFE] + Array("\r\n\r\nnot http at all\r\n\r\n".utf8))
        XCTAssertTrue(garbage.readUntilClosed().closed, "garbage closes the connection")

        // A thousand connections held open at once: the server still answers.
        var held: [RawConnection] = []
        for _ in 0..<1000 { held.append(try RawConnection(port: exporter.port)) }
        let started = Date()
        XCTAssertEqual(try exporter.get("/metrics").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        held.removeAll()
        XCTAssertTrue(exporter.process.isRunning)
        XCTAssertEqual(try exporter.get("/healthz").status, 200)
    }

    func testAPipeliningClientThatNeverReadsLeavesMemoryBoundedAndScrapesAnswered() throws {
        let exporter = try exporter()
        let pid = exporter.process.processIdentifier
        _ = try exporter.get("/metrics")
        let before = try XCTUnwrap(Self.residentBytes(pid))

        // Up to 64 MB of scrapes it never reads; the exporter stops taking them once its answers
        // pile up, and the client notices when a send makes no progress for a second. Scrapes,
        // not /healthz: a few hundred answers fill the buffers where /healthz took tens of
        // thousands, seconds of the exporter's CPU that proved nothing more.
        let client = try PipeliningClient(port: exporter.port)
        let taken = client.sendUntilStalled(
            Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count: 2000).utf8),
            limit: 64_000_000, stalledFor: 1, deadline: 30)
        let during = try XCTUnwrap(Self.residentBytes(pid))
        XCTAssertLessThan(taken, 32_000_000, "the exporter stopped reading (the kernel holds a few MB)")
        XCTAssertLessThan(
            during - before, 30_000_000,
            "resident \(before / 1_000_000) MB before, \(during / 1_000_000) MB with the client")
        XCTAssertEqual(try exporter.get("/metrics").status, 200, "a scrape on another connection still answers")

        client.close()
        XCTAssertEqual(try exporter.get("/healthz").status, 200)
        XCTAssertTrue(exporter.process.isRunning)
    }

    func testConnectionsOverTheLimitAreClosedAndCountedLive() throws {
        let exporter = try exporter(["--web.max-connections", "3"])
        // The test's own HTTP client may keep a connection open, so up to three are held.
        var held: [RawConnection] = []
        var rejected: RawConnection?
        for _ in 0..<5 {
            let connection = try RawConnection(port: exporter.port)
            if Self.closedWithin(connection, seconds: 0.4) {
                rejected = connection
                break
            }
            held.append(connection)
        }
        XCTAssertNotNil(rejected, "a connection over the limit is closed at once")
        XCTAssertLessThanOrEqual(held.count, 3)
        XCTAssertTrue(held.allSatisfy { !Self.closedWithin($0, seconds: 0) }, "the admitted ones stay open")
        held.removeAll()

        var metrics: [String: Double] = [:]
        try waitUntil("the rejection is counted", timeout: 10, log: exporter.log) {
            guard
                case .success(let response) = exporter.client.fetch(
                    HTTPRequest(url: exporter.baseURL + "/metrics", timeout: 2))
            else { return false }
            metrics = Exposition.parse(String(decoding: response.body, as: UTF8.self))
            return (metrics["cloudy_exporter_http_connections_rejected_total"] ?? 0) >= 1
        }
        XCTAssertEqual(metrics["cloudy_exporter_http_max_connections"], 3)
        let open = try XCTUnwrap(metrics["cloudy_exporter_http_open_connections"])
        XCTAssertTrue((1...3).contains(open), "the scrape's own connection at least: \(open)")
        XCTAssertTrue(exporter.process.isRunning)
    }

    /// Whether the server closed the connection (end of stream or reset) within `seconds`.
    static func closedWithin(_ connection: RawConnection, seconds: Double) -> Bool {
        var watch = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&watch, 1, Int32(seconds * 1000)) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(connection.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    func testAZeroConnectionLimitIsRefusedAtStartUp() throws {
        let exporter = try ExporterProcess(
            config: ResilienceTests.config(url: fake.baseURL), extraArguments: ["--web.max-connections", "0"])
        exporter.process.waitUntilExit()
        XCTAssertNotEqual(exporter.process.terminationStatus, 0)
        XCTAssertTrue(exporter.log.contains("--web.max-connections must be a positive number"), exporter.log)
    }

    func testAMegabyteHeaderLineAndTLSOnThePlainPortGetAnErrorOrAClose() throws {
        let exporter = try exporter()
        let line = try RawConnection(port: exporter.port)
        line.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 1_000_000))\r\n\r\n")
        let lineAnswer = line.readUntilClosed()
        XCTAssertTrue(lineAnswer.closed, "closed after a 1 MB header line")
        XCTAssertTrue(lineAnswer.text.isEmpty || lineAnswer.text.hasPrefix("HTTP/1.1 4"), lineAnswer.text)

        let tls = try RawConnection(port: exporter.port)
        tls.send(Self.clientHello)
        let tlsAnswer = tls.readUntilClosed()
        XCTAssertTrue(tlsAnswer.closed, "a ClientHello on the plain port closes the connection")
        XCTAssertTrue(tlsAnswer.text.isEmpty || tlsAnswer.text.hasPrefix("HTTP/1.1 400"), tlsAnswer.text)

        XCTAssertTrue(exporter.process.isRunning)
        XCTAssertEqual(try exporter.get("/healthz").status, 200)
    }

    /// A TLS 1.2/1.3 ClientHello record as a TLS client sends it first: handshake record header,
    /// version, random, no session, two cipher suites, no compression, an SNI extension.
    static let clientHello: [UInt8] = {
        let host = Array("localhost".utf8)
        let sni: [UInt8] =
            [0x00, 0x00] + be16(host.count + 5) + be16(host.count + 3) + [0x00] + be16(host.count) + host
        var body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0x2A, count: 32) + [0x00]
        body += be16(4) + [0x13, 0x01, 0xC0, 0x2F] + [0x01, 0x00] + be16(sni.count) + sni
        let handshake: [UInt8] = [0x01, 0x00] + be16(body.count) + body
        return [0x16, 0x03, 0x01] + be16(handshake.count) + handshake
    }()

    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    /// VmRSS of a process, in bytes.
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }
}

/// A client that sends without ever reading: sends wait at most 100 ms (`SO_SNDTIMEO`), so a
/// server that stops reading shows as sends that make no progress.
final class PipeliningClient {
    let fd: Int32

    init(port: Int) throws {
        // A small receive window from the first packet on, so that less of what the client never
        // reads is in flight before the exporter's own buffer fills.
        let connection = try RawConnection(port: port, receiveBuffer: 4 * 1024)
        fd = dup(connection.fd)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    private var closed = false

    func close() {
        guard !closed else { return }
        closed = true
        _ = Foundation.close(fd)
    }

    /// Sends `chunk` again and again until `limit` bytes went out, no byte went out for
    /// `stalledFor` seconds, or `deadline` seconds passed; returns the bytes sent.
    func sendUntilStalled(_ chunk: [UInt8], limit: Int, stalledFor: Double, deadline: Double) -> Int {
        let started = Date()
        var lastProgress = Date()
        var sent = 0
        var offset = 0
        while sent < limit, Date().timeIntervalSince(lastProgress) < stalledFor,
            Date().timeIntervalSince(started) < deadline
        {
            let n = chunk.withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
                offset = (offset + n) % chunk.count
                lastProgress = Date()
            } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                break
            }
        }
        return sent
    }
}
