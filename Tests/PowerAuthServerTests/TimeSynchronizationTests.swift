import PowerAuthServer
import XCTest

final class TimeSynchronizationTests: XCTestCase {
    func testFirstSampleAdjustsWithHalfTheRoundTrip() {
        var sync = TimeSynchronization()
        XCTAssertFalse(sync.isSynchronized)
        XCTAssertEqual(sync.currentTime(localTime: 1_000), 1_000)
        // Sent at 1000, server stamped 91_100 half-way, received at 1200: server now = 91_200.
        XCTAssertEqual(sync.processSample(serverTime: 91_100, sentAt: 1_000, receivedAt: 1_200), .adjusted(adjustment: 90_000))
        XCTAssertEqual(sync.currentTime(localTime: 2_000), 92_000)
    }

    func testSampleWithRoundTripOver16sIsDiscarded() {
        var sync = TimeSynchronization()
        XCTAssertEqual(sync.processSample(serverTime: 50_000, sentAt: 0, receivedAt: 16_001), .discarded(roundTrip: 16_001))
        XCTAssertFalse(sync.isSynchronized)
        XCTAssertEqual(sync.processSample(serverTime: 50_000, sentAt: 0, receivedAt: 16_000), .adjusted(adjustment: 42_000))
    }

    func testCloseSampleSoonAfterKeepsTheAdjustment() {
        var sync = TimeSynchronization()
        sync.processSample(serverTime: 10_000, sentAt: 0, receivedAt: 0)
        XCTAssertEqual(sync.processSample(serverTime: 15_500, sentAt: 4_000, receivedAt: 4_000), .kept(adjustment: 10_000), "1.5 s off, 4 s later")
        XCTAssertEqual(sync.processSample(serverTime: 17_000, sentAt: 5_000, receivedAt: 5_000), .adjusted(adjustment: 12_000), "2 s off")
        XCTAssertEqual(sync.processSample(serverTime: 28_500, sentAt: 16_000, receivedAt: 16_000), .adjusted(adjustment: 12_500),
                       "close but more than 10 s after the last adjustment")
    }
}
