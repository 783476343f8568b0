#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PowerAuthServer
import WireProtocol

/// The phone side: `PowerAuthSDK` instances registered by id, each with a local activation and
/// its tokens, answering the watch's requests for registered instances only.
final class PhonePowerAuth: PacketHandler {
    private let store: PowerAuthStore
    private let manager: PowerAuthSessionManager
    let instances = InstanceRegistry()

    init(store: PowerAuthStore, manager: PowerAuthSessionManager) {
        self.store = store
        self.manager = manager
    }

    func isRegistered(_ instanceId: String) -> Bool { instances.contains(instanceId) }

    // MARK: - Activation and tokens

    func requireNoActivation(_ instanceId: String) throws {
        if try store.activationId(instanceId: instanceId) != nil {
            throw PowerAuthError(
                code: PowerAuthError.invalidActivationState,
                message: "instance '\(instanceId)' already has an activation; remove it first"
            ).controlError
        }
    }

    /// Stores the activation the server created for the instance.
    func storeActivation(_ activationId: String, instanceId: String) throws {
        try requireNoActivation(instanceId)
        try store.setActivationId(activationId, instanceId: instanceId, removingTokens: true)
    }

    /// Removes the activation and every token of the instance; returns whether there was one.
    func removeActivation(_ instanceId: String) throws -> Bool {
        let existed = try store.activationId(instanceId: instanceId) != nil
        try store.setActivationId(nil, instanceId: instanceId, removingTokens: true)
        return existed
    }

    func activationId(_ instanceId: String) throws -> String? {
        try store.activationId(instanceId: instanceId)
    }

    /// The local token named `name`, if any.
    func localToken(_ instanceId: String, name: String) throws -> StoredToken? {
        try store.token(instanceId: instanceId, name: name)
    }

    /// Keeps a token the server created for the instance's activation.
    func saveToken(_ token: StoredToken) throws { try store.saveToken(token) }

    @discardableResult
    func removeToken(_ instanceId: String, name: String) throws -> Bool { try store.removeToken(instanceId: instanceId, name: name) }

    func removeAllTokens(_ instanceId: String) throws -> Int { try store.removeAllTokens(instanceId: instanceId) }

    func token(_ instanceId: String, name: String) throws -> StoredToken {
        guard let token = try store.token(instanceId: instanceId, name: name) else {
            throw PowerAuthError(code: PowerAuthError.invalidToken, message: "instance '\(instanceId)' has no token named '\(name)'").controlError
        }
        return token
    }

    func tokens(_ instanceId: String) throws -> [StoredToken] { try store.tokens(instanceId: instanceId) }

    // MARK: - Packets to the watch

    func statusPacket(_ instanceId: String) throws -> PowerAuthPacket {
        .activationStatus(
            "put_session", activationId: try store.activationId(instanceId: instanceId),
            target: PowerAuthPacket.sessionTargetPrefix + instanceId)
    }

    static func putTokenPacket(_ token: StoredToken) -> PowerAuthPacket {
        .token(
            "put_token", name: token.data.name, tokenData: token.data.serialized(),
            target: PowerAuthPacket.tokenTargetPrefix + token.instanceId)
    }

    static func removeTokenPacket(_ token: StoredToken) -> PowerAuthPacket {
        .token("remove_token", name: token.data.name, target: PowerAuthPacket.tokenTargetPrefix + token.instanceId)
    }

    // MARK: - PacketHandler

    func outcome(for packet: PowerAuthPacket, withoutReply: Bool) -> Result<HandlerOutcome, DropReason> {
        let target = packet.target
        let isSession = target.hasPrefix(PowerAuthPacket.sessionTargetPrefix)
        let isToken = target.hasPrefix(PowerAuthPacket.tokenTargetPrefix)
        guard isSession || isToken else {
            return .failure(DropReason(reason: "unknownTarget", message: "no PowerAuthSDK instance serves target '\(target)'"))
        }
        let instanceId = String(target.dropFirst(isSession ? PowerAuthPacket.sessionTargetPrefix.count : PowerAuthPacket.tokenTargetPrefix.count))
        guard isRegistered(instanceId) else {
            return .failure(
                DropReason(
                    reason: "instanceNotRegistered",
                    message: "no PowerAuthSDK instance '\(instanceId)' is registered (register instances before session.activate)"))
        }
        do {
            return .success(
                try isSession
                    ? sessionOutcome(packet, instanceId, withoutReply: withoutReply)
                    : tokenOutcome(packet, instanceId))
        } catch {
            return .success(.refused("PowerAuthSDK: cannot read the local state: \(error)", code: PowerAuthError.watchConnectivity))
        }
    }

    private func sessionOutcome(_ packet: PowerAuthPacket, _ instanceId: String, withoutReply: Bool) throws -> HandlerOutcome {
        guard packet.hasValidActivationStatus else {
            return .refused("PowerAuthSDK+WatchSupport: Received packet has invalid data. Target: \(packet.target)", code: PowerAuthError.watchConnectivity)
        }
        guard packet.activationCommand == "get_session" else {
            return .refused(
                "PowerAuthSDK+WatchSupport: Unsupported command '\(packet.activationCommand ?? "")'. Target: \(packet.target)",
                code: PowerAuthError.watchConnectivity)
        }
        let activationId = try store.activationId(instanceId: instanceId)
        if withoutReply {
            return .answer(.activationStatus("put_session", activationId: activationId, target: packet.target), sendLazily: true)
        }
        return .answer(
            .activationStatus("put_session", activationId: activationId, target: PowerAuthPacket.responseTarget),
            sendLazily: false)
    }

    private func tokenOutcome(_ packet: PowerAuthPacket, _ instanceId: String) throws -> HandlerOutcome {
        guard packet.hasValidTokenPayload, let name = packet.tokenName else {
            return .refused("PowerAuthSDK+WatchSupport: Received packet has invalid data. Target: \(packet.target)", code: PowerAuthError.watchConnectivity)
        }
        guard packet.tokenCommand == "get_token" else {
            return .refused(
                "PowerAuthSDK+WatchSupport: Unsupported command '\(packet.tokenCommand ?? "")'. Target: \(packet.target)",
                code: PowerAuthError.watchConnectivity)
        }
        guard try store.activationId(instanceId: instanceId) != nil else {
            return .refused("Token for Watch cannot be obtained, because activation is no longer valid.", code: PowerAuthError.missingActivation)
        }
        if let token = try store.token(instanceId: instanceId, name: name) {
            return .answer(
                .token("put_token", name: name, tokenData: token.data.serialized(), target: PowerAuthPacket.responseTarget),
                sendLazily: false)
        }
        return .answer(.token("put_token", name: name, notFound: true, target: PowerAuthPacket.responseTarget), sendLazily: false)
    }
}
