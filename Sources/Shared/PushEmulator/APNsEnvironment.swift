/// APNs' two environments: development (the sandbox, `api.sandbox.push.apple.com`), which
/// devices running development builds of an app get their tokens from, and production
/// (`api.push.apple.com`). A device token works only with its environment's endpoint ("Verify
/// ... that the token matches the environment", `BadDeviceToken`); a team-scoped key may be
/// restricted to one of them (`BadEnvironmentKeyIdInToken`).
public enum APNsEnvironment: String, Sendable, CaseIterable, Hashable {
    case development
    case production

    /// Apple's host name of the environment.
    public var host: String {
        switch self {
        case .development: return "api.sandbox.push.apple.com"
        case .production: return "api.push.apple.com"
        }
    }

    /// The environment a name in `push.config`, a key's or a certificate's `environment` names.
    init?(name: String) {
        switch name {
        case "development", "sandbox": self = .development
        case "production": self = .production
        default: return nil
        }
    }
}
