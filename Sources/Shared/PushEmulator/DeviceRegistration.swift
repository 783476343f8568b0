/// What APNs knows about the emulated device: its current token and its environment, the
/// PushKit types it asked for, and the tokens it gave up (with when, in ms since 1970).
public struct DeviceRegistration: Sendable, Equatable {
    public var token: String?
    public var types: Set<PushKitType>
    public var invalidated: [String: Int64]
    /// The environment the token is of: the app's `aps-environment`.
    public var environment: APNsEnvironment
    /// The tokens given up because they expired (410 `ExpiredToken` rather than `Unregistered`).
    public var expired: Set<String>

    public init(
        token: String? = nil, types: Set<PushKitType> = [], invalidated: [String: Int64] = [:],
        environment: APNsEnvironment = .development, expired: Set<String> = []
    ) {
        self.token = token
        self.types = types
        self.invalidated = invalidated
        self.environment = environment
        self.expired = expired
    }
}
