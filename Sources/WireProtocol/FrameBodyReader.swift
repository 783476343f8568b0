/// Reads the fields of one frame body in order, naming the field in every error.
struct FrameBodyReader: ~Copyable {
    private let type: UInt8
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(type: UInt8, body: UnsafeRawBufferPointer) {
        self.type = type
        self.bytes = body
    }

    private var remaining: Int { bytes.count - index }

    func malformed(_ reason: String) -> FrameDecodingError {
        .malformed(type: type, reason: reason)
    }

    private mutating func take(_ count: Int, field: String) throws(FrameDecodingError) -> UnsafeRawBufferPointer {
        guard count <= remaining else {
            throw malformed("body ends inside \(field): needs \(bytesPhrase(count)), \(remaining) left")
        }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[index..<index + count])
        index += count
        return slice
    }

    mutating func readInteger<T: FixedWidthInteger & UnsignedInteger>(_: T.Type, field: String) throws(FrameDecodingError) -> T {
        var value: T = 0
        for byte in try take(MemoryLayout<T>.size, field: field) {
            value = value << 8 | T(byte)
        }
        return value
    }

    mutating func readBytes(_ count: Int, field: String) throws(FrameDecodingError) -> [UInt8] {
        PieceCopy.array(try take(count, field: field))
    }

    mutating func readRest() -> [UInt8] {
        let rest = PieceCopy.array(UnsafeRawBufferPointer(rebasing: bytes[index...]))
        index = bytes.count
        return rest
    }

    /// A `UInt16` byte length, then that many bytes of UTF-8.
    mutating func readString(field: String, allowedLengths: ClosedRange<Int> = 0...Int(UInt16.max)) throws(FrameDecodingError) -> String {
        let length = Int(try readInteger(UInt16.self, field: "\(field) length"))
        guard allowedLengths.contains(length) else {
            throw malformed("\(field) length is \(length), must be \(allowedLengths.lowerBound)...\(allowedLengths.upperBound)")
        }
        guard let string = validatedUTF8String(try take(length, field: field)) else {
            throw malformed("\(field) is not valid UTF-8")
        }
        return string
    }

    func expectEnd(after field: String) throws(FrameDecodingError) {
        guard remaining == 0 else {
            throw malformed("\(bytesPhrase(remaining, "trailing byte")) after \(field)")
        }
    }
}

func bytesPhrase(_ count: Int, _ noun: String = "byte") -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
