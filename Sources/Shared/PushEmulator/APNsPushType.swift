/// The values of the `apns-push-type` header, and the topic each one requires.
public enum APNsPushType: String, Sendable, CaseIterable, Hashable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls

    /// What follows the bundle id in `apns-topic` for this push type (`nil`: any topic, `mdm`).
    public var topicSuffix: String? {
        switch self {
        case .alert, .background: return ""
        case .location: return ".location-query"
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .mdm: return nil
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        }
    }

    /// The largest payload APNs takes for this push type.
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The PushKit type that receives pushes of this type, if any.
    public var pushKitType: PushKitType? {
        switch self {
        case .voip: return .voIP
        case .complication: return .complication
        case .fileprovider: return .fileProvider
        default: return nil
        }
    }
}

/// A `PKPushType`: the kinds of PushKit push a registry can ask for.
public enum PushKitType: String, Sendable, CaseIterable, Hashable, Comparable {
    case fileProvider, voIP, complication

    /// The `apns-push-type` that carries pushes of this type.
    public var apnsPushType: APNsPushType {
        switch self {
        case .fileProvider: return .fileprovider
        case .voIP: return .voip
        case .complication: return .complication
        }
    }

    public static func < (lhs: PushKitType, rhs: PushKitType) -> Bool { lhs.rawValue < rhs.rawValue }
}
