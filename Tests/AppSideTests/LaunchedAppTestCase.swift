import Foundation
import LinkClient
import LinkControl
import WatchLinkTesting
import XCTest

/// Tests of apps the daemons launch (`app.install`): each starts activated pairs and control
/// clients through these, which are closed and stopped after the test, the daemons' logs kept
/// when it failed.
class LaunchedAppTestCase: XCTestCase {
    private var pairs: [WatchLinkPair] = []
    private(set) var clients: [ControlClient] = []

    override func tearDown() {
        for client in clients { client.close() }
        let failed = testRun.map { $0.totalFailureCount > 0 } ?? false
        for pair in pairs { pair.stop(keepingLogs: failed) }
        pairs.removeAll()
        clients.removeAll()
        super.tearDown()
    }

    /// A pair, both sessions activated, with these daemon arguments, on `clock`.
    func start(phone: [String] = [], watch: [String] = [], clock: WatchLinkPair.Clock = .system) throws -> WatchLinkPair {
        let pair = try WatchLinkPair.start(activate: true, clock: clock, phoneArguments: phone, watchArguments: watch)
        pairs.append(pair)
        return pair
    }

    /// Milliseconds between two events' `at` (ISO 8601 with milliseconds).
    func milliseconds(from first: ControlEvent, to second: ControlEvent) throws -> Int64 {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let start = try XCTUnwrap(format.date(from: first.at), first.at)
        let end = try XCTUnwrap(format.date(from: second.at), second.at)
        return Int64((end.timeIntervalSince(start) * 1_000).rounded())
    }

    /// A control client of `daemon`, subscribed to its events when asked.
    func client(_ daemon: WatchLinkDaemon, subscribed: Bool = false) throws -> ControlClient {
        let client = try daemon.client(timeout: 30)
        clients.append(client)
        if subscribed { try client.subscribe() }
        return client
    }
}
