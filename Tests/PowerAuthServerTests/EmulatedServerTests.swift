import Foundation
import LinkStore
import PowerAuthServer
import XCTest

final class EmulatedServerTests: ServerTestCase {

    func testLifeCycle() throws {
        let record = try activate(committed: false)
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
        XCTAssertThrowsError(try server.apply(.unblock, to: id, now: 0)) {
            XCTAssertEqual($0 as? ServerError, .invalidState(action: "unblock", state: .removed))
        }
        XCTAssertThrowsError(try server.activation("nope", now: 0)) { XCTAssertEqual($0 as? ServerError, .unknownActivation("nope")) }
    }

    func testSettingsPersist() throws {
        let id = try activate(committed: true).activationId
        try server.configure(id, maxFailCount: 3, customObject: .some(["tier": "gold"]), upgradeVersion: 3, lookAhead: 10, now: 0)
        store.close()
        store = try ServerStore(path: directory + "/server.db")
        server = EmulatedServer(store: store)
        let record = try server.activation(id, now: 0)
        XCTAssertEqual(record.maxFailCount, 3)
        XCTAssertEqual(record.customObject, ["tier": "gold"])
        XCTAssertEqual(record.lookAhead, 10)
        XCTAssertThrowsError(try server.configure(id, lookAhead: 65, now: 0)) {
            XCTAssertEqual($0 as? ServerError, .invalidValue("lookAhead must be 1…64"))
        }
        try server.configure(id, lookAhead: 64, now: 0)
        XCTAssertEqual(try server.activation(id, now: 0).lookAhead, 64, "64, the status blob's largest look-ahead, is taken")
        try server.configure(id, lookAhead: 10, now: 0)
        try server.configure(id, customObject: .some(nil), now: 0)
        XCTAssertNil(try server.activation(id, now: 0).customObject)
    }

    func testStatusDecryptsWithTheClientsKeyAndChallenge() throws {
        let record = try activate(committed: true)
        let challenge = Array(repeating: UInt8(7), count: 16)
        let response = try server.status(record.activationId, challenge: challenge, now: 42)
        XCTAssertEqual(response.serverTime, 42)
        let blob = try StatusBlobCipher.decrypt(
            response.encryptedStatusBlob, transportKey: record.keys.transport,
            challenge: challenge, nonce: response.nonce)
        XCTAssertEqual(blob.state, .active)
        XCTAssertEqual(blob.counterByte, 0)
        XCTAssertEqual(blob.lookAhead, 20)
        XCTAssertEqual(
            CounterSynchronization.hashDistance(
                from: record.counterData, to: blob.counterDataHash,
                transportKey: record.keys.transport, maximumIterations: 1
            ).distance, 0,
            "the blob carries the hash of the server's current counter data")
    }

    func testReservedBytesAreRandom() throws {
        let record = try activate(committed: true)
        let challenge = Array(repeating: UInt8(7), count: 16)
        var seen = Set<[UInt8]>()
        for _ in 0..<4 {
            let response = try server.status(record.activationId, challenge: challenge, now: 42)
            seen.insert(
                try StatusBlobCipher.decrypt(
                    response.encryptedStatusBlob, transportKey: record.keys.transport,
                    challenge: challenge, nonce: response.nonce
                ).reserved)
        }
        XCTAssertEqual(seen.count, 4, "the server writes 5 random bytes into each blob")
    }

    /// The signature the client makes `steps` values after the record's counter data.
    private func signature(
        _ record: ServerActivation, steps: Int, factor: SignatureFactor = .possession,
        data: [UInt8] = Array("POST&L3BhL3NpZ25hdHVyZS92YWxpZGF0ZQ==".utf8)
    ) -> String {
        PowerAuthSignature.compute(
            keys: record.keys, factor: factor, counterData: HashCounter.advance(record.counterData, by: steps),
            data: data, format: .base64)
    }

    /// The server tries ctr … ctr+LA−1: LA values, not LA+1.
    func testValidationWindowHoldsLookAheadValues() throws {
        let record = try activate(committed: true)
        let id = record.activationId
        let data = Array("POST&L3BhL3NpZ25hdHVyZS92YWxpZGF0ZQ==".utf8)
        let first = try server.verifySignature(id, signature: signature(record, steps: 0), factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertTrue(first.signatureValid)
        XCTAssertEqual(first.skipped, 0)
        XCTAssertEqual(first.record?.counter, 1)
        // Now at step 1: step 1 + 19 is the last value of the window (LA − 1 skipped).
        let edge = try server.verifySignature(id, signature: signature(record, steps: 20), factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertTrue(edge.signatureValid)
        XCTAssertEqual(edge.skipped, 19)
        XCTAssertEqual(edge.record?.counter, 21)
        XCTAssertEqual(edge.record?.counterData, HashCounter.advance(record.counterData, by: 21))
        // At step 21: step 21 + 20 is one past the window.
        let past = try server.verifySignature(id, signature: signature(record, steps: 41), factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertFalse(past.signatureValid)
        XCTAssertEqual(past.record?.counter, 21, "an invalid signature does not move the counter")
    }

    func testOnlyKnowledgeOrBiometrySignaturesTouchTheFailCount() throws {
        let record = try activate(committed: true)
        let id = record.activationId
        let data = Array("data".utf8)
        let wrong = "AAAAAAAAAAAAAAAAAAAAAA=="
        var result = try server.verifySignature(id, signature: wrong, factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertFalse(result.signatureValid)
        XCTAssertEqual(result.record?.failCount, 0, "an invalid possession-only signature adds no failed attempt")
        result = try server.verifySignature(id, signature: wrong, factor: .possessionKnowledge, data: data, format: .base64, now: 0)
        XCTAssertEqual(result.record?.failCount, 1)
        result = try server.verifySignature(id, signature: wrong, factor: .possessionBiometry, data: data, format: .base64, now: 0)
        XCTAssertEqual(result.record?.failCount, 2)
        result = try server.verifySignature(
            id, signature: signature(record, steps: 0, data: data), factor: .possession, data: data,
            format: .base64, now: 0)
        XCTAssertTrue(result.signatureValid)
        XCTAssertEqual(result.record?.failCount, 2, "a valid possession-only signature does not reset the count")
        result = try server.verifySignature(
            id, signature: signature(record, steps: 1, factor: .possessionKnowledge, data: data),
            factor: .possessionKnowledge, data: data, format: .base64, now: 0)
        XCTAssertTrue(result.signatureValid)
        XCTAssertEqual(result.record?.failCount, 0, "a valid knowledge signature resets it")
        for expected in 1...5 {
            result = try server.verifySignature(id, signature: wrong, factor: .possessionKnowledge, data: data, format: .base64, now: 0)
            XCTAssertEqual(result.record?.failCount, expected)
        }
        XCTAssertEqual(result.record?.state, .blocked, "the fifth failed knowledge signature blocks")
        XCTAssertFalse(
            try server.verifySignature(
                id, signature: signature(record, steps: 2, data: data), factor: .possession, data: data,
                format: .base64, now: 0
            ).signatureValid, "a blocked activation validates nothing")
    }

    /// What `verifySignature` answers besides the verdict (`OnlineSignatureServiceBehavior`):
    /// an unknown activation is removed; a record not active is not checked and keeps its
    /// counter; remaining attempts are the maximum after a valid signature and what is left
    /// after an invalid one.
    func testVerificationAnswersAsTheServer() throws {
        let data = Array("data".utf8)
        let unknown = try server.verifySignature("no-such", signature: "x", factor: .possessionKnowledge, data: data, format: .base64, now: 0)
        XCTAssertEqual(unknown, EmulatedServer.SignatureVerification(signatureValid: false, activationStatus: .removed))
        let pending = try activate(committed: false)
        let notActive = try server.verifySignature(
            pending.activationId, signature: signature(pending, steps: 0, data: data), factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertFalse(notActive.signatureValid, "only an active activation validates signatures")
        XCTAssertEqual(notActive.activationStatus, .pendingCommit)
        XCTAssertNil(notActive.remainingAttempts)
        XCTAssertEqual(notActive.record?.counter, 0)
        let record = try activate(committed: true)
        let valid = try server.verifySignature(
            record.activationId, signature: signature(record, steps: 0, factor: .possessionBiometry, data: data), factor: .possessionBiometry,
            data: data, format: .base64, now: 0)
        XCTAssertEqual(valid.remainingAttempts, 5)
        XCTAssertEqual(valid.signatureType, .possessionBiometry)
        XCTAssertEqual(valid.activationStatus, .active)
        let invalid = try server.verifySignature(record.activationId, signature: "x", factor: .possessionBiometry, data: data, format: .base64, now: 0)
        XCTAssertEqual(invalid.remainingAttempts, 4)
        XCTAssertEqual(invalid.signatureType, .possessionBiometry)
        XCTAssertNil(invalid.skipped)
        XCTAssertThrowsError(
            try server.verifySignature(record.activationId, signature: "1", factor: .possession, data: data, format: .decimal(componentLength: 9), now: 0))
    }

    /// A record active with its fail count at the maximum (which the server should have
    /// blocked) is blocked at the next signature, not checked
    /// (`handleInactiveActivationWithMismatchSignature`).
    func testAnActiveRecordWithNoAttemptsLeftIsBlockedUnchecked() throws {
        let keys = SignatureKeys(masterSecret: Array(0..<16))
        let record = try server.importActivation(
            ServerActivation(
                activationId: "full", state: .active, keys: keys, masterSecret: nil, counterData: Array(0..<16), failCount: 3, maxFailCount: 3))
        let data = Array("data".utf8)
        let result = try server.verifySignature(
            "full", signature: signature(record, steps: 0, data: data), factor: .possession, data: data, format: .base64, now: 0)
        XCTAssertFalse(result.signatureValid, "even the right signature")
        XCTAssertEqual(result.activationStatus, .blocked)
        XCTAssertNil(result.remainingAttempts)
        XCTAssertEqual(try server.activation("full", now: 0).counter, 0)
    }

    /// `/pa/v3/activation/status` for what has no blob: 32 random bytes and a nonce.
    func testStatusOfAnUnknownOrCreatedActivationIsRandom() throws {
        let challenge = Array(repeating: UInt8(7), count: 16)
        let unknown = try server.status("no-such", challenge: challenge, now: 0)
        XCTAssertEqual(unknown.encryptedStatusBlob.count, 32)
        XCTAssertEqual(unknown.nonce.count, 16)
        XCTAssertEqual(unknown.activationId, "no-such")
        XCTAssertNotEqual(try server.status("no-such", challenge: challenge, now: 0).encryptedStatusBlob, unknown.encryptedStatusBlob)
        let keys = SignatureKeys(masterSecret: Array(0..<16))
        _ = try server.importActivation(
            ServerActivation(activationId: "created", state: .created, keys: keys, masterSecret: nil, counterData: Array(0..<16)))
        let created = try server.status("created", challenge: challenge, now: 0)
        XCTAssertThrowsError(
            try StatusBlobCipher.decrypt(created.encryptedStatusBlob, transportKey: keys.transport, challenge: challenge, nonce: created.nonce),
            "the keys of a created record are not exchanged yet: no blob")
    }

    func testOfflineSignaturesValidateInTheirDecimalForm() throws {
        let record = try activate(committed: true)
        let data = Array("offline".utf8)
        let code = PowerAuthSignature.compute(
            keys: record.keys, factor: .possessionKnowledge, counterData: record.counterData,
            data: data, format: .decimal(componentLength: 8))
        XCTAssertEqual(code.count, 17, "two 8-digit components joined by a dash")
        XCTAssertTrue(
            try server.verifySignature(
                record.activationId, signature: code, factor: .possessionKnowledge, data: data,
                format: .decimal(componentLength: 8), now: 0
            ).signatureValid)
    }

    func testSecretsAreTheKeysDerivedFromTheMasterSecret() throws {
        let record = try activate(committed: false)
        let keys = try server.secrets(record.activationId, now: 0)
        XCTAssertEqual(keys, SignatureKeys(masterSecret: try XCTUnwrap(record.masterSecret)))
        XCTAssertEqual(Set([keys.possession, keys.knowledge, keys.biometry, keys.transport]).count, 4)
    }

    /// A file of schema version 1 (a transport key and a counter no real server computes)
    /// opens; its records are dropped, and new ones work.
    func testAVersion1FileOpensWithoutItsRecords() throws {
        store.close()
        let path = directory + "/old.db"
        let version1 = StoreSchema(
            name: "WatchLink PowerAuth server", applicationID: ServerStore.applicationID,
            migrations: [
                Migration(
                    version: 1,
                    sql: """
                        CREATE TABLE server_activations (
                            activation_id TEXT PRIMARY KEY NOT NULL, state INTEGER NOT NULL, fail_count INTEGER NOT NULL,
                            max_fail_count INTEGER NOT NULL, custom_object TEXT, current_version INTEGER NOT NULL,
                            upgrade_version INTEGER NOT NULL, look_ahead INTEGER NOT NULL, counter INTEGER NOT NULL,
                            counter_data BLOB NOT NULL, transport_key BLOB NOT NULL, block_expiration INTEGER
                        ) WITHOUT ROWID;
                        """)
            ])
        let old = try StoreFile.open(path: path, schema: version1).database
        try old.run("INSERT INTO server_activations VALUES ('OLD', 3, 0, 5, NULL, 3, 3, 20, 0, zeroblob(16), zeroblob(16), NULL)")
        old.close()
        store = try ServerStore(path: path)
        server = EmulatedServer(store: store)
        XCTAssertEqual(try server.activations(now: 0).count, 0)
        let record = try activate(committed: true)
        XCTAssertEqual(try server.activation(record.activationId, now: 0).masterSecret, record.masterSecret)
    }
}
