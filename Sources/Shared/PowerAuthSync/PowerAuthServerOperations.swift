#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkDaemon
import LinkJSON
import PowerAuthServer

/// The emulated PowerAuth server's ops (phoned): its records, its clock, the network to it.
extension PowerAuthFeature {
    static let activation: ControlOperation.Argument = .required("activationId", .string)

    var serverOperations: [ControlOperation] {
        [
            serverOp(
                "pa.server.activation", "an administrator's action on a record",
                [
                    Self.activation,
                    .required("action", .string, "commit, block, unblock, remove, failAttempt, succeedAttempt, temporaryBlock, advanceCounter"),
                    .optional("durationMs", .integer(1...86_400_000), "temporaryBlock (default 300000)"),
                    .optional("count", .integer(1...1000), "advanceCounter (default 1)"),
                ]
            ) { call, status in
                let actionName = try call.args.string("action")
                let action: ServerAction
                switch actionName {
                case "commit": action = .commit
                case "block": action = .block
                case "unblock": action = .unblock
                case "remove": action = .remove
                case "failAttempt": action = .failAttempt
                case "succeedAttempt": action = .succeedAttempt
                case "temporaryBlock": action = .temporaryBlock(until: status.serverNow + (try call.args.optionalInt("durationMs") ?? 300_000))
                case "advanceCounter": action = .advanceCounter(steps: Int(try call.args.optionalInt("count") ?? 1))
                default:
                    throw call.args.invalid(
                        "argument 'action' must be one of commit, block, unblock, remove, failAttempt, succeedAttempt, temporaryBlock, advanceCounter; got '\(actionName)'"
                    )
                }
                call.succeed(try status.server.apply(action, to: try Self.activationId(call.args), now: status.serverNow).json)
            },
            serverOp(
                "pa.server.set", "a record's settings",
                [
                    Self.activation, .optional("maxFailCount", .integer(1...255)), .optional("customObject", .objectOrNull),
                    .optional("currentVersion", .integer(2...3)), .optional("upgradeVersion", .integer(2...255)),
                    .optional("lookAhead", .integer(1...64)),
                ]
            ) { call, status in
                let args = call.args
                var customObject: JSONObject??
                if let value = args.value("customObject") { customObject = .some(value.objectValue) }
                let record = try status.server.configure(
                    try Self.activationId(args),
                    maxFailCount: try args.optionalInt("maxFailCount").map { Int($0) },
                    customObject: customObject,
                    currentVersion: try args.optionalInt("currentVersion").map { Int($0) },
                    upgradeVersion: try args.optionalInt("upgradeVersion").map { Int($0) },
                    lookAhead: try args.optionalInt("lookAhead").map { Int($0) },
                    now: status.serverNow)
                call.succeed(record.json)
            },
            serverOp(
                "pa.server.activationPrepare", "the key exchange for a client of one's own: its public key in, the server's answer out",
                [
                    .required("devicePublicKey", .string, "base64 of the device's P-256 public key (SEC1, compressed or uncompressed)"),
                    .optional("commit", .bool, "the record starts active"),
                ]
            ) { call, status in
                let devicePublicKey = try Self.base64(call.args, "devicePublicKey")
                let record = try status.server.prepareActivation(devicePublicKey: devicePublicKey, committed: try call.args.optionalBool("commit") ?? false)
                call.succeed([
                    "activationId": .string(record.activationId),
                    "serverPublicKey": .string(Data(record.serverPublicKey ?? []).base64EncodedString()),
                    "ctrData": .string(Data(record.counterData).base64EncodedString()),
                ])
            },
            serverOp(
                "pa.server.import", "a record made elsewhere, with its keys or master secret (emulator only)",
                [
                    .optional("activationId", .string, "default: a new UUID"),
                    .optional("masterSecret", .string, "base64 of KEY_MASTER_SECRET (16 bytes); or the keys:"),
                    .optional("signaturePossessionKey", .string), .optional("signatureKnowledgeKey", .string),
                    .optional("signatureBiometryKey", .string), .optional("transportKey", .string),
                    .optional("vaultEncryptionKey", .string),
                    .optional("ctrData", .string, "base64 of 16 bytes (default random)"), .optional("counter", .integer(0...Int64.max)),
                    .optional("state", .string, "created, pendingCommit, active (default), blocked, removed"),
                    .optional("failCount", .integer(0...255)), .optional("maxFailCount", .integer(1...255)),
                    .optional("currentVersion", .integer(2...3)), .optional("upgradeVersion", .integer(2...255)),
                    .optional("lookAhead", .integer(1...64)),
                ]
            ) { call, status in
                call.succeed(try status.server.importActivation(try Self.importedRecord(call.args, status.server)).json)
            },
            serverOp(
                "pa.server.verifySignature", "verifySignature / verifyOfflineSignature: a signature made elsewhere, checked as the server does",
                [
                    .required("activationId", .string), .required("data", .string, "the signed data, as the signature covers it"),
                    .required("signature", .string), .required("signatureType", .string, "possession, possession_knowledge, … as the SDK names them"),
                    .required("online", .bool, "true: the base64 form; false: decimal components"),
                    .optional("componentLength", .integer(4...8), "digits of an offline component (default 8)"),
                ]
            ) { call, status in
                let args = call.args
                let online = try args.bool("online")
                let componentLength = try args.optionalInt("componentLength")
                if online, componentLength != nil { throw args.invalid("argument 'componentLength' applies to offline signatures only") }
                guard let factor = SignatureFactor(rawValue: try args.string("signatureType")) else {
                    throw args.invalid(
                        "argument 'signatureType' must be one of \(SignatureFactor.allCases.map(\.rawValue).joined(separator: ", ")), got '\(try args.string("signatureType"))'"
                    )
                }
                let activationId = try Self.activationId(args)
                let verification = try status.server.verifySignature(
                    activationId, signature: try args.string("signature"), factor: factor,
                    data: Array(try args.string("data").utf8),
                    format: online ? .base64 : .decimal(componentLength: Int(componentLength ?? 8)), now: status.serverNow)
                var result: JSONObject = [
                    "signatureValid": .bool(verification.signatureValid), "activationId": .string(activationId),
                    "activationStatus": .string(verification.activationStatus.serverName),
                ]
                if let remaining = verification.remainingAttempts { result["remainingAttempts"] = .int(Int64(remaining)) }
                if let type = verification.signatureType { result["signatureType"] = .string(type.serverName) }
                call.succeed(result)
            },
            serverOp(
                "pa.server.status", "/pa/v3/activation/status: the encrypted status blob for a client's challenge",
                [.required("activationId", .string), .required("challenge", .string, "base64 of the client's 16 random bytes")]
            ) { call, status in
                let challenge = try Self.base64(call.args, "challenge", count: 16)
                let response = try status.server.status(try Self.activationId(call.args), challenge: challenge, now: status.serverNow)
                var result: JSONObject = [
                    "activationId": .string(response.activationId),
                    "encryptedStatusBlob": .string(Data(response.encryptedStatusBlob).base64EncodedString()),
                    "nonce": .string(Data(response.nonce).base64EncodedString()),
                ]
                if let customObject = response.customObject { result["customObject"] = .object(customObject) }
                call.succeed(result)
            },
            serverOp("pa.server.get", "a record (no secret keys) with its tokens, or every record", [.optional("activationId", .string)]) { call, status in
                if call.args.contains("activationId") {
                    let activationId = try Self.activationId(call.args)
                    var record = try status.server.activation(activationId, now: status.serverNow).json
                    record["tokens"] = .array(
                        try status.server.tokens(of: activationId).map { token in
                            .object([
                                "tokenId": .string(token.tokenId), "signatureType": .string(token.signatureType.serverName),
                                "created": .int(token.created),
                            ])
                        })
                    call.succeed(record)
                } else {
                    call.succeed(["activations": .array(try status.server.activations(now: status.serverNow).map { .object($0.json) })])
                }
            },
            serverOp("pa.server.secrets", "a record's master secret and keys (emulator only; never logged)", [Self.activation]) { call, status in
                let record = try status.server.activation(try Self.activationId(call.args), now: status.serverNow)
                let keys = record.keys
                var result: JSONObject = [
                    "transportKey": .string(Data(keys.transport).base64EncodedString()),
                    "signaturePossessionKey": .string(Data(keys.possession).base64EncodedString()),
                    "signatureKnowledgeKey": .string(Data(keys.knowledge).base64EncodedString()),
                    "signatureBiometryKey": .string(Data(keys.biometry).base64EncodedString()),
                    "vaultEncryptionKey": .string(Data(keys.vault).base64EncodedString()),
                ]
                if let masterSecret = record.masterSecret { result["masterSecretKey"] = .string(Data(masterSecret).base64EncodedString()) }
                call.succeed(result)
            },
            serverOp(
                "pa.server.validateToken", "validateToken: checks an X-PowerAuth-Token header value as the server does",
                [.required("header", .string, "the header's value, PowerAuth version=\"3.3\", token_id=\"…\", …")]
            ) { call, status in
                call.succeed(try status.validateToken(try call.args.string("header")))
            },
            serverOp(
                "pa.server.clock", "how far the server's clock runs ahead of the phone's",
                [.optional("offsetMs", .integer(-31_536_000_000...31_536_000_000))]
            ) { call, status in
                call.succeed(status.setClock(offset: try call.args.optionalInt("offsetMs")))
            },
            serverOp(
                "pa.network.set", "the emulated network to the server: up, latency, failures, tampering",
                [
                    .optional("up", .bool), .optional("latencyMs", .integer(0...60_000)), .optional("failRate", .number(0...1)),
                    .optional("tamper", .bool),
                ]
            ) { call, status in
                call.succeed(
                    status.setNetwork(
                        up: try call.args.optionalBool("up"), latency: try call.args.optionalInt("latencyMs"),
                        failRate: try call.args.optionalDouble("failRate"),
                        tamper: try call.args.optionalBool("tamper")))
            },
        ]
    }

    /// The bytes of a base64 argument, of `count` bytes when given.
    static func base64(_ args: Arguments, _ name: String, count: Int? = nil) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try args.string(name)) else { throw args.invalid("argument '\(name)' is not base64") }
        if let count, data.count != count { throw args.invalid("argument '\(name)' must be base64 of \(count) bytes, got \(data.count)") }
        return Array(data)
    }

    /// The record `pa.server.import` describes: the master secret, or the keys (the transport
    /// and vault keys random when absent, as nothing derived from them can then be checked).
    static func importedRecord(_ args: Arguments, _ server: EmulatedServer) throws -> ServerActivation {
        let keyNames = ["signaturePossessionKey", "signatureKnowledgeKey", "signatureBiometryKey", "transportKey", "vaultEncryptionKey"]
        let stateName = try args.optionalString("state") ?? "active"
        guard let state = ServerActivationState.allCases.first(where: { $0.name == stateName }) else {
            throw args.invalid("argument 'state' must be one of created, pendingCommit, active, blocked, removed; got '\(stateName)'")
        }
        let activationId = try args.optionalString("activationId") ?? (try server.newActivationId())
        guard !activationId.isEmpty else { throw args.invalid("argument 'activationId' must not be empty") }
        let counterData = args.contains("ctrData") ? try base64(args, "ctrData", count: HashCounter.byteCount) : SecureRandom.bytes(HashCounter.byteCount)
        let masterSecret = args.contains("masterSecret") ? try base64(args, "masterSecret", count: SignatureKeys.byteCount) : nil
        let keys: SignatureKeys
        if let masterSecret {
            if let given = keyNames.first(where: args.contains) {
                throw args.invalid("argument '\(given)' and 'masterSecret' exclude each other: the keys derive from the master secret")
            }
            keys = SignatureKeys(masterSecret: masterSecret)
        } else {
            for name in keyNames.prefix(3) where !args.contains(name) {
                throw args.invalid("missing argument 'masterSecret', or '\(name)' with the other signature keys")
            }
            func key(_ name: String) throws -> [UInt8] {
                args.contains(name) ? try base64(args, name, count: SignatureKeys.byteCount) : SecureRandom.bytes(SignatureKeys.byteCount)
            }
            keys = SignatureKeys(
                possession: try key(keyNames[0]), knowledge: try key(keyNames[1]), biometry: try key(keyNames[2]),
                transport: try key(keyNames[3]), vault: try key(keyNames[4]))
        }
        return ServerActivation(
            activationId: activationId, state: state, keys: keys, masterSecret: masterSecret, counterData: counterData,
            failCount: Int(try args.optionalInt("failCount") ?? 0),
            maxFailCount: Int(try args.optionalInt("maxFailCount") ?? Int64(ServerActivation.defaultMaxFailCount)),
            currentVersion: Int(try args.optionalInt("currentVersion") ?? 3), upgradeVersion: Int(try args.optionalInt("upgradeVersion") ?? 3),
            lookAhead: Int(try args.optionalInt("lookAhead") ?? Int64(ServerActivation.defaultLookAhead)),
            counter: try args.optionalInt("counter") ?? 0)
    }

    /// A server op: a refusal of the server (unknown record, wrong state) is the SDK's error.
    private func serverOp(
        _ name: String, _ summary: String, _ arguments: [ControlOperation.Argument],
        _ body: @escaping (OperationCall, StatusService) throws -> Void
    ) -> ControlOperation {
        phoneOp(name, summary, arguments) { call, _, status in
            do { try body(call, status) } catch let error as ServerError { throw StatusService.serverError(error) }
        }
    }
}
