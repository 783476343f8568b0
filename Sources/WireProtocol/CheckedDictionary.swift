/// A dictionary received as a binary property list: checked as it arrived
/// (``PropertyListCodec/checkDictionary(_:)``) and kept as its bytes, decoded when someone reads
/// it. A receiver answers a damaged message at once, as a device does, but builds the
/// dictionary only for whoever looks at it (the app, `received.list`, an event subscriber).
///
/// Two are equal when their dictionaries are, whatever their encodings.
public struct CheckedDictionary: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The binary property list, as received.
    public let encoded: [UInt8]

    /// Checks `bytes`.
    /// - Throws: the ``PropertyListError`` that decoding them would throw.
    public init(checking bytes: [UInt8]) throws {
        try PropertyListCodec.checkDictionary(bytes)
        encoded = bytes
    }

    /// The encoding of `dictionary`.
    /// - Throws: ``PropertyListError`` when it nests deeper than ``PropertyListCodec/maximumDepth``.
    public init(_ dictionary: [String: PropertyListValue]) throws {
        encoded = try PropertyListCodec.encode(dictionary)
    }

    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        do {
            try self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
        } catch {
            preconditionFailure("a dictionary literal nests deeper than \(PropertyListCodec.maximumDepth) levels: \(error)")
        }
    }

    /// The dictionary. The bytes were checked, so decoding them cannot fail (the check and the
    /// decoder agree on every input; the property-list fuzzer holds them to it).
    public var dictionary: [String: PropertyListValue] {
        do {
            return try PropertyListCodec.decodeDictionary(encoded)
        } catch {
            preconditionFailure("bytes that passed the check do not decode: \(error)")
        }
    }

    public static func == (lhs: CheckedDictionary, rhs: CheckedDictionary) -> Bool {
        lhs.encoded == rhs.encoded || lhs.dictionary == rhs.dictionary
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(dictionary)
    }
}
