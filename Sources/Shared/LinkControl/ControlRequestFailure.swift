import LinkJSON

/// Why a request line was refused, with the request's id when it could be read so that the
/// error response can echo it.
public struct ControlRequestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's id, or `nil` when the line had no readable id.
    public var id: JSONValue?
    /// The `badRequest` error to answer with.
    public var error: ControlError

    public init(id: JSONValue?, error: ControlError) {
        self.id = id
        self.error = error
    }

    /// The error response line for this failure.
    public var responseLine: [UInt8] { ControlCodec.failure(id: id, error: error) }

    public var description: String { error.description }
}
