/// What APNs knows about the emulated device: its current token, the PushKit types it asked
/// for, and the tokens it gave up (with when, in ms since 1970).
public struct DeviceRegistration: Sendable, Equatable {
    public var token: String?
    public var types: Set<PushKitType>
    public var invalidated: [String: Int64]

    public init(token: String? = nil, types: Set<PushKitType> = [], invalidated: [String: Int64] = [:]) {
        self.token = token
        self.types = types
        self.invalidated = invalidated
    }
}
