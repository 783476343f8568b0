import PowerAuthServer
import XCTest

/// The SDK's `PA2TimeSynchronizationServiceTests`, step for step, in milliseconds.
final class TimeSynchronizationTests: XCTestCase {
    private var now: Int64 = 1_700_000_000_000
    private var sync = TimeSynchronization()

    /// One sample as the SDK's test takes it: start, 10 ms, the server stamps its time
    /// (`offset` from local), 10 ms, complete.
    @discardableResult
    private func sample(serverOffset: Int64, before: Int64 = 10, after: Int64 = 10) -> TimeSynchronization.Outcome {
        let started = now
        now += before
        let serverTime = now + serverOffset
        now += after
        return sync.processSample(serverTime: serverTime, startedAt: started, now: now)
    }

    func testTheSDKsSequenceGivesAdjustments0_0_0_30_minus30_minus30_0() {
        XCTAssertFalse(sync.isSynchronized)
        XCTAssertEqual(sync.adjustment, 0)
        XCTAssertEqual(sync.currentTime(localTime: now), now)

        XCTAssertEqual(sample(serverOffset: 0), .synchronized)
        XCTAssertTrue(sync.isSynchronized)
        XCTAssertEqual(sync.adjustment, 0, "no adjustment: the difference is too small")

        XCTAssertEqual(sample(serverOffset: 5_000), .kept, "5 s ahead: synchronised and within 10 s of the adjustment")
        XCTAssertEqual(sync.adjustment, 0)
        XCTAssertEqual(sample(serverOffset: -5_000), .kept)
        XCTAssertEqual(sync.adjustment, 0)

        XCTAssertEqual(sample(serverOffset: 30_000), .adjusted)
        XCTAssertEqual(sync.adjustment, 30_000, "stamped 10 ms before the end, compensated by half the 20 ms")
        XCTAssertEqual(sync.currentTime(localTime: now) - now, 30_000)

        XCTAssertEqual(sample(serverOffset: -30_000), .adjusted)
        XCTAssertEqual(sync.adjustment, -30_000)

        let previous = sync.adjustment
        XCTAssertEqual(sample(serverOffset: -32_000), .kept, "2 s off the adjustment: no fluctuation")
        XCTAssertEqual(sync.adjustment, previous)

        XCTAssertEqual(sample(serverOffset: 0), .adjusted, "back to normal: 30 s off the adjustment")
        XCTAssertEqual(sync.adjustment, 0)

        sync.reset()
        XCTAssertFalse(sync.isSynchronized)
        XCTAssertEqual(sync.adjustment, 0)
    }

    func testTheSDKsTooLongSynchronization() {
        XCTAssertEqual(sample(serverOffset: 0, before: 5_000, after: 5_000), .synchronized, "10 s is within 16 s")
        XCTAssertTrue(sync.isSynchronized)

        let outcome = sample(serverOffset: 0, before: 100, after: 15_000)
        XCTAssertEqual(outcome, .kept, "15.1 s: still a sample; within 10 s of the adjustment")
        XCTAssertEqual(sync.adjustment, 0)

        sync.reset()
        let late = sample(serverOffset: 0, before: 6_000, after: 11_000)
        XCTAssertEqual(late, .discarded(elapsed: 17_000))
        XCTAssertFalse(late.succeeded(wasSynchronized: false), "the SDK reports a failure")
        XCTAssertFalse(sync.isSynchronized, "the state stays as it was")
        XCTAssertEqual(sync.adjustment, 0)
    }

    func testAFarSampleOverSixteenSecondsLeavesASynchronisedStateAlone() {
        XCTAssertEqual(sample(serverOffset: 90_000), .adjusted)
        let late = sample(serverOffset: -90_000, before: 8_000, after: 8_001)
        XCTAssertEqual(late, .discarded(elapsed: 16_001))
        XCTAssertTrue(late.succeeded(wasSynchronized: true))
        XCTAssertEqual(sync.adjustment, 90_000)
    }

    /// PA2TimeSynchronizationService.m's constants at their edges: MAX_ACCEPTED_ELAPSED_TIME
    /// (16 s), MIN_ACCEPTED_TIME_DIFFERENCE (2 s), MIN_TIME_DIFFERENCE_DELTA (10 s).
    func testTheSDKsLimitsAtTheirEdges() {
        XCTAssertEqual(sample(serverOffset: 0, before: 8_000, after: 8_000), .synchronized, "a request of 16,000 ms is still a sample")
        sync.reset()
        XCTAssertEqual(sample(serverOffset: 1_999), .synchronized, "1,999 ms counts as no difference")
        XCTAssertEqual(sync.adjustment, 0)
        sync.reset()
        XCTAssertEqual(sample(serverOffset: 2_000), .adjusted, "2,000 ms is a difference")
        XCTAssertEqual(sync.adjustment, 2_000)
        sync.reset()
        XCTAssertEqual(sample(serverOffset: 30_000), .adjusted)
        XCTAssertEqual(sample(serverOffset: 39_999), .kept, "9,999 ms from the adjustment keeps it")
        XCTAssertEqual(sample(serverOffset: 40_000), .adjusted, "10,000 ms from it does not")
        XCTAssertEqual(sync.adjustment, 40_000)
    }

    func testASampleThatEndsBeforeItStartsFails() {
        XCTAssertEqual(sync.processSample(serverTime: now, startedAt: now, now: now - 1), .failed)
        XCTAssertFalse(sync.isSynchronized)
    }
}
