@testable import LinkDaemon
import XCTest

final class AppLauncherTests: XCTestCase {
    /// docs/app-side.md: an app that crashed at launch "is not launched again before a backoff
    /// of 1 s, doubling up to 60 s".
    func testTheCrashAtLaunchBackoffIsOneSecondDoublingUpToSixty() {
        let waits = (1...9).map { AppLauncher.crashBackoffMilliseconds(afterFailures: $0) }
        XCTAssertEqual(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
        for failures in [17, 18, 64, 1_000, Int(Int32.max)] {
            XCTAssertEqual(AppLauncher.crashBackoffMilliseconds(afterFailures: failures), 60_000, "after \(failures) crashes")
        }
    }
}
