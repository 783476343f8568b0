import Foundation
import LinkClient
import LinkControl
import LinkJSON
import PowerAuthServer
import XCTest

/// The records of the real code's transcripts (`../shared/reference/powerauth-real-transcripts/`,
/// computed by the PowerAuth SDK's C++ core 1.9.2 and powerauth-java-crypto 1.9.0) put to
/// phoned's server ops, as a backend and a client of the test's own would put them: each
/// record's server state imported (`pa.server.import`), its signatures checked by
/// `pa.server.verifySignature`, its status blob fetched with `pa.server.status` and decoded by
/// the SDK logic phoned's own client runs. `TranscriptTests` (PowerAuthServerTests) checks the
/// same records, byte for byte, against the code below the ops.
final class PowerAuthTranscriptTests: DaemonTestCase {
    private typealias Record = (input: [String: String], output: [String: String])

    /// `reference/powerauth-real-transcripts` of the data handed to the project:
    /// `$WATCHLINK_SHARED_DIR` (set by scripts/test.sh), else `../shared` beside the package.
    private static var folder: URL {
        let shared =
            ProcessInfo.processInfo.environment["WATCHLINK_SHARED_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("../shared").standardizedFileURL
        return shared.appendingPathComponent("reference/powerauth-real-transcripts")
    }

    private func records(_ name: String) throws -> [Record] {
        let file = Self.folder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw XCTSkip("the PowerAuth transcript \(file.path) is not there ($WATCHLINK_SHARED_DIR, or ../shared beside the package: scripts/shared-dir.sh)")
        }
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        let items = try XCTUnwrap(root?["data"] as? [[String: Any]], "\(name) has no data array")
        return items.map { (($0["input"] as? [String: String]) ?? [:], ($0["output"] as? [String: String]) ?? [:]) }
    }

    private func bytes(_ base64: String?, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        Array(try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(base64, file: file, line: line)), file: file, line: line))
    }

    private func bytes(_ value: JSONValue?, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        try bytes(value?.stringValue, file: file, line: line)
    }

    private func integer(_ text: String?) -> JSONValue { .int(Int64(text ?? "") ?? -1) }

    /// `signatures.json`: each signature the SDK made, verified by `pa.server.verifySignature`
    /// against a record with the transcript's keys, `CTR_DATA` and look-ahead: accepted or
    /// refused as `verifySignatureForData` did over the same window, and the counter moved past
    /// the offset it matched at.
    func testSignaturesAreVerifiedAsTheServerLibraryDid() throws {
        let all = try records("signatures.json")
        XCTAssertEqual(all.count, 184)
        let p = try client(try daemon("phoned").startAndWait())
        var checked = 0
        for (index, (input, out)) in all.enumerated() {
            let label = "record \(index) (\(input["case"] ?? ""))"
            let offline = input["offline"] == "true"
            let activationId = "signature-\(index)"
            _ = try p.call(
                "pa.server.import",
                [
                    "activationId": .string(activationId), "signaturePossessionKey": .string(input["signaturePossessionKey"] ?? ""),
                    "signatureKnowledgeKey": .string(input["signatureKnowledgeKey"] ?? ""),
                    "signatureBiometryKey": .string(input["signatureBiometryKey"] ?? ""), "ctrData": .string(input["serverCtrData"] ?? ""),
                    "lookAhead": integer(input["serverLookAhead"]),
                ])
            var args: JSONObject = [
                "activationId": .string(activationId), "data": .string(out["normalizedData"] ?? ""), "signature": .string(out["signature"] ?? "x"),
                "signatureType": .string(input["serverSignatureType"] ?? ""), "online": .bool(!offline),
            ]
            if offline { args["componentLength"] = integer(input["signatureComponentLength"]) }
            if out["refused"] == "true" {
                // The SDK refuses a component of 3 or 9 digits; so does the server. The other
                // refusals (method FOO, an empty URI id) are of a request WatchLink does not normalise.
                if offline { XCTAssertThrowsError(try p.call("pa.server.verifySignature", args), label) }
                continue
            }
            let verified = try p.call("pa.server.verifySignature", args)
            XCTAssertEqual(verified["signatureValid"], .bool(out["serverAccepts"] == "true"), label)
            let offset = Int64(out["serverMatchedOffset"] ?? "") ?? -1
            XCTAssertEqual(
                try p.call("pa.server.get", ["activationId": .string(activationId)])["counter"], .int(offset >= 0 ? offset + 1 : 0), label)
            checked += 1
        }
        XCTAssertEqual(checked, 180)
    }

    /// `counter-placement.json`: each server record imported, its blob fetched with
    /// `pa.server.status` for the record's challenge (or the other challenge the server used)
    /// and decoded by the client with its own keys and counter: the state, counter state and
    /// counter the SDK reported; the library's blob but for its five random bytes; the
    /// synchronising signature verified as the server library did; in two-step sequences the
    /// record the first step left. A `created` record gets random bytes, as the real server
    /// answers it; records with a state or look-ahead no record holds are refused by the import.
    func testStatusBlobsDecodeToTheTranscriptsStateAndCounter() throws {
        let all = try records("counter-placement.json")
        XCTAssertEqual(all.count, 176)
        let p = try client(try daemon("phoned").startAndWait())
        var decodedCount = 0, synchronised = 0
        for (index, (input, out)) in all.enumerated() {
            let label = "record \(index) (\(input["case"] ?? ""))"
            let activationId = input["activationId"] ?? ""
            let lookAhead = Int(input["ctrLookAhead"] ?? "") ?? 0
            let state = ServerActivationState(rawValue: UInt8(input["activationStatus"] ?? "") ?? 0)
            if input["step"] == "2" {
                let kept = try p.call("pa.server.get", ["activationId": .string(activationId)])
                XCTAssertEqual(try bytes(kept["ctrData"]), try bytes(input["serverCtrData"]), "\(label): the record step 1 left")
                XCTAssertEqual(kept["counter"], integer(input["serverCounter"]), "\(label): the record step 1 left")
            } else {
                var record: JSONObject = [
                    "activationId": .string(activationId), "ctrData": .string(input["serverCtrData"] ?? ""),
                    "counter": integer(input["serverCounter"]), "state": .string(state?.name ?? "status \(input["activationStatus"] ?? "")"),
                    "failCount": integer(input["failedAttempts"]), "maxFailCount": integer(input["maxFailedAttempts"]),
                    "currentVersion": integer(input["currentVersion"]), "upgradeVersion": integer(input["upgradeVersion"]),
                    "lookAhead": integer(input["ctrLookAhead"]),
                ]
                if let serverTransportKey = input["serverTransportKey"] {
                    for key in ["signaturePossessionKey", "signatureKnowledgeKey", "signatureBiometryKey"] { record[key] = .string(input[key] ?? "") }
                    record["transportKey"] = .string(serverTransportKey)
                } else {
                    record["masterSecret"] = .string(input["masterSecretKey"] ?? "")
                }
                guard state != nil, (1...64).contains(lookAhead) else {
                    XCTAssertEqual(out["refused"], "true", label)
                    assertControlError("control", 3) { try p.call("pa.server.import", record) }
                    continue
                }
                _ = try p.call("pa.server.import", record)
            }
            let challenge = try bytes(input["challenge"])
            let status = try p.call(
                "pa.server.status", ["activationId": .string(activationId), "challenge": .string(input["serverChallenge"] ?? input["challenge"] ?? "")])
            let transportKey = try bytes(input["transportKey"])
            let encrypted = try bytes(status["encryptedStatusBlob"]), nonce = try bytes(status["nonce"])
            let decoded: DecodedActivationStatus
            do {
                decoded = try DecodedActivationStatus.decode(
                    encryptedStatusBlob: encrypted, challenge: challenge, nonce: nonce, transportKey: transportKey,
                    counterData: try bytes(input["clientCtrData"]),
                    counterByte: input["clientHasCtrByte"] == "true" ? UInt8(input["clientCtrByte"] ?? "") : nil)
            } catch {
                XCTAssertTrue(out["refused"] == "true" || state == .created, "\(label): refused \(error)")
                continue
            }
            XCTAssertNotEqual(state, .created, "\(label): the server sends no blob for a created record")
            XCTAssertEqual(out["refused"], "false", label)
            decodedCount += 1
            var plain = decoded.blob.encoded()
            plain.replaceSubrange(7..<12, with: try bytes(input["statusBlobReserved"]))
            XCTAssertEqual(plain, try bytes(out["statusBlobData"]), "\(label): the library's blob but for its random bytes")
            XCTAssertEqual(decoded.state, out["state"], label)
            XCTAssertEqual(decoded.counterState, out["counterState"], label)
            XCTAssertEqual(decoded.counterData, try bytes(out["clientCtrDataAfterDecode"]), label)
            XCTAssertEqual(decoded.counterByte.map { String($0) } ?? "", out["clientCtrByteAfterDecode"], label)
            XCTAssertEqual(String(decoded.isSignatureCalculationRecommended), out["isSignatureCalculationRecommended"], label)
            XCTAssertEqual(String(decoded.isProtocolUpgradeAvailable), out["isProtocolUpgradeAvailable"], label)
            guard out["sdkFollowUp"] == "counterSynchronization" else { continue }
            synchronised += 1
            let verified = try p.call(
                "pa.server.verifySignature",
                [
                    "activationId": .string(activationId), "data": .string(out["syncData"] ?? ""), "signature": .string(out["syncSignature"] ?? ""),
                    "signatureType": "possession", "online": true,
                ])
            XCTAssertEqual(verified["signatureValid"], .bool(out["syncServerAccepts"] == "true"), label)
        }
        XCTAssertGreaterThan(decodedCount, 150)
        XCTAssertGreaterThan(synchronised, 15)
    }
}
