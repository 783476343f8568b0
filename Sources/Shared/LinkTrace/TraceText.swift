import LinkJSON

/// How an entry reads in a picture: a short label, its details, its category for filters.
public enum TraceText {
    /// The categories a picture can filter by.
    public static let categories = ["message", "userInfo", "context", "file", "state", "app", "link", "handshake", "op", "error"]

    /// The category of an entry.
    public static func category(_ entry: TraceEntry) -> String {
        switch entry.kind {
        case .frame:
            let type = entry.string("type") ?? ""
            switch type {
            case "HELLO", "AUTH", "READY": return "handshake"
            case "GOAWAY": return "link"
            case "STATE", "PING", "PONG", "CLOCK_SET", "CLOCK_ACK": return "state"
            case "MESSAGE", "REPLY", "MESSAGE_ERROR", "MESSAGE_ACK": return "message"
            default:
                switch entry.int("channel") {
                case 1: return "userInfo"
                case 2: return "context"
                default: return "file"
                }
            }
        case .op: return "op"
        case .error, .fault: return "error"
        case .state, .daemon, .timer: return "state"
        case .link: return "link"
        case .app: return "app"
        case .note:
            let name = entry.string("name") ?? ""
            if name.hasPrefix("userInfo") || name.hasPrefix("complicationUserInfo") { return "userInfo" }
            if name.hasPrefix("context") { return "context" }
            if name.hasPrefix("file") { return "file" }
            return "message"
        }
    }

    /// Whether the entry is drawn so that it stands out: link drops, kills, errors.
    public static func isAlarm(_ entry: TraceEntry) -> Bool {
        switch entry.kind {
        case .error, .fault: return true
        case .link: return entry.string("name") == "down" || entry.string("name") == "disabled"
        case .frame: return ["GOAWAY", "MESSAGE_ERROR", "ITEM_ERROR"].contains(entry.string("type") ?? "")
        // An app that crashed at its launch, or that the OS ended for breaking a rule.
        case .app:
            return ["crashedAtLaunch", "voipNotReportedToCallKit", "backgroundTaskWatchdog"].contains(entry.string("reason") ?? "")
                || entry.string("name") == "backgroundTask.expired"
        default: return false
        }
    }

    /// A one-line label, e.g. `MESSAGE id=1 {hello: "watch"}` or `reachable`.
    public static func label(_ entry: TraceEntry) -> String {
        switch entry.kind {
        case .frame:
            var text = entry.string("type") ?? "?"
            if let channel = entry.int("channel"), text != "FILE_CHUNK", text != "FILE_CHUNK_ACK", text != "FILE_CANCEL" {
                text += " " + channelName(channel)
            }
            if let seq = entry.int("seq") { text += " seq=\(seq)" }
            if let id = entry.int("id") { text += " id=\(id)" }
            if let offset = entry.int("offset") { text += " @\(offset)" }
            if let committed = entry.int("committedOffset") { text += " committed=\(committed)" }
            if let code = entry.int("code"), entry.string("type") != "GOAWAY" { text += " \(code)" }
            if let preview = entry.string("preview") { text += " " + preview }
            return text
        case .op:
            return "op " + (entry.string("op") ?? "?")
        case .error:
            return "\(entry.int("code") ?? 0) \(entry.string("name") ?? "") ← \(entry.string("op") ?? "")"
        case .state:
            return stateLabel(entry)
        case .note:
            var text = entry.string("name") ?? "?"
            if let error = entry["error"], let code = error["code"]?.intValue { text += " error \(code) \(error["name"]?.stringValue ?? "")" }
            if let completed = entry.int("completedBytes"), let total = entry.int("totalBytes"), total > 0 {
                text += " \(completed * 100 / total)%"
            }
            if let seq = entry.int("seq") { text += " seq=\(seq)" }
            return text
        case .link:
            let name = entry.string("name") ?? "?"
            switch name {
            case "down": return "link down" + (entry.string("by").map { " (by \($0))" } ?? "") + (entry.string("reason").map { ": \($0)" } ?? "")
            case "up": return "link up"
            case "latency": return "latency \(entry.int("latencyMs") ?? 0) ms"
            default: return "link \(name) by link.set"
            }
        case .fault:
            var text = entry.string("name") ?? "fault"
            if let error = entry["error"], let code = error["code"]?.intValue { text += " \(code) \(error["name"]?.stringValue ?? "")" }
            if let message = entry.string("message") ?? entry.string("reason") { text += ": " + message }
            return text
        case .timer:
            return "timer " + (entry.string("name") ?? "")
        case .daemon:
            let program = entry.string("program") ?? (entry.side == "phone" ? "phoned" : "watchd")
            return entry.string("name") == "start" ? "\(program) started (pid \(entry.pid))" : "\(entry.side == "phone" ? "phoned" : "watchd") stopped"
        case .app:
            if let label = backgroundLabel(entry) { return label }
            let program = entry.string("program") ?? "app"
            let pid = entry.int("pid").map { " (pid \($0))" } ?? ""
            if entry.string("name") == "launched" {
                return "\(program) launched\(pid) for \(entry.string("reason") ?? "?"), \(entry.string("state") ?? "background")"
            }
            let how = entry.int("status").map { "exited \($0)" } ?? entry.int("signal").map { "signal \($0)" } ?? "ended"
            return "\(program)\(pid) \(how): \(entry.string("reason") ?? "?")"
        }
    }

    /// The watch app's background life: `backgroundTask.handed` as `task 3 watchConnectivity handed`.
    static func backgroundLabel(_ entry: TraceEntry) -> String? {
        let name = entry.string("name") ?? ""
        switch name {
        case "app.wakeScheduled":
            return "wake for \(entry.string("reason") ?? "?") in \(entry.int("inMs") ?? 0) ms" + (entry.int("seed").map { " (seed \($0))" } ?? "")
        case "app.suspended": return "app suspended"
        case "app.resumed": return "app resumed for \(entry.string("reason") ?? "?")"
        default:
            guard name.hasPrefix("backgroundTask.") else { return nil }
            let event = name.dropFirst("backgroundTask.".count)
            let tasks = entry["tasks"]?.arrayValue?.compactMap(\.objectValue) ?? []
            let described =
                tasks.isEmpty
                ? "task \(entry.int("taskId") ?? 0) \(entry.string("taskKind") ?? "")"
                : tasks.map { "task \($0["taskId"]?.intValue ?? 0) \($0["kind"]?.stringValue ?? "")" }.joined(separator: ", ")
            return "\(described) \(event)"
        }
    }

    static func stateLabel(_ entry: TraceEntry) -> String {
        let name = entry.string("name") ?? ""
        switch name {
        case "session.activationDidComplete": return "activation: " + (entry.string("activationState") ?? "?")
        case "session.reachabilityDidChange": return entry["isReachable"]?.boolValue == true ? "reachable" : "not reachable"
        case "app.stateDidChange": return "app " + (entry.string("appState") ?? "?")
        case "session.didBecomeInactive": return "inactive"
        case "session.didDeactivate": return "deactivated"
        case "activeWatch": return "active watch: " + (entry.string("value") ?? "?")
        case "sessionWatch": return "the app's session is with " + (entry.string("value") ?? "?")
        case "paired": return "paired with " + (entry.string("peer") ?? "?") + (entry["isActive"]?.boolValue == true ? ", the active watch" : "")
        case "session.watchStateDidChange":
            return
                "paired \(flag(entry, "isPaired")), app installed \(flag(entry, "isWatchAppInstalled")), complication \(flag(entry, "isComplicationEnabled"))"
        case "session.companionAppInstalledDidChange": return "companion app installed \(flag(entry, "isCompanionAppInstalled"))"
        case "workout.stateDidChange": return entry["running"]?.boolValue == true ? "workout started" : "workout ended"
        case "weather.reportDelayed":
            let value = entry["isReachable"]?.boolValue == true ? "reachable" : "not reachable"
            return "weather: \(value), told in \(entry.int("lagMilliseconds") ?? 0) ms (seed \(entry.int("seed") ?? 0))"
        case "weather.reportMissed":
            let value = entry["isReachable"]?.boolValue == true ? "reachable" : "not reachable"
            return "weather: \(value), never told (seed \(entry.int("seed") ?? 0))"
        case "weather.spellBegan":
            return "weather: \(entry.string("spell") ?? "spell") for \(entry.int("durationMilliseconds") ?? 0) ms (seed \(entry.int("seed") ?? 0))"
        case "weather.spellEnded": return "weather: \(entry.string("spell") ?? "spell") over"
        default: return name
        }
    }

    private static func flag(_ entry: TraceEntry, _ key: String) -> String {
        entry[key]?.boolValue == true ? "yes" : "no"
    }

    static func channelName(_ channel: Int64) -> String {
        switch channel {
        case 1: return "userInfo"
        case 2: return "context"
        case 3: return "file"
        default: return "ch\(channel)"
        }
    }

    /// Every member of the entry, one `key: value` a line, for hover details.
    public static func details(_ entry: TraceEntry) -> String {
        entry.object.map { "\($0.key): \($0.value.stringValue ?? JSON.serialize($0.value))" }.joined(separator: "\n")
    }

    /// `12:48:25.032517` (UTC) of a trace time.
    public static func clock(_ time: Int64) -> String {
        let micros = ((time % 86_400_000_000) + 86_400_000_000) % 86_400_000_000
        let seconds = micros / 1_000_000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(micros % 1_000_000)
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}
