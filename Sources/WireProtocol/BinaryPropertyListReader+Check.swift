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

/// Checking a property list as ``BinaryPropertyListReader/readTopObject()`` reads it, without
/// building it (``BinaryPropertyListReader/checkTopObject()``): the walk or the flat loop for the
/// common form, every check of the reading for anything else.
extension BinaryPropertyListReader {
    /// Checks the top object as ``readTopObject()`` reads it, without building it: true when
    /// it is a dictionary that ``readTopObject()`` would read. Every check of the reading is
    /// made, in the same order and with the same budget; only dictionary keys are built, to
    /// find a repeated key as a Swift dictionary does (by String equality). Its errors are
    /// not the reading's own (ask ``readTopObject()`` for those).
    mutating func checkTopObject() throws -> Bool {
        // A dictionary of the common form is checked fastest by walking it: the walk makes
        // every check of the reading. A flat one (most messages) is read in a loop of its own;
        // anything else is checked the check's own way.
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

    struct Invalid: Error {}

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
                        guard
                            !asciiKeys.contains(where: { $0.count == key.count && (key.isEmpty || memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0) })
                        else {
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
}
