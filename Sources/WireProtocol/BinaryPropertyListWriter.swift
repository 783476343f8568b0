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
import LinkCollections

/// Writes a `bplist00` file: header, objects, offset table, 32-byte trailer.
///
/// Objects are numbered as Python's `plistlib` numbers them: a container before what it
/// holds, a dictionary's keys (sorted by their UTF-8 bytes, so equal values give equal bytes)
/// before its values. Equal strings are written once and shared, as Foundation does; other
/// values are written where they occur.
struct BinaryPropertyListWriter {
    private typealias Node = PropertyListBuilder.Node
    private let nodes: UnsafeBufferPointer<Node>
    private let storage: UnsafeBufferPointer<UInt8>
    // The writer's tables share one allocation (on the stack for the dictionaries apps send),
    // each as large as it can get: an object per node at most, a reference per node but the
    // first, a string per node, and twice as many string slots.
    /// The node each object was made from, by object number.
    private let objectNodes: UnsafeMutablePointer<Int>
    /// For each container object, where its references start in ``references`` (0 for others).
    private let referenceStarts: UnsafeMutablePointer<Int>
    private let references: UnsafeMutablePointer<Int>
    /// The string objects written so far, found by a hash of their UTF-8 bytes: an open
    /// addressing table of object numbers plus one (0 for an empty slot), at most half full.
    /// Strings are equal here when their bytes are (a composed and a decomposed "é" are two).
    private let stringSlots: UnsafeMutableBufferPointer<Int>
    private var objectCount = 0
    private var referenceCount = 0

    /// The file of the first value of `list` (and all it holds).
    ///
    /// - Throws: ``PropertyListError`` when containers nest deeper than
    ///   ``PropertyListCodec/maximumDepth`` or a dictionary has two keys of the same bytes.
    static func write(_ list: PropertyListBuilder) throws -> [UInt8] {
        precondition(!list.nodes.isEmpty, "an empty property list")
        let count = list.nodes.count
        var slots = 16
        while slots < 2 * count { slots *= 2 }
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * count + slots) { scratch in
            try list.nodes.withUnsafeBufferPointer { nodes in
                try list.storage.withUnsafeBufferPointer { storage in
                    var writer = BinaryPropertyListWriter(nodes: nodes, storage: storage, scratch: scratch.baseAddress!, slots: slots)
                    _ = try writer.flatten(0, depth: 0)
                    return writer.finish()
                }
            }
        }
    }

    private init(nodes: UnsafeBufferPointer<Node>, storage: UnsafeBufferPointer<UInt8>, scratch: UnsafeMutablePointer<Int>, slots: Int) {
        self.nodes = nodes
        self.storage = storage
        objectNodes = scratch
        referenceStarts = scratch + nodes.count
        references = scratch + 2 * nodes.count
        stringSlots = UnsafeMutableBufferPointer(start: scratch + 3 * nodes.count, count: slots)
        stringSlots.initialize(repeating: 0)
    }

    /// Numbers node `index` and what it holds; its object number.
    private mutating func flatten(_ index: Int, depth: Int) throws -> Int {
        let node = nodes[index]
        switch node.kind {
        case .string:
            return stringObject(index)
        case .array:
            let object = try addContainer(index, references: node.count, depth: depth)
            let start = referenceStarts[object]
            var child = index + 1
            for position in 0..<node.count {
                references[start + position] = try flatten(child, depth: depth + 1)
                child = PropertyListBuilder.next(after: child, in: nodes)
            }
            return object
        case .dictionary:
            let count = node.count / 2
            let object = try addContainer(index, references: 2 * count, depth: depth)
            let start = referenceStarts[object]
            // The key and value nodes, by the keys' bytes.
            try withUnsafeTemporaryAllocation(of: (key: Int, value: Int).self, capacity: count) { entries in
                var child = index + 1
                var sorted = true
                for position in 0..<count {
                    precondition(nodes[child].kind == .string, "a dictionary key that is not a string")
                    let value = child + 1
                    if sorted, position > 0, UTF8Order.compare(bytes(of: entries[position - 1].key), bytes(of: child)) >= 0 { sorted = false }
                    entries.initializeElement(at: position, to: (child, value))
                    child = PropertyListBuilder.next(after: value, in: nodes)
                }
                if !sorted {
                    var memory = entries  // the same memory, sorted in place
                    memory.sort { UTF8Order.compare(bytes(of: $0.key), bytes(of: $1.key)) < 0 }
                    for position in entries.indices.dropFirst()
                    where UTF8Order.compare(bytes(of: entries[position - 1].key), bytes(of: entries[position].key)) == 0 {
                        throw PropertyListError(
                            "dictionary has the key \"\(String(decoding: bytes(of: entries[position].key), as: UTF8.self))\" more than once")
                    }
                }
                for position in 0..<count {
                    references[start + position] = try flatten(entries[position].key, depth: depth + 1)
                }
                for position in 0..<count {
                    references[start + count + position] = try flatten(entries[position].value, depth: depth + 1)
                }
            }
            return object
        default:
            return addObject(index)
        }
    }

    private mutating func addObject(_ node: Int) -> Int {
        objectNodes[objectCount] = node
        referenceStarts[objectCount] = 0
        objectCount += 1
        return objectCount - 1
    }

    private mutating func addContainer(_ node: Int, references count: Int, depth: Int) throws -> Int {
        guard depth < PropertyListCodec.maximumDepth else {
            throw PropertyListError("arrays and dictionaries nest deeper than \(PropertyListCodec.maximumDepth) levels")
        }
        let object = addObject(node)
        referenceStarts[object] = referenceCount
        referenceCount += count
        return object
    }

    /// The object of string node `index`: an earlier one with its bytes, or a new one.
    private mutating func stringObject(_ index: Int) -> Int {
        let string = bytes(of: index)
        let mask = stringSlots.count - 1
        var slot = Self.hash(string, slots: stringSlots.count) & mask
        while stringSlots[slot] != 0 {
            let object = stringSlots[slot] - 1
            if UTF8Order.compare(bytes(of: objectNodes[object]), string) == 0 { return object }
            slot = (slot + 1) & mask
        }
        let object = addObject(index)
        stringSlots[slot] = object + 1
        return object
    }

    /// The bytes of a string or data node.
    private func bytes(of node: Int) -> UnsafeBufferPointer<UInt8> {
        let node = nodes[node]
        return UnsafeBufferPointer(rebasing: storage[node.start..<node.start + node.count])
    }

    /// A hash of a string's UTF-8 bytes. A small table (most dictionaries apps send) takes an
    /// xor-and-multiply hash of the length and of at most the first and last 16 bytes, eight
    /// bytes a step, finished with SplitMix64's finalizer; from ``seededHashSlots`` slots on, the process's seeded `Hasher` of every
    /// byte, so that no input can be made to collide on purpose where collisions would cost (in
    /// a small table they cost at most a few comparisons each).
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, slots: Int) -> Int {
        if slots >= seededHashSlots {
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            return hasher.finalize()
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
        }
        let count = bytes.count
        if let base = bytes.baseAddress, count >= 8 {
            // The first 16 bytes and the last 16, in words that may overlap.
            let raw = UnsafeRawPointer(base)
            mix(raw.loadUnaligned(as: UInt64.self))
            if count > 8 { mix(raw.loadUnaligned(fromByteOffset: min(8, count - 8), as: UInt64.self)) }
            if count > 16 {
                mix(raw.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self))
                mix(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            }
        } else if count > 0 {
            var word: UInt64 = 0
            for byte in bytes { word = word << 8 | UInt64(byte) }
            mix(word)
        }
        // SplitMix64's finalizer: every bit of the state reaches the low bits the table uses
        // (a multiply alone carries a difference in a word's last byte only upwards).
        hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: hash ^ (hash >> 31))
    }

    private static let seededHashSlots = 128

    /// The file: its size is worked out first, and each byte written once where it goes.
    private func finish() -> [UInt8] {
        let referenceSize = BinaryPropertyList.byteCount(for: UInt64(objectCount - 1))
        var utf16Counts: [Int: Int] = [:]
        var objectsSize = 0
        for object in 0..<objectCount {
            let node = nodes[objectNodes[object]]
            switch node.kind {
            case .boolean: objectsSize += 1
            case .integer: objectsSize += BinaryPropertyList.integerSize(Int64(bitPattern: node.bits))
            case .real, .date: objectsSize += 9
            case .data: objectsSize += BinaryPropertyList.markerSize(count: node.count) + node.count
            case .string where node.isASCII: objectsSize += BinaryPropertyList.markerSize(count: node.count) + node.count
            case .string:
                let units = String(decoding: bytes(of: objectNodes[object]), as: UTF8.self).utf16.count
                utf16Counts[object] = units
                objectsSize += BinaryPropertyList.markerSize(count: units) + 2 * units
            case .array: objectsSize += BinaryPropertyList.markerSize(count: node.count) + node.count * referenceSize
            case .dictionary: objectsSize += BinaryPropertyList.markerSize(count: node.count / 2) + node.count * referenceSize
            }
        }
        return PropertyListOutput.file(objectsSize: objectsSize, objectCount: objectCount, referenceSize: referenceSize) { out in
            for object in 0..<objectCount {
                out.startObject()
                let node = nodes[objectNodes[object]]
                switch node.kind {
                case .boolean:
                    out.put(node.bits != 0 ? BinaryPropertyList.trueMarker : BinaryPropertyList.falseMarker)
                case .integer:
                    out.putInteger(Int64(bitPattern: node.bits))
                case .real:
                    out.put(BinaryPropertyList.realMarker | 3)
                    out.putUnsigned(node.bits, size: 8)
                case .date:
                    out.put(BinaryPropertyList.dateMarker)
                    out.putUnsigned(node.bits, size: 8)
                case .data:
                    out.putMarker(BinaryPropertyList.dataMarker, count: node.count)
                    out.put(bytes(of: objectNodes[object]))
                case .string where node.isASCII:
                    out.putMarker(BinaryPropertyList.asciiStringMarker, count: node.count)
                    out.put(bytes(of: objectNodes[object]))
                case .string:
                    out.putMarker(BinaryPropertyList.utf16StringMarker, count: utf16Counts[object]!)
                    for unit in String(decoding: bytes(of: objectNodes[object]), as: UTF8.self).utf16 {
                        out.putUnsigned(UInt64(unit), size: 2)
                    }
                case .array, .dictionary:
                    out.putMarker(
                        node.kind == .array ? BinaryPropertyList.arrayMarker : BinaryPropertyList.dictionaryMarker,
                        count: node.kind == .array ? node.count : node.count / 2)
                    let start = referenceStarts[object]
                    for position in start..<start + node.count {
                        out.putUnsigned(UInt64(references[position]), size: referenceSize)
                    }
                }
            }
        }
    }
}

/// Writes a property list's bytes into memory of the right size (``BinaryPropertyListWriter``
/// and ``FlatDictionaryWriter`` work the size out first).
struct PropertyListOutput {
    let base: UnsafeMutablePointer<UInt8>
    var position = 0
    /// Where the next object's offset goes in the offset table, and the size of one.
    private var offsetAt: Int
    private let offsetSize: Int

    /// A `bplist00` file of `objectCount` objects that take `objectsSize` bytes: its header,
    /// the objects `writeObjects` writes in object order (each after ``startObject()``), the
    /// offset table and the trailer.
    static func file(
        objectsSize: Int, objectCount: Int, referenceSize: Int,
        _ writeObjects: (inout PropertyListOutput) -> Void
    ) -> [UInt8] {
        let offsetTableOffset = BinaryPropertyList.headerLength + objectsSize
        let offsetSize = BinaryPropertyList.byteCount(for: UInt64(offsetTableOffset))
        let total = offsetTableOffset + objectCount * offsetSize + BinaryPropertyList.trailerLength
        return ByteArrays.writing(count: total) { base in
            var out = PropertyListOutput(base: base, offsetTableOffset: offsetTableOffset, offsetSize: offsetSize)
            out.putHeader()
            writeObjects(&out)
            precondition(
                out.position == offsetTableOffset && out.offsetAt == offsetTableOffset + objectCount * offsetSize,
                "the property list's size was worked out wrong")
            out.position = out.offsetAt
            out.putTrailer(
                offsetSize: offsetSize, referenceSize: referenceSize, objectCount: objectCount,
                offsetTableOffset: offsetTableOffset)
            precondition(out.position == total, "the property list's size was worked out wrong")
        }
    }

    private init(base: UnsafeMutablePointer<UInt8>, offsetTableOffset: Int, offsetSize: Int) {
        self.base = base
        offsetAt = offsetTableOffset
        self.offsetSize = offsetSize
    }

    /// Records that the next object starts here, in the offset table.
    mutating func startObject() {
        putUnsigned(UInt64(position), size: offsetSize, at: offsetAt)
        offsetAt += offsetSize
    }

    mutating func put(_ byte: UInt8) {
        base[position] = byte
        position += 1
    }

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        let count = bytes.count
        let destination = UnsafeMutableRawPointer(base + position)
        if count >= 8 && count <= 16 {
            // Most keys and strings: two words that may overlap, without a call to memmove.
            destination.storeBytes(of: UnsafeRawPointer(source).loadUnaligned(as: UInt64.self), as: UInt64.self)
            destination.storeBytes(
                of: UnsafeRawPointer(source).loadUnaligned(fromByteOffset: count - 8, as: UInt64.self),
                toByteOffset: count - 8, as: UInt64.self)
        } else if count < 8 {
            for index in 0..<count { base[position + index] = source[index] }
        } else {
            (base + position).update(from: source, count: count)
        }
        position += count
    }

    /// `bplist00`, in one store.
    private mutating func putHeader() {
        UnsafeMutableRawPointer(base + position).storeBytes(of: BinaryPropertyList.headerWord, as: UInt64.self)
        position += BinaryPropertyList.headerLength
    }

    mutating func putUnsigned(_ value: UInt64, size: Int) {
        putUnsigned(value, size: size, at: position)
        position += size
    }

    func putUnsigned(_ value: UInt64, size: Int, at start: Int) {
        if size == 1 {
            base[start] = UInt8(truncatingIfNeeded: value)
            return
        }
        for index in 0..<size {
            base[start + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - index)))
        }
    }

    mutating func putInteger(_ integer: Int64) {
        let size = integer < 0 ? 8 : BinaryPropertyList.byteCount(for: UInt64(integer))
        put(BinaryPropertyList.integerMarker | UInt8(size.trailingZeroBitCount))
        putUnsigned(UInt64(bitPattern: integer), size: size)
    }

    mutating func putMarker(_ marker: UInt8, count: Int) {
        if count < 0x0F {
            put(marker | UInt8(count))
        } else {
            put(marker | 0x0F)
            putInteger(Int64(count))
        }
    }

    /// The 32-byte trailer: six unused bytes, the sizes of an offset and of a reference, the
    /// object count, the top object (0) and where the offset table starts.
    private mutating func putTrailer(offsetSize: Int, referenceSize: Int, objectCount: Int, offsetTableOffset: Int) {
        for _ in 0..<6 { put(0) }
        put(UInt8(offsetSize))
        put(UInt8(referenceSize))
        putUnsigned(UInt64(objectCount), size: 8)
        putUnsigned(0, size: 8)
        putUnsigned(UInt64(offsetTableOffset), size: 8)
    }
}

/// Constants of the `bplist00` format.
enum BinaryPropertyList {
    static let header: [UInt8] = Array("bplist00".utf8)
    /// `header.count`, known without reaching the array.
    static var headerLength: Int { 8 }
    /// `header` as a word to store (its bytes in memory order).
    static var headerWord: UInt64 { UInt64(littleEndian: 0x3030_7473_696C_7062) }
    static let trailerLength = 32

    static let falseMarker: UInt8 = 0x08
    static let trueMarker: UInt8 = 0x09
    static let integerMarker: UInt8 = 0x10
    static let realMarker: UInt8 = 0x20
    static let dateMarker: UInt8 = 0x33
    static let dataMarker: UInt8 = 0x40
    static let asciiStringMarker: UInt8 = 0x50
    static let utf16StringMarker: UInt8 = 0x60
    static let arrayMarker: UInt8 = 0xA0
    static let dictionaryMarker: UInt8 = 0xD0

    /// A marker and, from 15 on, the integer object of the count.
    static func markerSize(count: Int) -> Int {
        count < 0x0F ? 1 : 1 + integerSize(Int64(count))
    }

    /// Non-negative integers in the fewest of 1, 2, 4 or 8 bytes; negative ones in 8.
    static func integerSize(_ integer: Int64) -> Int {
        1 + (integer < 0 ? 8 : byteCount(for: UInt64(integer)))
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    static func byteCount(for value: UInt64) -> Int {
        switch value {
        case 0...0xFF: return 1
        case 0...0xFFFF: return 2
        case 0...0xFFFF_FFFF: return 4
        default: return 8
        }
    }
}

/// The order of strings by their UTF-8 bytes (for valid UTF-8, the order of their scalars):
/// what property-list dictionaries are written in, and cheap, where `String`'s own order and
/// equality follow Unicode's canonical equivalence.
enum UTF8Order {
    static func precedes(_ a: String, _ b: String) -> Bool {
        let result = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in compare(x, y) }
        }
        if let result, let result { return result < 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The order of two byte strings (negative, zero or positive): `memcmp`, then length.
    /// Strings of up to 16 bytes in common (most keys) are compared here, without the call.
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common <= 16 {
            for index in 0..<common where a[index] != b[index] {
                return Int(a[index]) - Int(b[index])
            }
        } else {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
