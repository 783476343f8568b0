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
/// Bridged to `NSError` with domain ``WCErrorDomain`` and the code's raw value. Its
/// `localizedDescription`, failure reason and recovery suggestion are the framework's own texts
/// (``deviceDescription(of:)``), as a device gives them: apps branch on them. What WatchLink knows
/// of the failure (the daemon's words: why the counterpart is not reachable, which limit a
/// payload passed) is in `userInfo[WCError.watchLinkExplanationKey]` and ``explanation``, and in
/// the daemon's log and trace, never in place of the device's text.
public struct WCError: CustomNSError, Hashable, Sendable, CustomStringConvertible {
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

    /// The `userInfo` key of WatchLink's own explanation of the error: a `String`.
    public static let watchLinkExplanationKey = "WatchLinkExplanation"

    /// What went wrong.
    public let code: Code
    /// WatchLink's own words on what went wrong, if it has any.
    public let explanation: String?
    /// A description given with ``init(_:userInfo:)``, in place of the framework's.
    private let givenDescription: String?

    /// An error with `code`; `userInfo[NSLocalizedDescriptionKey]`, when a string, is its
    /// description, else the framework's text for `code`.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        givenDescription = userInfo[NSLocalizedDescriptionKey] as? String
        explanation = userInfo[Self.watchLinkExplanationKey] as? String
    }

    /// An error with `code` and WatchLink's `explanation`.
    init(_ code: Code, _ explanation: String) {
        self.code = code
        self.explanation = explanation
        givenDescription = nil
    }

    /// ``WCErrorDomain``.
    public static var errorDomain: String { WCErrorDomain }

    /// The code's raw value (7001 to 7019).
    public var errorCode: Int { code.rawValue }

    /// The framework's description, failure reason and recovery suggestion for the code (those it
    /// has), and WatchLink's explanation.
    public var errorUserInfo: [String: Any] {
        let texts = Self.deviceDescription(of: code)
        var info: [String: Any] = [NSLocalizedDescriptionKey: localizedDescription]
        if let reason = texts.failureReason { info[NSLocalizedFailureReasonErrorKey] = reason }
        if let suggestion = texts.recoverySuggestion { info[NSLocalizedRecoverySuggestionErrorKey] = suggestion }
        if let explanation { info[Self.watchLinkExplanationKey] = explanation }
        return info
    }

    /// The user info of the bridged `NSError`.
    public var userInfo: [String: Any] { errorUserInfo }

    /// The framework's description of the code, as a device gives it.
    public var localizedDescription: String { givenDescription ?? Self.deviceDescription(of: code).description }

    /// As `NSError` prints itself, with WatchLink's explanation among its user info.
    public var description: String {
        var members = ["NSLocalizedDescription=\(localizedDescription)"]
        let texts = Self.deviceDescription(of: code)
        if let reason = texts.failureReason { members.append("NSLocalizedFailureReason=\(reason)") }
        if let suggestion = texts.recoverySuggestion { members.append("NSLocalizedRecoverySuggestion=\(suggestion)") }
        if let explanation { members.append("\(Self.watchLinkExplanationKey)=\(explanation)") }
        return "Error Domain=\(WCErrorDomain) Code=\(code.rawValue) \"\(localizedDescription)\" UserInfo={\(members.joined(separator: ", "))}"
    }

    /// The texts of WatchConnectivity's own strings for `code` (its `Localizable.strings`: keys
    /// `Err7001` to `Err7019`, with `-C` for the failure reason and `-R` for the recovery
    /// suggestion, in English; as Johennes/swift-systemstrings lists them from the framework,
    /// and as device logs show them: "WatchConnectivity session on paired device is not
    /// reachable.", "Message reply took too long.").
    public static func deviceDescription(of code: Code) -> (description: String, failureReason: String?, recoverySuggestion: String?) {
        switch code {
        case .genericError: return ("Unknown WatchConnectivity error.", nil, nil)
        case .sessionNotSupported:
            return (
                "WatchConnectivity session is not available on this device.", "Device does not support pairing to a Watch.",
                "Check if WatchConnectivity session is supported prior to use."
            )
        case .sessionMissingDelegate: return ("WatchConnectivity session has no delegate.", "Delegate is nil.", "Set a delegate.")
        case .sessionNotActivated:
            return (
                "WatchConnectivity session has not been activated.", "Function activateSession has not been called.",
                "Activate the WatchConnectivity session."
            )
        case .deviceNotPaired: return ("Device is not paired.", nil, "Pair the device with a Watch.")
        case .watchAppNotInstalled: return ("Watch app is not installed.", nil, "Install the Watch app.")
        case .notReachable: return ("WatchConnectivity session on paired device is not reachable.", nil, nil)
        case .invalidParameter: return ("Invalid parameter passed to WatchConnectivity API.", nil, "Only pass parameters of correct type.")
        case .payloadTooLarge: return ("Payload is too large.", nil, "Send smaller payloads.")
        case .payloadUnsupportedTypes: return ("Payload contains unsupported type.", nil, "Only pass valid types.")
        case .messageReplyFailed: return ("Message reply failed.", nil, nil)
        case .messageReplyTimedOut: return ("Message reply took too long.", "Reply timeout occurred.", nil)
        case .fileAccessDenied:
            return (
                "WatchConnectivity session cannot access the file.", "Invalid file path, or insufficient permissions to access the file.",
                "Verify the file path is accessible."
            )
        case .deliveryFailed: return ("Payload could not be delivered.", nil, nil)
        case .insufficientSpace:
            return (
                "The payload could not be sent because there isn\u{2019}t enough space.", "There is not enough space on the receiving side.",
                "Clear up some space on the receiving side, and try again."
            )
        case .sessionInactive:
            return (
                "WatchConnectivity session is inactive.", "WatchConnectivity session is still transitioning to deactivated.",
                "Wait for the WatchConnectivity session to complete transition to deactivated."
            )
        case .transferTimedOut: return ("Transfer timed out.", nil, nil)
        case .companionAppNotInstalled: return ("Companion app is not installed.", nil, "Install the Companion app.")
        case .watchOnlyApp: return ("Watch app doesn't have a Companion app.", nil, "Create a Companion app for this Watch app.")
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
