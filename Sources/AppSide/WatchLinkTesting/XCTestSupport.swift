#if canImport(XCTest)
import XCTest

extension XCTestCase {
    /// Starts a pair for this test and stops it when the test ends, keeping the daemons' logs
    /// (and saying where) when the test failed.
    public func startWatchLinkPair(
        watchCount: Int = 1, activate: Bool = false, phoneArguments: [String] = [],
        watchArguments: [String] = []
    ) throws -> WatchLinkPair {
        let pair = try WatchLinkPair.start(
            watchCount: watchCount, activate: activate, phoneArguments: phoneArguments,
            watchArguments: watchArguments)
        addTeardownBlock { [weak self] in
            // The run is not over while its teardown blocks run (`hasSucceeded` is false until
            // it is): what counts is whether a failure was recorded so far.
            pair.stop(keepingLogs: self?.testRun.map { $0.totalFailureCount > 0 } ?? true)
        }
        return pair
    }

    /// Starts a pair on `clock` for this test (a manual clock: ``WatchLinkPair/Clock/manual``)
    /// and stops it when the test ends, as ``startWatchLinkPair(watchCount:activate:phoneArguments:watchArguments:)``.
    public func startWatchLinkPair(
        watchCount: Int = 1, activate: Bool = false, clock: WatchLinkPair.Clock, phoneArguments: [String] = [],
        watchArguments: [String] = []
    ) throws -> WatchLinkPair {
        let pair = try WatchLinkPair.start(
            watchCount: watchCount, activate: activate, clock: clock, phoneArguments: phoneArguments,
            watchArguments: watchArguments)
        addTeardownBlock { [weak self] in
            pair.stop(keepingLogs: self?.testRun.map { $0.totalFailureCount > 0 } ?? true)
        }
        return pair
    }
}
#endif
