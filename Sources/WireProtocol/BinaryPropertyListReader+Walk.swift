#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The walk of a property list of the common form (every string ASCII, every dictionary's
/// keys in ascending byte order): the values reported to a ``PropertyListWalker`` and nothing
/// built, with fast paths of its own for short ASCII strings and small references; and the
/// flat top dictionary read in one loop (``readFlatTopDictionary(into:capacity:)``).
extension BinaryPropertyListReader {
    /// Reports the top object to `walker` as ``readTopEntries()`` reads it, when it is a
    /// dictionary of the common form: every string ASCII and every dictionary's keys in
    /// ascending byte order (as writers that sort keys write them). The values come in the
    /// order ``PropertyListCodec/decodeEntries(_:)`` gives them, every check of the reading
    /// is made with the same budget, and nothing is built. False for anything else, valid or
    /// not, perhaps after part of it was reported.
    mutating func walkTopDictionary<Walker: PropertyListWalker>(_ walker: inout Walker) -> Bool {
        guard let start = try? offset(of: topObject), bytes[start] >> 4 == 0xD else { return false }
        return (try? walk(topObject, walker: &walker)) != nil
    }

    // The walk makes the reading's checks with fast paths of its own for what the common form
    // is made of (one- and two-byte offsets and references, short ASCII strings): a message's
    // dictionary is walked on arrival (``PropertyListCodec/checkDictionary(_:)``) and again
    // when it is shown as JSON.
    private mutating func walk<Walker: PropertyListWalker>(_ object: Int, walker: inout Walker) throws {
        remainingValueBudget -= 1
        guard remainingValueBudget >= 0, let start = objectStart(object) else { throw Invalid() }
        let marker = bytes[start]
        let info = marker & 0x0F
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case BinaryPropertyList.falseMarker: walker.boolean(false)
            case BinaryPropertyList.trueMarker: walker.boolean(true)
            default: throw Invalid()
            }
        case 0x1:
            walker.integer(try readInteger(object: object, at: start))
        case 0x2:
            guard info == 2 || info == 3 else { throw Invalid() }
            walker.real(try readReal(object: object, at: start))
        case 0x3:
            guard marker == BinaryPropertyList.dateMarker else { throw Invalid() }
            walker.date(try readDate(object: object, at: start))
        case 0x4:
            let (count, contentStart) = try readCount(object: object, at: start)
            walker.data(try readPayload(object: object, from: contentStart, count: count))
        case 0x5:
            guard let string = asciiString(object, at: start, known: false) else { throw Invalid() }
            walker.string(string)
        case 0xA:
            let (count, contentStart) = try readCount(object: object, at: start)
            guard let references = validReferences(from: contentStart, count: count) else { throw Invalid() }
            try enterContainer(object)
            defer { depth -= 1 }
            walker.beginArray(count: count)
            for index in 0..<count {
                try walk(reference(references, index), walker: &walker)
            }
            walker.endArray()
        case 0xD:
            let (count, contentStart) = try readCount(object: object, at: start)
            guard count <= Int.max / 2, let references = validReferences(from: contentStart, count: 2 * count) else { throw Invalid() }
            try enterContainer(object)
            defer { depth -= 1 }
            walker.beginDictionary(count: count)
            var previousKey: UnsafeBufferPointer<UInt8>?
            for entry in 0..<count {
                let keyObject = reference(references, entry)
                remainingValueBudget -= 1
                guard remainingValueBudget >= 0, let keyStart = objectStart(keyObject),
                    bytes[keyStart] >> 4 == 0x5, let key = asciiString(keyObject, at: keyStart, known: false)
                else { throw Invalid() }
                if let previousKey, Self.keyOrder(previousKey, key) >= 0 { throw Invalid() }
                previousKey = key
                walker.key(key)
                try walk(reference(references, count + entry), walker: &walker)
            }
            walker.endDictionary()
        default:
            // UTF-16 strings among them: the decoder reads those.
            throw Invalid()
        }
    }

    /// The members of the top dictionary when it is flat: every key an ASCII string, in
    /// ascending byte order, every value an ASCII string, an integer or a boolean (the form of
    /// most messages and replies), in a file of one- or two-byte offsets (under 64 KiB; a
    /// 16 KiB message's are two bytes) and one-byte references (under 256 objects). They are
    /// written to `entries` (borrowing the bytes), or only counted when it is nil; nil for
    /// anything else, valid or not, or for more than `capacity` members: the walk takes those.
    ///
    /// A dictionary it reads passes every check of the walk, and so of the reading: with
    /// nothing nested, the value budget and the container checks cannot fail. It is the walk
    /// for that form in one loop over the bytes, with no recursion and no walker; the check
    /// and the JSON rendering of a dictionary both run it (one function, not inlined into
    /// either, with the loop inlined into it once for each offset width: as functions of their
    /// own the one-byte copy keeps more of its values on the stack).
    @inline(never)
    func readFlatTopDictionary(into entries: UnsafeMutablePointer<FlatDictionaryEntry>?, capacity: Int) -> Int? {
        guard referenceSize == 1 else { return nil }
        switch offsetSize {
        case 1: return readFlatTopDictionary(into: entries, capacity: capacity, offsets: OneByteOffsets.self)
        case 2: return readFlatTopDictionary(into: entries, capacity: capacity, offsets: TwoByteOffsets.self)
        default: return nil
        }
    }

    @inline(__always)
    private func readFlatTopDictionary<Offsets: OffsetTableWidth>(
        into entries: UnsafeMutablePointer<FlatDictionaryEntry>?, capacity: Int, offsets: Offsets.Type
    ) -> Int? {
        let base = bytes.baseAddress!
        let objectsEnd = offsetTableOffset
        // The offset table's `objectCount` entries lie inside the file (the initialiser checked).
        let table = base + offsetTableOffset
        @inline(__always)
        func start(_ object: Int) -> Int? {
            let offset = Offsets.offset(of: object, in: table)
            return offset >= BinaryPropertyList.headerLength && offset < objectsEnd ? offset : nil
        }
        guard let top = start(topObject), base[top] >> 4 == 0xD,
            let counted = try? readCount(object: topObject, at: top), counted.count <= capacity,
            counted.contentStart <= objectsEnd, counted.count <= (objectsEnd - counted.contentStart) / 2
        else { return nil }
        let count = counted.count
        let references = base + counted.contentStart
        // One scan of the object area after the top dictionary's marker byte (when it is the
        // first object, as writers put it): every other object, and so every string's bytes,
        // lies there, and with no byte of 0x80 or more in it every string is ASCII and none is
        // checked on its own. (An integer's bytes, a large count or references past 127 can
        // have the high bit: then each string is checked.)
        let stringsAreASCII =
            top == BinaryPropertyList.headerLength
            && ASCII.firstNonASCII(UnsafeRawBufferPointer(start: base + top + 1, count: objectsEnd - top - 1)) == nil
        var previousKey: UnsafeBufferPointer<UInt8>?
        for entry in 0..<count {
            let keyObject = Int(references[entry])
            let valueObject = Int(references[count + entry])
            guard keyObject < objectCount, valueObject < objectCount,
                let keyStart = start(keyObject), base[keyStart] >> 4 == 0x5,
                let key = asciiString(keyObject, at: keyStart, known: stringsAreASCII),
                let valueStart = start(valueObject)
            else { return nil }
            if let previousKey, Self.keyOrder(previousKey, key) >= 0 { return nil }
            previousKey = key
            let marker = base[valueStart]
            let value: FlatDictionaryEntry.Value
            switch marker >> 4 {
            case 0x5:
                guard let string = asciiString(valueObject, at: valueStart, known: stringsAreASCII) else { return nil }
                value = .asciiString(string)
            case 0x1:
                guard let integer = try? readInteger(object: valueObject, at: valueStart) else { return nil }
                value = .integer(integer)
            case 0x0 where marker == BinaryPropertyList.trueMarker || marker == BinaryPropertyList.falseMarker:
                value = .boolean(marker == BinaryPropertyList.trueMarker)
            default:
                return nil
            }
            entries?.advanced(by: entry).initialize(to: FlatDictionaryEntry(key: key, value: value))
        }
        return count
    }

    /// How an object's offset is read from the offset table: the flat loop has a copy for each
    /// width, with no test of the width for each object.
    private protocol OffsetTableWidth {
        static func offset(of object: Int, in table: UnsafePointer<UInt8>) -> Int
    }

    private enum OneByteOffsets: OffsetTableWidth {
        @inline(__always)
        static func offset(of object: Int, in table: UnsafePointer<UInt8>) -> Int { Int(table[object]) }
    }

    private enum TwoByteOffsets: OffsetTableWidth {
        @inline(__always)
        static func offset(of object: Int, in table: UnsafePointer<UInt8>) -> Int {
            Int(table[2 &* object]) << 8 | Int(table[2 &* object &+ 1])
        }
    }

    /// The bytes of the ASCII string object at `start` (marker 0x5), or nil when it runs past
    /// the object area or holds a byte of 0x80 or more; `known`: the bytes were found ASCII
    /// already (the scan of the object area), only the bounds are checked.
    @inline(__always)
    private func asciiString(_ object: Int, at start: Int, known: Bool) -> UnsafeBufferPointer<UInt8>? {
        let info = Int(bytes[start] & 0x0F)
        guard info < 0x0F else { return longASCIIString(object, at: start, known: known) }
        let contentStart = start + 1
        guard info <= offsetTableOffset - contentStart else { return nil }
        if !known {
            // A short string: two loads of eight bytes, all inside the file (the offset table
            // and the 32-byte trailer follow the object area), masked to the string's own.
            let content = UnsafeRawPointer(bytes.baseAddress! + contentStart)
            let high: UInt64 = 0x8080_8080_8080_8080
            let first = UInt64(littleEndian: content.loadUnaligned(as: UInt64.self))
            let second = UInt64(littleEndian: content.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let firstMask: UInt64 = info >= 8 ? .max : (1 << (8 * UInt64(info))) &- 1
            let secondMask: UInt64 = info <= 8 ? 0 : (1 << (8 * UInt64(info - 8))) &- 1
            guard (first & firstMask | second & secondMask) & high == 0 else { return nil }
        }
        return UnsafeBufferPointer(rebasing: bytes[contentStart..<contentStart + info])
    }

    /// A string of 15 bytes or more (marker 0x5F): its count in the integer after the marker.
    /// A count of one or two bytes (what writers use below 65,536) is read here, with the
    /// bounds ``readCount(object:at:)`` and ``readPayload(object:from:count:)`` check; any
    /// other form, or one they refuse, goes through them. (Out of line: inlined, it kept the
    /// short strings' check from being inlined into the flat loop.)
    @inline(never)
    private func longASCIIString(_ object: Int, at start: Int, known: Bool) -> UnsafeBufferPointer<UInt8>? {
        let base = bytes.baseAddress!
        let end = offsetTableOffset
        let count: Int
        let contentStart: Int
        if start + 3 <= end && base[start + 1] == 0x10 {
            count = Int(base[start + 2])
            contentStart = start + 3
        } else if start + 4 <= end && base[start + 1] == 0x11 {
            count = Int(base[start + 2]) << 8 | Int(base[start + 3])
            contentStart = start + 4
        } else {
            return try? asciiContent(object, at: start, known: known)
        }
        guard count <= end - contentStart else { return nil }
        let content = UnsafeBufferPointer(start: base + contentStart, count: count)
        guard known || ASCII.firstNonASCII(UnsafeRawBufferPointer(content)) == nil else { return nil }
        return content
    }

    /// The order of two keys of the file (``UTF8Order/compare(_:_:)``'s sign): their first
    /// eight bytes as one big-endian word, masked to each key's length, decide unless they
    /// are equal. The loads stay inside the file: the offset table and the 32-byte trailer
    /// follow any string.
    @inline(__always)
    private static func keyOrder(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let x = prefixWord(a), y = prefixWord(b)
        if x != y { return x < y ? -1 : 1 }
        return UTF8Order.compare(a, b)
    }

    /// The first eight bytes of `bytes` (fewer: zeros after them) as a big-endian word, so
    /// that words order as the bytes do.
    @inline(__always)
    private static func prefixWord(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return 0 }
        let word = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
        return bytes.count >= 8 ? word : word & ~(UInt64.max >> (8 * UInt64(bytes.count)))
    }

    /// The bytes of the ASCII string object at `start` (`known`: found ASCII already).
    private func asciiContent(_ object: Int, at start: Int, known: Bool) throws -> UnsafeBufferPointer<UInt8> {
        let (count, contentStart) = try readCount(object: object, at: start)
        let content = try readPayload(object: object, from: contentStart, count: count)
        guard known || ASCII.firstNonASCII(UnsafeRawBufferPointer(content)) == nil else { throw Invalid() }
        return content
    }

    /// ``checkReferences(object:from:count:)`` without its errors.
    @inline(__always)
    private func validReferences(from start: Int, count: Int) -> UnsafeBufferPointer<UInt8>? {
        guard start <= offsetTableOffset, count <= (offsetTableOffset - start) / referenceSize else { return nil }
        let content = UnsafeBufferPointer(rebasing: bytes[start..<start + count * referenceSize])
        if referenceSize == 1 {
            if objectCount <= 0xFF {
                for reference in content where Int(reference) >= objectCount { return nil }
            }
            return content
        }
        for index in 0..<count where Self.readUnsigned(content, at: index * referenceSize, size: referenceSize) >= UInt64(objectCount) {
            return nil
        }
        return content
    }
}
