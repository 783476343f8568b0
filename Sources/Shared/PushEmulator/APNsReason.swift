/// The reasons APNs gives for refusing a request, with the HTTP status that carries each.
public enum APNsReason: String, Sendable, CaseIterable, Hashable {
    case badCollapseId = "BadCollapseId"
    case badDeviceToken = "BadDeviceToken"
    case badExpirationDate = "BadExpirationDate"
    case badMessageId = "BadMessageId"
    case badPriority = "BadPriority"
    case badTopic = "BadTopic"
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
    case duplicateHeaders = "DuplicateHeaders"
    case invalidPushType = "InvalidPushType"
    case missingDeviceToken = "MissingDeviceToken"
    case missingTopic = "MissingTopic"
    case payloadEmpty = "PayloadEmpty"
    case topicDisallowed = "TopicDisallowed"
    case expiredProviderToken = "ExpiredProviderToken"
    case invalidProviderToken = "InvalidProviderToken"
    case missingProviderToken = "MissingProviderToken"
    case badPath = "BadPath"
    case methodNotAllowed = "MethodNotAllowed"
    case unregistered = "Unregistered"
    case payloadTooLarge = "PayloadTooLarge"
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
    case badEnvironmentKeyIdInToken = "BadEnvironmentKeyIdInToken"
    case badCertificate = "BadCertificate"
    case badCertificateEnvironment = "BadCertificateEnvironment"
    case forbidden = "Forbidden"
    case expiredToken = "ExpiredToken"
    case tooManyRequests = "TooManyRequests"
    case idleTimeout = "IdleTimeout"
    case internalServerError = "InternalServerError"
    case serviceUnavailable = "ServiceUnavailable"
    case shutdown = "Shutdown"

    /// The `:status` of a response with this reason.
    public var status: Int {
        switch self {
        case .expiredProviderToken, .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken,
            .badEnvironmentKeyIdInToken, .badCertificate, .badCertificateEnvironment, .forbidden:
            return 403
        case .badPath: return 404
        case .methodNotAllowed: return 405
        case .unregistered, .expiredToken: return 410
        case .payloadTooLarge: return 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: return 429
        case .internalServerError: return 500
        case .serviceUnavailable, .shutdown: return 503
        default: return 400
        }
    }

    /// The payload of a GOAWAY for this reason: "The payload of the `GOAWAY` frame includes
    /// JSON data with a `reason` key, indicating the reason for the connection termination."
    public var goAwayData: String { "{\"reason\":\"\(rawValue)\"}" }
}
