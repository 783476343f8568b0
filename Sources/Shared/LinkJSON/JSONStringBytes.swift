/// Finds, eight bytes at a time, where a JSON string's bytes stop being plain: a quote, a
/// backslash or a control character (and, for the parser, which validates UTF-8, a byte of
/// 0x80 or more). Strings are mostly plain, and a byte at a time cost several instructions
/// a byte, the largest part of parsing and writing a 16 KiB message.
public enum JSONStringBytes {
    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inlinable static var highBits: UInt64 { 0x8080_8080_8080_8080 }

    /// The first byte at or after `start` that is not plain, when a word of eight bytes holds
    /// it; else the start of the last bytes (fewer than eight): the caller looks at the bytes
    /// one by one from there. Inlined into its callers: most strings are a few words long.
    @inlinable
    public static func skipPlainWords(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCIIIsPlain: Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = start
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            var attention = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
                | hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
                | ((word &- ones &* 0x20) & ~word & highBits)   // a byte below 0x20
            if !nonASCIIIsPlain { attention |= word & highBits }
            // The lowest flag is exact (a borrow only sets flags above a byte that is flagged).
            if attention != 0 { return index + attention.trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    /// Has the high bit of its byte set for each zero byte of `word` up to the first (and
    /// perhaps some after it, through a borrow).
    @inlinable @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }
}
