/// A member of a flat dictionary: an ASCII key and an ASCII string, an integer or a boolean.
/// The bytes are borrowed: they must stay valid while the entry is used.
///
/// Kept in 32 bytes (pointers, 32-bit lengths, a kind) rather than as a buffer and an enum (40):
/// the readers collect up to ``maximumCount`` of them in a temporary allocation, which Swift
/// places on the stack only up to 1,024 bytes (beyond, each request paid a heap allocation).
public struct FlatDictionaryEntry {
    public enum Value {
        case asciiString(UnsafeBufferPointer<UInt8>)
        case integer(Int64)
        case boolean(Bool)
    }

    /// How many a reader collects at most: those fit in 1,024 bytes.
    public static let maximumCount = 32

    // Inlinable: the readers in other modules make and read one per member.
    @usableFromInline let keyStart: UnsafePointer<UInt8>?
    /// A string's start, an integer's bits, or a boolean.
    @usableFromInline let valueBits: UInt64
    @usableFromInline let keyCount: UInt32
    @usableFromInline let stringCount: UInt32
    @usableFromInline let kind: Kind

    @usableFromInline
    enum Kind: UInt8 {
        case asciiString, integer, boolean
    }

    @inlinable
    public var key: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: keyStart, count: Int(keyCount))
    }

    @inlinable
    public var value: Value {
        switch kind {
        case .asciiString:
            return .asciiString(UnsafeBufferPointer(start: UnsafePointer(bitPattern: UInt(valueBits)), count: Int(stringCount)))
        case .integer:
            return .integer(Int64(bitPattern: valueBits))
        case .boolean:
            return .boolean(valueBits != 0)
        }
    }

    /// - Precondition: the key and a string value are shorter than 4 GiB.
    @inlinable
    public init(key: UnsafeBufferPointer<UInt8>, value: Value) {
        keyStart = key.baseAddress
        keyCount = UInt32(key.count)
        switch value {
        case .asciiString(let string):
            kind = .asciiString
            valueBits = UInt64(UInt(bitPattern: string.baseAddress))
            stringCount = UInt32(string.count)
        case .integer(let integer):
            kind = .integer
            valueBits = UInt64(bitPattern: integer)
            stringCount = 0
        case .boolean(let boolean):
            kind = .boolean
            valueBits = boolean ? 1 : 0
            stringCount = 0
        }
    }
}

extension PropertyListCodec {
    /// The `bplist00` file of a dictionary whose keys are ASCII and whose values are ASCII
    /// strings, integers or booleans (the form of most dictionaries apps send), written in one
    /// pass: the bytes ``encode(entries:)`` writes for the same members, without a
    /// ``PropertyListBuilder`` or a `String` between. Nil when two keys are equal.
    ///
    /// Sorts `entries` by key. The caller checks that keys and strings are ASCII.
    public static func encodeFlatDictionary(_ entries: UnsafeMutableBufferPointer<FlatDictionaryEntry>) -> [UInt8]? {
        FlatDictionaryWriter.write(entries)
    }
}

/// Numbers and writes the objects as ``BinaryPropertyListWriter`` does: the dictionary (object
/// 0), its keys in the order of their bytes (1 through n: keys are distinct), then its values
/// in the keys' order, a string equal to a key or to an earlier string sharing that object.
enum FlatDictionaryWriter {
    static func write(_ entries: UnsafeMutableBufferPointer<FlatDictionaryEntry>) -> [UInt8]? {
        let count = entries.count
        guard sortByKey(entries) else { return nil }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * count + 1) { scratch in
            // The object of each entry's value, and, in object order, the entries whose value
            // made a new object.
            let valueObjects = scratch.baseAddress!
            let newValues = scratch.baseAddress! + count
            var newValueCount = 0
            var objectsSize = 0
            // A bit for each key and each string written so far, picked by a hash of the
            // string's length and first and last eight bytes: a string whose bit is in
            // neither set shares nothing, with no look.
            var keyPrints: UInt64 = 0
            for index in 0..<count { keyPrints |= fingerprint(entries[index].key) }
            var valuePrints: UInt64 = 0
            for index in 0..<count {
                let key = entries[index].key
                objectsSize += BinaryPropertyList.markerSize(count: key.count) + key.count
                switch entries[index].value {
                case .asciiString(let string):
                    let bit = fingerprint(string)
                    if (keyPrints | valuePrints) & bit != 0,
                        let shared = sharedObject(of: string, in: entries, keyPrints: keyPrints, newValues: newValues, count: newValueCount)
                    {
                        valueObjects[index] = shared
                        continue
                    }
                    valuePrints |= bit
                    objectsSize += BinaryPropertyList.markerSize(count: string.count) + string.count
                case .integer(let integer):
                    objectsSize += BinaryPropertyList.integerSize(integer)
                case .boolean:
                    objectsSize += 1
                }
                valueObjects[index] = 1 + count + newValueCount
                newValues[newValueCount] = index
                newValueCount += 1
            }
            let objectCount = 1 + count + newValueCount
            let referenceSize = BinaryPropertyList.byteCount(for: UInt64(objectCount - 1))
            objectsSize += BinaryPropertyList.markerSize(count: count) + 2 * count * referenceSize
            return PropertyListOutput.file(objectsSize: objectsSize, objectCount: objectCount, referenceSize: referenceSize) { out in
                out.startObject()
                out.putMarker(BinaryPropertyList.dictionaryMarker, count: count)
                for index in 0..<count { out.putUnsigned(UInt64(1 + index), size: referenceSize) }
                for index in 0..<count { out.putUnsigned(UInt64(valueObjects[index]), size: referenceSize) }
                for index in 0..<count {
                    out.startObject()
                    out.putMarker(BinaryPropertyList.asciiStringMarker, count: entries[index].key.count)
                    out.put(entries[index].key)
                }
                for position in 0..<newValueCount {
                    out.startObject()
                    switch entries[newValues[position]].value {
                    case .asciiString(let string):
                        out.putMarker(BinaryPropertyList.asciiStringMarker, count: string.count)
                        out.put(string)
                    case .integer(let integer):
                        out.putInteger(integer)
                    case .boolean(let flag):
                        out.put(flag ? BinaryPropertyList.trueMarker : BinaryPropertyList.falseMarker)
                    }
                }
            }
        }
    }

    /// Sorts the entries by the bytes of their keys (insertion sort: a handful of keys, most
    /// often already in order); false when two keys are equal.
    private static func sortByKey(_ entries: UnsafeMutableBufferPointer<FlatDictionaryEntry>) -> Bool {
        guard entries.count > 1 else { return true }
        for index in 1..<entries.count {
            let entry = entries[index]
            var position = index
            while position > 0 {
                let order = UTF8Order.compare(entries[position - 1].key, entry.key)
                if order == 0 { return false }
                if order < 0 { break }
                entries[position] = entries[position - 1]
                position -= 1
            }
            entries[position] = entry
        }
        return true
    }

    /// The object of a key, or of an earlier value that made one, with the bytes of `string`.
    /// (A look at each: a handful, most of another length. A hashed table of them cost more.)
    private static func sharedObject(
        of string: UnsafeBufferPointer<UInt8>,
        in entries: UnsafeMutableBufferPointer<FlatDictionaryEntry>, keyPrints: UInt64,
        newValues: UnsafeMutablePointer<Int>, count newValueCount: Int
    ) -> Int? {
        if keyPrints & fingerprint(string) != 0 {
            for index in entries.indices where equal(entries[index].key, string) {
                return 1 + index
            }
        }
        for position in 0..<newValueCount {
            if case .asciiString(let earlier) = entries[newValues[position]].value, equal(earlier, string) {
                return 1 + entries.count + position
            }
        }
        return nil
    }

    /// A string's bit in a set of strings: one of 64, by a hash of its length and of its first
    /// and last eight bytes (equal strings have the same bit).
    @inline(__always)
    private static func fingerprint(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = UInt64(bytes.count)
        if bytes.count >= 8, let base = bytes.baseAddress.map(UnsafeRawPointer.init) {
            hash ^= base.loadUnaligned(as: UInt64.self) ^ base.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self).byteSwapped
        } else {
            for byte in bytes { hash = hash << 8 | UInt64(byte) }
        }
        return 1 << ((hash &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    /// Whether two byte strings are equal: lengths, then eight bytes at a time (the first and
    /// last words overlap for lengths from 8 to 16).
    @inline(__always)
    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count >= 8, let x = a.baseAddress.map(UnsafeRawPointer.init), let y = b.baseAddress.map(UnsafeRawPointer.init) else {
            for index in 0..<count where a[index] != b[index] { return false }
            return true
        }
        var offset = 0
        while offset + 8 < count {
            if x.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != y.loadUnaligned(fromByteOffset: offset, as: UInt64.self) { return false }
            offset += 8
        }
        return x.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }
}
