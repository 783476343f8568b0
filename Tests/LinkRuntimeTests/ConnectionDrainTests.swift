import LinkRuntime
import LinkSystem
import XCTest

/// `onDrained`: the socket took everything that was queued, because the peer read again.
final class ConnectionDrainTests: XCTestCase {
    func testDrainedIsCalledOnceThePeerReadsWhatWasQueued() throws {
        let loop = try EventLoop()
        let (a, b) = try UnixSocket.socketPair()
        for fd in [a, b] {
            try UnixSocket.setSendBufferSize(fd, 4096)
            try UnixSocket.setReceiveBufferSize(fd, 4096)
        }
        let writer = try Connection(loop: loop, fd: a)
        let reader = try Connection(loop: loop, fd: b)
        var drained = 0
        writer.onDrained = {
            drained += 1
            loop.stop()
        }
        reader.pauseReading()
        writer.write([UInt8](repeating: 7, count: 256 * 1024))
        XCTAssertGreaterThan(writer.pendingWriteByteCount, 0, "the peer does not read: bytes wait")
        XCTAssertEqual(drained, 0)
        var received = 0
        reader.onRead = { received += $0.count }
        reader.resumeReading()
        _ = loop.schedule(afterMilliseconds: 30_000) { loop.stop() }
        try loop.run()
        XCTAssertEqual(drained, 1)
        XCTAssertEqual(writer.pendingWriteByteCount, 0)
        XCTAssertGreaterThan(received, 0)
        writer.close()
        reader.close()
    }
}
