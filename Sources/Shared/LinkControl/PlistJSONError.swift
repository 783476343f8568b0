/// A JSON value that has no property-list equivalent.
///
/// Daemons report it as WatchConnectivity error 7010 `payloadUnsupportedTypes`.
public struct PlistJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the value sits, e.g. `message.items[2]`.
    public let path: String
    /// The full explanation, naming the path.
    public let message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { message }
}
