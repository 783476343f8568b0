import Foundation

/// The error domain of File Provider's errors.
public let NSFileProviderErrorDomain: String = "NSFileProviderErrorDomain"

/// An error of File Provider, with Apple's codes; bridged to `NSError` with domain
/// ``NSFileProviderErrorDomain``, the code's raw value and the message as its
/// `localizedDescription`. An extension passes one to a completion handler; WatchLink
/// reports it to phoned as `{"domain", "code", "message"}`.
public struct NSFileProviderError: CustomNSError, Hashable, Sendable {
    /// File Provider's error codes (domain ``NSFileProviderErrorDomain``).
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case notAuthenticated = -1000
        case filenameCollision = -1001
        case syncAnchorExpired = -1002
        case insufficientQuota = -1003
        case serverUnreachable = -1004
        case noSuchItem = -1005
        case versionOutOfDate = -1006
        case directoryNotEmpty = -1007
        case providerNotFound = -2001
        case cannotSynchronize = -2005
    }

    /// What went wrong.
    public let code: Code
    private let message: String

    /// An error with `code`; `userInfo[NSLocalizedDescriptionKey]`, when a string, is its description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message = (userInfo[NSLocalizedDescriptionKey] as? String) ?? "The operation couldn’t be completed. (\(NSFileProviderErrorDomain) error \(code.rawValue).)"
    }

    /// An error with `code` and the description `message`.
    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// ``NSFileProviderErrorDomain``.
    public static var errorDomain: String { NSFileProviderErrorDomain }

    /// The code's raw value.
    public var errorCode: Int { code.rawValue }

    /// `NSLocalizedDescriptionKey`: the description.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    /// What went wrong, in words.
    public var localizedDescription: String { message }

    /// `notAuthenticated` (-1000).
    public static var notAuthenticated: Code { .notAuthenticated }
    /// `syncAnchorExpired` (-1002).
    public static var syncAnchorExpired: Code { .syncAnchorExpired }
    /// `serverUnreachable` (-1004).
    public static var serverUnreachable: Code { .serverUnreachable }
    /// `noSuchItem` (-1005).
    public static var noSuchItem: Code { .noSuchItem }
    /// `providerNotFound` (-2001).
    public static var providerNotFound: Code { .providerNotFound }
}
