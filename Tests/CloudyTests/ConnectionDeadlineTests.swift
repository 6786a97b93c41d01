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
