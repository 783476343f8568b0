/// Encodes and decodes dictionaries as binary property lists (`bplist00`), the format of
/// message and context payloads.
///
/// The codec is written here rather than built on Foundation's `PropertyListSerialization`:
/// on Linux that class also accepts XML and OpenStep text in place of binary data, reports a
/// damaged binary list as "Unexpected character b at line 1", and documents no bound on
/// nesting or on how far shared references expand. This codec reads only `bplist00`,
/// names the offending object in every error, checks every length against the input before
/// allocating, limits nesting to ``maximumDepth``, and bounds the decoded value's size by
/// the input's. Its output is read by `PropertyListSerialization` on every platform, and it
/// reads what `PropertyListSerialization` writes.
public enum PropertyListCodec {
    /// The deepest nesting of arrays and dictionaries, the top-level dictionary included.
    public static let maximumDepth = 64

    /// The binary property list of `dictionary`, with keys in a stable order.
    ///
    /// - Throws: ``PropertyListError`` when the value nests deeper than ``maximumDepth``.
    public static func encode(_ dictionary: [String: PropertyListValue]) throws -> [UInt8] {
        var list = PropertyListBuilder(nodes: 1 + 2 * dictionary.count)
        list.value(.dictionary(dictionary))
        return try encode(list)
    }

    /// The binary property list of the dictionary of `entries`, written as ``encode(_:)``
    /// writes it, without a Swift dictionary between (keys must be distinct).
    ///
    /// - Throws: ``PropertyListError`` when the value nests deeper than ``maximumDepth``.
    public static func encode(entries: [(key: String, value: PropertyListValue)]) throws -> [UInt8] {
        var list = PropertyListBuilder(nodes: 1 + 2 * entries.count)
        list.beginDictionary()
        for (key, value) in entries {
            list.string(key)
            list.value(value)
        }
        list.end()
        return try encode(list)
    }

    /// The binary property list of the first value told to `list` (a dictionary, for a
    /// payload), written as ``encode(_:)`` writes the same value.
    ///
    /// - Throws: ``PropertyListError`` when the value nests deeper than ``maximumDepth`` or a
    ///   dictionary has two keys of the same UTF-8 bytes.
    public static func encode(_ list: PropertyListBuilder) throws -> [UInt8] {
        try BinaryPropertyListWriter.write(list)
    }

    /// A dictionary's entries in the order the encoding writes them: by the keys' UTF-8 bytes.
    public static func sortedEntries(_ dictionary: [String: PropertyListValue]) -> [(key: String, value: PropertyListValue)] {
        sorted(Array(dictionary))
    }

    /// `entries` in the order the encoding writes them: by the keys' UTF-8 bytes.
    public static func sorted(_ entries: [(key: String, value: PropertyListValue)]) -> [(key: String, value: PropertyListValue)] {
        var entries = entries
        if !isSorted(entries) { entries.sort { UTF8Order.precedes($0.key, $1.key) } }
        return entries
    }

    private static func isSorted(_ entries: [(key: String, value: PropertyListValue)]) -> Bool {
        guard entries.count > 1 else { return true }
        for index in 1..<entries.count where !UTF8Order.precedes(entries[index - 1].key, entries[index].key) { return false }
        return true
    }

    /// The entries of the dictionary a binary property list holds, by their keys' UTF-8 bytes:
    /// what ``decodeDictionary(_:)`` gives, without a Swift dictionary between.
    ///
    /// - Throws: the ``PropertyListError`` that ``decodeDictionary(_:)`` throws.
    public static func decodeEntries(_ bytes: [UInt8]) throws -> [(key: String, value: PropertyListValue)] {
        let entries = try BinaryPropertyListReader.withReader(bytes) { reader in try reader.readTopEntries() }
        guard let entries else {
            // Not a dictionary: the decoder names what it is.
            return sortedEntries(try decodeDictionary(bytes))
        }
        return sorted(entries)
    }

    /// Reports the dictionary a binary property list holds to `walker`, value by value in the
    /// order ``decodeEntries(_:)`` gives them (keys by their UTF-8 bytes), without building it,
    /// when it has the common form: every string ASCII, every dictionary's keys in ascending
    /// byte order. False for anything else, valid or not, perhaps after part of it was
    /// reported: the caller then decodes it.
    public static func walkDictionary<Walker: PropertyListWalker>(_ bytes: [UInt8], with walker: inout Walker) -> Bool {
        (try? BinaryPropertyListReader.withReader(bytes) { reader in reader.walkTopDictionary(&walker) }) ?? false
    }

    /// The members of the dictionary in `bytes` when it is flat: ASCII keys, each value an
    /// ASCII string, an integer or a boolean, at most `entries.count` of them, in a file of
    /// under 64 KiB and 256 objects. They are written to `entries` in the order
    /// ``decodeEntries(_:)`` gives (keys by their bytes) and borrow `bytes`. Their count, or
    /// nil for any other dictionary and anything that is not one: the caller then walks or
    /// decodes the bytes.
    public static func readFlatDictionary(
        _ bytes: UnsafeBufferPointer<UInt8>,
        into entries: UnsafeMutableBufferPointer<FlatDictionaryEntry>
    ) -> Int? {
        try? BinaryPropertyListReader.withReader(bytes) { reader in
            reader.readFlatTopDictionary(into: entries.baseAddress, capacity: entries.count)
        }
    }

    /// The dictionary a binary property list holds.
    ///
    /// - Throws: ``PropertyListError`` naming the problem: not a binary property list, a
    ///   damaged structure, a top level that is not a dictionary, a key that is not a string,
    ///   a type WatchConnectivity does not carry (null, UID, set), an integer outside `Int64`,
    ///   or nesting deeper than ``maximumDepth``.
    public static func decodeDictionary(_ bytes: [UInt8]) throws -> [String: PropertyListValue] {
        let top = try BinaryPropertyListReader.withReader(bytes) { reader in try reader.readTopObject() }
        guard case .dictionary(let dictionary) = top else {
            throw PropertyListError("top level is \(article(top.kindName)) \(top.kindName), not a dictionary")
        }
        return dictionary
    }

    /// Checks that `bytes` hold a dictionary that ``decodeDictionary(_:)`` decodes, without
    /// building it (only its keys): what a receiver does with a message or a userInfo it keeps
    /// as bytes and decodes when someone reads it.
    ///
    /// - Throws: the ``PropertyListError`` that ``decodeDictionary(_:)`` throws for `bytes`.
    public static func checkDictionary(_ bytes: [UInt8]) throws {
        guard !isDictionaryByCheck(bytes) else { return }
        // The reason, in the decoder's words (and the decoder's verdict, should they differ).
        _ = try decodeDictionary(bytes)
    }

    /// The check of ``checkDictionary(_:)`` alone: true when it finds a dictionary that
    /// ``decodeDictionary(_:)`` decodes. The two agree on every input (the property-list
    /// fuzzer asserts it).
    public static func isDictionaryByCheck(_ bytes: [UInt8]) -> Bool {
        (try? BinaryPropertyListReader.withReader(bytes) { reader in try reader.checkTopObject() }) ?? false
    }

    static func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }
}
