/// How much the endpoint takes from its clients before it closes a connection.
public struct APNsServerLimits: Sendable, Equatable {
    /// Connections open at once; one more is closed as soon as it is accepted.
    public var maximumConnections = 256
    /// From accept to the end of the HTTP/2 connection preface (TLS handshake included).
    public var handshakeTimeoutMilliseconds: Int64 = 10_000
    /// A connection with no open stream and no input for this long gets GOAWAY.
    public var idleTimeoutMilliseconds: Int64 = 300_000

    public init() {}
}
