import Foundation

// swift-format-ignore: AlwaysUseLowerCamelCase
/// The domain of WatchKit's errors.
public let WatchKitErrorDomain = "WatchKitErrorDomain"

/// An error reported by WatchKit (Apple's `WatchKitError`, domain `WatchKitErrorDomain`).
public struct WatchKitError: Error, CustomNSError, Hashable, Sendable, CustomStringConvertible {
    /// Apple's codes (`WatchKitErrorCode`, WKError.h).
    public enum Code: Int, Sendable, Hashable {
        case unknown = 1
        case applicationDelegateWatchKitRequestReplyNotCalled = 2
        case invalidArgument = 3
        case mediaPlayerFailed = 4
        case downloadFailed = 5
        case recordingFailed = 6
    }

    public let code: Code
    /// What went wrong, in words.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let unknown = Code.unknown
    public static let invalidArgument = Code.invalidArgument

    public static var errorDomain: String { WatchKitErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var description: String { "\(WatchKitErrorDomain) \(code.rawValue): \(message)" }
}
