#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into `"\n"`-terminated lines.
///
/// A trailing `"\r"` is removed and empty lines are skipped. A line that grows past
/// `maximumLineLength` yields ``LineFramerOutput/tooLong(_:)`` once; its remaining bytes are
/// dropped as they arrive, up to the next `"\n"`, so memory stays bounded by the limit.
public struct LineFramer: Sendable {
    /// The longest line accepted, not counting its terminator.
    public let maximumLineLength: Int

    private var partial: [UInt8] = []
    private var discarding = false
    private var ready = FIFOQueue<LineFramerOutput>()

    public init(maximumLineLength: Int = 1 << 20) {
        precondition(maximumLineLength > 0, "maximumLineLength must be positive")
        self.maximumLineLength = maximumLineLength
    }

    /// The bytes of the unfinished line held back.
    public var bufferedByteCount: Int { partial.count }

    /// Whether a too-long line is being dropped until its `"\n"`.
    public var isDiscarding: Bool { discarding }

    /// Feeds bytes from the stream; the lines they complete wait for ``next()``.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var ready = self.ready
        self.ready = FIFOQueue()
        append(bytes) { output in
            ready.append(LineFramerOutput(output))
            return true
        }
        self.ready = ready
    }

    /// Feeds bytes from the stream and hands each line or too-long marker they complete to
    /// `body` at once, in stream order, for as long as `body` returns true (the bytes after
    /// the line it refused are dropped). A line is lent for the call: from `bytes` when it
    /// arrived whole in them, without a copy.
    ///
    /// - Precondition: nothing waits for ``next()``.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, each body: (LineFramerLentOutput) -> Bool) {
        precondition(ready.isEmpty, "lines wait for next(): the lent and the queued would leave out of order")
        let newline = UInt8(ascii: "\n")
        var start = 0
        while start < bytes.count {
            let end = Self.index(of: newline, in: bytes, from: start)
            let chunkEnd = end ?? bytes.count
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<chunkEnd])
            start = chunkEnd + (end == nil ? 0 : 1)
            if discarding {
                if end != nil { discarding = false }
            } else if end != nil {
                guard completeLine(with: chunk, body) else { return }
            } else if partial.count + chunk.count > maximumLineLength + 1 {
                let length = partial.count + chunk.count
                partial = []
                discarding = true
                guard body(.tooLong(length)) else { return }
            } else {
                partial.append(contentsOf: chunk)
            }
        }
    }

    /// Feeds bytes from the stream.
    public mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next line or too-long marker, in stream order; `nil` when more bytes are needed.
    public mutating func next() -> LineFramerOutput? {
        ready.popFirst()
    }

    private static func index(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Ends the line held back with `chunk` and hands it to `body`: what `body` returns.
    private mutating func completeLine(with chunk: UnsafeRawBufferPointer, _ body: (LineFramerLentOutput) -> Bool) -> Bool {
        if partial.isEmpty {
            // The common case: the whole line arrived in one read.
            let length = chunk.count - (chunk.last == UInt8(ascii: "\r") ? 1 : 0)
            if length > maximumLineLength { return body(.tooLong(length)) }
            guard length > 0 else { return true }
            return body(.line(UnsafeRawBufferPointer(rebasing: chunk[..<length]).assumingMemoryBound(to: UInt8.self)))
        }
        partial.append(contentsOf: chunk)
        defer { partial.removeAll(keepingCapacity: partial.capacity <= 4096) }
        let length = partial.count - (partial.last == UInt8(ascii: "\r") ? 1 : 0)
        if length > maximumLineLength { return body(.tooLong(length)) }
        guard length > 0 else { return true }
        return partial.withUnsafeBufferPointer { body(.line(UnsafeBufferPointer(rebasing: $0[..<length]))) }
    }
}
