/// The connection this process's WatchConnectivity session attached as the app (`app.attach`):
/// the one place where WatchKit, whose own connection hears of background tasks, meets the
/// session.
///
/// On a watch one system process hands the app both its data and its tasks, so by the time
/// `handle(_:)` runs with a `WKWatchConnectivityRefreshBackgroundTask`, the data that triggered
/// it is the session's (`hasContentPending` is true until the delegate has it). Here watchd
/// writes the data to the session's connection before the task to WatchKit's, but the app reads
/// its two connections on two queues, in either order. ``afterEventsWrittenSoFar(_:)`` restores
/// the device's order: a request on the session's connection is answered after every event
/// watchd wrote there before reading it, and the session's handlers take events on the
/// connection's queue in arrival order, answers included (``WatchLinkClient/send(_:_:completion:)``).
package enum AppSessionConnection {
    private struct Weak {
        weak var client: WatchLinkClient?
    }

    private static let current = Locked(Weak())

    /// `client` attached as the app: later tasks wait for its events, until it is closed.
    package static func attached(_ client: WatchLinkClient) {
        current.withLock { $0.client = client }
    }

    /// Calls `body` once every event that the daemon wrote to the session's connection before
    /// it reads a request sent now has gone to the session: on that connection's queue after the
    /// answer to the request (`status`, which changes nothing), or at once, in the caller's thread,
    /// when no session is attached. A closed connection fails the request: `body` runs then too.
    package static func afterEventsWrittenSoFar(_ body: @escaping @Sendable () -> Void) {
        guard let client = current.withLock({ $0.client }), !client.isClosed else { return body() }
        client.send("status") { _ in body() }
    }
}
