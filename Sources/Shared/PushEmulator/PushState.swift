import LinkJSON
import LinkSystem

/// What phoned keeps of the push emulator across restarts (`push/state.json` in its state
/// directory): the device token and PushKit types, tokens given up, the app's ids, the
/// providers' public keys, the test's settings, whether the device is online, and what APNs
/// stores for it while it is not (APNs is a service beyond the device: its store outlives the
/// device's restarts).
struct PushState: Equatable {
    var token: String?
    var types: [String] = []
    /// Token → when it was invalidated, in ms since 1970.
    var invalidated: [String: Int64] = [:]
    var bundleId = ""
    var teamId = ""
    var tokenUpdateIntervalSeconds = ProviderAuthenticator.defaultUpdateIntervalSeconds
    /// Key id → public key PEM.
    var keys: [String: String] = [:]
    /// Key id → the environment it is restricted to (absent: both).
    var keyEnvironments: [String: String] = [:]
    /// The environment of the device's tokens: the app's `aps-environment`.
    var environment = APNsEnvironment.development
    /// Tokens given up because they expired: 410 `ExpiredToken` rather than `Unregistered`.
    var expiredTokens: [String] = []
    /// Whether APNs reaches the device; while not, it stores pushes (``APNsStore``).
    var online = true
    var store = APNsStore()
    /// With more than 0, pushes of priority 5 wait this long and go out together, and those of
    /// priority 1 wait for the device to wake ("Notifications with `apns-priority 5` and
    /// `apns-priority 1` might get grouped and delivered in bursts").
    var lowPriorityDelayMilliseconds: Int64 = 0
    /// Requests to one device token APNs takes in a second before `TooManyRequests`; 0: no limit.
    var deviceTokenRateLimit: Int64 = 0
    /// False: every request is `503 ServiceUnavailable`.
    var serviceAvailable = true
    /// APNs' "only one stream until you post a request with a valid authentication token";
    /// false lets a client open every stream at once (a load generator that does not retry
    /// refused streams).
    var oneStreamUntilAuthenticated = true

    static func load(_ path: String) throws -> PushState {
        guard FileSystem.fileExists(path) else { return PushState() }
        let bytes = try FileSystem.readFile(path)
        do {
            return try PushState(json: JSON.parse(bytes))
        } catch {
            throw PushStateError("\(path) is not a push state file (\(error)); remove it to start afresh")
        }
    }

    func save(_ path: String) throws {
        try FileSystem.writeFileAtomically(path, Array(JSON.prettyPrinted(json).utf8), mode: 0o600)
    }

    /// The file's JSON: one member a field, keys sorted, `token` absent when there is none.
    var json: JSONValue {
        var members: [(String, JSONValue)] = []
        for (key, value) in unsortedMembers.sorted(by: { $0.key < $1.key }) { members.append((key, value)) }
        return .object(JSONObject(members))
    }

    private var unsortedMembers: [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object["bundleId"] = .string(bundleId)
        object["invalidated"] = .object(JSONObject(invalidated.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }))
        object["keys"] = .object(JSONObject(keys.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        object["teamId"] = .string(teamId)
        if let token { object["token"] = .string(token) }
        object["tokenUpdateIntervalSeconds"] = .int(tokenUpdateIntervalSeconds)
        object["types"] = .array(types.map { .string($0) })
        object["keyEnvironments"] = .object(JSONObject(keyEnvironments.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        object["environment"] = .string(environment.rawValue)
        object["expiredTokens"] = .array(expiredTokens.map { .string($0) })
        object["online"] = .bool(online)
        object["stored"] = .array(store.pushes.map { .object($0.json) })
        object["lowPriorityDelayMs"] = .int(lowPriorityDelayMilliseconds)
        object["deviceTokenRateLimit"] = .int(deviceTokenRateLimit)
        object["serviceAvailable"] = .bool(serviceAvailable)
        object["oneStreamUntilAuthenticated"] = .bool(oneStreamUntilAuthenticated)
        return object
    }

    /// Reads the file's JSON; every field but `token` must be there, with its type.
    init(json: JSONValue) throws {
        guard let object = json.objectValue else { throw PushStateError("the top level is \(json.typeName), not an object") }
        func field<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws -> T {
            guard let value = object[key] else { throw PushStateError("\"\(key)\" is missing") }
            guard let typed = read(value) else { throw PushStateError("\"\(key)\" is \(value.typeName), not \(expected)") }
            return typed
        }
        func map<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws -> [String: T] {
            var result: [String: T] = [:]
            for (name, member) in try field(key, "an object", { $0.objectValue }) {
                guard let typed = read(member) else { throw PushStateError("\"\(key)\".\"\(name)\" is not \(expected)") }
                result[name] = typed
            }
            return result
        }
        switch object["token"] {
        case nil, .null?: token = nil
        case let value?:
            guard let text = value.stringValue else { throw PushStateError("\"token\" is \(value.typeName), not a string") }
            token = text
        }
        types = try field("types", "an array", { $0.arrayValue }).map { element in
            guard let text = element.stringValue else { throw PushStateError("\"types\" holds \(element.typeName), not strings") }
            return text
        }
        invalidated = try map("invalidated", "an integer", { $0.intValue })
        bundleId = try field("bundleId", "a string", { $0.stringValue })
        teamId = try field("teamId", "a string", { $0.stringValue })
        tokenUpdateIntervalSeconds = try field("tokenUpdateIntervalSeconds", "an integer", { $0.intValue })
        keys = try map("keys", "a string", { $0.stringValue })
        // Fields a file of an earlier version lacks take their defaults.
        func optional<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws -> T? {
            object[key] == nil ? nil : try field(key, expected, read)
        }
        keyEnvironments = object["keyEnvironments"] == nil ? [:] : try map("keyEnvironments", "a string", { $0.stringValue })
        if let name = try optional("environment", "a string", { $0.stringValue }) {
            guard let value = APNsEnvironment(rawValue: name) else { throw PushStateError("\"environment\" is '\(name)', not development or production") }
            environment = value
        }
        expiredTokens = try optional("expiredTokens", "an array of strings", { $0.arrayValue?.compactMap(\.stringValue) }) ?? []
        online = try optional("online", "a bool", { $0.boolValue }) ?? true
        let stored = try optional("stored", "an array", { $0.arrayValue }) ?? []
        store = APNsStore(
            pushes: try stored.map { value in
                guard let push = StoredPush(json: value) else { throw PushStateError("\"stored\" holds a push that cannot be read: \(value)") }
                return push
            })
        lowPriorityDelayMilliseconds = try optional("lowPriorityDelayMs", "an integer", { $0.intValue }) ?? 0
        deviceTokenRateLimit = try optional("deviceTokenRateLimit", "an integer", { $0.intValue }) ?? 0
        serviceAvailable = try optional("serviceAvailable", "a bool", { $0.boolValue }) ?? true
        oneStreamUntilAuthenticated = try optional("oneStreamUntilAuthenticated", "a bool", { $0.boolValue }) ?? true
    }

    init() {}
}

struct PushStateError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
