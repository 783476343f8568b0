import Foundation

// swift-format-ignore: AlwaysUseLowerCamelCase
/// The error domain of WatchConnectivity's errors.
public let WCErrorDomain: String = "WCErrorDomain"

/// An error of WatchConnectivity, as Apple's framework reports it.
///
/// ```swift
/// do {
///     try session.updateApplicationContext(context)
/// } catch let error as WCError where error.code == .sessionNotActivated {
///     // activate first
/// } catch WCError.payloadTooLarge {
///     // send less
/// }
/// ```
///
/// Bridged to `NSError` with domain ``WCErrorDomain``, the code's raw value and the message as
/// its `localizedDescription`.
public struct WCError: CustomNSError, Hashable, Sendable {
    /// WatchConnectivity's error codes (domain ``WCErrorDomain``).
    public enum Code: Int, Sendable, Hashable, CaseIterable {
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
    }

    /// What went wrong.
    public let code: Code
    private let message: String

    /// An error with `code`; `userInfo[NSLocalizedDescriptionKey]`, when a string, is its
    /// description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message = (userInfo[NSLocalizedDescriptionKey] as? String) ?? Self.defaultDescription(of: code)
    }

    /// An error with `code` and the description `message`.
    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// ``WCErrorDomain``.
    public static var errorDomain: String { WCErrorDomain }

    /// The code's raw value (7001 to 7019).
    public var errorCode: Int { code.rawValue }

    /// `NSLocalizedDescriptionKey`: the description.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    /// The user info of the bridged `NSError`.
    public var userInfo: [String: Any] { errorUserInfo }

    /// What went wrong, in words.
    public var localizedDescription: String { message }

    static func defaultDescription(of code: Code) -> String {
        switch code {
        case .genericError: return "An unknown error occurred."
        case .sessionNotSupported: return "WatchConnectivity session is not supported on this device."
        case .sessionMissingDelegate: return "The WCSession has no delegate: set one before calling activate()."
        case .sessionNotActivated: return "WatchConnectivity session has not been activated."
        case .deviceNotPaired: return "The counterpart device is not paired."
        case .watchAppNotInstalled: return "The counterpart Watch app is not installed."
        case .notReachable: return "The counterpart device is not reachable."
        case .invalidParameter: return "A parameter is invalid."
        case .payloadTooLarge: return "The payload is too large."
        case .payloadUnsupportedTypes: return "The payload contains a value that is not a property-list type."
        case .messageReplyFailed: return "The reply could not be delivered."
        case .messageReplyTimedOut: return "The reply did not arrive in time."
        case .fileAccessDenied: return "The file could not be read."
        case .deliveryFailed: return "The content could not be delivered."
        case .insufficientSpace: return "There is not enough space to store the content."
        case .sessionInactive: return "WatchConnectivity session is inactive."
        case .transferTimedOut: return "The transfer timed out."
        case .companionAppNotInstalled: return "The companion app is not installed."
        case .watchOnlyApp: return "The Watch app has no companion iOS app."
        }
    }
}

extension WCError.Code {
    /// Whether `error` is a ``WCError``, or an `NSError` of ``WCErrorDomain``, with this code:
    /// what makes `catch WCError.notReachable` work.
    public static func ~= (match: WCError.Code, error: any Error) -> Bool {
        if let error = error as? WCError { return error.code == match }
        let bridged = error as NSError
        return bridged.domain == WCErrorDomain && bridged.code == match.rawValue
    }
}

/// The codes as members of ``WCError``, for `catch WCError.notReachable` and `WCError.notReachable`.
extension WCError {
    /// `genericError` (7001).
    public static var genericError: Code { .genericError }
    /// `sessionNotSupported` (7002).
    public static var sessionNotSupported: Code { .sessionNotSupported }
    /// `sessionMissingDelegate` (7003).
    public static var sessionMissingDelegate: Code { .sessionMissingDelegate }
    /// `sessionNotActivated` (7004).
    public static var sessionNotActivated: Code { .sessionNotActivated }
    /// `deviceNotPaired` (7005).
    public static var deviceNotPaired: Code { .deviceNotPaired }
    /// `watchAppNotInstalled` (7006).
    public static var watchAppNotInstalled: Code { .watchAppNotInstalled }
    /// `notReachable` (7007).
    public static var notReachable: Code { .notReachable }
    /// `invalidParameter` (7008).
    public static var invalidParameter: Code { .invalidParameter }
    /// `payloadTooLarge` (7009).
    public static var payloadTooLarge: Code { .payloadTooLarge }
    /// `payloadUnsupportedTypes` (7010).
    public static var payloadUnsupportedTypes: Code { .payloadUnsupportedTypes }
    /// `messageReplyFailed` (7011).
    public static var messageReplyFailed: Code { .messageReplyFailed }
    /// `messageReplyTimedOut` (7012).
    public static var messageReplyTimedOut: Code { .messageReplyTimedOut }
    /// `fileAccessDenied` (7013).
    public static var fileAccessDenied: Code { .fileAccessDenied }
    /// `deliveryFailed` (7014).
    public static var deliveryFailed: Code { .deliveryFailed }
    /// `insufficientSpace` (7015).
    public static var insufficientSpace: Code { .insufficientSpace }
    /// `sessionInactive` (7016).
    public static var sessionInactive: Code { .sessionInactive }
    /// `transferTimedOut` (7017).
    public static var transferTimedOut: Code { .transferTimedOut }
    /// `companionAppNotInstalled` (7018).
    public static var companionAppNotInstalled: Code { .companionAppNotInstalled }
    /// `watchOnlyApp` (7019).
    public static var watchOnlyApp: Code { .watchOnlyApp }
}
