#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkJSON
import PowerAuthServer

/// The requests the SDK sends to the other side and what it makes of their answers: shared by
/// the daemon's own sends (`pa.status.sendToWatch`, `pa.status.update`, `pa.token.request`) and
/// the answers an app's library brings back (`pa.packet.response`).
extension PowerAuthFeature {
    typealias Respond = (Result<JSONObject, ControlError>) -> Void

    /// Sends a packet lazily (`{"issued"}`) or with a response, whose answer ``applyResponse``
    /// reads.
    func send(
        _ packet: PowerAuthPacket, mode: String, instanceId: String, name: String? = nil,
        _ respond: @escaping Respond
    ) {
        guard let manager else { return }
        if mode == "lazy" {
            respond(.success(["issued": .bool(manager.sendLazily(packet))]))
            return
        }
        let command = Self.command(of: packet)
        manager.send(packet, expecting: PowerAuthResponse.Expected(request: command)) { [weak self] result in
            guard let self else { return }
            respond(result.flatMap { self.applyResponse($0, to: command, instanceId: instanceId, name: name) })
        }
    }

    /// The SDK command a request packet carries (`get_session`, `put_token`, `put_time`, ...).
    static func command(of packet: PowerAuthPacket) -> String {
        packet.activationCommand ?? packet.tokenCommand ?? packet.payload["timeCmd"]?.stringValue ?? ""
    }

    /// What the SDK does with the answer to a request of `command`, already read as a packet of
    /// the class it expects: a success for what the phone sends; the activation id the watch
    /// asked for, stored; the token the watch asked for, stored.
    func applyResponse(
        _ response: PowerAuthPacket, to command: String, instanceId: String,
        name: String?
    ) -> Result<JSONObject, ControlError> {
        switch command {
        case "get_session":
            guard let watch else { return .failure(Self.notOnThisSide(command)) }
            guard response.activationCommand == "put_session" else {
                return .failure(PowerAuthError.watchConnectivity("PowerAuthWatchSDK: Wrong status object received from iPhone.").controlError)
            }
            do {
                try watch.updateActivationId(response.activationId, instanceId: instanceId)
            } catch {
                return .failure(.control(.internalError, "cannot store the status: \(error)"))
            }
            return .success(Self.activationResult(response.activationId))
        case "get_token":
            guard let watch else { return .failure(Self.notOnThisSide(command)) }
            guard response.tokenCommand == "put_token" else {
                return .failure(PowerAuthError.watchConnectivity("PA2WatchRemoteTokenProvider: Wront command received.").controlError)
            }
            if response.tokenNotFound {
                return .failure(PowerAuthError(code: PowerAuthError.invalidToken, message: "Token not found on paired iPhone.").controlError)
            }
            guard let bytes = response.tokenData, var data = PowerAuthTokenData.deserialize(bytes) else {
                return .failure(PowerAuthError.watchConnectivity("PA2WatchRemoteTokenProvider: Wront token data received.").controlError)
            }
            if let name { data.name = name }
            let token = StoredToken(instanceId: instanceId, data: data)
            do { try watch.save(token) } catch {
                return .failure(.control(.internalError, "cannot store the token: \(error)"))
            }
            var json = Self.tokenJSON(token).objectValue ?? [:]
            json["source"] = "phone"
            return .success(json)
        default:
            return .success(["delivered": .bool(true)])
        }
    }

    static func notOnThisSide(_ command: String) -> ControlError {
        .control(.invalidArgument, "a '\(command)' request is not sent from this side")
    }

    // MARK: - Watch requests

    func updateStatus(_ instanceId: String, mode: String, _ respond: @escaping Respond) {
        send(
            .activationStatus("get_session", target: PowerAuthPacket.sessionTargetPrefix + instanceId), mode: mode,
            instanceId: instanceId, respond)
    }

    /// A local token when there is one, else one `get_token` message shared by every caller
    /// asking for the same name meanwhile.
    func requestToken(_ instanceId: String, name: String, _ watch: WatchPowerAuth, _ respond: @escaping Respond) throws {
        guard try watch.activationId(instanceId) != nil else {
            throw PowerAuthError(
                code: PowerAuthError.missingActivation,
                message: "instance '\(instanceId)' has no activation on the watch (pa.status.update first)"
            ).controlError
        }
        if let token = try watch.token(instanceId, name: name) {
            var result = Self.tokenJSON(token).objectValue ?? [:]
            result["source"] = "local"
            respond(.success(result))
            return
        }
        let key = instanceId + "\u{0}" + name
        if pendingTokenRequests[key] != nil {
            pendingTokenRequests[key]?.append(respond)
            return
        }
        pendingTokenRequests[key] = [respond]
        let request = PowerAuthPacket.token("get_token", name: name, target: PowerAuthPacket.tokenTargetPrefix + instanceId)
        send(request, mode: "completion", instanceId: instanceId, name: name) { [weak self] outcome in
            for waiting in self?.pendingTokenRequests.removeValue(forKey: key) ?? [] { waiting(outcome) }
        }
    }

    /// The watch's header for a token of its current activation, stamped with its local time
    /// plus the phone's time adjustment (WatchLink's `time:` extension), if it got one.
    func header(_ instanceId: String, name: String, version: String, _ watch: WatchPowerAuth) throws -> JSONObject {
        guard let token = try watch.token(instanceId, name: name) else {
            throw PowerAuthError(code: PowerAuthError.invalidToken, message: "no local token named '\(name)' (pa.token.request first)").controlError
        }
        // The watch's token store makes headers only for tokens of its current activation.
        let activationId = try watch.activationId(instanceId)
        guard let activationId, token.data.activationId == activationId else {
            throw PowerAuthError(
                code: PowerAuthError.missingActivation,
                message: "token '\(name)' does not belong to the watch's current activation; it cannot make a header"
            ).controlError
        }
        let milliseconds = deviceNow + (watch.timeAdjustments[instanceId] ?? 0)
        let value = PowerAuthTokenHeader.value(
            tokenIdentifier: token.data.identifier, secret: token.data.secret,
            nonce: SecureRandom.bytes(16), timestampMilliseconds: milliseconds, version: version)
        return ["key": .string(PowerAuthTokenHeader.name), "value": .string(value)]
    }
}

// MARK: - Phone requests

extension PowerAuthFeature {
    /// `canStartActivation`: neither an activation nor a pending one.
    func requireCanStartActivation(_ instanceId: String, _ phone: PhonePowerAuth) throws {
        if try phone.activationId(instanceId) != nil || pendingActivations[instanceId] != nil {
            throw Self.cannotStartActivation(instanceId)
        }
    }

    static func cannotStartActivation(_ instanceId: String) -> ControlError {
        PowerAuthError(
            code: PowerAuthError.invalidActivationState,
            message: "Invalid activation state: instance '\(instanceId)' already has an activation or a pending one; remove it first"
        ).controlError
    }

    /// What creating an activation answers: the id, the state the server gave the record, and
    /// the fingerprint the client computed (`PowerAuthActivationResult.activationFingerprint`).
    static func createdActivation(_ record: ServerActivation, _ client: ClientActivation) -> JSONObject {
        [
            "activationId": .string(client.activationId), "state": .string(record.state.name),
            "activationFingerprint": .string(client.activationFingerprint),
        ]
    }

    /// `requestAccessToken`: the local token when there is one (with other factors than asked
    /// for, the SDK's error), else one the server creates, shared by every caller asking for the
    /// same name meanwhile.
    func createToken(
        _ instanceId: String, name: String, factor: SignatureFactor, _ phone: PhonePowerAuth,
        _ status: StatusService, _ respond: @escaping Respond
    ) throws {
        if let local = try phone.localToken(instanceId, name: name) {
            guard local.data.authenticationFactors == factor.mask else {
                throw PowerAuthError(
                    code: PowerAuthError.wrongParameter,
                    message: "Different PowerAuthAuthentication used for the same token creation."
                ).controlError
            }
            respond(.success(Self.createdToken(local, created: false)))
            return
        }
        guard let activationId = try phone.activationId(instanceId) else {
            throw PowerAuthError(code: PowerAuthError.missingActivation, message: "Activation is no longer valid.").controlError
        }
        let key = instanceId + "\u{0}" + name
        if pendingTokenCreations[key] != nil {
            pendingTokenCreations[key]?.append(respond)
            return
        }
        pendingTokenCreations[key] = [respond]
        let finish: Respond = { [weak self] outcome in
            for waiting in self?.pendingTokenCreations.removeValue(forKey: key) ?? [] { waiting(outcome) }
        }
        do {
            try status.createToken(instanceId, activationId: activationId, factor: factor) { result in
                finish(
                    result.flatMap { created in
                        // The activation may have gone while the request was out.
                        guard (try? phone.activationId(instanceId)) == activationId else {
                            return .failure(PowerAuthError(code: PowerAuthError.missingActivation, message: "Activation is no longer valid.").controlError)
                        }
                        let token = StoredToken(
                            instanceId: instanceId,
                            data: PowerAuthTokenData(
                                name: name, identifier: created.tokenId, activationId: activationId,
                                authenticationFactors: factor.mask, secret: created.secret))
                        do { try phone.saveToken(token) } catch {
                            return .failure(.control(.internalError, "cannot store the token: \(error)"))
                        }
                        return .success(Self.createdToken(token, created: true))
                    })
            }
        } catch {
            finish(.failure(error as? ControlError ?? .control(.internalError, "\(error)")))
        }
    }

    /// A token as `pa.token.create` answers it: with its secret, which the SDK's token object holds.
    static func createdToken(_ token: StoredToken, created: Bool) -> JSONObject {
        [
            "name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
            "authenticationFactors": .int(Int64(token.data.authenticationFactors)),
            "tokenSecret": .string(Data(token.data.secret).base64EncodedString()), "created": .bool(created),
        ]
    }

    /// `removeAccessToken`: removed from the server (a request signed with possession), then
    /// locally; when the request fails the local token stays, as the SDK keeps it.
    func removeTokenFromServer(
        _ instanceId: String, name: String, _ phone: PhonePowerAuth, _ status: StatusService,
        _ respond: @escaping Respond
    ) throws {
        guard let token = try phone.localToken(instanceId, name: name) else {
            throw PowerAuthError(code: PowerAuthError.invalidToken, message: "Token not found").controlError
        }
        guard let activationId = try phone.activationId(instanceId) else {
            throw PowerAuthError(code: PowerAuthError.missingActivation, message: "Activation is no longer valid.").controlError
        }
        try status.removeToken(instanceId, activationId: activationId, tokenId: token.data.identifier) { result in
            respond(
                result.flatMap { removedOnServer in
                    do { try phone.removeToken(instanceId, name: name) } catch {
                        return .failure(.control(.internalError, "cannot remove the local token: \(error)"))
                    }
                    return .success(["removed": .bool(true), "removedOnServer": .bool(removedOnServer)])
                })
        }
    }
}
