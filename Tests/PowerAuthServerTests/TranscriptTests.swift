import Foundation
@testable import PowerAuthServer
import XCTest

/// Every record of the real code's transcripts (`../shared/reference/powerauth-real-transcripts/`,
/// computed by the PowerAuth mobile SDK 1.9.2's C++ core and powerauth-java-crypto 1.9.0; its
/// README says who computed what) against the code of the emulated server and of the emulated
/// SDK. `PowerAuthTranscriptTests` in IntegrationTests puts the same records to phoned's ops.
final class TranscriptTests: ServerTestCase {
    private typealias Record = PowerAuthVectors.Case

    /// `kdf.json`: the five keys of 50 master secrets (`DeriveAllSecretKeys`, which the server's
    /// `PowerAuthServerKeyFactory` agrees with).
    func testKDF() throws {
        let records = try PowerAuthVectors.records("kdf.json")
        XCTAssertEqual(records.count, 50)
        for (index, record) in records.enumerated() {
            let keys = SignatureKeys(masterSecret: PowerAuthVectors.bytes(record.input["masterSecretKey"]))
            let out = record.output
            XCTAssertEqual(
                [keys.possession, keys.knowledge, keys.biometry, keys.transport, keys.vault],
                ["signaturePossessionKey", "signatureKnowledgeKey", "signatureBiometryKey", "transportKey", "vaultEncryptionKey"].map {
                    PowerAuthVectors.bytes(out[$0])
                }, "record \(index)")
        }
    }

    /// `signatures.json`: the SDK's signature recomputed (where it signed with the record's
    /// keys), and the server's verdict over its window as `verifySignatureForData` gave it, with
    /// the offset it matched at. The SDK's refusals of a component length of 3 or 9 are the
    /// server's refusals too; its refusals of method `FOO` and of an empty `uriId` concern the
    /// request normalisation, which WatchLink leaves to its callers (its signatures cover the
    /// data they are given).
    func testSignatures() throws {
        let records = try PowerAuthVectors.records("signatures.json")
        XCTAssertEqual(records.count, 184)
        var verdicts = (accepted: 0, refused: 0, notSigned: 0)
        for (index, record) in records.enumerated() {
            let (input, out) = record
            let label = "record \(index) (\(input["case"] ?? ""))"
            let offline = input["offline"] == "true"
            let length = Int(input["signatureComponentLength"] ?? "") ?? 8
            let format: PowerAuthSignature.Format = offline ? .decimal(componentLength: length) : .base64
            let keys = signatureKeys(input)
            let type = try XCTUnwrap(SignatureFactor(rawValue: input["signatureType"] ?? ""), label)
            if out["refused"] == "true" {
                verdicts.notSigned += 1
                XCTAssertEqual(out["errorCode"], "3", label)
                if offline {
                    XCTAssertFalse(PowerAuthSignature.Format.componentLengths.contains(length), label)
                    let record = try imported(input, keys: keys, counterData: PowerAuthVectors.bytes(input["serverCtrData"]))
                    XCTAssertThrowsError(
                        try server.verifySignature(record.activationId, signature: "1234", factor: type, data: [], format: format, now: 0), label)
                } else {
                    XCTAssertTrue(input["method"] == "FOO" || input["uriId"] == "", label)
                }
                continue
            }
            let data = PowerAuthVectors.bytes(out["data"])
            XCTAssertEqual(data, Array((out["normalizedData"] ?? "").utf8), label)
            let counterData = PowerAuthVectors.bytes(input["counterData"])
            if input["knowledgeKeyCorrect"] == "true" {
                XCTAssertEqual(
                    PowerAuthSignature.compute(keys: keys, factor: type, counterData: counterData, data: data, format: format),
                    out["signature"], label)
            }
            XCTAssertEqual(HashCounter.next(counterData), PowerAuthVectors.bytes(out["counterDataAfter"]), label)
            let ctrByte = try XCTUnwrap(Int(input["ctrByte"] ?? ""), label)
            XCTAssertEqual(out["ctrByteAfter"], String((ctrByte + 1) % 256), label)
            // The server's verdict.
            let serverType = try XCTUnwrap(SignatureFactor(rawValue: input["serverSignatureType"] ?? ""), label)
            let before = try imported(
                input, keys: keys, counterData: PowerAuthVectors.bytes(input["serverCtrData"]),
                lookAhead: Int(input["serverLookAhead"] ?? "") ?? 20)
            let verification = try server.verifySignature(
                before.activationId, signature: out["signature"] ?? "", factor: serverType, data: data, format: format, now: 0)
            XCTAssertEqual(verification.signatureValid, out["serverAccepts"] == "true", label)
            XCTAssertEqual(verification.skipped ?? -1, Int(out["serverMatchedOffset"] ?? ""), label)
            XCTAssertEqual(verification.record?.counter, verification.signatureValid ? Int64((verification.skipped ?? 0) + 1) : 0, label)
            if verification.signatureValid { verdicts.accepted += 1 } else { verdicts.refused += 1 }
        }
        XCTAssertEqual(verdicts.notSigned, 4)
        XCTAssertGreaterThan(verdicts.accepted, 100)
        XCTAssertGreaterThan(verdicts.refused, 30)
    }

    /// `counter-placement.json`: the server's blob byte for byte (with the record's reserved
    /// bytes and nonce), the client's decoding of the real server's blob (state, counter state,
    /// the flags, the counter after it), the synchronising signature the SDK made and the
    /// server's verdict on it, and in two-step sequences the server record the first step left.
    func testCounterPlacement() throws {
        let records = try PowerAuthVectors.records("counter-placement.json")
        XCTAssertEqual(records.count, 176)
        var refused = 0, synchronised = 0, secondSteps = 0
        for (index, record) in records.enumerated() {
            let (input, out) = record
            let label = "record \(index) (\(input["case"] ?? ""))"
            let keys = SignatureKeys(masterSecret: PowerAuthVectors.bytes(input["masterSecretKey"]))
            XCTAssertEqual(keys.transport, PowerAuthVectors.bytes(input["transportKey"]), label)
            let serverTransportKey = input["serverTransportKey"].map { PowerAuthVectors.bytes($0) } ?? keys.transport
            let challenge = PowerAuthVectors.bytes(input["challenge"]), nonce = PowerAuthVectors.bytes(input["nonce"])
            let serverChallenge = input["serverChallenge"].map { PowerAuthVectors.bytes($0) } ?? challenge
            let serverCtrData = PowerAuthVectors.bytes(input["serverCtrData"])
            XCTAssertEqual(
                PowerAuthKDF.counterDataHash(transportKey: serverTransportKey, counterData: serverCtrData),
                PowerAuthVectors.bytes(out["serverCtrDataHash"]), label)

            // The server: a record WatchLink can hold writes the library's blob.
            let state = ServerActivationState(rawValue: UInt8(input["activationStatus"] ?? "") ?? 0)
            let lookAhead = Int(input["ctrLookAhead"] ?? "") ?? 0
            let serverRecord: ServerActivation?
            if let state, (1...64).contains(lookAhead) {
                if input["step"] == "2" {
                    secondSteps += 1
                    let kept = try server.activation(input["activationId"] ?? "", now: 0)
                    XCTAssertEqual(kept.counterData, serverCtrData, "\(label): the record step 1 left")
                    XCTAssertEqual(String(kept.counter), input["serverCounter"], "\(label): the record step 1 left")
                    serverRecord = kept
                } else {
                    let serverKeys = SignatureKeys(
                        possession: keys.possession, knowledge: keys.knowledge, biometry: keys.biometry, transport: serverTransportKey,
                        vault: keys.vault)
                    serverRecord = try server.importActivation(
                        ServerActivation(
                            activationId: input["activationId"] ?? "", state: state, keys: serverKeys, masterSecret: nil,
                            counterData: serverCtrData, failCount: Int(input["failedAttempts"] ?? "") ?? 0,
                            maxFailCount: Int(input["maxFailedAttempts"] ?? "") ?? 0,
                            currentVersion: Int(input["currentVersion"] ?? "") ?? 0, upgradeVersion: Int(input["upgradeVersion"] ?? "") ?? 0,
                            lookAhead: lookAhead, counter: Int64(input["serverCounter"] ?? "") ?? 0))
                }
                let blob = try XCTUnwrap(serverRecord, label).statusBlob(reserved: PowerAuthVectors.bytes(input["statusBlobReserved"]))
                XCTAssertEqual(blob.encoded(), PowerAuthVectors.bytes(out["statusBlobData"]), label)
                XCTAssertEqual(
                    try StatusBlobCipher.encrypt(blob, transportKey: serverTransportKey, challenge: serverChallenge, nonce: nonce),
                    PowerAuthVectors.bytes(out["encryptedStatusBlob"]), label)
            } else {
                // A state of 0 or 6, a look-ahead of 0 or 65: the library writes them; no record holds them.
                serverRecord = nil
                XCTAssertEqual(out["refused"], "true", label)
            }

            // The client decodes the real server's blob.
            let clientCtrData = PowerAuthVectors.bytes(input["clientCtrData"])
            let clientCtrByte = input["clientHasCtrByte"] == "true" ? UInt8(input["clientCtrByte"] ?? "") : nil
            if let expected = out["byteDistance"], let clientCtrByte {
                let serverByte = UInt8(truncatingIfNeeded: Int64(input["serverCounter"] ?? "") ?? 0)
                XCTAssertEqual(String(CounterSynchronization.byteDistance(local: clientCtrByte, server: serverByte)), expected, label)
            }
            if let expected = out["hashDistance"] {
                let distance = CounterSynchronization.hashDistance(
                    from: clientCtrData, to: PowerAuthVectors.bytes(out["serverCtrDataHash"]), transportKey: keys.transport,
                    maximumIterations: lookAhead
                ).distance
                XCTAssertEqual(String(distance ?? -1), expected, label)
            }
            let decoded: DecodedActivationStatus
            do {
                decoded = try DecodedActivationStatus.decode(
                    encryptedStatusBlob: PowerAuthVectors.bytes(out["encryptedStatusBlob"]), challenge: challenge, nonce: nonce,
                    transportKey: keys.transport, counterData: clientCtrData, counterByte: clientCtrByte)
            } catch {
                XCTAssertEqual(out["refused"], "true", "\(label): WatchLink refused \(error)")
                refused += 1
                continue
            }
            XCTAssertEqual(out["refused"], "false", label)
            XCTAssertEqual(decoded.state, out["state"], label)
            XCTAssertEqual(decoded.counterState, out["counterState"], label)
            XCTAssertEqual(String(decoded.blob.failCount), out["failCount"], label)
            XCTAssertEqual(String(decoded.blob.maxFailCount), out["maxFailCount"], label)
            XCTAssertEqual(String(decoded.blob.currentVersion), out["decodedCurrentVersion"], label)
            XCTAssertEqual(String(decoded.blob.upgradeVersion), out["decodedUpgradeVersion"], label)
            XCTAssertEqual(String(decoded.blob.lookAhead), out["decodedLookAhead"], label)
            XCTAssertEqual(String(decoded.blob.counterByte), out["decodedCtrByte"], label)
            XCTAssertEqual(String(decoded.isProtocolUpgradeAvailable), out["isProtocolUpgradeAvailable"], label)
            XCTAssertEqual(String(decoded.isSignatureCalculationRecommended), out["isSignatureCalculationRecommended"], label)
            XCTAssertEqual(String(decoded.needsSerializeSessionState), out["needsSerializeSessionState"], label)
            XCTAssertEqual(decoded.counterData, PowerAuthVectors.bytes(out["clientCtrDataAfterDecode"]), label)
            XCTAssertEqual(decoded.counterByte.map { String($0) } ?? "", out["clientCtrByteAfterDecode"], label)
            XCTAssertEqual(String(decoded.counterByte != nil), out["clientHasCtrByteAfterDecode"], label)
            // The follow-up of the SDK's status task: the upgrade first, else the synchronisation.
            let followUp =
                decoded.isProtocolUpgradeAvailable ? "protocolUpgrade" : decoded.isSignatureCalculationRecommended ? "counterSynchronization" : "none"
            XCTAssertEqual(followUp, out["sdkFollowUp"], label)
            guard followUp == "counterSynchronization" else {
                XCTAssertEqual(decoded.counterData, PowerAuthVectors.bytes(out["clientCtrDataAfter"]), label)
                continue
            }
            // The synchronising possession signature, and the server's verdict on it.
            synchronised += 1
            let syncData = Array((out["syncData"] ?? "").utf8)
            XCTAssertEqual(
                PowerAuthSignature.compute(keys: keys, factor: .possession, counterData: decoded.counterData, data: syncData, format: .base64),
                out["syncSignature"], label)
            XCTAssertEqual(HashCounter.next(decoded.counterData), PowerAuthVectors.bytes(out["clientCtrDataAfter"]), label)
            XCTAssertEqual(decoded.counterByte.map { String($0 &+ 1) }, out["clientCtrByteAfter"], label)
            let verification = try server.verifySignature(
                try XCTUnwrap(serverRecord, label).activationId, signature: out["syncSignature"] ?? "", factor: .possession,
                data: syncData, format: .base64, now: 0)
            XCTAssertEqual(verification.signatureValid, out["syncServerAccepts"] == "true", label)
            XCTAssertEqual(verification.skipped ?? -1, Int(out["syncServerMatchedOffset"] ?? ""), label)
        }
        XCTAssertEqual(refused, 6, "the README's six refusals")
        XCTAssertGreaterThan(synchronised, 15)
        XCTAssertGreaterThan(secondSteps, 10)
    }

    /// `tokens.json`: the digest, the SDK's header byte for byte, both layouts read as the
    /// integration reads them, and the server's `validateToken` of each at its own time; the
    /// versions the library refuses are refused.
    func testTokens() throws {
        let records = try PowerAuthVectors.records("tokens.json")
        XCTAssertEqual(records.count, 82)
        let activation = try activate(committed: true)
        var refused = 0
        for (index, record) in records.enumerated() {
            let (input, out) = record
            let label = "record \(index) (\(input["case"] ?? ""))"
            let tokenId = input["tokenId"] ?? "", version = input["version"] ?? ""
            let secret = PowerAuthVectors.bytes(input["tokenSecret"]), nonce = PowerAuthVectors.bytes(input["nonce"])
            let timestamp = try XCTUnwrap(Int64(input["timestamp"] ?? ""), label)
            if out["refused"] == "true" {
                refused += 1
                XCTAssertFalse(PowerAuthTokenHeader.supportedVersions.contains(version), label)
                let header = PowerAuthTokenHeader.value(
                    tokenIdentifier: tokenId, secret: secret, nonce: nonce, timestampMilliseconds: timestamp, version: version)
                XCTAssertThrowsError(try TokenHeaderFields.parse(header), label) {
                    XCTAssertEqual(($0 as? TokenHeaderFields.Refusal)?.name, "POWER_AUTH_TOKEN_VERSION_INVALID", label)
                }
                continue
            }
            XCTAssertEqual(
                PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: String(timestamp), version: version), out["digest"], label)
            XCTAssertEqual(
                PowerAuthTokenHeader.value(tokenIdentifier: tokenId, secret: secret, nonce: nonce, timestampMilliseconds: timestamp, version: version),
                out["header"], label)
            for layout in [out["header"], out["headerJavaHttp"]] {
                let fields = try TokenHeaderFields.parse(layout ?? "")
                XCTAssertEqual(
                    fields,
                    TokenHeaderFields(tokenId: tokenId, digest: PowerAuthVectors.bytes(out["digest"]), nonce: nonce, timestamp: timestamp, version: version),
                    label)
            }
            try store.save(ServerToken(tokenId: tokenId, activationId: activation.activationId, secret: secret, signatureType: .possession, created: 0))
            let validation = try server.validateToken(try TokenHeaderFields.parse(out["headerJavaHttp"] ?? ""), now: timestamp)
            XCTAssertEqual(validation.tokenValid, out["digestValid"] == "true", label)
        }
        XCTAssertEqual(refused, 2)
    }

    // MARK: Helpers

    private func signatureKeys(_ input: [String: String]) -> SignatureKeys {
        SignatureKeys(
            possession: PowerAuthVectors.bytes(input["signaturePossessionKey"]), knowledge: PowerAuthVectors.bytes(input["signatureKnowledgeKey"]),
            biometry: PowerAuthVectors.bytes(input["signatureBiometryKey"]), transport: Array(repeating: 0, count: 16),
            vault: Array(repeating: 0, count: 16))
    }

    /// An active record with `keys` and `counterData`, under a new id.
    private func imported(_ input: [String: String], keys: SignatureKeys, counterData: [UInt8], lookAhead: Int = 20) throws -> ServerActivation {
        try server.importActivation(
            ServerActivation(
                activationId: try server.newActivationId(), state: .active, keys: keys, masterSecret: nil, counterData: counterData,
                lookAhead: lookAhead))
    }
}
