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

/// Writes a `bplist00` file: header, objects, offset table, 32-byte trailer.
///
/// Equal strings are written once and shared, as Foundation does; other values are written
/// where they occur. Dictionary keys are sorted by their UTF-8 bytes so equal values give equal bytes.
struct BinaryPropertyListWriter {
    private enum Object {
        case leaf(PropertyListValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private var objects: [Object] = []
    /// The string objects written so far, found by a hash of their UTF-8 bytes: an open
    /// addressing table of object numbers plus one (0 for an empty slot), at most half full.
    /// Strings are equal here when their bytes are (a composed and a decomposed "é" are two),
    /// and a `Dictionary` of Strings, which hashes and compares them as Unicode does, cost
    /// more than the rest of a small dictionary's encoding.
    private var stringSlots: [Int] = []
    private var stringCount = 0

    mutating func write(_ top: PropertyListValue) throws -> [UInt8] {
        if case .dictionary(let dictionary) = top {
            start(expectedObjects: 1 + 2 * dictionary.count)
        } else {
            start(expectedObjects: 1)
        }
        _ = try flatten(top, depth: 0)
        return finish()
    }

    /// A dictionary of `entries` (distinct keys), as ``write(_:)`` writes it.
    mutating func write(entries: [(key: String, value: PropertyListValue)]) throws -> [UInt8] {
        start(expectedObjects: 1 + 2 * entries.count)
        _ = try flattenDictionary(PropertyListCodec.sorted(entries), depth: 0)
        return finish()
    }

    private mutating func start(expectedObjects: Int) {
        objects = []
        objects.reserveCapacity(expectedObjects)
        stringCount = 0
        var size = 16
        while size < 2 * expectedObjects { size *= 2 }
        stringSlots = Array(repeating: 0, count: size)
    }

    /// The object of `string`: an earlier one with its bytes, or a new one.
    private mutating func stringObject(_ string: String) -> Int {
        if 2 * (stringCount + 1) > stringSlots.count { growStringSlots() }
        let mask = stringSlots.count - 1
        var slot = Self.hash(string, slots: stringSlots.count) & mask
        while stringSlots[slot] != 0 {
            let index = stringSlots[slot] - 1
            if writtenString(index, is: string) { return index }
            slot = (slot + 1) & mask
        }
        objects.append(.leaf(.string(string)))
        stringSlots[slot] = objects.count
        stringCount += 1
        return objects.count - 1
    }

    private mutating func growStringSlots() {
        var slots = Array(repeating: 0, count: 2 * stringSlots.count)
        let mask = slots.count - 1
        for number in stringSlots where number != 0 {
            guard case .leaf(.string(let string)) = objects[number - 1] else { continue }
            var slot = Self.hash(string, slots: slots.count) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = number
        }
        stringSlots = slots
    }

    /// A hash of the string's UTF-8 bytes. A small table (most dictionaries apps send) takes
    /// FNV-1a of the length and of at most the first and last 16 bytes, a few instructions a
    /// byte; from ``seededHashSlots`` slots on, the process's seeded `Hasher` of every byte, so
    /// that no input can be made to collide on purpose where collisions would cost (in a
    /// small table they cost at most a few comparisons each).
    private static func hash(_ string: String, slots: Int) -> Int {
        var string = string
        return string.withUTF8 { bytes in
            if slots >= seededHashSlots {
                var hasher = Hasher()
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
                return hasher.finalize()
            }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
            func mix(_ range: Range<Int>) {
                for index in range {
                    hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01b3
                }
            }
            if bytes.count <= 32 {
                mix(0..<bytes.count)
            } else {
                mix(0..<16)
                mix(bytes.count - 16..<bytes.count)
            }
            return Int(truncatingIfNeeded: hash ^ (hash >> 29))
        }
    }

    private static let seededHashSlots = 128

    private func finish() -> [UInt8] {
        let referenceSize = BinaryPropertyList.byteCount(for: UInt64(objects.count - 1))
        var output: [UInt8] = []
        // Room for it at once (it grew a few times over otherwise): the header and the trailer,
        // each object's marker, length, references and offset, and the bytes of strings and
        // data (exact for ASCII strings; one that needs UTF-16 may grow the array once more).
        var estimate = BinaryPropertyList.header.count + BinaryPropertyList.trailerLength + 8 * objects.count
        for case .leaf(let value) in objects {
            switch value {
            case .string(let string): estimate += string.utf8.count
            case .data(let bytes): estimate += bytes.count
            default: break
            }
        }
        output.reserveCapacity(estimate)
        output.append(contentsOf: BinaryPropertyList.header)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(output.count)
            append(object, referenceSize: referenceSize, to: &output)
        }

        let offsetTableOffset = output.count
        let offsetSize = BinaryPropertyList.byteCount(for: UInt64(offsetTableOffset))
        for offset in offsets {
            appendUnsigned(UInt64(offset), size: offsetSize, to: &output)
        }
        output.append(contentsOf: [0, 0, 0, 0, 0, 0])
        output.append(UInt8(offsetSize))
        output.append(UInt8(referenceSize))
        output.appendBigEndian(UInt64(objects.count))
        output.appendBigEndian(UInt64(0))
        output.appendBigEndian(UInt64(offsetTableOffset))
        return output
    }

    /// Assigns object numbers depth first, the container before its contents.
    private mutating func flatten(_ value: PropertyListValue, depth: Int) throws -> Int {
        switch value {
        case .string(let string):
            return stringObject(string)
        case .integer, .real, .boolean, .data, .date:
            objects.append(.leaf(value))
            return objects.count - 1
        case .array(let elements):
            let index = try reserveContainer(depth: depth)
            var references: [Int] = []
            references.reserveCapacity(elements.count)
            for element in elements {
                references.append(try flatten(element, depth: depth + 1))
            }
            objects[index] = .array(references)
            return index
        case .dictionary(let dictionary):
            return try flattenDictionary(PropertyListCodec.sortedEntries(dictionary), depth: depth)
        }
    }

    /// A dictionary whose entries are in the order they are written.
    private mutating func flattenDictionary(_ entries: [(key: String, value: PropertyListValue)], depth: Int) throws -> Int {
        let index = try reserveContainer(depth: depth)
        var keys: [Int] = []
        var values: [Int] = []
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        for (key, _) in entries {
            keys.append(try flatten(.string(key), depth: depth + 1))
        }
        for (_, value) in entries {
            values.append(try flatten(value, depth: depth + 1))
        }
        objects[index] = .dictionary(keys: keys, values: values)
        return index
    }

    /// Whether object `index` is a string with the bytes of `string`.
    private func writtenString(_ index: Int, is string: String) -> Bool {
        guard case .leaf(.string(let written)) = objects[index] else { return false }
        return UTF8Order.equal(written, string)
    }

    private mutating func reserveContainer(depth: Int) throws -> Int {
        guard depth < PropertyListCodec.maximumDepth else {
            throw PropertyListError("arrays and dictionaries nest deeper than \(PropertyListCodec.maximumDepth) levels")
        }
        objects.append(.array([]))
        return objects.count - 1
    }

    private func append(_ object: Object, referenceSize: Int, to output: inout [UInt8]) {
        switch object {
        case .array(let references):
            appendMarker(BinaryPropertyList.arrayMarker, count: references.count, to: &output)
            for reference in references {
                appendUnsigned(UInt64(reference), size: referenceSize, to: &output)
            }
        case .dictionary(let keys, let values):
            appendMarker(BinaryPropertyList.dictionaryMarker, count: keys.count, to: &output)
            for reference in keys {
                appendUnsigned(UInt64(reference), size: referenceSize, to: &output)
            }
            for reference in values {
                appendUnsigned(UInt64(reference), size: referenceSize, to: &output)
            }
        case .leaf(let value):
            appendLeaf(value, to: &output)
        }
    }

    private func appendLeaf(_ value: PropertyListValue, to output: inout [UInt8]) {
        switch value {
        case .boolean(let bool):
            output.append(bool ? BinaryPropertyList.trueMarker : BinaryPropertyList.falseMarker)
        case .integer(let integer):
            appendInteger(integer, to: &output)
        case .real(let real):
            output.append(BinaryPropertyList.realMarker | 3)
            output.appendBigEndian(real.bitPattern)
        case .date(let date):
            output.append(BinaryPropertyList.dateMarker)
            output.appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let bytes):
            appendMarker(BinaryPropertyList.dataMarker, count: bytes.count, to: &output)
            output.append(contentsOf: bytes)
        case .string(var string):
            let isASCII = string.withUTF8 { bytes in
                guard ASCII.firstNonASCII(UnsafeRawBufferPointer(bytes)) == nil else { return false }
                appendMarker(BinaryPropertyList.asciiStringMarker, count: bytes.count, to: &output)
                output.append(contentsOf: bytes)
                return true
            }
            if !isASCII {
                appendMarker(BinaryPropertyList.utf16StringMarker, count: string.utf16.count, to: &output)
                for unit in string.utf16 {
                    output.appendBigEndian(unit)
                }
            }
        case .array, .dictionary:
            preconditionFailure("containers are flattened before they are written")
        }
    }

    /// Non-negative integers in the fewest of 1, 2, 4 or 8 bytes; negative ones in 8.
    private func appendInteger(_ integer: Int64, to output: inout [UInt8]) {
        let size = integer < 0 ? 8 : BinaryPropertyList.byteCount(for: UInt64(integer))
        output.append(BinaryPropertyList.integerMarker | UInt8(size.trailingZeroBitCount))
        appendUnsigned(UInt64(bitPattern: integer), size: size, to: &output)
    }

    private func appendMarker(_ marker: UInt8, count: Int, to output: inout [UInt8]) {
        if count < 0x0F {
            output.append(marker | UInt8(count))
        } else {
            output.append(marker | 0x0F)
            appendInteger(Int64(count), to: &output)
        }
    }

    private func appendUnsigned(_ value: UInt64, size: Int, to output: inout [UInt8]) {
        if size == 1 {
            output.append(UInt8(truncatingIfNeeded: value))
            return
        }
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}

/// Constants of the `bplist00` format.
enum BinaryPropertyList {
    static let header: [UInt8] = Array("bplist00".utf8)
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
        compare(a, b) < 0
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && compare(a, b) == 0
    }

    private static func compare(_ a: String, _ b: String) -> Int {
        let result = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Int in
                let common = min(x.count, y.count)
                if common > 0 {
                    let order = memcmp(x.baseAddress!, y.baseAddress!, common)
                    if order != 0 { return Int(order) }
                }
                return x.count - y.count
            }
        }
        if let result, let result { return result }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }
}
