/// A JSON object: members keep the order they were inserted in, lookups by key are O(1).
///
/// Equality and hashing ignore member order, as JSON objects do.
public struct JSONObject: Sendable {
    private var orderedKeys: [String] = []
    private var storage: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// An object with the given members; a repeated key keeps its first position and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (key, value) in members {
            self[key] = value
        }
    }

    /// The value of the member `key`; setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil {
                    orderedKeys.append(key)
                }
            } else if storage.removeValue(forKey: key) != nil {
                orderedKeys.removeAll { $0 == key }
            }
        }
    }

    /// The member names in insertion order.
    public var keys: [String] { orderedKeys }

    /// The member values in insertion order.
    public var values: [JSONValue] { orderedKeys.map { storage[$0]! } }

    /// The number of members.
    public var count: Int { orderedKeys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { orderedKeys.isEmpty }

    /// Whether the object has a member named `key`.
    public func contains(_ key: String) -> Bool { storage[key] != nil }

    /// Removes the member `key` and returns its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = storage[key]
        self[key] = nil
        return old
    }
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: Sequence {
    public typealias Element = (key: String, value: JSONValue)

    /// Iterates the members in insertion order.
    public struct Iterator: IteratorProtocol {
        private let object: JSONObject
        private var position = 0

        fileprivate init(_ object: JSONObject) { self.object = object }

        public mutating func next() -> (key: String, value: JSONValue)? {
            guard position < object.orderedKeys.count else { return nil }
            let key = object.orderedKeys[position]
            position += 1
            return (key, object.storage[key]!)
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    public var underestimatedCount: Int { count }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of this object.
    public var description: String { JSON.serialize(.object(self)) }
}
