extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        var bigEndian = value.bigEndian
        Swift.withUnsafeBytes(of: &bigEndian) { append(contentsOf: $0) }
    }

    mutating func writeBigEndian<T: FixedWidthInteger>(_ value: T, at index: Int) {
        var bigEndian = value.bigEndian
        Swift.withUnsafeBytes(of: &bigEndian) { raw in
            for offset in 0..<raw.count {
                self[index + offset] = raw[offset]
            }
        }
    }
}

/// The number of leading UTF-8 bytes of `string` that fit in `maximum` bytes without splitting a scalar.
func utf8PrefixLength(of string: String, maximum: Int) -> Int {
    let total = string.utf8.count
    if total <= maximum { return total }
    var length = 0
    for scalar in string.unicodeScalars {
        let scalarLength = UTF8.width(scalar)
        if length + scalarLength > maximum { break }
        length += scalarLength
    }
    return length
}

/// The bytes as a `String` if they are well-formed UTF-8, else `nil` (never repairs).
func validatedUTF8String<C: Collection>(_ bytes: C) -> String? where C.Element == UInt8 {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return String(decoding: bytes, as: UTF8.self)
        case .error: return nil
        }
    }
}
