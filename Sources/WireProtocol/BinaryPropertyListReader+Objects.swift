#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parts of objects that every reading shares, each checked against the input: the offset
/// table (where an object starts), an object's payload and count, integers, reals and dates,
/// a container's references, and the raw big-endian numbers and UTF-16 strings.
extension BinaryPropertyListReader {
    func offset(of object: Int) throws -> Int {
        guard let start = objectStart(object) else {
            throw PropertyListError(
                "damaged binary property list: object \(object) has the offset \(tableOffset(of: object)), outside the object area \(BinaryPropertyList.header.count)..<\(offsetTableOffset)"
            )
        }
        return start
    }

    /// ``offset(of:)`` without its error: nil outside the object area.
    @inline(__always)
    func objectStart(_ object: Int) -> Int? {
        let offset = tableOffset(of: object)
        guard offset >= UInt64(BinaryPropertyList.headerLength), offset < UInt64(offsetTableOffset) else { return nil }
        return Int(offset)
    }

    /// Object `object`'s entry in the offset table, unchecked.
    @inline(__always)
    private func tableOffset(of object: Int) -> UInt64 {
        Self.readUnsigned(bytes, at: offsetTableOffset + object * offsetSize, size: offsetSize)
    }

    /// The bytes `from..<from + count` of an object, which must end before the offset table.
    func readPayload(object: Int, from start: Int, count: Int) throws -> UnsafeBufferPointer<UInt8> {
        guard count >= 0, start <= offsetTableOffset, count <= offsetTableOffset - start else {
            throw runsPast(object, start)
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<start + count])
    }

    /// The element count in a marker's low nibble, or in the integer object after it when the nibble is 0xF.
    func readCount(object: Int, at start: Int) throws -> (count: Int, contentStart: Int) {
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
    func readInteger(object: Int, at start: Int) throws -> Int64 {
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

    /// The real object at `start`, of 4 or 8 bytes (its marker checked).
    func readReal(object: Int, at start: Int) throws -> Double {
        let info = bytes[start] & 0x0F
        let bits = try readPayload(object: object, from: start + 1, count: 1 << Int(info))
        return info == 2 ? Double(Float(bitPattern: UInt32(Self.readUnsigned(bits)))) : Double(bitPattern: Self.readUnsigned(bits))
    }

    /// The date object at `start` (its marker checked).
    func readDate(object: Int, at start: Int) throws -> Date {
        let bits = try readPayload(object: object, from: start + 1, count: 8)
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.readUnsigned(bits)))
    }

    /// Checks the `count` object references at `start` of a container, each against the
    /// object count; the bytes that hold them, for ``reference(_:_:)``.
    func checkReferences(object: Int, from start: Int, count: Int) throws -> UnsafeBufferPointer<UInt8> {
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
    func reference(_ references: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        Int(Self.readUnsigned(references, at: index * referenceSize, size: referenceSize))
    }

    func runsPast(_ object: Int, _ start: Int) -> PropertyListError {
        PropertyListError("damaged binary property list: object \(object) at \(start) runs past the end of the object area (\(offsetTableOffset))")
    }

    @inline(__always)
    static func readUnsigned(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, size: Int) -> UInt64 {
        // Offsets and references are mostly one or two bytes: inlined, those are a load or two.
        if size == 1 { return UInt64(bytes[start]) }
        if size == 2 { return UInt64(bytes[start]) << 8 | UInt64(bytes[start + 1]) }
        var value: UInt64 = 0
        for index in start..<start + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    static func readUnsigned(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        readUnsigned(bytes, at: 0, size: bytes.count)
    }

    static func validatedUTF16String(_ units: [UInt16]) -> String? {
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
}
