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
import WireProtocol

/// The `pa.*` ops: the SDK instances of both sides, the phone's activation, tokens, status and
/// time, the watch's requests. The emulated server's ops are in `PowerAuthServerOperations`.
extension PowerAuthFeature {
    static let instance: ControlOperation.Argument = .required("instanceId", .string, "a PowerAuthSDK instance registered with pa.instance.add")
    static let mode: ControlOperation.Argument = .optional("mode", .string, "lazy (default) or completion")
    static let tokenName: ControlOperation.Argument = .required("name", .string, "the token's name")
    static let signatureType: ControlOperation.Argument = .optional(
        "signatureType", .string,
        "possession (default), possession_knowledge, … as the SDK names them")

    public var operations: [ControlOperation] {
        instanceOperations + phoneOperations + watchOperations + serverOperations + packetOperations
    }

    /// An op answered by the phone's SDK instances and status service.
    func phoneOp(
        _ name: String, _ summary: String, _ arguments: [ControlOperation.Argument],
        _ body: @escaping (OperationCall, PhonePowerAuth, StatusService) throws -> Void
    ) -> ControlOperation {
        ControlOperation(name, sides: .phone, summary: summary, arguments: arguments) { [unowned self] call in
            guard let phone = self.phone, let status = self.status else {
                throw ControlError.control(.internalError, "\(call.op): PowerAuth is not started")
            }
            try body(call, phone, status)
        }
    }

    private func watchOp(
        _ name: String, _ summary: String, _ arguments: [ControlOperation.Argument],
        _ body: @escaping (OperationCall, WatchPowerAuth) throws -> Void
    ) -> ControlOperation {
        ControlOperation(name, sides: .watch, summary: summary, arguments: arguments) { [unowned self] call in
            guard let watch = self.watch else { throw ControlError.control(.internalError, "\(call.op): PowerAuth is not started") }
            try body(call, watch)
        }
    }

    private var instanceOperations: [ControlOperation] {
        [
            ControlOperation(
                "pa.instance.add", summary: "register a PowerAuthSDK instance (as an app creates its SDK objects at launch)",
                arguments: [
                    Self.instance,
                    .optional("whileConnected", .bool, "registered until this connection closes (an SDK object of an app process)"),
                ]
            ) { [unowned self] call in
                guard let instances = self.instances else { throw ControlError.control(.internalError, "PowerAuth is not started") }
                let connection = try call.args.optionalBool("whileConnected") == true ? call.clientSerial : nil
                let changed = instances.add(try Self.instanceId(call.args), connection: connection)
                call.succeed(["added": .bool(changed), "instances": .array(instances.ids.map { .string($0) })])
            },
            ControlOperation(
                "pa.instance.remove", summary: "forget a PowerAuthSDK instance",
                arguments: [Self.instance, .optional("whileConnected", .bool, "only this connection's registration")]
            ) { [unowned self] call in
                guard let instances = self.instances else { throw ControlError.control(.internalError, "PowerAuth is not started") }
                let instanceId = try Self.instanceId(call.args)
                let changed: Bool
                if try call.args.optionalBool("whileConnected") == true, let connection = call.clientSerial {
                    changed = instances.release(instanceId, connection: connection)
                } else {
                    changed = instances.remove(instanceId)
                }
                call.succeed(["removed": .bool(changed), "instances": .array(instances.ids.map { .string($0) })])
            },
            ControlOperation("pa.instance.list", summary: "the registered PowerAuthSDK instances") { [unowned self] call in
                call.succeed(["instances": .array((self.instances?.ids ?? []).map { .string($0) })])
            },
            ControlOperation(
                "pa.activation.get", summary: "hasValidActivation and activationIdentifier of an instance (the phone adds hasPendingActivation)",
                arguments: [Self.instance]
            ) { [unowned self] call in
                if let phone = self.phone {
                    let instanceId = try self.registered(call.args, phone.isRegistered)
                    let activationId = try phone.activationId(instanceId)
                    var result = Self.activationResult(activationId)
                    result["hasPendingActivation"] = .bool(self.pendingActivations[instanceId] != nil)
                    let fingerprint = try activationId.flatMap { try self.status?.activationFingerprint(instanceId, activationId: $0) }
                    result["activationFingerprint"] = fingerprint.map { .string($0) } ?? .null
                    call.succeed(result)
                } else if let watch = self.watch {
                    call.succeed(Self.activationResult(try watch.activationId(try self.registered(call.args, watch.isRegistered))))
                }
            },
            ControlOperation(
                "pa.token.header", summary: "the X-PowerAuth-Token header of a token, stamped with the synchronised time",
                arguments: [Self.instance, Self.tokenName, .optional("version", .string, "3.0, 3.1, 3.2 or 3.3 (default)")]
            ) { [unowned self] call in
                let version = try call.args.optionalString("version") ?? PowerAuthTokenHeader.sdkVersion
                try Self.checkVersion(version, call.args)
                if let phone = self.phone, let status = self.status {
                    let instanceId = try self.registered(call.args, phone.isRegistered)
                    let token = try phone.token(instanceId, name: try Self.name(call.args))
                    let value = PowerAuthTokenHeader.value(
                        tokenIdentifier: token.data.identifier, secret: token.data.secret,
                        nonce: SecureRandom.bytes(16),
                        timestampMilliseconds: status.synchronizedTime(instanceId), version: version)
                    call.succeed(["key": .string(PowerAuthTokenHeader.name), "value": .string(value)])
                } else if let watch = self.watch {
                    let instanceId = try self.registered(call.args, watch.isRegistered)
                    call.succeed(try self.header(instanceId, name: try Self.name(call.args), version: version, watch))
                }
            },
            ControlOperation(
                "pa.token.local", summary: "the local tokens of an instance, or one of them (no secrets)",
                arguments: [Self.instance, .optional("name", .string)]
            ) { [unowned self] call in
                let instanceId = try self.registered(call.args, { self.instances?.contains($0) ?? false })
                let name = try call.args.optionalString("name")
                let tokens = try self.phone.map { try $0.tokens(instanceId) } ?? self.watch.map { try $0.tokens(instanceId) } ?? []
                guard let name else { return call.succeed(["tokens": .array(tokens.map(Self.tokenJSON))]) }
                guard let token = tokens.first(where: { $0.data.name == name }) else {
                    throw PowerAuthError(code: PowerAuthError.invalidToken, message: "no local token named '\(name)'").controlError
                }
                call.succeed(Self.tokenJSON(token).objectValue ?? [:])
            },
            ControlOperation(
                "pa.token.remove", summary: "removeLocalToken; on the phone with \"server\": true, removeAccessToken (the server's first)",
                arguments: [
                    Self.instance, Self.tokenName,
                    .optional("server", .bool, "phone: remove it from the server first, then locally"),
                ]
            ) { [unowned self] call in
                let instanceId = try self.registered(call.args, { self.instances?.contains($0) ?? false })
                let name = try Self.name(call.args)
                if let watch = self.watch {
                    if try call.args.optionalBool("server") == true {
                        throw PowerAuthError(code: PowerAuthError.invalidToken, message: "Removing token on iPhone is unsupported operation").controlError
                    }
                    return call.succeed(["removed": .bool(try watch.removeToken(instanceId, name: name))])
                }
                guard let phone = self.phone, let status = self.status else { return }
                guard try call.args.optionalBool("server") == true else {
                    return call.succeed(["removed": .bool(try phone.removeToken(instanceId, name: name))])
                }
                try self.removeTokenFromServer(instanceId, name: name, phone, status, call.respond)
            },
            ControlOperation("pa.token.removeAll", summary: "removeAllLocalTokens", arguments: [Self.instance]) { [unowned self] call in
                let instanceId = try self.registered(call.args, { self.instances?.contains($0) ?? false })
                let removed = try self.phone.map { try $0.removeAllTokens(instanceId) } ?? self.watch.map { try $0.removeAllTokens(instanceId) } ?? 0
                call.succeed(["removed": .int(Int64(removed))])
            },
        ]
    }

    private var phoneOperations: [ControlOperation] {
        [
            phoneOp(
                "pa.activation.create", "create an activation: the server's record and the client's keys and counter",
                [
                    Self.instance, .optional("commit", .bool, "the server record starts active"),
                    .optional("pending", .bool, "as the SDK's createActivation: a request to the server; the activation waits for pa.activation.persist"),
                ]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                try self.requireCanStartActivation(instanceId, phone)
                let commit = try call.args.optionalBool("commit") ?? false
                guard try call.args.optionalBool("pending") == true else {
                    let (record, client) = try status.createActivation(instanceId, commit: commit)
                    try phone.storeActivation(client.activationId, instanceId: instanceId)
                    return call.succeed(Self.createdActivation(record, client))
                }
                let connection = call.clientSerial
                try status.requestActivation(commit: commit) { [weak self] result in
                    call.respond(
                        result.flatMap { record, client in
                            guard let self else { return .failure(.control(.shuttingDown, "the daemon is shutting down")) }
                            if self.pendingActivations[instanceId] != nil || (try? phone.activationId(instanceId)) != nil {
                                return .failure(Self.cannotStartActivation(instanceId))
                            }
                            self.pendingActivations[instanceId] = PendingActivation(activation: client, connection: connection)
                            var created = Self.createdActivation(record, client)
                            created["pending"] = .bool(true)
                            return .success(created)
                        })
                }
            },
            phoneOp("pa.activation.persist", "persistActivation: the pending activation becomes the instance's", [Self.instance]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let pending = self.pendingActivations[instanceId] else {
                    throw PowerAuthError(
                        code: PowerAuthError.invalidActivationState,
                        message:
                            "Invalid activation state: instance '\(instanceId)' has no pending activation (pa.activation.create with \"pending\": true first)"
                    ).controlError
                }
                try status.persistActivation(pending.activation, instanceId: instanceId)
                try phone.storeActivation(pending.activation.activationId, instanceId: instanceId)
                self.pendingActivations[instanceId] = nil
                call.succeed(["activationId": .string(pending.activation.activationId)])
            },
            phoneOp(
                "pa.activation.removeLocal", "removeActivationLocal: the activation, its tokens and counter (the watch is told only with notifyWatch)",
                [Self.instance, .optional("notifyWatch", .bool, "then send the status to the watch lazily, as an app does next")]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let removed = try phone.removeActivation(instanceId)
                try status.removeLocal(instanceId)
                self.pendingActivations[instanceId] = nil
                var result: JSONObject = ["removed": .bool(removed)]
                if try call.args.optionalBool("notifyWatch") == true {
                    result["watchNotified"] = .bool(self.manager?.sendLazily(try phone.statusPacket(instanceId)) ?? false)
                }
                call.succeed(result)
            },
            phoneOp(
                "pa.activation.remove", "removeActivation(with:): a signed request removes the activation on the server, then on the device",
                [
                    Self.instance,
                    .required("signatureType", .string, "possession_knowledge, possession_biometry or possession_knowledge_biometry (the endpoint's)"),
                ]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let factor = try Self.signatureType(call.args)
                guard let activationId = try phone.activationId(instanceId) else {
                    if self.pendingActivations[instanceId] != nil {
                        throw PowerAuthError(code: PowerAuthError.activationPending, message: "Pending activation").controlError
                    }
                    throw StatusService.noActivation(instanceId)
                }
                try status.removeActivation(instanceId, activationId: activationId, factor: factor) { [weak self] result in
                    call.respond(
                        result.flatMap {
                            // The SDK removes the local activation only after the server's OK, and
                            // only if it is still the one the request removed.
                            guard (try? phone.activationId(instanceId)) == activationId else { return .success(["removed": .bool(true)]) }
                            do {
                                _ = try phone.removeActivation(instanceId)
                                try status.removeLocal(instanceId)
                            } catch {
                                return .failure(.control(.internalError, "cannot remove the local activation: \(error)"))
                            }
                            self?.pendingActivations[instanceId] = nil
                            return .success(["removed": .bool(true)])
                        })
                }
            },
            phoneOp("pa.status.sendToWatch", "sendActivationStatusToWatch: put_session to the watch", [Self.instance, Self.mode]) { call, phone, _ in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                self.send(try phone.statusPacket(instanceId), mode: try Self.mode(call.args), instanceId: instanceId, call.respond)
            },
            phoneOp(
                "pa.token.create", "requestAccessToken: the local token, else one the server creates (a signed request)",
                [Self.instance, Self.tokenName, Self.signatureType]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                try self.createToken(
                    instanceId, name: try Self.name(call.args), factor: try Self.signatureType(call.args),
                    phone, status, call.respond)
            },
            phoneOp("pa.token.sendToWatch", "token.sendToWatch: put_token to the watch", [Self.instance, Self.tokenName, Self.mode]) { call, phone, _ in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let token = try phone.token(instanceId, name: try Self.name(call.args))
                self.send(PhonePowerAuth.putTokenPacket(token), mode: try Self.mode(call.args), instanceId: instanceId, call.respond)
            },
            phoneOp(
                "pa.token.removeFromWatch", "token.removeFromWatch: remove_token to the watch",
                [Self.instance, Self.tokenName, Self.mode]
            ) { call, phone, _ in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                let token = try phone.token(instanceId, name: try Self.name(call.args))
                self.send(PhonePowerAuth.removeTokenPacket(token), mode: try Self.mode(call.args), instanceId: instanceId, call.respond)
            },
            phoneOp("pa.token.list", "the instance's tokens (no secrets)", [Self.instance]) { call, phone, _ in
                call.succeed(["tokens": .array(try phone.tokens(try self.registered(call.args, phone.isRegistered)).map(Self.tokenJSON))])
            },
            phoneOp(
                "pa.status.fetch", "fetchActivationStatus from the emulated server, with the SDK's counter rules",
                [Self.instance, .optional("raw", .bool, "add the request's challenge and the response's nonce and blob")]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let activationId = try phone.activationId(instanceId) else {
                    if self.pendingActivations[instanceId] != nil {
                        throw PowerAuthError(code: PowerAuthError.activationPending, message: "Pending activation").controlError
                    }
                    throw StatusService.noActivation(instanceId)
                }
                try status.fetchStatus(
                    instanceId, activationId: activationId, raw: try call.args.optionalBool("raw") ?? false,
                    respond: call.respond)
            },
            phoneOp(
                "pa.sign", "a PowerAuth signature of data; online ones go to the server",
                [
                    Self.instance, .required("online", .bool), .optional("data", .string), Self.signatureType,
                    .optional("componentLength", .integer(4...8), "digits of an offline component (default 8)"),
                ]
            ) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let activationId = try phone.activationId(instanceId) else { throw StatusService.noActivation(instanceId) }
                let online = try call.args.bool("online")
                let componentLength = try call.args.optionalInt("componentLength")
                if online, componentLength != nil { throw call.args.invalid("argument 'componentLength' applies to offline signatures only") }
                try status.sign(
                    instanceId, activationId: activationId, online: online,
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
            phoneOp("pa.time.reset", "resetTimeSynchronization: the instance's time is no longer synchronised", [Self.instance]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                status.resetTimeSynchronization(instanceId)
                call.succeed(status.currentTime(instanceId))
            },
            phoneOp("pa.time.sendToWatch", "the time adjustment to the watch (a WatchLink extension)", [Self.instance, Self.mode]) { call, phone, status in
                let instanceId = try self.registered(call.args, phone.isRegistered)
                guard let adjustment = status.timeAdjustment(instanceId) else {
                    throw PowerAuthError(
                        code: PowerAuthError.wrongParameter,
                        message: "instance '\(instanceId)' has no synchronised time (pa.time.sync first)"
                    ).controlError
                }
                self.send(.timeAdjustment(adjustment, instanceId: instanceId), mode: try Self.mode(call.args), instanceId: instanceId, call.respond)
            },
        ]
    }

    private var watchOperations: [ControlOperation] {
        [
            watchOp("pa.status.update", "updateActivationStatus: get_session from the phone", [Self.instance, Self.mode]) { call, watch in
                self.updateStatus(try self.registered(call.args, watch.isRegistered), mode: try Self.mode(call.args), call.respond)
            },
            watchOp(
                "pa.token.request", "requestAccessToken on the watch: the local token, else get_token from the phone",
                [Self.instance, Self.tokenName]
            ) { call, watch in
                try self.requestToken(try self.registered(call.args, watch.isRegistered), name: try Self.name(call.args), watch, call.respond)
            },
        ]
    }
}
