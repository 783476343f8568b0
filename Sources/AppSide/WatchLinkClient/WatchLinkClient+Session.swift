import LinkJSON

/// What `app.attach` answers: the app's state and its session's.
public struct WatchLinkAttachment: Sendable, Hashable {
    /// The app's state now.
    public var appState: WatchLinkAppState
    /// The session's activation state.
    public var activationState: WatchLinkActivationState
    /// Whether the counterpart is reachable.
    public var isReachable: Bool
    /// The whole result.
    public var raw: JSONObject
}

/// The emulated link as `link.set` answers it.
public struct WatchLinkLinkState: Sendable, Hashable {
    /// What `link.set` asked for.
    public var up: Bool
    /// The one-way delay of every frame this daemon sends.
    public var latencyMs: Int
    /// Whether the link is connected now.
    public var connected: Bool
}

extension WatchLinkClient {
    /// `status`: the session, the app and the device as this side sees them.
    public func status() async throws(WatchLinkError) -> WatchLinkStatus {
        try WatchLinkStatus(try await call("status"))
    }

    /// `session.activate`: activates the app's session (`WCSession.activate()`).
    ///
    /// - Returns: the state after activation: `activated`, or `inactive` on a phone that is
    ///   still delivering the previous watch's data after a watch switch.
    public func activate() async throws(WatchLinkError) -> WatchLinkActivationState {
        try ResultReader(try await call("session.activate"), op: "session.activate")
            .value("activationState", as: WatchLinkActivationState.self)
    }

    /// `app.attach`: makes this connection the running app, subscribed to events, whose
    /// delegate receives messages (with `replyId` when a reply is wanted) and queued items
    /// (to acknowledge with ``acknowledge(seq:)``). One app at a time (`busy`).
    ///
    /// - Parameters:
    ///   - state: `foreground` or `background`.
    ///   - handles: the delegate's message methods; a message for one it lacks fails on the
    ///     sender with 7014. `nil` sends none (the daemon assumes every method).
    public func attachApp(
        state: WatchLinkAppState = .foreground,
        handles: WatchLinkAppHandles? = nil
    ) async throws(WatchLinkError) -> WatchLinkAttachment {
        var args: JSONObject = ["state": .string(state.rawValue)]
        if let handles { args["handles"] = .array(handles.names.map { .string($0) }) }
        let result = try await call("app.attach", args)
        let reader = ResultReader(result, op: "app.attach")
        return WatchLinkAttachment(
            appState: try reader.value("appState", as: WatchLinkAppState.self),
            activationState: try reader.value("activationState", as: WatchLinkActivationState.self),
            isReachable: try reader.bool("isReachable"), raw: result)
    }

    /// `app.setState`: the app enters the foreground, the background, or stops running.
    @discardableResult
    public func setAppState(_ state: WatchLinkAppState) async throws(WatchLinkError) -> WatchLinkAppState {
        try ResultReader(try await call("app.setState", ["state": .string(state.rawValue)]), op: "app.setState")
            .value("appState", as: WatchLinkAppState.self)
    }

    /// `device.set`: changes this side's device flags.
    ///
    /// - Returns: every flag of this side after the change.
    @discardableResult
    public func setDevice(_ flags: [WatchLinkDeviceFlag: Bool]) async throws(WatchLinkError) -> [WatchLinkDeviceFlag: Bool] {
        var args = JSONObject()
        for (flag, value) in flags.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            args[flag.rawValue] = .bool(value)
        }
        let result = try await call("device.set", args)
        var current: [WatchLinkDeviceFlag: Bool] = [:]
        for (key, value) in result {
            if let flag = WatchLinkDeviceFlag(rawValue: key), let value = value.boolValue { current[flag] = value }
        }
        return current
    }

    /// `link.set`: takes the emulated link down or up, and sets its one-way latency.
    @discardableResult
    public func setLink(up: Bool? = nil, latencyMs: Int? = nil) async throws(WatchLinkError) -> WatchLinkLinkState {
        var args = JSONObject()
        if let up { args["up"] = .bool(up) }
        if let latencyMs { args["latencyMs"] = .int(Int64(latencyMs)) }
        let reader = ResultReader(try await call("link.set", args), op: "link.set")
        return WatchLinkLinkState(
            up: try reader.bool("up"), latencyMs: try reader.int("latencyMs"),
            connected: try reader.bool("connected"))
    }

    /// `app.acknowledge`: the attached app's delegate returned for every item handed to it up
    /// to `seq`; the daemon counts them delivered.
    public func acknowledge(seq: Int64) async throws(WatchLinkError) {
        _ = try await call("app.acknowledge", ["seq": .int(seq)])
    }
}
