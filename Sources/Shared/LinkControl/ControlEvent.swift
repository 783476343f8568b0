#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON

/// One event of a subscribed control connection.
public struct ControlEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event name, e.g. `session.reachabilityDidChange`.
    public var name: String
    /// When it happened, as sent (ISO 8601).
    public var at: String
    /// What happened.
    public var data: JSONObject

    public init(name: String, at: String, data: JSONObject) {
        self.name = name
        self.at = at
        self.data = data
    }

    /// ``at`` as a date, when it is a valid timestamp.
    public var date: Date? { ISO8601Timestamp.date(from: at) }

    /// `name data`, e.g. `session.reachabilityDidChange {"isReachable":true}`.
    public var description: String { "\(name) \(data)" }

    /// The event as its JSON object: `{"event", "at", "data"}`.
    public var json: JSONValue {
        ["event": .string(name), "at": .string(at), "data": .object(data)]
    }
}
