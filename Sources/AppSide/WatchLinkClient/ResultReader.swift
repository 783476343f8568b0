import LinkJSON

/// Reads the fields of an op's result, failing with ``WatchLinkError/invalidResponse(_:)``
/// naming the op and the field when one is missing or of another type.
struct ResultReader {
    let object: JSONObject
    let op: String

    init(_ object: JSONObject, op: String) {
        self.object = object
        self.op = op
    }

    func string(_ key: String) throws(WatchLinkError) -> String {
        try required(key, "a string") { $0.stringValue }
    }

    func bool(_ key: String) throws(WatchLinkError) -> Bool {
        try required(key, "a boolean") { $0.boolValue }
    }

    func int(_ key: String) throws(WatchLinkError) -> Int {
        try required(key, "an integer") { $0.intValue.flatMap { Int(exactly: $0) } }
    }

    func object(_ key: String) throws(WatchLinkError) -> JSONObject {
        try required(key, "an object") { $0.objectValue }
    }

    func array(_ key: String) throws(WatchLinkError) -> [JSONValue] {
        try required(key, "an array") { $0.arrayValue }
    }

    func optionalBool(_ key: String) -> Bool? { object[key]?.boolValue }

    func optionalInt(_ key: String) -> Int? { object[key]?.intValue.flatMap { Int(exactly: $0) } }

    func optionalString(_ key: String) -> String? { object[key]?.stringValue }

    /// A string naming a case of `T`.
    func value<T: RawRepresentable>(_ key: String, as type: T.Type) throws(WatchLinkError) -> T where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            throw .invalidResponse("'\(key)' of the result of '\(op)' is \"\(text)\", not a known \(T.self)")
        }
        return value
    }

    /// The objects of the array `key`, each read by `read`.
    func objects<T>(_ key: String, _ read: (ResultReader) throws(WatchLinkError) -> T) throws(WatchLinkError) -> [T] {
        var values: [T] = []
        for element in try array(key) {
            guard let member = element.objectValue else {
                throw .invalidResponse("'\(key)' of the result of '\(op)' holds \(element.typeName), not objects")
            }
            values.append(try read(ResultReader(member, op: op)))
        }
        return values
    }

    private func required<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws(WatchLinkError) -> T {
        guard let value = object[key] else {
            throw .invalidResponse("the result of '\(op)' has no '\(key)': \(object)")
        }
        guard let typed = read(value) else {
            throw .invalidResponse("'\(key)' of the result of '\(op)' is \(value.typeName), not \(expected)")
        }
        return typed
    }
}
