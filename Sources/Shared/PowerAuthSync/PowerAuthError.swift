import LinkControl

/// An error of the PowerAuth SDK (`PowerAuthErrorDomain`), as packets and control answers carry it.
public struct PowerAuthError: Error, Hashable, Sendable, CustomStringConvertible {
    public static let domain = "PowerAuthErrorDomain"

    /// `PowerAuthErrorCode_InvalidActivationState`.
    public static let invalidActivationState: Int64 = 3
    /// `PowerAuthErrorCode_MissingActivation`.
    public static let missingActivation: Int64 = 6
    /// `PowerAuthErrorCode_ActivationPending`.
    public static let activationPending: Int64 = 7
    /// `PowerAuthErrorCode_WrongParameter`.
    public static let wrongParameter: Int64 = 13
    /// `PowerAuthErrorCode_InvalidToken`.
    public static let invalidToken: Int64 = 14
    /// `PowerAuthErrorCode_WatchConnectivity`.
    public static let watchConnectivity: Int64 = 15
    /// `PowerAuthErrorCode_TimeSynchronization`.
    public static let timeSynchronization: Int64 = 20

    public var code: Int64
    public var domain: String
    public var message: String?

    public init(code: Int64, domain: String = PowerAuthError.domain, message: String?) {
        self.code = code
        self.domain = domain
        self.message = message
    }

    public static func watchConnectivity(_ message: String) -> PowerAuthError {
        PowerAuthError(code: watchConnectivity, message: message)
    }

    /// The SDK's name of a code of its own domain.
    public var name: String {
        guard domain == Self.domain else { return "error\(code)" }
        switch code {
        case 1: return "networkError"
        case 2: return "signatureError"
        case 3: return "invalidActivationState"
        case 4: return "invalidActivationCode"
        case 5: return "invalidActivationData"
        case 6: return "missingActivation"
        case 7: return "activationPending"
        case 12: return "encryption"
        case 13: return "wrongParameter"
        case 14: return "invalidToken"
        case 15: return "watchConnectivity"
        case 20: return "timeSynchronization"
        default: return "error\(code)"
        }
    }

    /// The error as a control response carries it.
    public var controlError: ControlError {
        ControlError(domain: domain, code: Int(code), name: name, message: message ?? "")
    }

    public var description: String { "\(domain) \(code) \(name): \(message ?? "")" }
}
