/// What ``LineFramer`` yields.
public enum LineFramerOutput: Sendable, Hashable {
    /// A complete line, without its `"\n"` or `"\r\n"`; never empty.
    case line([UInt8])
    /// A line longer than the limit; carries the bytes seen when it was detected. The rest of
    /// that line is discarded.
    case tooLong(Int)
}

/// What ``LineFramer/append(_:each:)`` hands over: a line lent for the call, or a too-long
/// marker.
public enum LineFramerLentOutput {
    /// A complete line, without its `"\n"` or `"\r\n"`; never empty. Valid during the call only.
    case line(UnsafeBufferPointer<UInt8>)
    /// A line longer than the limit; carries the bytes seen when it was detected. The rest of
    /// that line is discarded.
    case tooLong(Int)
}

extension LineFramerOutput {
    /// A lent line's bytes copied, to keep.
    public init(_ lent: LineFramerLentOutput) {
        switch lent {
        case .line(let line): self = .line(Array(line))
        case .tooLong(let length): self = .tooLong(length)
        }
    }
}
