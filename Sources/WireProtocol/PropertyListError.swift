/// A property list could not be encoded or decoded; ``message`` says what was wrong.
public struct PropertyListError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
