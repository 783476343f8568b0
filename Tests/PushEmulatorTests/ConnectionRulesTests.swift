import CSSL
import Foundation
import LinkCrypto
import LinkJSON
@testable import PushEmulator
import XCTest

/// What APNs decides per connection and per environment, and what it does after a 200: the
/// rules of Apple's pages, quoted where they are used (docs/push.md).
final class ConnectionRulesTests: XCTestCase {
    let now: Int64 = 1_800_000_000
    let token = String(repeating: "ab", count: 32)
    let bundleId = "com.example.files"

    private func request(
        _ maker: TokenMaker?, iat: Int64? = nil, type: String = "voip", topic: String? = "com.example.files.voip",
        extra: [String: String] = [:]
    ) throws -> APNsRequest {
        var fields: [(String, String)] = [("apns-push-type", type)]
        if let topic { fields.append(("apns-topic", topic)) }
        if let maker { fields.append(("authorization", "bearer " + (try maker.token(iat: iat ?? now)))) }
        for (name, value) in extra { fields.append((name, value)) }
        return APNsRequest(method: "POST", path: "/3/device/\(token)", headers: fields, body: Array(#"{"aps":{}}"#.utf8))
    }

    private func validator(
        environment: APNsEnvironment = .development, types: Set<PushKitType> = [.voIP, .fileProvider, .complication],
        expired: Set<String> = [], invalidated: [String: Int64] = [:]
    ) -> APNsRequestValidator {
        APNsRequestValidator(
            bundleId: bundleId,
            device: DeviceRegistration(
                token: token, types: types, invalidated: invalidated,
                environment: environment, expired: expired))
    }

    private func reason(_ result: Result<APNsPush, APNsResponse>) -> String? {
        if case .failure(let response) = result { return response.reason }
        return nil
    }

    // MARK: Tokens, per connection

    /// "APNs relates a team ID and associated bundle IDs to a connection on the first push";
    /// UnrelatedKeyIdInToken: "The key ID in the provider token isn't related to the key ID of the
    /// token used in the first push of this connection. To use this token, open a new connection."
    func testAConnectionIsBoundToTheKeyOfItsFirstToken() throws {
        let first = try TokenMaker(keyId: "KEY0000001")
        let second = try TokenMaker(keyId: "KEY0000002")
        let authenticator = try first.authenticator(interval: 0)
        authenticator.addKey(id: second.keyId, try P256PublicKey(pem: second.key.publicKeyPEM))
        var connection = ConnectionCredentials()
        XCTAssertNil(reason(validator().validate(try request(first), authenticator: authenticator, credentials: &connection, now: now)))
        XCTAssertEqual(connection.session.boundKeyId, "KEY0000001")
        XCTAssertEqual(
            reason(validator().validate(try request(second), authenticator: authenticator, credentials: &connection, now: now)),
            "UnrelatedKeyIdInToken")
        var fresh = ConnectionCredentials()
        XCTAssertNil(
            reason(validator().validate(try request(second), authenticator: authenticator, credentials: &fresh, now: now)),
            "a new connection takes the other key")
    }

    /// "APNs report an error if you use a new token more than once every 20 minutes on the same
    /// connection": two connections with one key each keep their own token.
    func testTheTwentyMinuteRuleIsPerConnection() throws {
        let maker = try TokenMaker()
        let authenticator = try maker.authenticator(interval: 1200)
        let first = try request(maker, iat: now), second = try request(maker, iat: now + 5), third = try request(maker, iat: now + 7)
        var a = ConnectionCredentials(), b = ConnectionCredentials()
        XCTAssertNil(reason(validator().validate(first, authenticator: authenticator, credentials: &a, now: now)))
        XCTAssertNil(
            reason(validator().validate(second, authenticator: authenticator, credentials: &b, now: now + 5)),
            "another connection, with a token of its own")
        XCTAssertNil(reason(validator().validate(first, authenticator: authenticator, credentials: &a, now: now + 6)))
        XCTAssertEqual(
            reason(validator().validate(third, authenticator: authenticator, credentials: &a, now: now + 7)),
            "TooManyProviderTokenUpdates")
        XCTAssertNil(
            reason(validator().validate(second, authenticator: authenticator, credentials: &b, now: now + 8)),
            "the other connection is not affected")
    }

    /// BadEnvironmentKeyIdInToken: "The key ID in the provider token doesn't match the environment."
    func testAKeyRestrictedToAnEnvironment() throws {
        let maker = try TokenMaker()
        let authenticator = ProviderAuthenticator(teamId: maker.teamId)
        authenticator.updateIntervalSeconds = 0
        authenticator.addKey(id: maker.keyId, try P256PublicKey(pem: maker.key.publicKeyPEM), environment: .production)
        var development = ConnectionCredentials(), production = ConnectionCredentials()
        XCTAssertEqual(
            reason(
                validator().validate(
                    try request(maker), authenticator: authenticator, credentials: &development,
                    environment: .development, now: now)), "BadEnvironmentKeyIdInToken")
        XCTAssertEqual(
            reason(
                validator(environment: .production).validate(
                    try request(maker), authenticator: authenticator,
                    credentials: &production, environment: .production, now: now)), nil)
    }

    /// BadDeviceToken: "Verify that the request contains a valid token and that the token
    /// matches the environment."
    func testADeviceTokenWorksWithItsEnvironmentOnly() throws {
        let maker = try TokenMaker()
        let authenticator = try maker.authenticator(interval: 0)
        var connection = ConnectionCredentials()
        XCTAssertEqual(
            reason(
                validator(environment: .development).validate(
                    try request(maker), authenticator: authenticator,
                    credentials: &connection, environment: .production, now: now)),
            "BadDeviceToken")
        var other = ConnectionCredentials()
        XCTAssertEqual(
            reason(
                validator(environment: .production).validate(
                    try request(maker), authenticator: authenticator,
                    credentials: &other, environment: .development, now: now)),
            "BadDeviceToken")
    }

    /// `background`: "Always use priority 5. Using priority 10 is an error." ExpiredToken: "The
    /// device token has expired."
    func testBackgroundPriorityAndExpiredTokens() throws {
        let maker = try TokenMaker()
        let authenticator = try maker.authenticator(interval: 0)
        var connection = ConnectionCredentials()
        let background = try request(maker, type: "background", topic: bundleId, extra: ["apns-priority": "10"])
        XCTAssertEqual(
            reason(validator(types: [.voIP]).validate(background, authenticator: authenticator, credentials: &connection, now: now)),
            "BadPriority")
        let gone = String(repeating: "cd", count: 32)
        let expired = APNsRequest(
            method: "POST", path: "/3/device/\(gone)",
            headers: [
                ("apns-push-type", "voip"), ("apns-topic", "com.example.files.voip"),
                ("authorization", "bearer " + (try maker.token(iat: now))),
            ],
            body: Array("{}".utf8))
        guard
            case .failure(let response) = validator(expired: [gone], invalidated: [gone: 1_799_999_999_000])
                .validate(expired, authenticator: authenticator, credentials: &connection, now: now)
        else { return XCTFail("accepted") }
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.reason, "ExpiredToken")
        XCTAssertEqual(response.timestamp, 1_799_999_999_000)
    }

    // MARK: Certificates

    private func certificate(
        topics: [String]? = nil, environments: Set<APNsEnvironment> = [.development, .production],
        problem: String? = nil
    ) -> ConnectionCredentials {
        ConnectionCredentials(
            certificate: ProviderCertificate(
                bundleId: bundleId,
                topics: topics ?? [bundleId, bundleId + ".voip", bundleId + ".complication"],
                environments: environments, problem: problem))
    }

    /// A certificate connection needs no token; its topics and environments decide, and it
    /// serves "only a subset of push types".
    func testCertificateConnections() throws {
        let authenticator = ProviderAuthenticator(teamId: "TEAM123456")
        func check(_ credentials: ConnectionCredentials, _ request: APNsRequest, environment: APNsEnvironment = .development) -> String? {
            var credentials = credentials
            return reason(validator().validate(request, authenticator: authenticator, credentials: &credentials, environment: environment, now: now))
        }
        XCTAssertNil(check(certificate(), try request(nil)), "a VoIP push, no authorization header")
        XCTAssertEqual(
            check(certificate(), try request(nil, topic: nil)), "MissingTopic",
            "The apns-topic header is mandatory when the client is connected using a certificate that supports multiple topics.")
        XCTAssertEqual(
            check(certificate(topics: [bundleId]), try request(nil, type: "alert", topic: nil)), "DeviceTokenNotForTopic",
            "a single-topic certificate's subject is the default topic: the topic passes, and a PushKit token takes no alert")
        XCTAssertEqual(check(certificate(topics: [bundleId]), try request(nil)), "TopicDisallowed", "its topics only")
        XCTAssertEqual(
            check(certificate(), try request(nil, type: "fileprovider", topic: bundleId + ".pushkit.fileprovider")), "Forbidden",
            "File Provider pushes need tokens")
        XCTAssertEqual(check(certificate(environments: [.production]), try request(nil)), "BadCertificateEnvironment")
        XCTAssertEqual(
            check(certificate(environments: [.production]), try request(nil), environment: .production), "BadDeviceToken",
            "the certificate passes on production; the development token does not")
        XCTAssertEqual(check(certificate(problem: "certificate has expired"), try request(nil)), "BadCertificate")
    }

    /// A certificate issued by phoned's CA reads back as APNs reads one: its UID, its
    /// environments, its `.3.6` topics.
    func testIssuedCertificatesCarryAppleExtensions() throws {
        let directory = NSTemporaryDirectory() + "wlca-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let authority = try CertificateAuthority.loadOrCreate(directory: directory)
        let issued = try authority.issueProviderCertificate(
            bundleId: bundleId, teamId: "TEAM123456", kinds: ["app", "voip"],
            environments: [.production], validDays: 30)
        let x509 = try XCTUnwrap(MemoryBIO.withReading(issued.certificatePEM) { PEM_read_bio_X509($0, nil, nil, nil) } ?? nil)
        defer { X509_free(x509) }
        let read = ProviderCertificate(certificate: x509, verifyResult: Int(X509_V_OK))
        XCTAssertEqual(read, ProviderCertificate(bundleId: bundleId, topics: [bundleId, bundleId + ".voip"], environments: [.production]))
        XCTAssertEqual(
            ProviderCertificate.topicsDER(bundleId: "a.b", kinds: ["app"]),
            [0x30, 0x0C, 0x0C, 0x03] + Array("a.b".utf8) + [0x30, 0x05, 0x0C, 0x03] + Array("app".utf8),
            "SEQUENCE { UTF8String topic, SEQUENCE { UTF8String kind } }, as Apple's certificates carry it")
        XCTAssertEqual(
            ProviderCertificate.topics(fromDER: ProviderCertificate.topicsDER(bundleId: "a.b", kinds: ["app", "voip", "complication"])),
            ["a.b", "a.b.voip", "a.b.complication"])
    }

    // MARK: The store

    private func push(_ id: String, expiration: Int64? = nil) -> APNsPush {
        APNsPush(
            apnsId: id, deviceToken: token, pushType: .voip, topic: bundleId + ".voip", priority: nil, expiration: expiration,
            collapseId: nil, payload: Array("{}".utf8))
    }

    /// "APNs stores only one notification per bundle ID"; "If the value is 0, APNs attempts to
    /// deliver the notification only once and doesn't store it"; "it may store the notification
    /// for 30 days or less, depending on the date you specify".
    func testTheStoreKeepsTheLatestPushPerAppUntilItsExpiration() {
        var store = APNsStore()
        let at: Int64 = 1_800_000_000_000
        XCTAssertEqual(store.store(push("a"), bundleId: bundleId, now: at), .stored(replaced: nil))
        guard case .stored(let replaced?) = store.store(push("b", expiration: 1_800_000_600), bundleId: bundleId, now: at + 1) else {
            return XCTFail("the second push replaces the first")
        }
        XCTAssertEqual(replaced.push.apnsId, "a")
        XCTAssertEqual(store.pushes.map(\.push.apnsId), ["b"])
        XCTAssertEqual(store.pushes.first?.expiresAt, 1_800_000_600_000)
        XCTAssertEqual(store.store(push("c", expiration: 0), bundleId: bundleId, now: at + 2), .notStored("expirationZero"))
        XCTAssertEqual(
            store.store(push("d", expiration: 300), bundleId: bundleId, now: at + 3), .notStored("expired"),
            "300 is five minutes past midnight, 1 January 1970")
        XCTAssertEqual(store.pushes.map(\.push.apnsId), ["b"], "what is not stored leaves the stored one")
        _ = store.store(push("e", expiration: 4_000_000_000), bundleId: "com.example.other", now: at + 4)
        XCTAssertEqual(store.pushes.last?.expiresAt, at + 4 + 2_592_000_000, "30 days at most")
        XCTAssertEqual(store.expire(now: 1_800_000_600_000).map(\.push.apnsId), ["b"])
        let (deliver, expired) = store.takeAll(now: at + 5)
        XCTAssertEqual(deliver.map(\.push.apnsId), ["e"])
        XCTAssertEqual(expired, [])
        XCTAssertEqual(store.pushes, [])
    }
}
