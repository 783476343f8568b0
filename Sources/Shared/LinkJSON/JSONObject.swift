/// A JSON object: members keep the order they were inserted in.
///
/// The members are kept in one array and found by a scan, which for the small objects the
/// control protocol is made of (requests, responses, events, a message's dictionary) costs
/// less than hashing the key; an object that grows past ``indexedCount`` members gets an index
/// by key, so lookups stay O(1) for large ones.
///
/// An object can also be kept as its text: compact text that a ``JSONWriter`` wrote (from a
/// property list, say, and only written), which the serializer copies; or the text a request
/// held it in (``JSON/parse(_:keepingObjectsAsTextFrom:)``), which the serializer writes as it
/// writes the parsed object. Anything that reads or changes the members parses the text first.
///
/// Equality and hashing ignore member order, as JSON objects do.
public struct JSONObject: Sendable {
    private struct Member: Sendable {
        var key: String
        var value: JSONValue
    }

    private var members: [Member] = []
    /// The members' positions by key, once there are more than ``indexedCount``.
    private var positions: [String: Int]?
    /// The object's JSON text, when it is kept as text (``members`` is then empty).
    private var storedText: Text?

    private enum Text: Sendable {
        /// What ``JSON/serialize(_:)`` writes for the object.
        case compact([UInt8])
        /// The text the object was read from.
        case source([UInt8])
        /// The text the object was read from, in which the parser found every string ASCII
        /// without an escape (a case of its own: a flag beside the bytes would make every
        /// ``JSONValue`` larger, and each copy of one dearer).
        case plainSource([UInt8])

        var bytes: [UInt8] {
            switch self {
            case .compact(let bytes), .source(let bytes), .plainSource(let bytes): return bytes
            }
        }
    }

    /// From how many members on lookups go through an index rather than a scan.
    static let indexedCount = 16

    /// An empty object.
    public init() {}

    /// An object of one member (a reply, say): without the array a literal is handed in.
    public init(member key: String, _ value: JSONValue) {
        members = [Member(key: key, value: value)]
    }

    /// An object with the given members; a repeated key keeps its first position and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        self.members.reserveCapacity(members.underestimatedCount)
        for (key, value) in members { add(key, value) }
        if self.members.count > Self.indexedCount { index() }
    }

    /// Adds a member while the object is being made (not text, not indexed yet): a repeated
    /// key keeps its first position and takes the last value.
    @inline(__always)
    private mutating func add(_ key: String, _ value: JSONValue) {
        if let position = members.firstIndex(where: { $0.key == key }) {
            members[position].value = value
        } else {
            members.append(Member(key: key, value: value))
        }
    }

    /// The object whose compact text is `compactText`, byte for byte what ``JSON/serialize(_:)``
    /// writes for it (what ``JSONWriter`` writes; debug builds check it): for text written
    /// straight from something else, such as a property list.
    public init(compactText: [UInt8]) {
        storedText = .compact(compactText)
        assert(JSON.serialize(.object(parsed)).utf8.elementsEqual(compactText), "compact text that the serializer would not write")
    }

    /// The object a parser checked as the JSON text `sourceText`; `stringsArePlain` when the
    /// check found every string in it ASCII without an escape or a control character.
    init(sourceText: [UInt8], stringsArePlain: Bool) {
        storedText = stringsArePlain ? .plainSource(sourceText) : .source(sourceText)
    }

    /// The JSON text of the object, when it is kept as text: valid JSON of one object, though
    /// not necessarily as the serializer writes it.
    public var jsonText: [UInt8]? { storedText?.bytes }

    /// Whether the object is kept as the text it was read from and the parser found every
    /// string in that text ASCII without an escape or a control character: each string of
    /// the text then ends at the next quote, and a reader of the text need not look at its
    /// bytes again.
    public var jsonTextStringsArePlain: Bool {
        guard case .plainSource? = storedText else { return false }
        return true
    }

    /// The text, when it is what the serializer writes.
    var compactText: [UInt8]? {
        guard case .compact(let bytes)? = storedText else { return nil }
        return bytes
    }

    /// Whether the object is kept as text.
    private var isText: Bool { storedText != nil }

    /// The object the text holds.
    private var parsed: JSONObject {
        guard let text = storedText?.bytes else { return self }
        guard case .object(let object)? = try? JSON.parse(text) else {
            preconditionFailure("the text of a JSONObject is not a JSON object")
        }
        return object
    }

    /// The object with every member, and every object inside, read from its text.
    public var materialized: JSONObject {
        if isText { return parsed }
        guard members.contains(where: \.value.holdsText) else { return self }
        var object = self
        for position in object.members.indices {
            object.members[position].value = object.members[position].value.materialized
        }
        return object
    }

    /// Whether the object or one inside is kept as text.
    var holdsText: Bool {
        isText || members.contains(where: \.value.holdsText)
    }

    /// Made of its members, for a change.
    private mutating func materialize() {
        if isText { self = parsed }
    }

    /// An object of members whose keys the caller knows to be distinct (decoded from a
    /// property-list dictionary, say): no key is looked for before each is added.
    public init(uniqueKeysWithValues members: [(String, JSONValue)]) {
        self.members.reserveCapacity(members.count)
        for (key, value) in members { self.members.append(Member(key: key, value: value)) }
        if self.members.count > Self.indexedCount { index() }
        assert(Set(self.members.map(\.key)).count == self.members.count, "JSONObject(uniqueKeysWithValues:) was given a key twice")
    }

    /// Makes room for `count` members.
    public mutating func reserveCapacity(_ count: Int) {
        materialize()
        members.reserveCapacity(count)
    }

    /// Where the member `key` is in ``members``.
    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// The value of the member `key`; setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            if isText { return parsed[key] }
            return position(of: key).map { members[$0].value }
        }
        set {
            materialize()
            if let newValue {
                if let position = position(of: key) {
                    members[position].value = newValue
                    return
                }
                members.append(Member(key: key, value: newValue))
                if positions != nil {
                    positions![key] = members.count - 1
                } else if members.count > Self.indexedCount {
                    index()
                }
            } else if let position = position(of: key) {
                members.remove(at: position)
                if positions != nil { index() }
            }
        }
    }

    private mutating func index() {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { positions[member.key] = position }
        self.positions = positions
    }

    /// The member names in insertion order.
    public var keys: [String] { parsed.members.map(\.key) }

    /// The member values in insertion order.
    public var values: [JSONValue] { parsed.members.map(\.value) }

    /// The number of members.
    public var count: Int { isText ? parsed.count : members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { isText ? parsed.isEmpty : members.isEmpty }

    /// Whether the object has a member `key`.
    public func contains(_ key: String) -> Bool { self[key] != nil }

    /// Removes the member `key` and returns its value, if there was one.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        self[key] = nil
        return old
    }
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        if lhs.isText || rhs.isText { return lhs.parsed == rhs.parsed }
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Combines the members' hashes in an order-independent way (keys are unique, so no two
    /// members cancel out).
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        let members = parsed.members
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        // ``init(_:)`` without its generic sequence and its member-by-member subscript: results
        // and events are written as literals, many per request.
        members.reserveCapacity(elements.count)
        for (key, value) in elements { add(key, value) }
        if members.count > Self.indexedCount { index() }
    }
}

extension JSONObject: Sequence {
    public typealias Element = (key: String, value: JSONValue)

    public struct Iterator: IteratorProtocol {
        private let members: [Member]
        private var position = 0

        fileprivate init(_ object: JSONObject) { members = object.parsed.members }

        public mutating func next() -> (key: String, value: JSONValue)? {
            guard position < members.count else { return nil }
            defer { position += 1 }
            return (members[position].key, members[position].value)
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    public var underestimatedCount: Int { count }
}
