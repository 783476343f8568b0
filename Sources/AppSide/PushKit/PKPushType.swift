/// The kinds of push a registry asks for, as Apple's PushKit names them.
///
/// WatchLink's phoned registers `fileProvider`, `voIP` and `complication` (its
/// `push.register` types); a type of another raw value cannot be registered.
public struct PKPushType: RawRepresentable, Hashable, Sendable {
    /// The type's name, as Apple's constants spell it (`PKPushTypeFileProvider`).
    public let rawValue: String

    /// The type named `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Voice-over-IP call invitations (`apns-push-type: voip`).
    public static let voIP = PKPushType(rawValue: "PKPushTypeVoIP")
    /// watchOS complication updates (`apns-push-type: complication`).
    public static let complication = PKPushType(rawValue: "PKPushTypeComplication")
    /// File Provider changes (`apns-push-type: fileprovider`): the system also calls
    /// `signalEnumerator(for:completionHandler:)` for the container the payload names.
    public static let fileProvider = PKPushType(rawValue: "PKPushTypeFileProvider")

    /// The type's name in phoned's control protocol (`push.register`, events), `nil` for a type
    /// phoned does not know.
    var daemonName: String? {
        switch self {
        case .voIP: return "voIP"
        case .complication: return "complication"
        case .fileProvider: return "fileProvider"
        default: return nil
        }
    }

    /// The type phoned names `name`.
    init?(daemonName name: String) {
        guard let type = [PKPushType.voIP, .complication, .fileProvider].first(where: { $0.daemonName == name }) else { return nil }
        self = type
    }
}
