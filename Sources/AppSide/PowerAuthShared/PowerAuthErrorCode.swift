// swift-format-ignore-file: AlwaysUseLowerCamelCase
import Foundation

/// The domain of every error the PowerAuth SDK makes (`PowerAuthErrorDomain`).
public let PowerAuthErrorDomain = "PowerAuthErrorDomain"

/// The user-info key of an error's additional information.
public let PowerAuthErrorInfoKey_AdditionalInfo = "PowerAuthErrorInfoKey_AdditionalInfo"
/// The user-info key of the data of a failed response.
public let PowerAuthErrorInfoKey_ResponseData = "PowerAuthErrorInfoKey_ResponseData"

/// The codes of ``PowerAuthErrorDomain``, as the SDK's `NS_ENUM` `PowerAuthErrorCode` imports
/// into Swift: an extensible type, so a `switch` over the codes needs a `default` and has no
/// case that "will never be executed".
///
/// ```swift
/// switch (error as NSError).powerAuthErrorCode {
/// case .networkError: print("network")
/// case .watchConnectivity: print("watch")
/// default: print("other")
/// }
/// ```
public struct PowerAuthErrorCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int

    public init?(rawValue: Int) {
        self.rawValue = rawValue
    }

    private init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The error is not of ``PowerAuthErrorDomain``.
    public static let NA = PowerAuthErrorCode(0)
    public static let networkError = PowerAuthErrorCode(1)
    public static let signatureError = PowerAuthErrorCode(2)
    public static let invalidActivationState = PowerAuthErrorCode(3)
    public static let invalidActivationCode = PowerAuthErrorCode(4)
    public static let invalidActivationData = PowerAuthErrorCode(5)
    public static let missingActivation = PowerAuthErrorCode(6)
    public static let activationPending = PowerAuthErrorCode(7)
    public static let biometryNotAvailable = PowerAuthErrorCode(8)
    public static let biometryCancel = PowerAuthErrorCode(9)
    public static let biometryFailed = PowerAuthErrorCode(10)
    public static let operationCancelled = PowerAuthErrorCode(11)
    public static let encryption = PowerAuthErrorCode(12)
    public static let wrongParameter = PowerAuthErrorCode(13)
    public static let invalidToken = PowerAuthErrorCode(14)
    public static let watchConnectivity = PowerAuthErrorCode(15)
    public static let protocolUpgrade = PowerAuthErrorCode(16)
    public static let pendingProtocolUpgrade = PowerAuthErrorCode(17)
    public static let externalPendingOperation = PowerAuthErrorCode(18)
    public static let biometryFallback = PowerAuthErrorCode(19)
    /// iOS only in the SDK; the watch SDK's codes end at 19.
    public static let timeSynchronization = PowerAuthErrorCode(20)
}

extension NSError {
    /// The error's ``PowerAuthErrorCode``, or ``PowerAuthErrorCode/NA`` when its domain is not
    /// ``PowerAuthErrorDomain``.
    public var powerAuthErrorCode: PowerAuthErrorCode {
        guard domain == PowerAuthErrorDomain else { return .NA }
        return PowerAuthErrorCode(rawValue: code) ?? .NA
    }
}

extension PowerAuthErrorCode {
    /// The SDK's message for an error made without one (`PowerAuthErrorConstants.m`).
    package var defaultMessage: String {
        switch self {
        case .networkError: return "Network error"
        case .signatureError: return "Signature error"
        case .invalidActivationState: return "Invalid activation state"
        case .invalidActivationCode: return "Invalid activation code"
        case .invalidActivationData: return "Invalid activation data"
        case .missingActivation: return "Missing activation"
        case .activationPending: return "Pending activation"
        case .operationCancelled: return "Operation was cancelled by SDK"
        case .wrongParameter: return "Invalid parameter provided to method"
        case .invalidToken: return "Invalid or unknown token"
        case .timeSynchronization: return "Failed to synchronize time with the server"
        default: return "Unknown error \(rawValue)"
        }
    }

    /// An error of ``PowerAuthErrorDomain`` with this code, as the SDK's `PA2MakeError` makes it.
    package func error(_ message: String? = nil) -> NSError {
        NSError(domain: PowerAuthErrorDomain, code: rawValue, userInfo: [NSLocalizedDescriptionKey: message ?? defaultMessage])
    }
}
