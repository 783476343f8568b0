#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import XCTest

final class PollerTests: XCTestCase {
    private func collect(_ poller: any Poller, timeoutMs: Int32 = 0) throws -> [Int32: PollEvents] {
        var result: [Int32: PollEvents] = [:]
        try poller.wait(timeoutMs: timeoutMs) { fd, events in
            XCTAssertNil(result[fd], "reported twice in one wait")
            result[fd] = events
        }
        return result
    }

    func testAddModifyRemoveAndReadiness() throws {
        for backend in availableBackends {
            let poller = try backend.makePoller()
            let (a, b) = try UnixSocket.socketPair()
            let (c, d) = try UnixSocket.socketPair()
            defer { [a, b, c, d].forEach(UnixSocket.close) }

            try poller.add(a, .readable)
            try poller.add(c, .readable)
            XCTAssertThrowsError(try poller.add(a, .readable), "\(backend)") {
                XCTAssertEqual(($0 as? SystemError)?.errno, .fileExists, "\(backend): \($0)")
            }
            XCTAssertEqual(try collect(poller), [:], "\(backend)")

            XCTAssertEqual(writeRaw(b, [1]), 1)
            XCTAssertEqual(try collect(poller, timeoutMs: 1000), [a: .readable], "\(backend)")
            XCTAssertEqual(try collect(poller), [a: .readable], "\(backend): level-triggered")

            try poller.modify(a, .writable)
            try poller.modify(c, [.readable, .writable])
            XCTAssertEqual(try collect(poller), [a: .writable, c: .writable], "\(backend)")

            try poller.remove(a)
            XCTAssertThrowsError(try poller.remove(a), "\(backend)") {
                XCTAssertEqual(($0 as? SystemError)?.errno, .noSuchFileOrDirectory, "\(backend): \($0)")
            }
            XCTAssertEqual(try collect(poller), [c: .writable], "\(backend)")

            UnixSocket.close(d)
            let events = try collect(poller)[c] ?? []
            XCTAssertTrue(events.contains(.readable), "\(backend): \(events)")
            XCTAssertTrue(events.contains(.hangup), "\(backend): \(events)")
            try poller.remove(c)
        }
    }

    func testWaitTimesOut() throws {
        for backend in availableBackends {
            let poller = try backend.makePoller()
            let start = try EventLoop(backend: backend).nowMilliseconds
            XCTAssertEqual(try collect(poller, timeoutMs: 20), [:])
            let elapsed = try EventLoop(backend: backend).nowMilliseconds - start
            XCTAssertGreaterThanOrEqual(elapsed, 19, "\(backend)")
        }
    }

    func testPollPollerKeepsSlotsConsistentAcrossRemovals() throws {
        let poller = PollPoller()
        var pairs: [(Int32, Int32)] = []
        for _ in 0..<20 { pairs.append(try UnixSocket.socketPair()) }
        defer {
            pairs.forEach {
                UnixSocket.close($0.0); UnixSocket.close($0.1)
            }
        }
        for (fd, _) in pairs { try poller.add(fd, .readable) }
        for (index, (fd, _)) in pairs.enumerated() where index % 2 == 0 {
            try poller.remove(fd)
        }
        XCTAssertEqual(poller.count, 10)
        for (_, peer) in pairs { XCTAssertEqual(writeRaw(peer, [1]), 1) }
        let ready = try collect(poller)
        let expected = Set(pairs.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.0))
        XCTAssertEqual(Set(ready.keys), expected)
    }
}
