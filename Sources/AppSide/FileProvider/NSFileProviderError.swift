import Foundation

// swift-format-ignore: AlwaysUseLowerCamelCase
/// The error domain of File Provider's errors.
public let NSFileProviderErrorDomain: String = "NSFileProviderErrorDomain"

/// An error of File Provider, with Apple's codes; bridged to `NSError` with domain
/// ``NSFileProviderErrorDomain``, the code's raw value and the message as its
/// `localizedDescription`. An extension passes one to a completion handler; WatchLink
/// reports it to phoned as `{"domain", "code", "message"}`.
public struct NSFileProviderError: CustomNSError, Hashable, Sendable {
    /// File Provider's error codes (domain ``NSFileProviderErrorDomain``), as
    /// `NSFileProviderError.h` numbers them.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case notAuthenticated = -1000
        case filenameCollision = -1001
        case syncAnchorExpired = -1002
        case insufficientQuota = -1003
        case serverUnreachable = -1004
        case noSuchItem = -1005
        case deletionRejected = -1006
        case directoryNotEmpty = -1007
        case providerNotFound = -2001
        case providerTranslocated = -2002
        case olderExtensionVersionRunning = -2003
        case newerExtensionVersionFound = -2004
        case cannotSynchronize = -2005
        case nonEvictableChildren = -2006
        case unsyncedEdits = -2007
        case nonEvictable = -2008
        case versionNoLongerAvailable = -2009
        case excludedFromSync = -2010
        case domainDisabled = -2011
        case providerDomainTemporarilyUnavailable = -2012
        case providerDomainNotFound = -2013
        case applicationExtensionNotFound = -2014

        /// The page token is too old: the same code as ``syncAnchorExpired``.
        public static var pageExpired: Code { .syncAnchorExpired }
    }

    /// What went wrong.
    public let code: Code
    private let message: String

    /// An error with `code`; `userInfo[NSLocalizedDescriptionKey]`, when a string, is its description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message =
            (userInfo[NSLocalizedDescriptionKey] as? String) ?? "The operation couldn’t be completed. (\(NSFileProviderErrorDomain) error \(code.rawValue).)"
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

    /// The user info of the bridged `NSError`.
    public var userInfo: [String: Any] { errorUserInfo }

    /// What went wrong, in words.
    public var localizedDescription: String { message }
}

extension NSFileProviderError.Code {
    /// Whether `error` is an ``NSFileProviderError``, or an `NSError` of
    /// ``NSFileProviderErrorDomain``, with this code: what makes
    /// `catch NSFileProviderError.noSuchItem` work.
    public static func ~= (match: NSFileProviderError.Code, error: any Error) -> Bool {
        if let error = error as? NSFileProviderError { return error.code == match }
        let bridged = error as NSError
        return bridged.domain == NSFileProviderErrorDomain && bridged.code == match.rawValue
    }
}

/// The codes as members of ``NSFileProviderError``, as Apple's Swift overlay has them, for
/// `catch NSFileProviderError.noSuchItem` and `error.code == NSFileProviderError.noSuchItem`.
extension NSFileProviderError {
    public static var notAuthenticated: Code { .notAuthenticated }
    public static var filenameCollision: Code { .filenameCollision }
    public static var syncAnchorExpired: Code { .syncAnchorExpired }
    public static var pageExpired: Code { .pageExpired }
    public static var insufficientQuota: Code { .insufficientQuota }
    public static var serverUnreachable: Code { .serverUnreachable }
    public static var noSuchItem: Code { .noSuchItem }
    public static var deletionRejected: Code { .deletionRejected }
    public static var directoryNotEmpty: Code { .directoryNotEmpty }
    public static var providerNotFound: Code { .providerNotFound }
    public static var providerTranslocated: Code { .providerTranslocated }
    public static var olderExtensionVersionRunning: Code { .olderExtensionVersionRunning }
    public static var newerExtensionVersionFound: Code { .newerExtensionVersionFound }
    public static var cannotSynchronize: Code { .cannotSynchronize }
    public static var nonEvictableChildren: Code { .nonEvictableChildren }
    public static var unsyncedEdits: Code { .unsyncedEdits }
    public static var nonEvictable: Code { .nonEvictable }
    public static var versionNoLongerAvailable: Code { .versionNoLongerAvailable }
    public static var excludedFromSync: Code { .excludedFromSync }
    public static var domainDisabled: Code { .domainDisabled }
    public static var providerDomainTemporarilyUnavailable: Code { .providerDomainTemporarilyUnavailable }
    public static var providerDomainNotFound: Code { .providerDomainNotFound }
    public static var applicationExtensionNotFound: Code { .applicationExtensionNotFound }
}
