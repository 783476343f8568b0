#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import CByteScan

/// Finds, eight bytes and then a vector at a time, where a JSON string's bytes stop being plain: a
/// quote, a backslash or a control character (and, for the parser, which validates UTF-8, a
/// byte of 0x80 or more). Strings are mostly plain, and a byte at a time cost several
/// instructions a byte, the largest part of parsing and writing a 16 KiB message.
public enum JSONStringBytes {
    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inlinable static var highBits: UInt64 { 0x8080_8080_8080_8080 }

    /// The first byte at or after `start` that is not plain, when a word of eight bytes holds
    /// it or the string is long; else the start of the last bytes (fewer than eight): the
    /// caller looks at the bytes one by one from there. Inlined into its callers: most strings
    /// are a few words long, and end in the first four words; the rest of a string still plain
    /// after them is scanned in vectors, to the exact byte.
    @inlinable
    public static func skipPlain(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCIIIsPlain: Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = start
        var wordsBeforeVectors = 4
        while index + 8 <= bytes.count {
            let flags = attention(base + index, nonASCIIIsPlain: nonASCIIIsPlain)
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
            wordsBeforeVectors &-= 1
            if wordsBeforeVectors == 0, bytes.count - index >= 32 {
                return skipPlainRest(base, from: index, count: bytes.count, nonASCIIIsPlain: nonASCIIIsPlain)
            }
        }
        return index
    }

    /// ``skipPlain(_:from:nonASCIIIsPlain:)`` in words only, for strings short by their origin
    /// (those of a property list under 256 bytes): with no call in it, the function it is
    /// inlined into saves no registers.
    @inlinable
    public static func skipPlainWords(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCIIIsPlain: Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = start
        while index + 8 <= bytes.count {
            let flags = attention(base + index, nonASCIIIsPlain: nonASCIIIsPlain)
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    /// The high bit of each byte of the word at `word` that is not plain (and perhaps of some
    /// after the first, through a borrow: the lowest is exact).
    @inlinable @inline(__always)
    static func attention(_ word: UnsafePointer<UInt8>, nonASCIIIsPlain: Bool) -> UInt64 {
        let word = UInt64(littleEndian: UnsafeRawPointer(word).loadUnaligned(as: UInt64.self))
        var flags =
            hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
            | hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
            | ((word &- ones &* 0x20) & ~word & highBits)  // a byte below 0x20
        if !nonASCIIIsPlain { flags |= word & highBits }
        return flags
    }

    /// The first byte at or after `start` that is not plain, or `count`: AVX2 vectors where the
    /// CPU has them, SSE2 otherwise, and the last bytes as the vector that ends at `count`
    /// (CByteScan: about 0.3 instructions a byte with AVX2, none looked at one by one). Not
    /// inlined: long strings are few.
    @usableFromInline @inline(never)
    static func skipPlainRest(_ base: UnsafePointer<UInt8>, from start: Int, count: Int, nonASCIIIsPlain: Bool) -> Int {
        Int(wl_skip_plain(base, start, count, nonASCIIIsPlain ? 1 : 0))
    }

    /// The index of the first quote at or after `start`, if any: where a string ends that the
    /// parser found without an escape. The first words are read here (most strings are a few
    /// words long), the rest of a long string with `memchr`, which reads it in about an eighth
    /// of the instructions of ``skipPlain(_:from:nonASCIIIsPlain:)``.
    @inlinable @inline(__always)
    public static func quote(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var index = start
        for _ in 0..<4 {
            guard index + 8 <= bytes.count else { break }
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let found = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
        return quote(base, from: index, count: bytes.count)
    }

    @usableFromInline @inline(never)
    static func quote(_ base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int? {
        guard start < count, let found = memchr(base + start, Int32(UInt8(ascii: "\"")), count - start) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// Has the high bit of its byte set for each zero byte of `word` up to the first (and
    /// perhaps some after it, through a borrow).
    @inlinable @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }
}
