import Foundation
import LinkControl
import LinkJSON

/// One event of a subscribed control connection:
/// `{"event": "session.reachabilityDidChange", "at": "...", "data": {...}}`.
public struct WatchLinkEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event name, e.g. `session.reachabilityDidChange` or `message.received`.
    public var name: String
    /// When the daemon published it, as sent (ISO 8601, UTC with milliseconds).
    public var timestamp: String
    /// What happened.
    public var data: JSONObject

    /// An event as the daemon sends it.
    public init(name: String, timestamp: String, data: JSONObject) {
        self.name = name
        self.timestamp = timestamp
        self.data = data
    }

    /// ``timestamp`` as a date, when it is a valid ISO 8601 date-time.
    public var date: Date? { ISO8601Timestamp.date(from: timestamp) }

    /// `name data`, e.g. `session.reachabilityDidChange {"isReachable":true}`.
    public var description: String { "\(name) \(data)" }
}
