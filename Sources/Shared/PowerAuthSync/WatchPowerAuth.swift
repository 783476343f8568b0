import LinkControl
import LinkJSON
import WireProtocol

/// The watch side: the SDK's always-available synchronisation service for every `session:` and
/// `token:` target, plus the `PowerAuthWatchSDK` instances the app created.
final class WatchPowerAuth: PacketHandler {
    private let store: PowerAuthStore
    private let publish: (String, JSONObject) -> Void
    let instances = InstanceRegistry()
    /// The phone's time adjustment of each instance (WatchLink's `time:` extension), in memory.
    private(set) var timeAdjustments: [String: Int64] = [:]

    init(store: PowerAuthStore, publish: @escaping (String, JSONObject) -> Void) {
        self.store = store
        self.publish = publish
    }

    func isRegistered(_ instanceId: String) -> Bool { instances.contains(instanceId) }

    func activationId(_ instanceId: String) throws -> String? { try store.activationId(instanceId: instanceId) }

    /// `updateActivationId:forSessionInstanceId:`: a new id is stored; no id, or another id than
    /// the stored one, removes all of the instance's tokens in the same transaction.
    func updateActivationId(_ activationId: String?, instanceId: String) throws {
        let current = try store.activationId(instanceId: instanceId)
        let removeTokens = activationId == nil || (current != nil && current != activationId)
        guard current != activationId || removeTokens else { return }
        let removed = try store.setActivationId(activationId, instanceId: instanceId, removingTokens: removeTokens)
        publish(
            "pa.activationDidChange",
            [
                "instanceId": .string(instanceId),
                "activationIdentifier": activationId.map { .string($0) } ?? .null,
                "tokensRemoved": .int(Int64(removed)),
            ])
    }

    func token(_ instanceId: String, name: String) throws -> StoredToken? { try store.token(instanceId: instanceId, name: name) }
    func tokens(_ instanceId: String) throws -> [StoredToken] { try store.tokens(instanceId: instanceId) }

    func save(_ token: StoredToken) throws {
        try store.saveToken(token)
        publish(
            "pa.tokenReceived",
            [
                "instanceId": .string(token.instanceId), "name": .string(token.data.name),
                "tokenIdentifier": .string(token.data.identifier),
            ])
    }

    @discardableResult
    func removeToken(_ instanceId: String, name: String) throws -> Bool {
        let removed = try store.removeToken(instanceId: instanceId, name: name)
        if removed { publish("pa.tokenRemoved", ["instanceId": .string(instanceId), "name": .string(name)]) }
        return removed
    }

    func removeAllTokens(_ instanceId: String) throws -> Int { try store.removeAllTokens(instanceId: instanceId) }

    // MARK: - PacketHandler

    func outcome(for packet: PowerAuthPacket, withoutReply: Bool) -> Result<HandlerOutcome, DropReason> {
        let target = packet.target
        do {
            if target.hasPrefix(PowerAuthPacket.sessionTargetPrefix) {
                return .success(try sessionOutcome(packet, String(target.dropFirst(PowerAuthPacket.sessionTargetPrefix.count))))
            }
            if target.hasPrefix(PowerAuthPacket.timeTargetPrefix) {
                return .success(timeOutcome(packet, String(target.dropFirst(PowerAuthPacket.timeTargetPrefix.count))))
            }
            if target.hasPrefix(PowerAuthPacket.tokenTargetPrefix) {
                return .success(try tokenOutcome(packet, String(target.dropFirst(PowerAuthPacket.tokenTargetPrefix.count))))
            }
        } catch {
            return .success(.refused("PA2WatchSynchronizationService: cannot store the change: \(error)", code: PowerAuthError.watchConnectivity))
        }
        return .failure(DropReason(reason: "unknownTarget", message: "the watch's service does not serve target '\(target)'"))
    }

    private func sessionOutcome(_ packet: PowerAuthPacket, _ instanceId: String) throws -> HandlerOutcome {
        guard packet.hasValidActivationStatus else {
            return .refused("PA2WatchSynchronizationService: Received status is invalid. Target: \(packet.target)", code: PowerAuthError.watchConnectivity)
        }
        guard !instanceId.isEmpty else {
            return .refused("PA2WatchSynchronizationService: Target doesn't contain session instance identifier.", code: PowerAuthError.watchConnectivity)
        }
        guard packet.activationCommand == "put_session" else {
            return .refused("PA2WatchSynchronizationService: Unsupported command '\(packet.activationCommand ?? "")'", code: PowerAuthError.watchConnectivity)
        }
        try updateActivationId(packet.activationId, instanceId: instanceId)
        return .answer(.success(), sendLazily: false)
    }

    private func timeOutcome(_ packet: PowerAuthPacket, _ instanceId: String) -> HandlerOutcome {
        guard !instanceId.isEmpty, packet.payload["timeCmd"]?.stringValue == "put_time",
            let adjustment = packet.payload["timeAdjustment"]?.intValue
        else {
            return .refused("WatchLink: Received time adjustment is invalid. Target: \(packet.target)", code: PowerAuthError.watchConnectivity)
        }
        timeAdjustments[instanceId] = adjustment
        publish("pa.timeAdjustmentReceived", ["instanceId": .string(instanceId), "adjustmentMs": .int(adjustment)])
        return .answer(.success(), sendLazily: false)
    }

    private func tokenOutcome(_ packet: PowerAuthPacket, _ instanceId: String) throws -> HandlerOutcome {
        guard packet.hasValidTokenPayload, let name = packet.tokenName else {
            return .refused("PA2WatchSynchronizationService: Received token data is invalid. Target: \(packet.target)", code: PowerAuthError.watchConnectivity)
        }
        guard !instanceId.isEmpty else {
            return .refused("PA2WatchSynchronizationService: Target doesn't contain token store instance identifier.", code: PowerAuthError.watchConnectivity)
        }
        switch packet.tokenCommand {
        case "put_token":
            guard let bytes = packet.tokenData, let data = PowerAuthTokenData.deserialize(bytes) else {
                return .refused("PA2WatchSynchronizationService: Token data deserialization failed.", code: PowerAuthError.watchConnectivity)
            }
            var stored = data
            stored.name = name
            try save(StoredToken(instanceId: instanceId, data: stored))
        case "remove_token":
            try removeToken(instanceId, name: name)
        default:
            return .refused("PA2WatchSynchronizationService: Unsupported command '\(packet.tokenCommand ?? "")'", code: PowerAuthError.watchConnectivity)
        }
        return .answer(.success(), sendLazily: false)
    }
}
