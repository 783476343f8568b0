#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The checks APNs makes on a `POST /3/device/<token>`, in order; the first that fails gives
/// the response. `docs/push.md` lists them as a table.
public struct APNsRequestValidator {
    /// The app's bundle id; topics are `<bundleId>` plus the push type's suffix.
    public var bundleId: String
    public var device: DeviceRegistration
    /// Makes the `apns-id` of a request that did not send one.
    public var newApnsId: () -> String

    public init(bundleId: String, device: DeviceRegistration, newApnsId: @escaping () -> String = APNsResponse.newApnsId) {
        self.bundleId = bundleId
        self.device = device
        self.newApnsId = newApnsId
    }

    /// Headers that may appear once only, in the order of ``SingleHeader``.
    static let singleHeaders = [
        "authorization", "apns-id", "apns-expiration", "apns-priority", "apns-topic", "apns-collapse-id", "apns-push-type",
    ]

    /// The index of a header in ``singleHeaders``.
    enum SingleHeader: Int {
        case authorization, apnsId, apnsExpiration, apnsPriority, apnsTopic, apnsCollapseId, apnsPushType
    }

    /// Checks `request`; `.success` with the push to deliver, or `.failure` with the response.
    /// - Parameters:
    ///   - now: the wall clock in seconds since 1970 (for provider tokens).
    public func validate(_ request: APNsRequest, authenticator: ProviderAuthenticator, now: Int64) -> Result<APNsPush, APNsResponse> {
        // One pass over the headers: the first value of each single header, and whether one came twice.
        var single = [String?](repeating: nil, count: APNsRequestValidator.singleHeaders.count)
        var duplicated = false
        for header in request.headers {
            guard let index = APNsRequestValidator.singleHeaders.firstIndex(of: header.name) else { continue }
            if single[index] == nil { single[index] = header.value } else { duplicated = true }
        }
        func value(_ name: SingleHeader) -> String? { single[name.rawValue] }
        let requestId = value(.apnsId)
        let echoedId = requestId.flatMap { APNsRequestValidator.isUUID($0) ? $0 : nil }
        let apnsId = echoedId ?? newApnsId()
        func refuse(_ reason: APNsReason, timestamp: Int64? = nil) -> Result<APNsPush, APNsResponse> {
            .failure(APNsResponse(status: reason.status, apnsId: apnsId, reason: reason.rawValue, timestamp: timestamp))
        }

        guard request.method == "POST" else { return refuse(.methodNotAllowed) }
        let prefix = "/3/device/"
        guard let path = request.path, path.hasPrefix(prefix) else { return refuse(.badPath) }
        let token = String(path.dropFirst(prefix.count))
        guard !token.isEmpty else { return refuse(.missingDeviceToken) }
        guard APNsRequestValidator.isDeviceTokenSyntax(token) else { return refuse(.badDeviceToken) }

        guard !duplicated else { return refuse(.duplicateHeaders) }

        if let reason = authenticator.check(authorization: value(.authorization), now: now) { return refuse(reason) }

        var pushType = APNsPushType.alert
        if let value = value(.apnsPushType) {
            guard let type = APNsPushType(rawValue: value) else { return refuse(.invalidPushType) }
            pushType = type
        }

        guard let topic = value(.apnsTopic) else { return refuse(.missingTopic) }
        guard APNsRequestValidator.isTopicSyntax(topic) else { return refuse(.badTopic) }
        let ownsTopic = !bundleId.isEmpty && (topic == bundleId || topic.hasPrefix(bundleId + "."))
        guard ownsTopic else { return refuse(.topicDisallowed) }
        if let suffix = pushType.topicSuffix, topic != bundleId + suffix { return refuse(.badTopic) }

        if requestId != nil, echoedId == nil { return refuse(.badMessageId) }

        var priority: Int?
        if let value = value(.apnsPriority) {
            guard ["1", "5", "10"].contains(value) else { return refuse(.badPriority) }
            priority = Int(value)
        }

        var expiration: Int64?
        if let value = value(.apnsExpiration) {
            guard !value.isEmpty, value.utf8.count <= 19, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let seconds = Int64(value) else { return refuse(.badExpirationDate) }
            expiration = seconds
        }

        let collapseId = value(.apnsCollapseId)
        if let collapseId, collapseId.utf8.count > 64 { return refuse(.badCollapseId) }

        guard request.bodyLength > 0 else { return refuse(.payloadEmpty) }
        guard request.bodyLength <= pushType.maximumPayloadSize else { return refuse(.payloadTooLarge) }

        let lowered = token.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }) ? token.lowercased() : token
        if let invalidatedAt = device.invalidated[lowered] { return refuse(.unregistered, timestamp: invalidatedAt) }
        guard lowered == device.token else { return refuse(.badDeviceToken) }
        guard let kind = pushType.pushKitType, device.types.contains(kind) else { return refuse(.deviceTokenNotForTopic) }

        return .success(APNsPush(apnsId: apnsId, deviceToken: lowered, pushType: pushType, topic: topic,
                                 priority: priority, expiration: expiration, collapseId: collapseId, payload: request.body))
    }

    /// Hex digits, an even number of them, 32 to 100 bytes' worth.
    public static func isDeviceTokenSyntax(_ token: String) -> Bool {
        let utf8 = token.utf8
        return utf8.count % 2 == 0 && (64...200).contains(utf8.count) && utf8.allSatisfy(isHexDigit)
    }

    /// A reverse-DNS name: letters, digits, `.`, `-` and `_`, at most 255 bytes.
    public static func isTopicSyntax(_ topic: String) -> Bool {
        guard !topic.isEmpty, topic.utf8.count <= 255, !topic.hasPrefix("."), !topic.hasSuffix(".") else { return false }
        return topic.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }

    /// `8-4-4-4-12` hex digits, either case.
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !isHexDigit(byte) {
                return false
            }
        }
        return true
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }
}
