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
    private let bytes: UnsafeBufferPointer<UInt8>
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let offsetTableOffset: Int
    private var remainingValueBudget: Int
    /// Strings and data already decoded, by object number, so that shared references share
    /// one copy. Only those that own heap storage are kept: a string of up to 15 UTF-8 bytes
    /// is stored inline by Swift, and decoding it again costs less than remembering it (most
    /// keys and many values are that short). Indexed by object number (a hash per lookup cost
    /// more), and allocated only when the first such leaf is decoded.
    private var decodedLeaves: [PropertyListValue?] = []
    /// The containers being read, outermost first (`openContainers[..<depth]`): memory of the
    /// caller's (``withReader(_:_:)``), so that reading allocates nothing for them.
    private let openContainers: UnsafeMutableBufferPointer<Int>
    private var depth = 0

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
        guard bytes.count >= header.count, UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(as: UInt64.self)
                == header.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) else {
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
            throw PropertyListError("damaged binary property list: \(rawObjectCount) objects do not fit the offset table of \(trailer - offsetTableOffset) bytes")
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
                throw PropertyListError("dictionary object \(object) has a key that is not a string: object \(keyObject) is \(PropertyListCodec.article(key.kindName)) \(key.kindName)")
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
            guard let string = asciiString(object, at: start) else { throw Invalid() }
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
                      bytes[keyStart] >> 4 == 0x5, let key = asciiString(keyObject, at: keyStart) else { throw Invalid() }
                if let previousKey, UTF8Order.compare(previousKey, key) >= 0 { throw Invalid() }
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
    /// most messages and replies), in a file of one-byte offsets and references (under 256
    /// bytes and objects). They are written to `entries` (borrowing the bytes), or only
    /// counted when it is nil; nil for anything else, valid or not, or for more than
    /// `capacity` members: the walk takes those.
    ///
    /// A dictionary it reads passes every check of the walk, and so of the reading: with
    /// nothing nested, the value budget and the container checks cannot fail. It is the walk
    /// for that form in one loop over the bytes, with no recursion and no walker; the check
    /// and the JSON rendering of a dictionary both run it (one copy: not inlined into either).
    @inline(never)
    func readFlatTopDictionary(into entries: UnsafeMutablePointer<FlatDictionaryEntry>?, capacity: Int) -> Int? {
        guard offsetSize == 1, referenceSize == 1 else { return nil }
        let base = bytes.baseAddress!
        let objectsEnd = offsetTableOffset
        // The offset table's `objectCount` bytes lie inside the file (the initialiser checked).
        let table = base + offsetTableOffset
        @inline(__always)
        func start(_ object: Int) -> Int? {
            let offset = Int(table[object])
            return offset >= BinaryPropertyList.headerLength && offset < objectsEnd ? offset : nil
        }
        guard let top = start(topObject), base[top] >> 4 == 0xD,
              let counted = try? readCount(object: topObject, at: top), counted.count <= capacity,
              counted.contentStart <= objectsEnd, counted.count <= (objectsEnd - counted.contentStart) / 2 else { return nil }
        let count = counted.count
        let references = base + counted.contentStart
        var previousKey: UnsafeBufferPointer<UInt8>?
        for entry in 0..<count {
            let keyObject = Int(references[entry])
            let valueObject = Int(references[count + entry])
            guard keyObject < objectCount, valueObject < objectCount,
                  let keyStart = start(keyObject), base[keyStart] >> 4 == 0x5,
                  let key = asciiString(keyObject, at: keyStart),
                  let valueStart = start(valueObject) else { return nil }
            if let previousKey, UTF8Order.compare(previousKey, key) >= 0 { return nil }
            previousKey = key
            let marker = base[valueStart]
            let value: FlatDictionaryEntry.Value
            switch marker >> 4 {
            case 0x5:
                guard let string = asciiString(valueObject, at: valueStart) else { return nil }
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

    /// ``offset(of:)`` without its error: nil outside the object area.
    @inline(__always)
    private func objectStart(_ object: Int) -> Int? {
        let offset = tableOffset(of: object)
        guard offset >= UInt64(BinaryPropertyList.headerLength), offset < UInt64(offsetTableOffset) else { return nil }
        return Int(offset)
    }

    /// Object `object`'s entry in the offset table, unchecked.
    @inline(__always)
    private func tableOffset(of object: Int) -> UInt64 {
        Self.readUnsigned(bytes, at: offsetTableOffset + object * offsetSize, size: offsetSize)
    }

    /// The bytes of the ASCII string object at `start` (marker 0x5), or nil when it runs past
    /// the object area or holds a byte of 0x80 or more.
    @inline(__always)
    private func asciiString(_ object: Int, at start: Int) -> UnsafeBufferPointer<UInt8>? {
        let info = Int(bytes[start] & 0x0F)
        guard info < 0x0F else {
            return try? asciiContent(object, at: start)
        }
        // A short string: two loads of eight bytes, all inside the file (the offset table and
        // the 32-byte trailer follow the object area), masked to the string's own.
        let contentStart = start + 1
        guard info <= offsetTableOffset - contentStart else { return nil }
        let content = UnsafeRawPointer(bytes.baseAddress! + contentStart)
        let high: UInt64 = 0x8080_8080_8080_8080
        let first = UInt64(littleEndian: content.loadUnaligned(as: UInt64.self))
        let second = UInt64(littleEndian: content.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let firstMask: UInt64 = info >= 8 ? .max : (1 << (8 * UInt64(info))) &- 1
        let secondMask: UInt64 = info <= 8 ? 0 : (1 << (8 * UInt64(info - 8))) &- 1
        guard (first & firstMask | second & secondMask) & high == 0 else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[contentStart..<contentStart + info])
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

    /// The real object at `start`, of 4 or 8 bytes (its marker checked).
    private func readReal(object: Int, at start: Int) throws -> Double {
        let info = bytes[start] & 0x0F
        let bits = try readPayload(object: object, from: start + 1, count: 1 << Int(info))
        return info == 2 ? Double(Float(bitPattern: UInt32(Self.readUnsigned(bits)))) : Double(bitPattern: Self.readUnsigned(bits))
    }

    /// The date object at `start` (its marker checked).
    private func readDate(object: Int, at start: Int) throws -> Date {
        let bits = try readPayload(object: object, from: start + 1, count: 8)
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.readUnsigned(bits)))
    }

    /// The bytes of the ASCII string object at `start`.
    private func asciiContent(_ object: Int, at start: Int) throws -> UnsafeBufferPointer<UInt8> {
        let (count, contentStart) = try readCount(object: object, at: start)
        let content = try readPayload(object: object, from: contentStart, count: count)
        guard ASCII.firstNonASCII(UnsafeRawBufferPointer(content)) == nil else { throw Invalid() }
        return content
    }

    /// Checks the top object as ``readTopObject()`` reads it, without building it: true when
    /// it is a dictionary that ``readTopObject()`` would read. Every check of the reading is
    /// made, in the same order and with the same budget; only dictionary keys are built, to
    /// find a repeated key as a Swift dictionary does (by String equality). Its errors are
    /// not the reading's own (ask ``readTopObject()`` for those).
    mutating func checkTopObject() throws -> Bool {
        // A dictionary of the common form is checked fastest by walking it: the walk makes
        // every check of the reading. A small flat one (most messages) is read in a loop of its
        // own; anything else is checked the check's own way.
        if readFlatTopDictionary(into: nil, capacity: .max) != nil { return true }
        let budget = remainingValueBudget
        var nothing = NoWalker()
        if walkTopDictionary(&nothing) { return true }
        remainingValueBudget = budget
        return try checkObject(topObject)
    }

    /// Hears a walk and keeps nothing.
    private struct NoWalker: PropertyListWalker {
        func beginDictionary(count: Int) {}
        func key(_ ascii: UnsafeBufferPointer<UInt8>) {}
        func endDictionary() {}
        func beginArray(count: Int) {}
        func endArray() {}
        func string(_ ascii: UnsafeBufferPointer<UInt8>) {}
        func integer(_ value: Int64) {}
        func real(_ value: Double) {}
        func boolean(_ value: Bool) {}
        func data(_ bytes: UnsafeBufferPointer<UInt8>) {}
        func date(_ value: Date) {}
    }

    private struct Invalid: Error {}

    /// ``readObject(_:)`` without the value: true for a dictionary.
    @discardableResult
    private mutating func checkObject(_ object: Int) throws -> Bool {
        remainingValueBudget -= 1
        guard remainingValueBudget >= 0 else { throw Invalid() }
        if !decodedLeaves.isEmpty, decodedLeaves[object] != nil { return false }

        let start = try offset(of: object)
        let marker = bytes[start]
        let info = marker & 0x0F
        switch marker >> 4 {
        case 0x0:
            guard marker == BinaryPropertyList.falseMarker || marker == BinaryPropertyList.trueMarker else { throw Invalid() }
        case 0x1:
            _ = try readInteger(object: object, at: start)
        case 0x2:
            guard info == 2 || info == 3 else { throw Invalid() }
            _ = try readPayload(object: object, from: start + 1, count: 1 << Int(info))
        case 0x3:
            guard marker == BinaryPropertyList.dateMarker else { throw Invalid() }
            _ = try readPayload(object: object, from: start + 1, count: 8)
        case 0x4:
            let (count, contentStart) = try readCount(object: object, at: start)
            _ = try readPayload(object: object, from: contentStart, count: count)
        case 0x5:
            let (count, contentStart) = try readCount(object: object, at: start)
            let content = try readPayload(object: object, from: contentStart, count: count)
            guard ASCII.firstNonASCII(UnsafeRawBufferPointer(content)) == nil else { throw Invalid() }
        case 0x6:
            let (count, contentStart) = try readCount(object: object, at: start)
            guard count <= (offsetTableOffset - contentStart) / 2 else { throw Invalid() }
            let content = try readPayload(object: object, from: contentStart, count: 2 * count)
            guard Self.isValidUTF16(content) else { throw Invalid() }
        case 0xA:
            let (count, contentStart) = try readCount(object: object, at: start)
            let references = try checkReferences(object: object, from: contentStart, count: count)
            try enterContainer(object)
            defer { depth -= 1 }
            for index in 0..<count {
                try checkObject(reference(references, index))
            }
        case 0xD:
            let (count, contentStart) = try readCount(object: object, at: start)
            guard count <= Int.max / 2 else { throw Invalid() }
            let references = try checkReferences(object: object, from: contentStart, count: 2 * count)
            try enterContainer(object)
            defer { depth -= 1 }
            // Keys are read where they lie. ASCII keys are equal Strings exactly when their
            // bytes are equal, so a few of them are compared as bytes; with a UTF-16 key (equal
            // Strings can differ in their units) or many keys, as Strings in a set.
            var asciiKeys: [UnsafeBufferPointer<UInt8>] = []
            var textKeys: Set<String>?
            var keysAscending = true
            if count > 16 { textKeys = [] } else { asciiKeys.reserveCapacity(count) }
            for entry in 0..<count {
                let keyObject = reference(references, entry)
                remainingValueBudget -= 1
                guard remainingValueBudget >= 0 else { throw Invalid() }
                let keyStart = try offset(of: keyObject)
                let (keyCount, keyContentStart) = try readCount(object: keyObject, at: keyStart)
                let key: UnsafeBufferPointer<UInt8>
                var keyText: String?
                switch bytes[keyStart] >> 4 {
                case 0x5:
                    key = try readPayload(object: keyObject, from: keyContentStart, count: keyCount)
                    guard ASCII.firstNonASCII(UnsafeRawBufferPointer(key)) == nil else { throw Invalid() }
                case 0x6:
                    guard keyCount <= (offsetTableOffset - keyContentStart) / 2 else { throw Invalid() }
                    key = try readPayload(object: keyObject, from: keyContentStart, count: 2 * keyCount)
                    keyText = try Self.utf16String(key)
                default:
                    throw Invalid()
                }
                try checkObject(reference(references, count + entry))
                if textKeys == nil, keyText != nil {
                    textKeys = Set(asciiKeys.map { String(decoding: $0, as: UTF8.self) })
                }
                if textKeys != nil {
                    guard textKeys!.insert(keyText ?? String(decoding: key, as: UTF8.self)).inserted else { throw Invalid() }
                } else {
                    // Keys in ascending byte order (as writers that sort them give them) are
                    // distinct by that order alone; from the first out of order, each is
                    // compared with all before it.
                    if keysAscending, let previous = asciiKeys.last, UTF8Order.compare(previous, key) >= 0 {
                        keysAscending = false
                    }
                    if !keysAscending {
                        guard !asciiKeys.contains(where: { $0.count == key.count && (key.isEmpty || memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0) }) else {
                            throw Invalid()
                        }
                    }
                    asciiKeys.append(key)
                }
            }
            return true
        default:
            throw Invalid()
        }
        return false
    }

    /// The String of big-endian UTF-16 units.
    private static func utf16String(_ content: UnsafeBufferPointer<UInt8>) throws -> String {
        var units: [UInt16] = []
        units.reserveCapacity(content.count / 2)
        for index in stride(from: 0, to: content.count, by: 2) {
            units.append(UInt16(content[index]) << 8 | UInt16(content[index + 1]))
        }
        guard let string = validatedUTF16String(units) else { throw Invalid() }
        return string
    }

    /// Big-endian UTF-16 without an unpaired surrogate.
    private static func isValidUTF16(_ content: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + 1 < content.count {
            let unit = UInt16(content[index]) << 8 | UInt16(content[index + 1])
            index += 2
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < content.count else { return false }
                let next = UInt16(content[index]) << 8 | UInt16(content[index + 1])
                guard (0xDC00...0xDFFF).contains(next) else { return false }
                index += 2
            case 0xDC00...0xDFFF:
                return false
            default:
                break
            }
        }
        return true
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

    private mutating func enterContainer(_ object: Int) throws {
        guard !UnsafeMutableBufferPointer(rebasing: openContainers[..<depth]).contains(object) else {
            throw PropertyListError("object \(object) contains itself")
        }
        guard depth < PropertyListCodec.maximumDepth else {
            throw PropertyListError("arrays and dictionaries nest deeper than \(PropertyListCodec.maximumDepth) levels")
        }
        openContainers[depth] = object
        depth += 1
    }

    private func offset(of object: Int) throws -> Int {
        guard let start = objectStart(object) else {
            throw PropertyListError("damaged binary property list: object \(object) has the offset \(tableOffset(of: object)), outside the object area \(BinaryPropertyList.header.count)..<\(offsetTableOffset)")
        }
        return start
    }

    /// The bytes `from..<from + count` of an object, which must end before the offset table.
    private func readPayload(object: Int, from start: Int, count: Int) throws -> UnsafeBufferPointer<UInt8> {
        guard count >= 0, start <= offsetTableOffset, count <= offsetTableOffset - start else {
            throw runsPast(object, start)
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<start + count])
    }

    /// The element count in a marker's low nibble, or in the integer object after it when the nibble is 0xF.
    private func readCount(object: Int, at start: Int) throws -> (count: Int, contentStart: Int) {
        let info = Int(bytes[start] & 0x0F)
        if info != 0x0F {
            return (info, start + 1)
        }
        guard start + 1 < offsetTableOffset, bytes[start + 1] >> 4 == 0x1 else {
            throw PropertyListError("object \(object) has a long count that is not followed by an integer")
        }
        let count = try readInteger(object: object, at: start + 1)
        guard count >= 0, let intCount = Int(exactly: count) else {
            throw PropertyListError("object \(object) has the invalid count \(count)")
        }
        let countSize = 1 << Int(bytes[start + 1] & 0x0F)
        return (intCount, start + 2 + countSize)
    }

    /// An integer object: 1, 2 or 4 unsigned bytes, 8 signed bytes, or 16 bytes that must fit in `Int64`.
    private func readInteger(object: Int, at start: Int) throws -> Int64 {
        let info = bytes[start] & 0x0F
        guard info <= 4 else {
            throw PropertyListError("integer object \(object) has a size of 2^\(info) bytes (must be 1, 2, 4, 8 or 16)")
        }
        let size = 1 << Int(info)
        let content = try readPayload(object: object, from: start + 1, count: size)
        switch size {
        case 1, 2, 4:
            return Int64(Self.readUnsigned(content))
        case 8:
            return Int64(bitPattern: Self.readUnsigned(content))
        default:
            let high = Self.readUnsigned(UnsafeBufferPointer(rebasing: content.prefix(8)))
            let low = Self.readUnsigned(UnsafeBufferPointer(rebasing: content.suffix(8)))
            if high == 0, low <= UInt64(Int64.max) {
                return Int64(low)
            }
            if high == UInt64.max, low > UInt64(Int64.max) {
                return Int64(bitPattern: low)
            }
            let description = high == 0 ? "\(low)" : "a 128-bit value"
            throw PropertyListError("integer object \(object) is \(description), outside the Int64 range")
        }
    }

    /// Checks the `count` object references at `start` of a container, each against the
    /// object count; the bytes that hold them, for ``reference(_:_:)``.
    private func checkReferences(object: Int, from start: Int, count: Int) throws -> UnsafeBufferPointer<UInt8> {
        guard count <= (offsetTableOffset - min(start, offsetTableOffset)) / referenceSize else {
            throw runsPast(object, start)
        }
        let content = try readPayload(object: object, from: start, count: count * referenceSize)
        for index in 0..<count {
            let reference = Self.readUnsigned(content, at: index * referenceSize, size: referenceSize)
            guard reference < UInt64(objectCount) else {
                throw PropertyListError("object \(object) refers to object \(reference), but there are \(objectCount) objects")
            }
        }
        return content
    }

    /// Reference `index` of references checked by ``checkReferences(object:from:count:)``.
    private func reference(_ references: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        Int(Self.readUnsigned(references, at: index * referenceSize, size: referenceSize))
    }

    private func runsPast(_ object: Int, _ start: Int) -> PropertyListError {
        PropertyListError("damaged binary property list: object \(object) at \(start) runs past the end of the object area (\(offsetTableOffset))")
    }

    private func unsupported(_ kind: String, _ object: Int) -> PropertyListError {
        PropertyListError("object \(object) is of the unsupported type \(kind): property lists here hold strings, integers, reals, booleans, data, dates, arrays and dictionaries")
    }

    @inline(__always)
    private static func readUnsigned(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, size: Int) -> UInt64 {
        // Offsets and references are mostly one or two bytes: inlined, those are a load or two.
        if size == 1 { return UInt64(bytes[start]) }
        if size == 2 { return UInt64(bytes[start]) << 8 | UInt64(bytes[start + 1]) }
        var value: UInt64 = 0
        for index in start..<start + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private static func readUnsigned(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        readUnsigned(bytes, at: 0, size: bytes.count)
    }

    private static func validatedUTF16String(_ units: [UInt16]) -> String? {
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return String(decoding: units, as: UTF16.self)
            case .error: return nil
            }
        }
    }

    private static func describeHeader(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let header = bytes.prefix(8)
        if header.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "\"" + String(decoding: header, as: UTF8.self) + "\""
        }
        return header.map(hexByte).joined(separator: " ")
    }
}
