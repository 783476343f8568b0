@testable import LinkDaemon
import XCTest

/// docs/control-protocol.md: an event subscriber or trace follower that does not read is
/// dropped once 16 MiB of output wait for it. No test fills a socket that far (the kernel's
/// buffer takes an unknown share of it); this is the value a user gets. The request line's
/// limit is tested against a running daemon (IntegrationTests' ShippedLimitsTests).
final class ControlLimitsTests: XCTestCase {
    func testASubscriberThatDoesNotReadIsDroppedPast16MiB() {
        XCTAssertEqual(ControlClientConnection.maximumPendingOutput, 16 * 1_048_576)
    }
}
