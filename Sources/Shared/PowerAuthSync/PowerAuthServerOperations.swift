#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
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
            serverOp("pa.server.get", "a record (no keys) with its tokens, or every record", [.optional("activationId", .string)]) { call, status in
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
            serverOp("pa.server.secrets", "a record's transport and signature keys (emulator only; never logged)", [Self.activation]) { call, status in
                let keys = try status.server.secrets(try Self.activationId(call.args), now: status.serverNow)
                call.succeed([
                    "transportKey": .string(Data(keys.transport).base64EncodedString()),
                    "signaturePossessionKey": .string(Data(keys.possession).base64EncodedString()),
                    "signatureKnowledgeKey": .string(Data(keys.knowledge).base64EncodedString()),
                    "signatureBiometryKey": .string(Data(keys.biometry).base64EncodedString()),
                ])
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
