#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a `bplist00` file, trusting nothing in it.
///
/// Every offset, count and reference is checked against the input before it is used, so a
/// hostile file cannot make the reader allocate more than a small multiple of its own size:
/// containers nest at most ``PropertyListCodec/maximumDepth`` levels, a container cannot
/// contain itself, and the decoded value counts at most two values per input byte (shared
/// references included). Strings and data are decoded once and shared wherever referenced.
///
/// It reads the caller's buffer in place (``PropertyListCodec/decodeDictionary(_:)`` lends
/// it): offsets, references and contents are read where they lie, with no copy, no array of
/// references per container and no reference counting of the input.
struct BinaryPropertyListReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let topObject: Int
    let offsetTableOffset: Int
    var remainingValueBudget: Int
    /// Strings and data already decoded, by object number, so that shared references share
    /// one copy. Only those that own heap storage are kept: a string of up to 15 UTF-8 bytes
    /// is stored inline by Swift, and decoding it again costs less than remembering it (most
    /// keys and many values are that short). Indexed by object number (a hash per lookup cost
    /// more), and allocated only when the first such leaf is decoded.
    private(set) var decodedLeaves: [PropertyListValue?] = []
    /// The containers being read, outermost first (`openContainers[..<depth]`): memory of the
    /// caller's (``withReader(_:_:)``), so that reading allocates nothing for them.
    private let openContainers: UnsafeMutableBufferPointer<Int>
    var depth = 0

    /// Runs `body` with a reader of `bytes` and memory for its containers on the stack.
    static func withReader<R>(_ bytes: [UInt8], _ body: (inout BinaryPropertyListReader) throws -> R) throws -> R {
        try bytes.withUnsafeBufferPointer { buffer in try withReader(buffer, body) }
    }

    /// Runs `body` with a reader of `bytes` and memory for its containers on the stack.
    static func withReader<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout BinaryPropertyListReader) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: PropertyListCodec.maximumDepth) { stack in
            var reader = try BinaryPropertyListReader(bytes, openContainers: stack)
            return try body(&reader)
        }
    }

    private init(_ bytes: UnsafeBufferPointer<UInt8>, openContainers: UnsafeMutableBufferPointer<Int>) throws {
        precondition(openContainers.count >= PropertyListCodec.maximumDepth)
        self.openContainers = openContainers
        let header = BinaryPropertyList.header
        guard bytes.count >= header.count,
            UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(as: UInt64.self)
                == header.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) })
        else {
            if bytes.starts(with: "bplist".utf8) {
                throw PropertyListError("not a binary property list of version 00: the header is \(Self.describeHeader(bytes))")
            }
            throw PropertyListError("not a binary property list: the data does not start with \"bplist00\"")
        }
        let minimumLength = header.count + 1 + 1 + BinaryPropertyList.trailerLength
        guard bytes.count >= minimumLength else {
            throw PropertyListError("binary property list of \(bytes.count) bytes is too short (at least \(minimumLength) are needed)")
        }
        let trailer = bytes.count - BinaryPropertyList.trailerLength
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize) else {
            throw PropertyListError("damaged binary property list: trailer gives an offset size of \(offsetSize) bytes (must be 1...8)")
        }
        guard (1...8).contains(referenceSize) else {
            throw PropertyListError("damaged binary property list: trailer gives an object reference size of \(referenceSize) bytes (must be 1...8)")
        }
        let rawObjectCount = Self.readUnsigned(bytes, at: trailer + 8, size: 8)
        let rawTopObject = Self.readUnsigned(bytes, at: trailer + 16, size: 8)
        let rawTableOffset = Self.readUnsigned(bytes, at: trailer + 24, size: 8)
        guard rawTableOffset > UInt64(header.count), rawTableOffset <= UInt64(trailer) else {
            throw PropertyListError("damaged binary property list: offset table at \(rawTableOffset) is outside the object area 9...\(trailer)")
        }
        offsetTableOffset = Int(rawTableOffset)
        guard rawObjectCount >= 1, rawObjectCount <= UInt64((trailer - offsetTableOffset) / offsetSize) else {
            throw PropertyListError(
                "damaged binary property list: \(rawObjectCount) objects do not fit the offset table of \(trailer - offsetTableOffset) bytes")
        }
        objectCount = Int(rawObjectCount)
        guard rawTopObject < rawObjectCount else {
            throw PropertyListError("damaged binary property list: top object \(rawTopObject) is not one of the \(objectCount) objects")
        }
        topObject = Int(rawTopObject)
        self.bytes = bytes
        remainingValueBudget = 2 * bytes.count
    }

    mutating func readTopObject() throws -> PropertyListValue {
        try readObject(topObject)
    }

    private mutating func readObject(_ object: Int) throws -> PropertyListValue {
        remainingValueBudget -= 1
        guard remainingValueBudget >= 0 else {
            throw PropertyListError("binary property list expands to more than \(2 * bytes.count) values through shared references")
        }
        if !decodedLeaves.isEmpty, let leaf = decodedLeaves[object] { return leaf }

        let start = try offset(of: object)
        let marker = bytes[start]
        let info = marker & 0x0F
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case BinaryPropertyList.falseMarker: return .boolean(false)
            case BinaryPropertyList.trueMarker: return .boolean(true)
            case 0x00: throw unsupported("null", object)
            default: throw PropertyListError("object \(object) has the unknown marker 0x\(hexByte(marker))")
            }
        case 0x1:
            return .integer(try readInteger(object: object, at: start))
        case 0x2:
            guard info == 2 || info == 3 else {
                throw PropertyListError("real object \(object) has a size of \(1 << Int(info)) bytes (must be 4 or 8)")
            }
            return .real(try readReal(object: object, at: start))
        case 0x3:
            guard marker == BinaryPropertyList.dateMarker else {
                throw PropertyListError("object \(object) has the unknown marker 0x\(hexByte(marker))")
            }
            return .date(try readDate(object: object, at: start))
        case 0x4:
            let (count, contentStart) = try readCount(object: object, at: start)
            return memoize(.data(Array(try readPayload(object: object, from: contentStart, count: count))), as: object)
        case 0x5:
            let (count, contentStart) = try readCount(object: object, at: start)
            let content = try readPayload(object: object, from: contentStart, count: count)
            // One pass over the bytes, the String's own: a string decoded from UTF-8 has as many
            // UTF-8 bytes as the input and as many UTF-16 units only when every byte was ASCII
            // (any other scalar, U+FFFD of a repair included, takes fewer UTF-16 units than
            // UTF-8 bytes), and Swift counts the UTF-16 units of an ASCII string without a pass.
            let string = String(decoding: content, as: UTF8.self)
            guard string.utf8.count == content.count, string.utf16.count == content.count else {
                let byte = ASCII.firstNonASCII(UnsafeRawBufferPointer(content)).map { content[$0] } ?? 0
                throw PropertyListError("ASCII string object \(object) contains the non-ASCII byte 0x\(hexByte(byte))")
            }
            return memoize(.string(string), as: object)
        case 0x6:
            let (count, contentStart) = try readCount(object: object, at: start)
            guard count <= (offsetTableOffset - contentStart) / 2 else {
                throw runsPast(object, start)
            }
            let content = try readPayload(object: object, from: contentStart, count: 2 * count)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for index in stride(from: 0, to: content.count, by: 2) {
                units.append(UInt16(content[index]) << 8 | UInt16(content[index + 1]))
            }
            guard let string = Self.validatedUTF16String(units) else {
                throw PropertyListError("UTF-16 string object \(object) is not valid UTF-16 (an unpaired surrogate)")
            }
            return memoize(.string(string), as: object)
        case 0x8:
            throw unsupported("UID", object)
        case 0xA:
            let (count, contentStart) = try readCount(object: object, at: start)
            let references = try checkReferences(object: object, from: contentStart, count: count)
            try enterContainer(object)
            defer { depth -= 1 }
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                elements.append(try readObject(reference(references, index)))
            }
            return .array(elements)
        case 0xB, 0xC:
            throw unsupported(marker >> 4 == 0xB ? "ordered set" : "set", object)
        case 0xD:
            let entries = try readEntries(object, at: start)
            return .dictionary(Dictionary(uniqueKeysWithValues: entries.lazy.map { ($0.key, $0.value) }))
        default:
            throw PropertyListError("object \(object) has the unknown marker 0x\(hexByte(marker))")
        }
    }

    /// The entries of the top object, in the order the file has them, when it is a dictionary;
    /// nil when it is something else (``readTopObject()`` says what). Read as
    /// ``readTopObject()`` reads a dictionary, without making it a Swift dictionary.
    mutating func readTopEntries() throws -> [(key: String, value: PropertyListValue)]? {
        remainingValueBudget -= 1
        guard remainingValueBudget >= 0 else {
            throw PropertyListError("binary property list expands to more than \(2 * bytes.count) values through shared references")
        }
        let start = try offset(of: topObject)
        guard bytes[start] >> 4 == 0xD else { return nil }
        return try readEntries(topObject, at: start)
    }

    /// A dictionary object's entries, in the file's order; a key repeated (by String
    /// equality, as a Swift dictionary compares them) is refused.
    private mutating func readEntries(_ object: Int, at start: Int) throws -> [(key: String, value: PropertyListValue)] {
        let (count, contentStart) = try readCount(object: object, at: start)
        guard count <= Int.max / 2 else { throw runsPast(object, start) }
        let references = try checkReferences(object: object, from: contentStart, count: 2 * count)
        try enterContainer(object)
        defer { depth -= 1 }
        var entries: [(key: String, value: PropertyListValue)] = []
        entries.reserveCapacity(count)
        // Few keys are compared with each other; many go through a set.
        var seen: Set<String>? = count > 16 ? Set(minimumCapacity: count) : nil
        for entry in 0..<count {
            let keyObject = reference(references, entry)
            let key = try readObject(keyObject)
            guard case .string(let keyString) = key else {
                throw PropertyListError(
                    "dictionary object \(object) has a key that is not a string: object \(keyObject) is \(PropertyListCodec.article(key.kindName)) \(key.kindName)"
                )
            }
            let value = try readObject(reference(references, count + entry))
            let repeated = seen != nil ? !seen!.insert(keyString).inserted : entries.contains { $0.key == keyString }
            guard !repeated else {
                throw PropertyListError("dictionary object \(object) has the key \"\(keyString)\" more than once")
            }
            entries.append((keyString, value))
        }
        return entries
    }

    private mutating func memoize(_ value: PropertyListValue, as object: Int) -> PropertyListValue {
        switch value {
        case .string(let string) where string.utf8.count <= 15: return value
        case .data(let bytes) where bytes.isEmpty: return value
        default: break
        }
        if decodedLeaves.isEmpty { decodedLeaves = Array(repeating: nil, count: objectCount) }
        decodedLeaves[object] = value
        return value
    }

    mutating func enterContainer(_ object: Int) throws {
        guard !UnsafeMutableBufferPointer(rebasing: openContainers[..<depth]).contains(object) else {
            throw PropertyListError("object \(object) contains itself")
        }
        guard depth < PropertyListCodec.maximumDepth else {
            throw PropertyListError("arrays and dictionaries nest deeper than \(PropertyListCodec.maximumDepth) levels")
        }
        openContainers[depth] = object
        depth += 1
    }

    private func unsupported(_ kind: String, _ object: Int) -> PropertyListError {
        PropertyListError(
            "object \(object) is of the unsupported type \(kind): property lists here hold strings, integers, reals, booleans, data, dates, arrays and dictionaries"
        )
    }

    private static func describeHeader(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let header = bytes.prefix(8)
        if header.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "\"" + String(decoding: header, as: UTF8.self) + "\""
        }
        return header.map(hexByte).joined(separator: " ")
    }
}
