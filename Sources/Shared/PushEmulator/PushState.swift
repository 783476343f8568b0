import LinkJSON
import LinkSystem

/// What phoned keeps of the push emulator across restarts (`push/state.json` in its state
/// directory): the device token and PushKit types, tokens given up, the app's ids and the
/// providers' public keys.
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
        var object: JSONObject = [:]
        object["bundleId"] = .string(bundleId)
        object["invalidated"] = .object(JSONObject(invalidated.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }))
        object["keys"] = .object(JSONObject(keys.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        object["teamId"] = .string(teamId)
        if let token { object["token"] = .string(token) }
        object["tokenUpdateIntervalSeconds"] = .int(tokenUpdateIntervalSeconds)
        object["types"] = .array(types.map { .string($0) })
        return .object(object)
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
    }

    init() {}
}

struct PushStateError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
