#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkDaemon
import LinkJSON

/// The ops the app-side libraries (`PowerAuth2`, `PowerAuth2ForWatch`) are built on: an app
/// that is a process sends and receives PowerAuth's packets with its own `WCSession`, and the
/// daemon writes the packets, reads what the app received, and reads the answers, against the
/// state it keeps. One implementation of the protocol serves both the daemon's own sends and
/// the app's.
extension PowerAuthFeature {
    static let packetData: ControlOperation.Argument = .required("data", .string, "the packet's bytes, base64")

    var packetOperations: [ControlOperation] {
        [
            ControlOperation(
                "pa.packet.make", summary: "the bytes of a request packet, for the app to send with its session",
                arguments: [
                    Self.instance, .required("command", .string, "phone: put_session, put_token, remove_token; watch: get_session, get_token"),
                    .optional("name", .string, "the token's name (the token commands)"),
                ]
            ) { [unowned self] call in
                let instanceId = try self.registered(call.args, { self.instances?.contains($0) ?? false })
                call.succeed(["data": .string(Data(try self.requestPacket(call.args, instanceId: instanceId).encoded()).base64EncodedString())])
            },
            ControlOperation(
                "pa.packet.process", summary: "processReceivedMessageData: what the SDK makes of data the app received",
                arguments: [Self.packetData, .optional("wantsReply", .bool, "the message came with a reply handler")]
            ) { [unowned self] call in
                guard let manager = self.manager else { throw ControlError.control(.internalError, "PowerAuth is not started") }
                let outcome = manager.process(try Self.bytes(call.args), wantsReply: try call.args.optionalBool("wantsReply") ?? false)
                var result: JSONObject = ["processed": .bool(outcome.processed)]
                if let reply = outcome.reply { result["reply"] = .string(Data(reply.encoded()).base64EncodedString()) }
                if let lazy = outcome.lazyAnswer { result["send"] = .string(Data(lazy.encoded()).base64EncodedString()) }
                call.succeed(result)
            },
            ControlOperation(
                "pa.packet.response", summary: "what the SDK makes of the answer to a request sent with a response",
                arguments: [
                    Self.instance, .required("command", .string, "the request's command"), Self.packetData,
                    .optional("name", .string, "the token's name (get_token)"),
                ]
            ) { [unowned self] call in
                let instanceId = try self.registered(call.args, { self.instances?.contains($0) ?? false })
                let command = try Self.requestCommand(call.args)
                let read = PowerAuthResponse.read(try Self.bytes(call.args), expecting: PowerAuthResponse.Expected(request: command))
                call.respond(
                    read.mapError(\.controlError).flatMap {
                        self.applyResponse($0, to: command, instanceId: instanceId, name: try? call.args.optionalString("name"))
                    })
            },
        ]
    }

    /// The request packet of `command` for an instance: the phone's status and tokens, the
    /// watch's requests.
    private func requestPacket(_ args: Arguments, instanceId: String) throws -> PowerAuthPacket {
        let command = try Self.requestCommand(args)
        switch (command, phone, watch) {
        case ("put_session", let phone?, _):
            return try phone.statusPacket(instanceId)
        case ("put_token", let phone?, _):
            return PhonePowerAuth.putTokenPacket(try phone.token(instanceId, name: try Self.name(args)))
        case ("remove_token", _?, _):
            return .token("remove_token", name: try Self.name(args), target: PowerAuthPacket.tokenTargetPrefix + instanceId)
        case ("get_session", _, _?):
            return .activationStatus("get_session", target: PowerAuthPacket.sessionTargetPrefix + instanceId)
        case ("get_token", _, _?):
            return .token("get_token", name: try Self.name(args), target: PowerAuthPacket.tokenTargetPrefix + instanceId)
        default:
            throw Self.notOnThisSide(command)
        }
    }

    private static let requestCommands = ["put_session", "put_token", "remove_token", "get_session", "get_token"]

    private static func requestCommand(_ args: Arguments) throws -> String {
        let command = try args.string("command")
        guard requestCommands.contains(command) else {
            throw args.invalid("argument 'command' must be one of \(requestCommands.joined(separator: ", ")), got '\(command)'")
        }
        return command
    }

    private static func bytes(_ args: Arguments) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try args.string("data")) else {
            throw args.invalid("argument 'data' must be base64")
        }
        return Array(data)
    }
}
