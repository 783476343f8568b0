import Foundation
@_spi(Testing) import WatchConnectivity
import TestSupport
import XCTest

/// Runs the Apple-style controller with no daemon listening: every call reports its failure
/// the way WatchConnectivity does, through the delegate and the handlers.
final class AppleStyleAPITests: XCTestCase {
    private final class Log: @unchecked Sendable {
        private let condition = NSCondition()
        private var lines: [String] = []

        func append(_ line: String) {
            condition.lock()
            lines.append(line)
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until `count` lines are logged and returns them.
        func wait(for count: Int, timeout: Double = 10) -> [String] {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while lines.count < count, condition.wait(until: deadline) {}
            return lines
        }
    }

    override func tearDown() {
        unsetenv("WATCHLINK_HOME")
        unsetenv("WATCHLINK_SIDE")
        unsetenv("WATCHLINK_CONTROL")
        WCSession.resetDefault(controlSocketPath: nil)
    }

    func testWithoutADaemonActivationAndEveryCallReportTheirFailure() throws {
        try withTemporaryDirectory { home in
            setenv("WATCHLINK_HOME", home, 1)
            setenv("WATCHLINK_SIDE", "watch", 1)
            WCSession.resetDefault(controlSocketPath: nil)
            let log = Log()
            let controller = SessionController { log.append($0) }
            controller.startSession()
            let activation = try XCTUnwrap(log.wait(for: 1).first)
            // The device's text for 7001, then WatchLink's explanation (userInfo "WatchLinkExplanation").
            XCTAssertTrue(
                activation.hasPrefix("activation failed: 0 WCErrorDomain Unknown WatchConnectivity error. WatchConnectivity cannot reach watchd"),
                activation)
            XCTAssertTrue(activation.contains(home + "/watch.ctl"), activation)
            XCTAssertEqual(WCSession.default.activationState, .notActivated)
            XCTAssertFalse(WCSession.default.isReachable)

            controller.requestStatus()
            controller.publish(counter: 1)
            let transfer = controller.queue(["n": 1])
            controller.send(file: URL(fileURLWithPath: home + "/missing.txt"))
            let lines = log.wait(for: 6)
            XCTAssertEqual(
                Set(lines.dropFirst()),
                [
                    "message failed: WCErrorDomain 7004", "context failed: not activated",
                    "userInfo transfer failed: 7004 1 false", "file queued: missing.txt 0",
                    "file transfer finished: 7004 false",
                ])
            XCTAssertFalse(transfer.isTransferring)
            XCTAssertTrue(WCSession.default.outstandingUserInfoTransfers.isEmpty)
            XCTAssertNil(WCSession.default.watchDirectoryURL)
            withExtendedLifetime(controller) {}
        }
    }

    func testAnUnknownSideIsReportedAtActivation() {
        setenv("WATCHLINK_SIDE", "tablet", 1)
        WCSession.resetDefault(controlSocketPath: nil)
        let log = Log()
        let controller = SessionController { log.append($0) }
        controller.startSession()
        XCTAssertEqual(
            log.wait(for: 1).first,
            "activation failed: 0 WCErrorDomain WatchConnectivity session is not available on this device. WATCHLINK_SIDE must be 'phone' or 'watch', not 'tablet'"
        )
        withExtendedLifetime(controller) {}
    }
}
