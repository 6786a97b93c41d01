import NIOCore
import NIOEmbedded
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The slow-client defence, on an `EmbeddedChannel` whose clock the test moves.
final class ConnectionDeadlineTests: XCTestCase {
    func makeChannel() throws -> (EmbeddedChannel, ConnectionDeadline) {
        let channel = EmbeddedChannel()
        let deadline = ConnectionDeadline(requestTimeout: .seconds(10), idleTimeout: .seconds(60))
        try channel.pipeline.syncOperations.addHandler(deadline)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, deadline)
    }

    func testATrickledRequestIsCutAfterTheRequestTimeout() throws {
        let (channel, _) = try makeChannel()
        for second in 0..<9 {
            try channel.writeInbound(ByteBuffer(string: "G"))  // a byte a second never completes a request
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            XCTAssertTrue(channel.isActive, "still open after \(second + 1) s")
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        XCTAssertFalse(channel.isActive, "cut 10 s after the first byte")
    }

    func testACompleteRequestStopsTheClockAndIdleKeepAliveIsCutLater() throws {
        let (channel, deadline) = try makeChannel()
        try channel.writeInbound(ByteBuffer(string: "GET /metrics HTTP/1.1\r\n\r\n"))
        deadline.requestReceived()
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        XCTAssertTrue(channel.isActive, "answering takes as long as it takes")
        deadline.responseSent()
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        XCTAssertTrue(channel.isActive, "a keep-alive connection may idle a while between scrapes")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        XCTAssertFalse(channel.isActive)
    }

    func testAConnectionThatNeverSpeaksIsCutWhenIdle() throws {
        let (channel, _) = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(61))
        XCTAssertFalse(channel.isActive)
    }
}

/// The same deadlines in the pipeline every accepted connection gets, with the request handler
/// telling the deadline when a request is whole and when its answer is written.
final class ConnectionDeadlineInServerTests: XCTestCase {
    let reload = ReloadRecorder()

    func connection() throws -> EmbeddedHTTPConnection {
        try EmbeddedHTTPConnection(.ready, reload: reload)
    }

    func testARequestTrickledSlowerThanTheRequestTimeoutIsCutUnanswered() throws {
        let server = try connection()
        for piece in ["GET /hea", "lthz HT", "TP/1.1\r\n", "Host: x\r\n"] {
            try server.send(piece)
            server.advanceTime(by: .seconds(2))
            XCTAssertTrue(server.isOpen)
        }
        server.advanceTime(by: .seconds(1))
        XCTAssertTrue(server.isOpen, "9 s after the first byte")
        XCTAssertNil(try server.readResponse(), "nothing answered")
        server.advanceTime(by: .seconds(1))
        XCTAssertFalse(server.isOpen, "cut 10 s after the first byte")
    }

    func testARequestCompletedInTimeIsAnswered() throws {
        let server = try connection()
        try server.send("GET /healthz HTTP/1.1\r\n")
        server.advanceTime(by: .seconds(9))
        try server.send("Host: x\r\n\r\n")
        XCTAssertEqual(try server.readResponse()?.status, 200)
        server.advanceTime(by: .seconds(30))
        XCTAssertTrue(server.isOpen, "after the answer the idle timeout applies, not the request timeout")
    }

    func testAKeepAliveConnectionIdleForAMinuteIsClosed() throws {
        let server = try connection()
        for _ in 0..<3 {
            XCTAssertEqual(try server.request("/metrics").status, 200)
            server.advanceTime(by: .seconds(50))
            XCTAssertTrue(server.isOpen, "each answer starts a new idle minute")
        }
        server.advanceTime(by: .seconds(11))
        XCTAssertFalse(server.isOpen)
    }

    func testAConnectionThatNeverSendsAByteIsClosedAfterTheIdleTimeout() throws {
        let server = try connection()
        server.advanceTime(by: .seconds(59))
        XCTAssertTrue(server.isOpen)
        server.advanceTime(by: .seconds(2))
        XCTAssertFalse(server.isOpen)
    }

    func testAReloadTakingLongerThanTheRequestTimeoutIsNotCut() throws {
        let server = try connection()
        try server.send("POST", "/-/reload")
        server.advanceTime(by: .seconds(45))
        XCTAssertTrue(server.isOpen, "the clock stops while the server answers")
        server.runOffloadedWork()
        XCTAssertEqual(try server.readResponse()?.status, 200)
        server.advanceTime(by: .seconds(61))
        XCTAssertFalse(server.isOpen, "then the connection is idle like any other")
    }
}
