import Foundation
import LinkControl
import PowerAuthServer
import XCTest

final class EmulatedServerTests: XCTestCase {
    private var directory = ""
    private var store: ServerStore!
    private var server: EmulatedServer!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "pas-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try ServerStore(path: directory + "/server.db")
        server = EmulatedServer(store: store)
    }

    override func tearDown() {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testLifeCycle() throws {
        let record = try server.createActivation(committed: false)
        XCTAssertEqual(record.state, .pendingCommit)
        XCTAssertEqual(record.maxFailCount, 5)
        XCTAssertEqual(record.lookAhead, 20)
        let id = record.activationId
        XCTAssertThrowsError(try server.apply(.block, to: id, now: 0)) {
            XCTAssertEqual($0 as? ServerError, .invalidState(action: "block", state: .pendingCommit))
        }
        XCTAssertEqual(try server.apply(.commit, to: id, now: 0).state, .active)
        for expected in 1...4 {
            let after = try server.apply(.failAttempt, to: id, now: 0)
            XCTAssertEqual(after.failCount, expected)
            XCTAssertEqual(after.state, .active)
        }
        XCTAssertEqual(try server.apply(.succeedAttempt, to: id, now: 0).failCount, 0, "success resets the count")
        for _ in 1...5 { try server.apply(.failAttempt, to: id, now: 0) }
        XCTAssertEqual(try server.activation(id, now: 0).state, .blocked, "the fifth failure blocks")
        let unblocked = try server.apply(.unblock, to: id, now: 0)
        XCTAssertEqual(unblocked.state, .active)
        XCTAssertEqual(unblocked.failCount, 0)
        XCTAssertEqual(try server.apply(.temporaryBlock(until: 1_000), to: id, now: 0).blockExpiration, 1_000)
        XCTAssertEqual(try server.activation(id, now: 999).state, .blocked)
        let expired = try server.activation(id, now: 1_000)
        XCTAssertEqual(expired.state, .active, "a temporary block lifts itself")
        XCTAssertNil(expired.blockExpiration)
        XCTAssertEqual(try server.apply(.remove, to: id, now: 0).state, .removed)
        XCTAssertThrowsError(try server.apply(.unblock, to: id, now: 0))
        XCTAssertThrowsError(try server.activation("nope", now: 0)) { XCTAssertEqual($0 as? ServerError, .unknownActivation("nope")) }
    }

    func testSettingsPersist() throws {
        let id = try server.createActivation(committed: true).activationId
        try server.configure(id, maxFailCount: 3, customObject: .some(["tier": "gold"]), upgradeVersion: 3, lookAhead: 10, now: 0)
        store.close()
        store = try ServerStore(path: directory + "/server.db")
        server = EmulatedServer(store: store)
        let record = try server.activation(id, now: 0)
        XCTAssertEqual(record.maxFailCount, 3)
        XCTAssertEqual(record.customObject, ["tier": "gold"])
        XCTAssertEqual(record.lookAhead, 10)
        XCTAssertThrowsError(try server.configure(id, lookAhead: 65, now: 0))
        try server.configure(id, customObject: .some(nil), now: 0)
        XCTAssertNil(try server.activation(id, now: 0).customObject)
    }

    func testStatusDecryptsWithTheClientsKeyAndChallenge() throws {
        let record = try server.createActivation(committed: true)
        let challenge = Array(repeating: UInt8(7), count: 16)
        let response = try server.status(record.activationId, challenge: challenge, now: 42)
        XCTAssertEqual(response.serverTime, 42)
        let blob = try StatusBlobCipher.decrypt(response.encryptedStatusBlob, transportKey: record.transportKey,
                                                challenge: challenge, nonce: response.nonce)
        XCTAssertEqual(blob, record.statusBlob)
        XCTAssertEqual(blob.counterDataHash, PowerAuthKDF.counterDataHash(transportKey: record.transportKey, counterData: record.counterData))
    }

    func testValidationWithinTheLookAhead() throws {
        let record = try server.createActivation(committed: true)
        let id = record.activationId
        func code(_ steps: Int) -> String {
            HashCounter.authenticationCode(transportKey: record.transportKey, counterData: HashCounter.advance(record.counterData, by: steps), data: [])
        }
        let first = try server.validate(id, code: code(0), data: [], now: 0)
        XCTAssertTrue(first.isValid)
        XCTAssertEqual(first.skipped, 0)
        let skipping = try server.validate(id, code: code(11), data: [], now: 0)
        XCTAssertTrue(skipping.isValid)
        XCTAssertEqual(skipping.skipped, 10)
        XCTAssertEqual(skipping.record.counter, 12)
        XCTAssertEqual(skipping.record.counterData, HashCounter.advance(record.counterData, by: 12))
        let tooFar = try server.validate(id, code: code(12 + 21), data: [], now: 0)
        XCTAssertFalse(tooFar.isValid)
        XCTAssertEqual(tooFar.record.failCount, 1, "a code outside the window is a failed attempt")
    }
}
