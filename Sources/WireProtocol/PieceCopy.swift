import LinkCollections

/// Copies of payload bytes in pieces of at most 2 KiB.
///
/// glibc's `memcpy` copies 2 KiB and more with `rep movsb`, which on AMD Zen cores runs about
/// twenty times slower when the destination lies a few bytes after the source modulo 4 KiB:
/// 6–7 µs instead of 0.3 µs for 16 KiB. Whether that happens depends on where malloc put the
/// destination, so one daemon was fast and the next slow by the luck of its heap. Below 2 KiB
/// glibc copies with vector loops that do not care; so do these copies (docs/performance.md).
public enum PieceCopy {
    /// The largest piece one `memcpy` copies.
    public static let pieceSize = 2048

    /// Copies `source` to `destination` (which must not overlap it).
    public static func copy(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        guard let base = source.baseAddress else { return }
        var offset = 0
        while offset < source.count {
            let count = min(pieceSize, source.count - offset)
            (destination + offset).copyMemory(from: base + offset, byteCount: count)
            offset += count
        }
    }

    /// The bytes of `source` as an array.
    public static func array(_ source: UnsafeRawBufferPointer) -> [UInt8] {
        ByteArrays.writing(count: source.count) { base in copy(source, to: base) }
    }

    /// Appends the bytes of `source` to `array`.
    public static func append(_ source: UnsafeRawBufferPointer, to array: inout [UInt8]) {
        var offset = 0
        while offset < source.count {
            let count = min(pieceSize, source.count - offset)
            array.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
            offset += count
        }
    }
}
