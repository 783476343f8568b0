import TestSupport
import XCTest
import LinkJSON
@testable import PushEmulator

final class APNsRequestValidatorTests: XCTestCase {
    let now: Int64 = 1_800_000_000
    let token = String(repeating: "ab", count: 32)
    let bundleId = "com.example.files"
    let payload = Array(#"{"container-identifier":"NSFileProviderRootContainerItemIdentifier"}"#.utf8)

    func makeRequest(
        _ maker: TokenMaker, method: String = "POST", path: String? = nil,
        headers: [String: String?] = [:], extra: [(String, String)] = [], body: [UInt8]? = nil
    ) throws -> APNsRequest {
        var fields: [String: String] = [
            "authorization": "bearer " + (try maker.token(iat: now)),
            "apns-topic": bundleId + ".pushkit.fileprovider",
            "apns-push-type": "fileprovider",
        ]
        for (name, value) in headers { fields[name] = value }
        return APNsRequest(
            method: method, path: path ?? "/3/device/\(token)",
            headers: fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + extra,
            body: body ?? payload)
    }

    func validator(types: Set<PushKitType> = [.fileProvider], invalidated: [String: Int64] = [:]) -> APNsRequestValidator {
        APNsRequestValidator(bundleId: bundleId, device: DeviceRegistration(token: token, types: types, invalidated: invalidated))
    }

    func testAcceptsAFileProviderPush() throws {
        let maker = try TokenMaker()
        let request = try makeRequest(
            maker,
            headers: [
                "apns-id": "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D", "apns-priority": "5",
                "apns-expiration": "0", "apns-collapse-id": String(repeating: "c", count: 64),
            ])
        let push = try validator().validate(request, authenticator: try maker.authenticator(), now: now).get()
        XCTAssertEqual(push.apnsId, "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D")
        XCTAssertEqual(push.pushType, .fileprovider)
        XCTAssertEqual(push.priority, 5)
        XCTAssertEqual(push.expiration, 0)
        XCTAssertEqual(push.payload, payload)
    }

    /// Each row: a request with one fault, and the status and reason APNs gives it, written
    /// from Apple's table (Handling notification responses from APNs), not from `APNsReason`.
    func testEveryReasonTable() throws {
        let maker = try TokenMaker()
        let impostor = try TokenMaker()
        let cases: [(status: Int, reason: String, request: APNsRequest)] = [
            (405, "MethodNotAllowed", try makeRequest(maker, method: "GET")),
            (404, "BadPath", try makeRequest(maker, path: "/3/devices/\(token)")),
            (400, "MissingDeviceToken", try makeRequest(maker, path: "/3/device/")),
            (400, "BadDeviceToken", try makeRequest(maker, path: "/3/device/xyz")),
            (400, "BadDeviceToken", try makeRequest(maker, path: "/3/device/" + String(repeating: "cd", count: 32))),
            (400, "DuplicateHeaders", try makeRequest(maker, extra: [("apns-push-type", "fileprovider")])),
            (403, "MissingProviderToken", try makeRequest(maker, headers: ["authorization": nil])),
            (403, "InvalidProviderToken", try makeRequest(maker, headers: ["authorization": "bearer " + (try impostor.token(iat: now))])),
            (403, "ExpiredProviderToken", try makeRequest(maker, headers: ["authorization": "bearer " + (try maker.token(iat: now - 4000))])),
            (400, "InvalidPushType", try makeRequest(maker, headers: ["apns-push-type": "push"])),
            (400, "MissingTopic", try makeRequest(maker, headers: ["apns-topic": nil])),
            (400, "BadTopic", try makeRequest(maker, headers: ["apns-topic": "com example"])),
            (400, "BadTopic", try makeRequest(maker, headers: ["apns-topic": bundleId])),
            (400, "TopicDisallowed", try makeRequest(maker, headers: ["apns-topic": "org.other.pushkit.fileprovider"])),
            (400, "BadMessageId", try makeRequest(maker, headers: ["apns-id": "1234"])),
            (400, "BadPriority", try makeRequest(maker, headers: ["apns-priority": "high"])),
            (400, "BadExpirationDate", try makeRequest(maker, headers: ["apns-expiration": "-1"])),
            (400, "BadCollapseId", try makeRequest(maker, headers: ["apns-collapse-id": String(repeating: "c", count: 65)])),
            (400, "PayloadEmpty", try makeRequest(maker, body: [])),
            (413, "PayloadTooLarge", try makeRequest(maker, body: [UInt8](repeating: 0x20, count: 4097))),
            (400, "DeviceTokenNotForTopic", try makeRequest(maker, headers: ["apns-push-type": "alert", "apns-topic": bundleId])),
        ]
        var apnsIds: Set<String> = []
        for (status, reason, request) in cases {
            let result = validator().validate(request, authenticator: try maker.authenticator(), now: now)
            guard case .failure(let response) = result else {
                XCTFail("\(reason): accepted")
                continue
            }
            XCTAssertEqual(response.reason, reason)
            XCTAssertEqual(response.status, status, reason)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"reason":"\#(reason)"}"#, reason)
            XCTAssertTrue(isCanonicalUUID(response.apnsId), "\(reason): \(response.apnsId)")
            apnsIds.insert(response.apnsId)
        }
        XCTAssertEqual(apnsIds.count, cases.count, "each refusal has its own apns-id")
        // Every reason the emulator can give is in the table or in its own test: below, in
        // ConnectionRulesTests (connections, environments, certificates, ExpiredToken), and
        // in the push clients' tests (TooManyRequests, ServiceUnavailable, Shutdown,
        // InternalServerError, IdleTimeout in a GOAWAY).
        let covered = Set(cases.map(\.reason)).union([
            "Unregistered", "TooManyProviderTokenUpdates", "UnrelatedKeyIdInToken",
            "BadEnvironmentKeyIdInToken", "BadCertificate", "BadCertificateEnvironment",
            "Forbidden", "ExpiredToken", "TooManyRequests", "IdleTimeout",
            "InternalServerError", "ServiceUnavailable", "Shutdown",
        ])
        XCTAssertEqual(covered, Set(APNsReason.allCases.map(\.rawValue)))
    }

    /// 8-4-4-4-12 hexadecimal digits: a canonical UUID, checked here without the validator's code.
    private func isCanonicalUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    func testUnregisteredCarriesTheTime() throws {
        let maker = try TokenMaker()
        let result = validator(invalidated: [token: 1_799_999_000_123]).validate(try makeRequest(maker), authenticator: try maker.authenticator(), now: now)
        guard case .failure(let response) = result else { return XCTFail("accepted") }
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"reason":"Unregistered","timestamp":1799999000123}"#)
    }

    func testStatuses() {
        XCTAssertEqual(APNsReason.tooManyProviderTokenUpdates.status, 429)
        XCTAssertEqual(APNsReason.payloadTooLarge.status, 413)
        XCTAssertEqual(APNsReason.unregistered.status, 410)
        XCTAssertEqual(APNsReason.methodNotAllowed.status, 405)
        XCTAssertEqual(APNsReason.badPath.status, 404)
        XCTAssertEqual(APNsReason.missingProviderToken.status, 403)
        XCTAssertEqual(APNsReason.badTopic.status, 400)
    }

    func testVoIPAllowsLargerPayloads() throws {
        let maker = try TokenMaker()
        // Apple's limits: 4,096 bytes for a push in general, 5,120 for a VoIP push.
        let voip: [String: String?] = ["apns-push-type": "voip", "apns-topic": bundleId + ".voip"]
        let largest = try makeRequest(maker, headers: voip, body: [UInt8](repeating: 0x20, count: 5120))
        let push = try validator(types: [.voIP]).validate(largest, authenticator: try maker.authenticator(), now: now).get()
        XCTAssertEqual(push.pushType, .voip)
        XCTAssertEqual(push.payload.count, 5120)
        let tooLarge = try makeRequest(maker, headers: voip, body: [UInt8](repeating: 0x20, count: 5121))
        guard case .failure(let response) = validator(types: [.voIP]).validate(tooLarge, authenticator: try maker.authenticator(), now: now) else {
            return XCTFail("5,121 bytes of VoIP payload were accepted")
        }
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.reason, "PayloadTooLarge")
        let fileProviderLargest = try makeRequest(maker, body: [UInt8](repeating: 0x20, count: 4096))
        XCTAssertEqual(try validator().validate(fileProviderLargest, authenticator: try maker.authenticator(), now: now).get().payload.count, 4096)
    }

    func testSyntaxHelpers() {
        XCTAssertTrue(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "aB", count: 50)))
        XCTAssertFalse(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "a", count: 65)))
        XCTAssertFalse(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "ab", count: 101)))
        // docs/push.md, checks 4 and 12: a token of 32 to 100 bytes, a topic of at most 255.
        XCTAssertFalse(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "0f", count: 31)), "31 bytes")
        XCTAssertTrue(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "0f", count: 32)), "32 bytes")
        XCTAssertTrue(APNsRequestValidator.isDeviceTokenSyntax(String(repeating: "0f", count: 100)), "100 bytes")
        XCTAssertTrue(APNsRequestValidator.isTopicSyntax("com." + String(repeating: "a", count: 251)), "255 bytes")
        XCTAssertFalse(APNsRequestValidator.isTopicSyntax("com." + String(repeating: "a", count: 252)), "256 bytes")
        XCTAssertTrue(APNsRequestValidator.isTopicSyntax("com.example-app_1.voip"))
        XCTAssertFalse(APNsRequestValidator.isTopicSyntax(".com"))
        XCTAssertFalse(APNsRequestValidator.isUUID("0b1c7e3e58a14c8b9d1e0a4a1f2b3c4d"))
    }

    func testKeptBodyIsBounded() {
        var request = APNsRequest()
        let chunk = [UInt8](repeating: 1, count: 4000)
        for _ in 0..<3 { chunk.withUnsafeBytes { request.appendBody($0) } }
        XCTAssertEqual(request.bodyLength, 12_000)
        XCTAssertEqual(request.body.count, 5_121, "docs/push.md: one byte more than the largest payload (5,120, voip) is kept")
    }
}

final class FileProviderSignalTests: XCTestCase {
    func interpret(_ text: String) -> Result<FileProviderSignal, UnusablePayload> {
        FileProviderSignal.interpret(Array(text.utf8))
    }

    func testContainers() throws {
        XCTAssertEqual(
            try interpret(#"{"container-identifier":"NSFileProviderRootContainerItemIdentifier","domain":"d"}"#).get(),
            FileProviderSignal(containerIdentifier: "NSFileProviderRootContainerItemIdentifier", container: .root, domain: "d"))
        XCTAssertEqual(try interpret(#"{"container-identifier":"NSFileProviderWorkingSetContainerItemIdentifier"}"#).get().container, .workingSet)
        XCTAssertEqual(try interpret(#"{"container-identifier":"item-1"}"#).get().container, .item)
        XCTAssertNil(try interpret(#"{"container-identifier":"item-1"}"#).get().domain)
    }

    func testUnusablePayloadsSayWhy() {
        for (text, fragment) in [
            ("nope", "not JSON"), ("[1]", "not a JSON object"), (#"{"domain":"d"}"#, "no \"container-identifier\""),
            (#"{"container-identifier":7}"#, "non-empty string"), (#"{"container-identifier":"x","domain":1}"#, "\"domain\""),
        ] {
            guard case .failure(let unusable) = interpret(text) else { XCTFail(text); continue }
            XCTAssertTrue(unusable.problem.contains(fragment), "\(text): \(unusable.problem)")
        }
    }
    /// The reading of plain payloads in place must mean what the JSON parser means: for every
    /// payload it takes, the parser's reading is the same; what it does not take goes to the
    /// parser. Payloads made at random from pieces that sit at its edges (escapes, non-ASCII,
    /// repeated keys, whitespace, other value kinds, trailing text).
    func testPlainPayloadReadingMeansWhatTheParserMeans() {
        let pieces = [
            "{", "}", "\"", "container-identifier", "domain", ":", ",", " ", "\t", "\n", "\r", "x", "",
            "NSFileProviderRootContainerItemIdentifier", "NSFileProviderWorkingSetContainerItemIdentifier",
            "\\", "\\u0041", "é", "\u{7F}", "\u{1F}", "1", "null", "[", "]", "{}", "true",
        ]
        var generator = SeededGenerator(seed: testSeed(default: 61726))
        var taken = 0
        var samples = [
            #"{"container-identifier":"a","domain":"b"}"#, #" { "domain" : "b" , "container-identifier" : "a" } "#,
            #"{"container-identifier":"a","container-identifier":"b"}"#, #"{"container-identifier":""}"#, "{}", " {}\n",
            #"{"container-identifier":"a","domain":"b","other":"c"}"#, #"{"container-identifier":"a",}"#,
        ]
        for _ in 0..<20_000 {
            samples.append((0..<Int.random(in: 1...14, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        for (index, text) in samples.enumerated() {
            let bytes = Array(text.utf8)
            guard let plain = bytes.withUnsafeBufferPointer({ FileProviderSignal.interpretPlainObject($0) }) else { continue }
            taken += 1
            XCTAssertEqual(plain, FileProviderSignal.interpret(parsed: try? JSON.parse(bytes)), "sample \(index): \(text)")
        }
        XCTAssertGreaterThan(taken, 8, "the samples reach the plain reading")
    }
}

final class PushFaultsTests: XCTestCase {
    func testRejectionsCountDown() {
        var faults = PushFaults()
        faults.rejection = (503, "ServiceUnavailable", 2)
        XCTAssertEqual(faults.takeRejection()?.status, 503)
        XCTAssertEqual(faults.takeRejection()?.reason, "ServiceUnavailable")
        XCTAssertNil(faults.takeRejection())
    }
}
