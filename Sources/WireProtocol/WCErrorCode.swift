/// The error codes of WatchConnectivity, domain ``WCErrorCode/domain``.
public enum WCErrorCode: Int, Sendable, Hashable, CaseIterable {
    case genericError = 7001
    case sessionNotSupported = 7002
    case sessionMissingDelegate = 7003
    case sessionNotActivated = 7004
    case deviceNotPaired = 7005
    case watchAppNotInstalled = 7006
    case notReachable = 7007
    case invalidParameter = 7008
    case payloadTooLarge = 7009
    case payloadUnsupportedTypes = 7010
    case messageReplyFailed = 7011
    case messageReplyTimedOut = 7012
    case fileAccessDenied = 7013
    case deliveryFailed = 7014
    case insufficientSpace = 7015
    case sessionInactive = 7016
    case transferTimedOut = 7017
    case companionAppNotInstalled = 7018
    case watchOnlyApp = 7019

    /// The error domain of these codes: `"WCErrorDomain"`.
    public static let domain = "WCErrorDomain"

    /// Apple's name of the code, e.g. `"notReachable"`.
    public var name: String {
        switch self {
        case .genericError: return "genericError"
        case .sessionNotSupported: return "sessionNotSupported"
        case .sessionMissingDelegate: return "sessionMissingDelegate"
        case .sessionNotActivated: return "sessionNotActivated"
        case .deviceNotPaired: return "deviceNotPaired"
        case .watchAppNotInstalled: return "watchAppNotInstalled"
        case .notReachable: return "notReachable"
        case .invalidParameter: return "invalidParameter"
        case .payloadTooLarge: return "payloadTooLarge"
        case .payloadUnsupportedTypes: return "payloadUnsupportedTypes"
        case .messageReplyFailed: return "messageReplyFailed"
        case .messageReplyTimedOut: return "messageReplyTimedOut"
        case .fileAccessDenied: return "fileAccessDenied"
        case .deliveryFailed: return "deliveryFailed"
        case .insufficientSpace: return "insufficientSpace"
        case .sessionInactive: return "sessionInactive"
        case .transferTimedOut: return "transferTimedOut"
        case .companionAppNotInstalled: return "companionAppNotInstalled"
        case .watchOnlyApp: return "watchOnlyApp"
        }
    }

    /// Creates a code from Apple's name of it, e.g. `"payloadTooLarge"`.
    public init?(name: String) {
        guard let code = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = code
    }
}
