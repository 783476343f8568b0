/// Byte arrays whose bytes the caller writes, made without
/// `Array(unsafeUninitializedCapacity:initializingWith:)`: that allocates through a generic
/// entry point that looks the storage's type up at run time, about 450 instructions, more
/// than copying a short payload or writing a small property list. Here the array is reserved
/// (specialized, no lookup) and then counted without writing a byte.
public enum ByteArrays {
    /// `count` bytes not yet written: the caller writes every one it reads.
    @inlinable @inline(__always)
    public static func unwritten(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        bytes.append(contentsOf: UnwrittenBytes(count: count))
        return bytes
    }

    /// `count` bytes, each written by `write` (given the first byte's address).
    @inlinable @inline(__always)
    public static func writing(count: Int, _ write: (UnsafeMutablePointer<UInt8>) throws -> Void) rethrows -> [UInt8] {
        var bytes = unwritten(count: count)
        try bytes.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { try write(base) }
        }
        return bytes
    }

    /// Appends `count` bytes to `bytes`, each written by `write` (given the first new byte's
    /// address): one check of the array's room and of its uniqueness for all of them, where
    /// each `append(contentsOf:)` makes its own (about 80 instructions an append, more than
    /// a frame's head takes to write).
    @inlinable @inline(__always)
    public static func append(
        count: Int, to bytes: inout [UInt8], _ write: (UnsafeMutablePointer<UInt8>) throws -> Void
    ) rethrows {
        let start = bytes.count
        bytes.append(contentsOf: UnwrittenBytes(count: count))
        try bytes.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { try write(base + start) }
        }
    }
}

/// `count` bytes left as they are: appended to an array with room for them, it sets the
/// array's count without writing a byte (whoever appends it writes every byte it reads).
@usableFromInline
struct UnwrittenBytes: Sequence {
    @usableFromInline let count: Int

    @inlinable
    init(count: Int) { self.count = count }

    @usableFromInline
    struct Iterator: IteratorProtocol {
        @inlinable init() {}
        @inlinable mutating func next() -> UInt8? { nil }
    }

    @inlinable func makeIterator() -> Iterator { Iterator() }

    @inlinable var underestimatedCount: Int { count }

    @inlinable
    func _copyContents(initializing buffer: UnsafeMutableBufferPointer<UInt8>) -> (Iterator, Int) {
        precondition(buffer.count >= count, "no room for the unwritten bytes")
        return (Iterator(), count)
    }
}
