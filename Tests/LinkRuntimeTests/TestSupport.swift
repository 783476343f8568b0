#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import XCTest

/// The poller backends this platform has; loop tests run once for each.
let availableBackends = PollerBackend.allCases.filter(\.isAvailable)

/// Runs `loop` until it is stopped, failing the test (and stopping it) after `limitMs`.
func runLoop(
    _ loop: EventLoop, limitMs: Int64 = 10_000, _ what: String = "",
    file: StaticString = #filePath, line: UInt = #line
) throws {
    var timedOut = false
    let guardTimer = loop.schedule(afterMilliseconds: limitMs, on: .realTime) {
        timedOut = true
        loop.stop()
    }
    try loop.run()
    loop.cancel(guardTimer)
    XCTAssertFalse(timedOut, "loop was not stopped within \(limitMs) ms \(what)", file: file, line: line)
}

func isNonBlocking(_ fd: Int32) -> Bool {
    fcntl(fd, F_GETFL) & O_NONBLOCK != 0
}

func isCloseOnExec(_ fd: Int32) -> Bool {
    fcntl(fd, F_GETFD) & FD_CLOEXEC != 0
}

func writeRaw(_ fd: Int32, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
