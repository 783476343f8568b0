import Foundation
import LinkControl
import LinkJSON
import LinkRuntime
import PowerAuthServer
@testable import PowerAuthSync
import XCTest

/// The phone's status client against the emulated server, without a daemon. With no latency
/// the emulated network answers at once, so every call completes before it returns.
final class StatusServiceTests: XCTestCase {
    private var directory = ""
    private var loop: EventLoop!
    private var service: StatusService!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "sst-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        loop = try EventLoop()
        service = StatusService(
            store: try PowerAuthStore(path: directory + "/powerauth.db"),
            serverStore: try ServerStore(path: directory + "/server.db"), loop: loop)
    }

    override func tearDown() {
        service.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func call(_ body: (@escaping StatusService.Respond) throws -> Void) throws -> Result<JSONObject, ControlError> {
        var result: Result<JSONObject, ControlError>?
        try body { result = $0 }
        return try XCTUnwrap(result, "the call did not complete at once")
    }

    private func fetch(_ id: String, raw: Bool = false) throws -> Result<JSONObject, ControlError> {
        try call { try service.fetchStatus("main", activationId: id, raw: raw, respond: $0) }
    }

    func testFetchPlacesTheCounterAndReportsRawFields() throws {
        let record = try service.createActivation("main", commit: true).record
        let status = try fetch(record.activationId, raw: true).get()
        XCTAssertEqual(status["state"], "active")
        XCTAssertEqual(status["counterSynchronization"], "inSync")
        let keys = try service.server.secrets(record.activationId, now: service.serverNow)
        func bytes(_ key: String) throws -> [UInt8] { Array(try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(status[key]?.stringValue)))) }
        let blob = try StatusBlobCipher.decrypt(
            try bytes("encryptedStatusBlob"), transportKey: keys.transport,
            challenge: try bytes("challenge"), nonce: try bytes("nonce"))
        XCTAssertEqual(blob.state, .active)
        XCTAssertNil(try fetch(record.activationId).get()["challenge"])
    }

    /// `pa.activation.create` is the key exchange: the client's key pair and the server's, the
    /// same master secret on both sides by ECDH, the fingerprint both compute.
    func testTheKeyExchangeAgreesTheMasterSecretOnBothSides() throws {
        let (record, client) = try service.createActivation("main", commit: false)
        XCTAssertEqual(client.activationId, record.activationId)
        XCTAssertEqual(client.masterSecret, record.masterSecret)
        XCTAssertEqual(client.counterData, record.counterData)
        XCTAssertEqual(record.devicePublicKey, client.devicePublicKey)
        XCTAssertEqual(client.devicePublicKey.count, 33, "the SDK sends its public key compressed (ECC_ExportPublicKey)")
        XCTAssertEqual(record.serverPublicKey?.count, 65, "the server answers its key uncompressed (KeyConvertor)")
        XCTAssertEqual(record.activationFingerprint, client.activationFingerprint)
        XCTAssertEqual(try service.activationFingerprint("main", activationId: record.activationId), client.activationFingerprint)
        XCTAssertEqual(record.activationId, record.activationId.lowercased(), "a lowercase UUID, as Generator.randomUUID()")
        let store = try PowerAuthStore(path: directory + "/powerauth.db")
        defer { store.close() }
        let stored = try XCTUnwrap(try store.clientCounter(instanceId: "main"))
        XCTAssertEqual(stored.counterByte, 0, "a 3.1 activation starts with counter byte 0")
        XCTAssertEqual(stored.keys, record.keys)
        let (other, _) = try service.createActivation("second", commit: false)
        XCTAssertNotEqual(other.masterSecret, record.masterSecret, "each exchange agrees its own secret")
    }

    func testNetworkDownAndTamperingChangeNothing() throws {
        let record = try service.createActivation("main", commit: true).record
        _ = service.setNetwork(up: false, latency: nil, failRate: nil, tamper: nil)
        XCTAssertEqual(try fetch(record.activationId).failureCode?.code, 1)
        XCTAssertFalse(service.currentTime("main")["isTimeSynchronized"] == true)
        _ = service.setNetwork(up: true, latency: nil, failRate: nil, tamper: true)
        XCTAssertEqual(try fetch(record.activationId).failureCode?.code, 5)
        _ = service.setNetwork(up: nil, latency: nil, failRate: nil, tamper: false)
        XCTAssertEqual(try fetch(record.activationId).get()["counterSynchronization"], "inSync")
    }

    func testOfflineSignaturesMoveTheClientAheadUntilTheFetchSynchronises() throws {
        let record = try service.createActivation("main", commit: true).record
        for _ in 0..<12 {
            let signed = try call {
                try service.sign(
                    "main", activationId: record.activationId, online: false, data: [],
                    factor: .possession, componentLength: 8, respond: $0)
            }.get()
            XCTAssertNil(signed["valid"], "offline signatures never reach the server")
        }
        XCTAssertEqual(try service.server.activation(record.activationId, now: 0).counter, 0)
        let status = try fetch(record.activationId).get()
        XCTAssertEqual(status["counterSynchronization"], "synchronized")
        XCTAssertEqual(try service.server.activation(record.activationId, now: 0).counter, 13, "caught up past the 13th value")
        XCTAssertEqual(try fetch(record.activationId).get()["counterSynchronization"], "inSync")
    }

    /// `/pa/v3/token/create` is a signed request: the server creates the token only for a
    /// signature it validates, for an active activation too; otherwise it answers HTTP 401,
    /// which the SDK reports as its network error (1), and keeps no token.
    func testATokenIsCreatedForAnActiveActivationOnlyWithAValidSignature() throws {
        let record = try service.createActivation("main", commit: true)
        XCTAssertEqual(try service.server.activation(record.record.activationId, now: 0).state, .active)
        func createToken() throws -> Result<ServerToken, ControlError> {
            var result: Result<ServerToken, ControlError>?
            try service.createToken("main", activationId: record.record.activationId, factor: .possession) { result = $0 }
            return try XCTUnwrap(result, "the call did not complete at once")
        }
        let created = try createToken().get()
        XCTAssertEqual(try service.server.tokens(of: record.record.activationId).map(\.tokenId), [created.tokenId])

        // 25 offline signatures: the next one is past the server's look-ahead window (20 values).
        for _ in 0..<25 {
            _ = try call {
                try service.sign(
                    "main", activationId: record.record.activationId, online: false, data: [],
                    factor: .possession, componentLength: 8, respond: $0)
            }.get()
        }
        guard case .failure(let refused) = try createToken() else { return XCTFail("a token for an invalid signature") }
        XCTAssertEqual(refused.code, 1, "\(refused)")
        XCTAssertEqual(refused.message, "Network error occurred: the server refused the signature (HTTP 401).")
        XCTAssertEqual(try service.server.activation(record.record.activationId, now: 0).state, .active)
        XCTAssertEqual(try service.server.tokens(of: record.record.activationId).map(\.tokenId), [created.tokenId], "no token for it")
    }

    func testTimeSynchronisationAndItsReset() throws {
        _ = try service.createActivation("main", commit: true)
        _ = service.setClock(offset: 45_000)
        let synced = try call { service.synchronizeTime("main", respond: $0) }.get()
        XCTAssertEqual(synced["outcome"], "adjusted")
        XCTAssertEqual(synced["isTimeSynchronized"], true)
        XCTAssertNotNil(service.timeAdjustment("main"))
        service.resetTimeSynchronization()
        XCTAssertNil(service.timeAdjustment("main"))
        XCTAssertEqual(service.currentTime("main")["isTimeSynchronized"], false)
        XCTAssertEqual(service.currentTime("main")["adjustmentMs"], 0)
    }

    func testWithoutAnActivationIsError6() throws {
        XCTAssertThrowsError(try service.fetchStatus("main", activationId: "x", raw: false, respond: { _ in })) {
            XCTAssertEqual(($0 as? ControlError)?.code, 6)
        }
        _ = try service.createActivation("main", commit: false)
        try service.removeLocal("main")
        XCTAssertThrowsError(
            try service.sign(
                "main", activationId: "x", online: false, data: [], factor: .possession,
                componentLength: 8, respond: { _ in })
        ) {
            XCTAssertEqual(($0 as? ControlError)?.code, 6)
        }
    }
}

extension Result {
    fileprivate var failureCode: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
