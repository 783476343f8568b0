#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The checks APNs makes on a `POST /3/device/<token>`, in order; the first that fails gives
/// the response. `docs/push.md` lists them as a table.
public final class APNsRequestValidator {
    /// The app's bundle id; topics are `<bundleId>` plus the push type's suffix.
    public let bundleId: String
    public let device: DeviceRegistration
    /// Makes the `apns-id` of a request that did not send one.
    public let newApnsId: () -> String

    /// The same facts as bytes, made once per validator, so that a push to this device with
    /// its own topic is checked by comparing bytes: the path `/3/device/<token>` (empty
    /// while the device has no token, or one not in lower case) ...
    private let devicePath: [UInt8]
    /// ... when the current token was given up, if it was (it can be registered again) ...
    private let currentTokenInvalidatedAt: Int64?
    /// ... and each push type's topic (`<bundleId><suffix>`), with the String a push carries.
    private let topics: [(type: APNsPushType, bytes: [UInt8], text: String)]
    /// The device's push types, looked through without hashing (there are three at most).
    private let registeredKinds: [PushKitType]

    public init(bundleId: String, device: DeviceRegistration, newApnsId: @escaping () -> String = APNsResponse.newApnsId) {
        self.bundleId = bundleId
        self.device = device
        self.newApnsId = newApnsId
        registeredKinds = device.types.sorted()
        if let token = device.token, token == token.lowercased() {
            devicePath = Self.pathPrefix + Array(token.utf8)
            currentTokenInvalidatedAt = device.invalidated[token]
        } else {
            devicePath = []
            currentTokenInvalidatedAt = nil
        }
        topics =
            bundleId.isEmpty || !Self.isTopicSyntax(bundleId)
            ? []
            : APNsPushType.allCases.compactMap { type in
                type.topicSuffix.map { (type, Array((bundleId + $0).utf8), bundleId + $0) }
            }
    }

    static let pathPrefix = Array("/3/device/".utf8)

    /// Headers that may appear once only, in the order of ``SingleHeader``.
    static let singleHeaders = [
        "authorization", "apns-id", "apns-expiration", "apns-priority", "apns-topic", "apns-collapse-id", "apns-push-type",
    ]

    /// The index of a header in ``singleHeaders``.
    enum SingleHeader: Int, CaseIterable {
        case authorization, apnsId, apnsExpiration, apnsPriority, apnsTopic, apnsCollapseId, apnsPushType

        /// The header named `name`, if it is one of them.
        init?(name: UnsafeBufferPointer<UInt8>) {
            let candidate: SingleHeader
            switch name.count {
            case 7: candidate = .apnsId
            case 10: candidate = .apnsTopic
            case 13: candidate = name.first == UInt8(ascii: "a") && name[1] == UInt8(ascii: "u") ? .authorization : .apnsPriority
            case 14: candidate = .apnsPushType
            case 15: candidate = .apnsExpiration
            case 16: candidate = .apnsCollapseId
            default: return nil
            }
            guard Bytes.equal(name, APNsRequestValidator.singleHeaderBytes[candidate.rawValue]) else { return nil }
            self = candidate
        }
    }

    static let singleHeaderBytes = singleHeaders.map { Array($0.utf8) }

    /// The first value of each single header, and whether one came twice.
    private struct SingleValues {
        var values:
            (
                UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?,
                UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?
            ) = (nil, nil, nil, nil, nil, nil, nil)
        var duplicated = false

        subscript(_ header: SingleHeader) -> UnsafeBufferPointer<UInt8>? {
            get {
                switch header {
                case .authorization: return values.0
                case .apnsId: return values.1
                case .apnsExpiration: return values.2
                case .apnsPriority: return values.3
                case .apnsTopic: return values.4
                case .apnsCollapseId: return values.5
                case .apnsPushType: return values.6
                }
            }
            set {
                switch header {
                case .authorization: values.0 = newValue
                case .apnsId: values.1 = newValue
                case .apnsExpiration: values.2 = newValue
                case .apnsPriority: values.3 = newValue
                case .apnsTopic: values.4 = newValue
                case .apnsCollapseId: values.5 = newValue
                case .apnsPushType: values.6 = newValue
                }
            }
        }

        mutating func add(_ header: SingleHeader, _ value: UnsafeBufferPointer<UInt8>) {
            if self[header] == nil { self[header] = value } else { duplicated = true }
        }
    }

    /// Checks `request`; `.success` with the push to deliver, or `.failure` with the response.
    /// - Parameters:
    ///   - credentials: how the request's connection authenticates, kept per connection.
    ///   - environment: the environment of the endpoint the connection reached.
    ///   - now: the wall clock in seconds since 1970 (for provider tokens).
    public func validate(
        _ request: APNsRequest, authenticator: ProviderAuthenticator, credentials: inout ConnectionCredentials,
        environment: APNsEnvironment = .development, now: Int64
    ) -> Result<APNsPush, APNsResponse> {
        request.fieldBytes.withUnsafeBufferPointer { fields in
            validate(
                request, fields: UnsafeBufferPointer(rebasing: fields[..<request.fieldLength]), authenticator: authenticator, credentials: &credentials,
                environment: environment, now: now)
        }
    }

    /// As above, for a request on a connection of its own (tests and tools).
    public func validate(_ request: APNsRequest, authenticator: ProviderAuthenticator, now: Int64) -> Result<APNsPush, APNsResponse> {
        var credentials = ConnectionCredentials()
        return validate(request, authenticator: authenticator, credentials: &credentials, now: now)
    }

    private func validate(
        _ request: APNsRequest, fields: UnsafeBufferPointer<UInt8>, authenticator: ProviderAuthenticator,
        credentials: inout ConnectionCredentials, environment: APNsEnvironment,
        now: Int64
    ) -> Result<APNsPush, APNsResponse> {
        // One pass over the headers, comparing bytes: the first value of each single header.
        var single = SingleValues()
        APNsRequest.forEachField(in: fields) { name, value in
            if let header = SingleHeader(name: name) { single.add(header, value) }
        }
        let requestId = single[.apnsId]
        let echoedId = requestId.flatMap { APNsRequestValidator.isUUID($0) ? Bytes.text($0) : nil }
        let apnsId = echoedId ?? newApnsId()
        func refuse(_ reason: APNsReason, timestamp: Int64? = nil) -> Result<APNsPush, APNsResponse> {
            .failure(APNsResponse(status: reason.status, apnsId: apnsId, reason: reason.rawValue, timestamp: timestamp))
        }
        func rebased(_ range: Range<Int>?) -> UnsafeBufferPointer<UInt8>? {
            range.map { UnsafeBufferPointer(rebasing: fields[$0]) }
        }

        guard let method = rebased(request.methodValue), Bytes.equal(method, "POST") else { return refuse(.methodNotAllowed) }
        let prefixLength = APNsRequestValidator.pathPrefix.count
        guard let path = rebased(request.pathValue), path.count >= prefixLength,
            Bytes.equal(UnsafeBufferPointer(rebasing: path[..<prefixLength]), APNsRequestValidator.pathPrefix)
        else { return refuse(.badPath) }
        let token = UnsafeBufferPointer(rebasing: path[prefixLength...])
        guard !token.isEmpty else { return refuse(.missingDeviceToken) }
        let isCurrentToken = Bytes.equal(path, devicePath)
        guard isCurrentToken || APNsRequestValidator.isDeviceTokenSyntax(token) else { return refuse(.badDeviceToken) }

        guard !single.duplicated else { return refuse(.duplicateHeaders) }

        if let certificate = credentials.certificate {
            // A certificate connection: the certificate, not a token, says who the provider is.
            guard certificate.problem == nil else { return refuse(.badCertificate) }
            guard certificate.environments.contains(environment) else { return refuse(.badCertificateEnvironment) }
        } else if let reason = authenticator.check(
            authorizationBytes: single[.authorization], session: &credentials.session,
            environment: environment, now: now)
        {
            return refuse(reason)
        }

        var pushType = APNsPushType.alert
        if let value = single[.apnsPushType] {
            guard let type = APNsPushType(name: value) else { return refuse(.invalidPushType) }
            pushType = type
        }

        let topic: String
        if let topicBytes = single[.apnsTopic] {
            if let own = topics.first(where: { $0.type == pushType }), Bytes.equal(topicBytes, own.bytes) {
                topic = own.text
            } else {
                topic = Bytes.text(topicBytes)
                if let reason = checkTopic(topic, pushType) { return refuse(reason) }
            }
        } else if let certificate = credentials.certificate {
            // "If you omit this request header and your APNs certificate does not specify
            // multiple topics, the APNs server uses the certificate's Subject as the default topic."
            guard certificate.topics.count <= 1 else { return refuse(.missingTopic) }
            topic = certificate.bundleId
            if let reason = checkTopic(topic, pushType) { return refuse(reason) }
        } else {
            return refuse(.missingTopic)
        }
        if let certificate = credentials.certificate {
            // "Certificate-based connection supports only a subset of push types": File Provider
            // pushes need "provider authentication tokens (not provider certificates)", and so
            // do location, Live Activity and the newer types.
            guard ProviderCertificate.pushTypes.contains(pushType) else { return refuse(.forbidden) }
            // A certificate covers its topics only ("If a push topic for a specific push type
            // isn't listed, you can't use the certificate").
            guard certificate.topics.contains(topic) else { return refuse(.topicDisallowed) }
        }

        if requestId != nil, echoedId == nil { return refuse(.badMessageId) }

        var priority: Int?
        if let value = single[.apnsPriority] {
            if Bytes.equal(value, "10") {
                priority = 10
            } else if Bytes.equal(value, "5") {
                priority = 5
            } else if Bytes.equal(value, "1") {
                priority = 1
            } else {
                return refuse(.badPriority)
            }
            // `background`: "Always use priority 5. Using priority 10 is an error." (Apple names
            // no reason for it; BadPriority is the one for priorities.)
            if pushType == .background, priority == 10 { return refuse(.badPriority) }
        }

        var expiration: Int64?
        if let value = single[.apnsExpiration] {
            guard !value.isEmpty, value.count <= 19, value.allSatisfy({ (0x30...0x39).contains($0) }),
                let seconds = Int64(Bytes.text(value))
            else { return refuse(.badExpirationDate) }
            expiration = seconds
        }

        var collapseId: String?
        if let value = single[.apnsCollapseId] {
            guard value.count <= 64 else { return refuse(.badCollapseId) }
            collapseId = Bytes.text(value)
        }

        guard request.bodyLength > 0 else { return refuse(.payloadEmpty) }
        guard request.bodyLength <= pushType.maximumPayloadSize else { return refuse(.payloadTooLarge) }

        let deviceToken: String
        if isCurrentToken, let current = device.token {
            if let invalidatedAt = currentTokenInvalidatedAt { return refuse(.unregistered, timestamp: invalidatedAt) }
            deviceToken = current
        } else {
            let text = Bytes.text(token)
            let lowered = text.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }) ? text.lowercased() : text
            if let invalidatedAt = device.invalidated[lowered] {
                return refuse(device.expired.contains(lowered) ? .expiredToken : .unregistered, timestamp: invalidatedAt)
            }
            guard lowered == device.token else { return refuse(.badDeviceToken) }
            deviceToken = lowered
        }
        // "Verify ... that the token matches the environment."
        guard environment == device.environment else { return refuse(.badDeviceToken) }
        guard let kind = pushType.pushKitType, registeredKinds.contains(kind) else { return refuse(.deviceTokenNotForTopic) }

        return .success(
            APNsPush(
                apnsId: apnsId, deviceToken: deviceToken, pushType: pushType, topic: topic,
                priority: priority, expiration: expiration, collapseId: collapseId, payload: request.body))
    }

    /// The topic checks after the fast path: syntax, the app's bundle id, the push type's suffix.
    private func checkTopic(_ topic: String, _ pushType: APNsPushType) -> APNsReason? {
        guard APNsRequestValidator.isTopicSyntax(topic) else { return .badTopic }
        let ownsTopic = !bundleId.isEmpty && (topic == bundleId || topic.hasPrefix(bundleId + "."))
        guard ownsTopic else { return .topicDisallowed }
        if let suffix = pushType.topicSuffix, topic != bundleId + suffix { return .badTopic }
        return nil
    }

    /// Hex digits, an even number of them, 32 to 100 bytes' worth.
    public static func isDeviceTokenSyntax(_ token: String) -> Bool {
        var token = token
        return token.withUTF8 { isDeviceTokenSyntax($0) }
    }

    static func isDeviceTokenSyntax(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        token.count % 2 == 0 && (64...200).contains(token.count) && token.allSatisfy(isHexDigit)
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
        var text = text
        return text.withUTF8 { isUUID($0) }
    }

    static func isUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
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

extension APNsPushType {
    /// The type named by an `apns-push-type` value.
    init?(name: UnsafeBufferPointer<UInt8>) {
        guard let index = APNsPushType.names.firstIndex(where: { Bytes.equal(name, $0) }) else { return nil }
        self = APNsPushType.allCases[index]
    }

    private static let names = allCases.map { Array($0.rawValue.utf8) }
}

/// How one connection authenticates: with its TLS client certificate, when it presented one
/// (read at the handshake), else with provider tokens, whose rules APNs keeps per connection.
public struct ConnectionCredentials: Sendable, Equatable {
    public var session = ProviderSession()
    public var certificate: ProviderCertificate?

    public init(certificate: ProviderCertificate? = nil) {
        self.certificate = certificate
    }

    /// Whether the connection may open more than one stream: it has a certificate, or a
    /// request with a valid token came ("APNs allows only one stream until you post a request
    /// with a valid authentication token").
    public var isAuthenticated: Bool { certificate != nil || session.isAuthenticated }
}
