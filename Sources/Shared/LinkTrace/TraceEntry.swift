import LinkJSON

/// One entry of a daemon's trace, as `trace.get`, the `trace.entry` event and a trace file
/// carry it: a JSON object with the members every entry has (`n`, `t`, `side`, `device`,
/// `pid`, `kind`) and those of its kind (docs/trace.md lists them).
public struct TraceEntry: Sendable, Hashable {
    /// What an entry records.
    public enum Kind: String, Sendable, CaseIterable {
        /// A frame sent (`dir` `out`) or received (`in`) on the link.
        case frame
        /// A control op arrived (`op`, `client`).
        case op
        /// An op was answered with an error (`op`, `domain`, `code`, `name`, `message`).
        case error
        /// The session's state changed (`name`: activation, reachability, appState, deviceFlags, activeWatch, ...).
        case state
        /// What the app was told of a queued transfer (received, didFinish).
        case note
        /// The link came up, went down (`reason`, `by`), was taken down or up, or got a latency.
        case link
        /// A fault: a failed write (disk full), a refused link.
        case fault
        /// A timer of the session fired (a reply timeout).
        case timer
        /// The daemon started or stopped.
        case daemon
        /// The emulated OS launched an installed program (`name` `launched`: `program`,
        /// `reason`, `pid`, `log`, `state`) or it ended (`exited`: `status` or `signal`, `reason`).
        case app
    }

    public var object: JSONObject

    public init(_ object: JSONObject) {
        self.object = object
    }

    /// An entry read from JSON; nil unless it has the members every entry has.
    public init?(json: JSONValue) {
        guard let object = json.objectValue, object["n"]?.intValue != nil, object["t"]?.intValue != nil,
            object["side"]?.stringValue != nil, object["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) != nil
        else { return nil }
        self.object = object
    }

    /// The entry's number in its daemon's run, from 1.
    public var n: UInt64 { UInt64(object["n"]?.intValue ?? 0) }
    /// Microseconds since 1970 (CLOCK_REALTIME): every daemon on one machine shares this clock.
    public var time: Int64 { object["t"]?.intValue ?? 0 }
    /// `phone` or `watch`.
    public var side: String { object["side"]?.stringValue ?? "" }
    /// The recording daemon's device id.
    public var device: String { object["device"]?.stringValue ?? "" }
    /// The recording daemon's process id: a restarted daemon numbers its entries anew.
    public var pid: Int64 { object["pid"]?.intValue ?? 0 }
    public var kind: Kind { object["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) ?? .note }
    /// The entry of the same run that caused this one.
    public var cause: UInt64? { object["cause"]?.intValue.map(UInt64.init) }

    public subscript(key: String) -> JSONValue? { object[key] }
    public func string(_ key: String) -> String? { object[key]?.stringValue }
    public func int(_ key: String) -> Int64? { object[key]?.intValue }

    /// The run that recorded it: one process of one device.
    public var run: TraceRun { TraceRun(device: device, side: side, pid: pid) }

    public var json: JSONValue { .object(object) }
}

/// One process of one daemon: entry numbers and causes are unique within it.
public struct TraceRun: Sendable, Hashable {
    public let device: String
    public let side: String
    public let pid: Int64

    public init(device: String, side: String, pid: Int64) {
        self.device = device
        self.side = side
        self.pid = pid
    }
}
