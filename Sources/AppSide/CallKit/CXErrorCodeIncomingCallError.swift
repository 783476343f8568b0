// swift-format-ignore: AlwaysUseLowerCamelCase
/// The error domain of a call the system did not allow.
public let CXErrorDomainIncomingCall: String = "com.apple.CallKit.error.incomingcall"

/// Why the system did not allow an incoming call (`reportNewIncomingCall`'s error).
public struct CXErrorCodeIncomingCallError: CustomNSError, Hashable, Sendable {
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case unknown = 0
        case unentitled = 1
        case callUUIDAlreadyExists = 2
        case filteredByDoNotDisturb = 3
        case filteredByBlockList = 4
    }

    public let code: Code
    private let message: String

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message =
            (userInfo[NSLocalizedDescriptionKey] as? String) ?? "The operation couldn’t be completed. (\(CXErrorDomainIncomingCall) error \(code.rawValue).)"
    }

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static var errorDomain: String { CXErrorDomainIncomingCall }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var localizedDescription: String { message }
}
