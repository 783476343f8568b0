#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkDaemon
import PowerAuthServer
import WireProtocol

/// The `pa.*` ops: the SDK instances of both sides, the phone's activation, tokens, status and
/// time, the watch's requests. The emulated server's ops are in `PowerAuthServerOperations`.
extension PowerAuthFeature {
    static let instance: ControlOperation.Argument = .required("instanceId", .string, "a PowerAuthSDK instance registered with pa.instance.add")
    static let mode: ControlOperation.Argument = .optional("mode", .string, "lazy (default) or completion")
    static let tokenName: ControlOperation.Argument = .required("name", .string, "the token's name")
    static let signatureType: ControlOperation.Argument = .optional("signatureType", .string,
                                                             "possession (default), possession_knowledge, … as the SDK names them")

    public var operations: [ControlOperation] {
        instanceOperations + phoneOperations + watchOperations + serverOperations
    }

    /// An op answered by the phone's SDK instances and status service.
    func phoneOp(_ name: String, _ summary: String, _ arguments: [ControlOperation.Argument],
                 _ body: @escaping (OperationCall, PhonePowerAuth, StatusService) throws -> Void) -> ControlOperation {
        ControlOperation(name, sides: .phone, summary: summary, arguments: arguments) { [unowned self] call in
            guard let phone = self.phone, let status = self.status else {
                throw ControlError.control(.internalError, "\(call.op): PowerAuth is not started")
            }
            try body(call, phone, status)
        }
    }

    private func watchOp(_ name: String, _ summary: String, _ arguments: [ControlOperation.Argument],
                         _ body: @escaping (OperationCall, WatchPowerAuth) throws -> Void) -> ControlOperation {
        ControlOperation(name, sides: .watch, summary: summary, arguments: arguments) { [unowned self] call in
            guard let watch = self.watch else { throw ControlError.control(.internalError, "\(call.op): PowerAuth is not started") }
            try body(call, watch)
        }
    }

    private var instanceOperations: [ControlOperation] {
        [
            ControlOperation("pa.instance.add", summary: "register a PowerAuthSDK instance (as an app creates its SDK objects at launch)",
                      arguments: [Self.instance]) { [unowned self] call in
                guard let instances = self.instances else { throw ControlError.control(.internalError, "PowerAuth is not started") }
                let changed = instances.add(try Self.instanceId(call.args))
                call.succeed(["added": .bool(changed), "instances": .array(instances.ids.map { .string($0) })])
            },
            ControlOperation("pa.instance.remove", summary: "forget a PowerAuthSDK instance", arguments: [Self.instance]) { [unowned self] call in
                guard let instances = self.instances else { throw ControlError.control(.internalError, "PowerAuth is not started") }
                let changed = instances.remove(try Self.instanceId(call.args))
                call.succeed(["removed": .bool(changed), "instances": .array(instances.ids.map { .string($0) })])
            },
            ControlOperation("pa.instance.list", summary: "the registered PowerAuthSDK instances") { [unowned self] call in
                call.succeed(["instances": .array((self.instances?.ids ?? []).map { .string($0) })])
            },
            ControlOperation("pa.activation.get", summary: "hasValidActivation and activationIdentifier of an instance",
                      arguments: [Self.instance]) { [unowned self] call in
                if let phone = self.phone {
                    call.succeed(Self.activationResult(try phone.activationId(try self.registered(call.args, phone.isRegistered))))
                } else if let watch = self.watch {
                    call.succeed(Self.activationResult(try watch.activationId(try self.registered(call.args, watch.isRegistered))))
                }
            },
            ControlOperation("pa.token.header", summary: "the X-PowerAuth-Token header of a token, stamped with the synchronised time",
                      arguments: [Self.instance, Self.tokenName, .optional("version", .string, "3.0, 3.1, 3.2 or 3.3 (default)")]) { [unowned self] call in
                let version = try call.args.optionalString("version") ?? PowerAuthTokenHeader.sdkVersion
                try Self.checkVersion(version, call.args)
                if let phone = self.phone, let status = self.status {
                    let instanceId = try self.registered(call.args, phone.isRegistered)
                    let token = try phone.token(instanceId, name: try Self.name(call.args))
                    let value = PowerAuthTokenHeader.value(tokenIdentifier: token.data.identifier, secret: token.data.secret,
                                                           nonce: SecureRandom.bytes(16),
                                                           timestampMilliseconds: status.synchronizedTime(instanceId), version: version)
                    call.succeed(["key": .string(PowerAuthTokenHeader.name), "value": .string(value)])
                } else if let watch = self.watch {
                    let instanceId = try self.registered(call.args, watch.isRegistered)
                    call.succeed(try self.header(instanceId, name: try Self.name(call.args), version: version, watch))
                }
            },
        ]
    }

    private var phoneOperations: [ControlOperation] {
        [
            phoneOp("pa.activation.create", "create an activation: the server's record and the client's keys and counter",
                    [Self.instance, .optional("commit", .bool)]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                try phone.requireNoActivation(instanceId)
                let record = try status.createActivation(instanceId, commit: try call.args.optionalBool("commit") ?? false)
                try phone.storeActivation(record.activationId, instanceId: instanceId)
                call.succeed(["activationId": .string(record.activationId), "state": .string(record.state.name)])
            },
            phoneOp("pa.activation.removeLocal", "removeActivationLocal: the activation, its tokens and counter; tells the watch lazily",
                    [Self.instance]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let removed = try phone.removeActivation(instanceId)
                try status.removeLocal(instanceId)
                let notified = self.manager?.sendLazily(try phone.statusPacket(instanceId)) ?? false
                call.succeed(["removed": .bool(removed), "watchNotified": .bool(notified)])
            },
            phoneOp("pa.status.sendToWatch", "sendActivationStatusToWatch: put_session to the watch", [Self.instance, Self.mode]) { call, phone, _ in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                self.send(try phone.statusPacket(instanceId), mode: try Self.mode(call.args), call.respond)
            },
            phoneOp("pa.token.create", "requestAccessToken: a token (created when missing)",
                    [Self.instance, Self.tokenName, Self.signatureType]) { call, phone, _ in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let (token, created) = try phone.createToken(instanceId, name: try Self.name(call.args),
                                                             factor: try Self.signatureType(call.args))
                call.succeed(["name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
                              "authenticationFactors": .int(Int64(token.data.authenticationFactors)),
                              "tokenSecret": .string(Data(token.data.secret).base64EncodedString()), "created": .bool(created)])
            },
            phoneOp("pa.token.sendToWatch", "token.sendToWatch: put_token to the watch", [Self.instance, Self.tokenName, Self.mode]) { call, phone, _ in
                let token = try phone.token(try self.registered(call.args, phone.isRegistered), name: try Self.name(call.args))
                self.send(PhonePowerAuth.putTokenPacket(token), mode: try Self.mode(call.args), call.respond)
            },
            phoneOp("pa.token.removeFromWatch", "token.removeFromWatch: remove_token to the watch",
                    [Self.instance, Self.tokenName, Self.mode]) { call, phone, _ in
                let token = try phone.token(try self.registered(call.args, phone.isRegistered), name: try Self.name(call.args))
                self.send(PhonePowerAuth.removeTokenPacket(token), mode: try Self.mode(call.args), call.respond)
            },
            phoneOp("pa.token.list", "the instance's tokens (no secrets)", [Self.instance]) { call, phone, _ in
                call.succeed(["tokens": .array(try phone.tokens(try self.registered(call.args, phone.isRegistered)).map(Self.tokenJSON))])
            },
            phoneOp("pa.status.fetch", "fetchActivationStatus from the emulated server, with the SDK's counter rules",
                    [Self.instance, .optional("raw", .bool, "add the request's challenge and the response's nonce and blob")]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let activationId = try phone.activationId(instanceId) else { throw StatusService.noActivation(instanceId) }
                try status.fetchStatus(instanceId, activationId: activationId, raw: try call.args.optionalBool("raw") ?? false,
                                       respond: call.respond)
            },
            phoneOp("pa.sign", "a PowerAuth signature of data; online ones go to the server",
                    [Self.instance, .required("online", .bool), .optional("data", .string), Self.signatureType,
                     .optional("componentLength", .integer(4...8), "digits of an offline component (default 8)")]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let activationId = try phone.activationId(instanceId) else { throw StatusService.noActivation(instanceId) }
                let online = try call.args.bool("online")
                let componentLength = try call.args.optionalInt("componentLength")
                if online, componentLength != nil { throw call.args.invalid("argument 'componentLength' applies to offline signatures only") }
                try status.sign(instanceId, activationId: activationId, online: online,
                                data: Array((try call.args.optionalString("data") ?? "").utf8),
                                factor: try Self.signatureType(call.args), componentLength: Int(componentLength ?? 8),
                                respond: call.respond)
            },
            phoneOp("pa.time.sync", "synchronizeTime: one sample of the server's time", [Self.instance]) { call, phone, status in
                status.synchronizeTime(try self.registered(call.args, phone.isRegistered), respond: call.respond)
            },
            phoneOp("pa.time.current", "the instance's synchronised time", [Self.instance]) { call, phone, status in
                call.succeed(status.currentTime(try self.registered(call.args, phone.isRegistered)))
            },
            phoneOp("pa.time.sendToWatch", "the time adjustment to the watch (a WatchLink extension)", [Self.instance, Self.mode]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let adjustment = status.timeAdjustment(instanceId) else {
                    throw PowerAuthError(code: PowerAuthError.wrongParameter,
                                         message: "instance '\(instanceId)' has no synchronised time (pa.time.sync first)").controlError
                }
                self.send(.timeAdjustment(adjustment, instanceId: instanceId), mode: try Self.mode(call.args), call.respond)
            },
        ]
    }

    private var watchOperations: [ControlOperation] {
        [
            watchOp("pa.status.update", "updateActivationStatus: get_session from the phone", [Self.instance, Self.mode]) { call, watch in
                try self.updateStatus(try self.registered(call.args, watch.isRegistered), mode: try Self.mode(call.args), watch, call.respond)
            },
            watchOp("pa.token.request", "requestAccessToken on the watch: the local token, else get_token from the phone",
                    [Self.instance, Self.tokenName]) { call, watch in
                try self.requestToken(try self.registered(call.args, watch.isRegistered), name: try Self.name(call.args), watch, call.respond)
            },
            watchOp("pa.token.local", "the watch's local tokens, or one of them", [Self.instance, .optional("name", .string)]) { call, watch in
                let instanceId = try self.registered(call.args, watch.isRegistered)
                guard let name = try call.args.optionalString("name") else {
                    return call.succeed(["tokens": .array(try watch.tokens(instanceId).map(Self.tokenJSON))])
                }
                guard let token = try watch.token(instanceId, name: name) else {
                    throw PowerAuthError(code: PowerAuthError.invalidToken, message: "no local token named '\(name)'").controlError
                }
                call.succeed(Self.tokenJSON(token).objectValue ?? [:])
            },
            watchOp("pa.token.remove", "removeLocalToken on the watch", [Self.instance, Self.tokenName]) { call, watch in
                let instanceId = try self.registered(call.args, watch.isRegistered)
                call.succeed(["removed": .bool(try watch.removeToken(instanceId, name: try Self.name(call.args)))])
            },
            watchOp("pa.token.removeAll", "removeAllLocalTokens on the watch", [Self.instance]) { call, watch in
                call.succeed(["removed": .int(Int64(try watch.removeAllTokens(try self.registered(call.args, watch.isRegistered))))])
            },
        ]
    }

    private var instances: InstanceRegistry? { phone?.instances ?? watch?.instances }
}
