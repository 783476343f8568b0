#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import WireProtocol

/// Bytes waiting to be written: a queue of heap chunks with read and write indices.
///
/// Small writes are packed into shared chunks; a large write gets a chunk of its own. Every
/// byte is copied once on the way in and never moved afterwards, and a drained chunk of the
/// standard size is kept for reuse.
struct OutputBuffer {
    final class Chunk {
        let storage: UnsafeMutableRawPointer
        let capacity: Int
        var start = 0
        var end = 0

        init(capacity: Int) {
            self.capacity = capacity
            storage = .allocate(byteCount: capacity, alignment: 16)
        }

        deinit {
            storage.deallocate()
        }

        var count: Int { end - start }
        var freeCapacity: Int { capacity - end }
    }

    /// Chunks are all this size, so they come from the malloc heap (not fresh `mmap` pages
    /// that fault in on every burst) and are reused.
    static let chunkSize = 64 * 1024
    /// Chunks kept for reuse once written (up to 1 MiB).
    static let maximumSpareChunks = 16

    private var chunks: [Chunk] = []
    private var head = 0
    private var spares: [Chunk] = []

    /// Bytes queued and not yet written.
    private(set) var byteCount = 0

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard var source = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        byteCount += remaining
        while remaining > 0 {
            let chunk: Chunk
            if head < chunks.count, let last = chunks.last, last.freeCapacity > 0 {
                chunk = last
            } else {
                chunk = spares.popLast() ?? Chunk(capacity: Self.chunkSize)
                chunks.append(chunk)
            }
            let n = min(remaining, chunk.freeCapacity)
            PieceCopy.copy(UnsafeRawBufferPointer(start: source, count: n), to: chunk.storage + chunk.end)
            chunk.end += n
            source += n
            remaining -= n
        }
    }

    /// Points up to `capacity` vectors at the queued bytes, oldest first; returns how many.
    func fill(_ vectors: UnsafeMutablePointer<iovec>, capacity: Int) -> Int {
        var count = 0
        var index = head
        while index < chunks.count && count < capacity {
            let chunk = chunks[index]
            vectors[count] = iovec(iov_base: chunk.storage + chunk.start, iov_len: chunk.count)
            count += 1
            index += 1
        }
        return count
    }

    /// Drops `count` bytes that were written.
    mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0 {
            let chunk = chunks[head]
            let n = min(remaining, chunk.count)
            chunk.start += n
            remaining -= n
            if chunk.count == 0 {
                retire(chunk)
            }
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        byteCount = 0
    }

    private mutating func retire(_ chunk: Chunk) {
        head += 1
        if spares.count < Self.maximumSpareChunks {
            chunk.start = 0
            chunk.end = 0
            spares.append(chunk)
        }
    }
}
