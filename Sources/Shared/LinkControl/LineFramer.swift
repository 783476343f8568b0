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

    /// Feeds bytes from the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let newline = UInt8(ascii: "\n")
        var start = 0
        while start < bytes.count {
            let end = Self.index(of: newline, in: bytes, from: start)
            let chunkEnd = end ?? bytes.count
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<chunkEnd])
            if discarding {
                if end != nil { discarding = false }
            } else if end != nil {
                completeLine(with: chunk)
            } else if partial.count + chunk.count > maximumLineLength + 1 {
                emit(.tooLong(partial.count + chunk.count))
                partial = []
                discarding = true
            } else {
                partial.append(contentsOf: chunk)
            }
            start = chunkEnd + (end == nil ? 0 : 1)
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

    private mutating func completeLine(with chunk: UnsafeRawBufferPointer) {
        let lastByte = chunk.last ?? partial.last
        let length = partial.count + chunk.count - (lastByte == UInt8(ascii: "\r") ? 1 : 0)
        defer { partial.removeAll(keepingCapacity: partial.count <= 4096) }
        if length > maximumLineLength {
            emit(.tooLong(length))
            return
        }
        guard length > 0 else { return }
        var line = partial
        line.append(contentsOf: chunk)
        line.removeLast(line.count - length)
        emit(.line(line))
    }

    private mutating func emit(_ output: LineFramerOutput) {
        ready.append(output)
    }
}
