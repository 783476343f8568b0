/// Finds, eight bytes at a time, where a JSON string's bytes stop being plain: a quote, a
/// backslash or a control character (and, for the parser, which validates UTF-8, a byte of
/// 0x80 or more). Strings are mostly plain, and a byte at a time cost several instructions
/// a byte, the largest part of parsing and writing a 16 KiB message.
public enum JSONStringBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The start of the first eight-byte word at or after `start` that holds a byte that is
    /// not plain, or of the last bytes (fewer than eight): the caller looks at those bytes one
    /// by one from there.
    public static func skipPlainWords(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCIIIsPlain: Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = start
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            var attention = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
                | hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
                | ((word &- ones &* 0x20) & ~word & highBits)   // a byte below 0x20
            if !nonASCIIIsPlain { attention |= word & highBits }
            if attention != 0 { break }
            index += 8
        }
        return index
    }

    /// Non-zero when a byte of `word` is zero (exact as a yes or no).
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }
}
