#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import XCTest

final class SignalTests: XCTestCase {
    private let deliveries = SignalDelivery.allCases.filter(\.isAvailable)

    func testRaisedSignalReachesTheHandlerThroughTheLoop() throws {
        for delivery in deliveries {
            for backend in availableBackends {
                let loop = try EventLoop(backend: backend, signalDelivery: delivery)
                var received: [Int32] = []
                var insideRaise = false
                try loop.onSignals([SIGUSR1]) { signo in
                    XCTAssertFalse(insideRaise, "handlers run from the loop, not the signal handler")
                    received.append(signo)
                    loop.stop()
                }
                loop.execute {
                    insideRaise = true
                    raise(SIGUSR1)
                    insideRaise = false
                }
                try runLoop(loop, "\(delivery) \(backend)")
                XCTAssertEqual(received, [SIGUSR1], "\(delivery) \(backend)")
            }
        }
    }

    func testSignalSentToTheProcessReachesTheHandler() throws {
        for delivery in deliveries {
            let loop = try EventLoop(signalDelivery: delivery)
            var received: [Int32] = []
            try loop.onSignals([SIGUSR1, SIGUSR2]) { signo in
                received.append(signo)
                if received.count == 2 { loop.stop() }
            }
            loop.execute {
                kill(getpid(), SIGUSR2)
                kill(getpid(), SIGUSR1)
            }
            try runLoop(loop, "\(delivery)")
            XCTAssertEqual(Set(received), [SIGUSR1, SIGUSR2], "\(delivery)")
        }
    }

    func testLaterRegistrationReplacesTheHandler() throws {
        let loop = try EventLoop()
        var log: [String] = []
        try loop.onSignals([SIGUSR2]) { _ in log.append("first") }
        try loop.onSignals([SIGUSR2]) { _ in
            log.append("second"); loop.stop()
        }
        loop.execute { raise(SIGUSR2) }
        try runLoop(loop)
        XCTAssertEqual(log, ["second"])
    }

    func testUncatchableSignalsAreRefused() throws {
        let loop = try EventLoop()
        XCTAssertThrowsError(try loop.onSignals([SIGKILL]) { _ in })
        XCTAssertThrowsError(try loop.onSignals([0]) { _ in })
    }

    func testWritingToAClosedPipeDoesNotKillTheProcess() throws {
        _ = try EventLoop()
        let (a, b) = try UnixSocket.socketPair()
        UnixSocket.close(b)
        XCTAssertEqual(writeRaw(a, [1]), -1)
        XCTAssertEqual(Errno.current, .brokenPipe)
        UnixSocket.close(a)
    }
}
