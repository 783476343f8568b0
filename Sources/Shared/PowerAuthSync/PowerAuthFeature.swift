#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkDaemon
import LinkJSON
import LinkSession
import PowerAuthServer
import WireProtocol

/// The PowerAuth SDK's watch synchronisation on one daemon (`pa.*` ops). Its packets are
/// routed here by the session and never reach the app's own message handling.
public final class PowerAuthFeature: DaemonFeature {
    let role: Role
    var context: FeatureContext?
    var store: PowerAuthStore?
    var manager: PowerAuthSessionManager?
    var phone: PhonePowerAuth?
    var watch: WatchPowerAuth?
    var status: StatusService?
    /// Watch: the callers waiting for one `get_token` message, by instance and name.
    var pendingTokenRequests: [String: [(Result<JSONObject, ControlError>) -> Void]] = [:]

    public init(role: Role) {
        self.role = role
    }

    public func configureSession(_ configuration: inout LinkSession.Configuration) {
        configuration.isSystemMessage = { payload in
            guard case .data(let bytes) = payload else { return false }
            return PowerAuthPacket.isProcessed(bytes)
        }
        configuration.isSystemUserInfo = { encoded in
            guard let bytes = PowerAuthPacket.packetBytes(inUserInfo: encoded) else { return false }
            return PowerAuthPacket.isProcessed(bytes)
        }
    }

    public func start(_ context: FeatureContext) throws {
        self.context = context
        let path = context.stateDirectory + "/powerauth.db"
        let store: PowerAuthStore
        do { store = try PowerAuthStore(path: path) } catch {
            throw PowerAuthStartupError(description: "cannot open the PowerAuth store \(path): \(error)")
        }
        let manager = PowerAuthSessionManager(context: context)
        switch role {
        case .phone:
            let phone = PhonePowerAuth(store: store, manager: manager)
            manager.handler = phone
            self.phone = phone
            let serverPath = context.stateDirectory + "/powerauth-server.db"
            let serverStore: ServerStore
            do { serverStore = try ServerStore(path: serverPath) } catch {
                store.close()
                throw PowerAuthStartupError(description: "cannot open the PowerAuth server store \(serverPath): \(error)")
            }
            status = StatusService(store: store, serverStore: serverStore, loop: context.loop)
        case .watch:
            let watch = WatchPowerAuth(store: store, publish: context.publish)
            manager.handler = watch
            self.watch = watch
        }
        self.store = store
        self.manager = manager
    }

    public func stop() {
        for (_, waiting) in pendingTokenRequests {
            for respond in waiting { respond(.failure(.control(.shuttingDown, "the daemon is shutting down"))) }
        }
        pendingTokenRequests.removeAll()
        status?.close()
        status = nil
        store?.close()
        store = nil
    }

    public func addStatus(to status: inout JSONObject) {
        let instances = (phone?.instances.ids ?? watch?.instances.ids ?? []).map { JSONValue.string($0) }
        status["powerAuth"] = .object(["messageDropped": .int(Int64(manager?.droppedCount ?? 0)),
                                       "instances": .array(instances)])
    }

    public func observe(_ notification: SessionNotification) {
        guard let manager else { return }
        switch notification {
        case .systemMessageReceived(let replyId, .data(let bytes)):
            manager.processMessage(bytes, replyId: replyId)
        case .systemUserInfoReceived(_, let userInfo):
            manager.processUserInfo(userInfo)
        case .appStateDidChange(.foreground):
            status?.resetTimeSynchronization()
        default:
            break
        }
    }

    /// Sends a packet to the watch lazily (`{"issued"}`) or with a response (`{"delivered": true}`).
    func send(_ packet: PowerAuthPacket, mode: String, _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        guard let manager else { return }
        if mode == "lazy" {
            respond(.success(["issued": .bool(manager.sendLazily(packet))]))
            return
        }
        manager.send(packet) { result in
            switch result {
            case .success(let response) where response.successCode != nil:
                respond(.success(["delivered": .bool(true)]))
            case .success:
                respond(.failure(PowerAuthError.watchConnectivity("The watch answered with an unexpected packet.").controlError))
            case .failure(let error):
                respond(.failure(error))
            }
        }
    }

    // MARK: - Watch ops

    func updateStatus(_ instanceId: String, mode: String, _ watch: WatchPowerAuth,
                              _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        guard let manager else { return }
        let request = PowerAuthPacket.activationStatus("get_session", target: PowerAuthPacket.sessionTargetPrefix + instanceId)
        if mode == "lazy" {
            respond(.success(["issued": .bool(manager.sendLazily(request))]))
            return
        }
        manager.send(request) { result in
            switch result {
            case .success(let response) where response.hasValidActivationStatus && response.activationCommand == "put_session":
                do {
                    try watch.updateActivationId(response.activationId, instanceId: instanceId)
                    respond(.success(Self.activationResult(response.activationId)))
                } catch {
                    respond(.failure(.control(.internalError, "cannot store the status: \(error)")))
                }
            case .success:
                respond(.failure(PowerAuthError.watchConnectivity("PowerAuthWatchSDK: Wrong status object received from iPhone.").controlError))
            case .failure(let error):
                respond(.failure(error))
            }
        }
    }

    /// A local token when there is one, else one `get_token` message shared by every caller
    /// asking for the same name meanwhile.
    func requestToken(_ instanceId: String, name: String, _ watch: WatchPowerAuth,
                              _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        guard try watch.activationId(instanceId) != nil else {
            throw PowerAuthError(code: PowerAuthError.missingActivation,
                                 message: "instance '\(instanceId)' has no activation on the watch (pa.status.update first)").controlError
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
        manager?.send(request) { [weak self] result in
            guard let self else { return }
            let outcome = self.tokenOutcome(result, instanceId: instanceId, name: name, watch)
            for waiting in self.pendingTokenRequests.removeValue(forKey: key) ?? [] { waiting(outcome) }
        }
    }

    private func tokenOutcome(_ result: Result<PowerAuthPacket, ControlError>, instanceId: String, name: String,
                              _ watch: WatchPowerAuth) -> Result<JSONObject, ControlError> {
        switch result {
        case .failure(let error):
            return .failure(error)
        case .success(let response):
            guard response.tokenCommand == "put_token" else {
                return .failure(PowerAuthError.watchConnectivity("PA2WatchRemoteTokenProvider: Wrong command received.").controlError)
            }
            if response.tokenNotFound {
                return .failure(PowerAuthError(code: PowerAuthError.invalidToken, message: "Token not found on paired iPhone.").controlError)
            }
            guard let bytes = response.tokenData, let data = PowerAuthTokenData.deserialize(bytes) else {
                return .failure(PowerAuthError.watchConnectivity("PA2WatchRemoteTokenProvider: Wrong token data received.").controlError)
            }
            let token = StoredToken(instanceId: instanceId, data: data)
            do { try watch.save(token) } catch {
                return .failure(.control(.internalError, "cannot store the token: \(error)"))
            }
            var json = Self.tokenJSON(token).objectValue ?? [:]
            json["source"] = "phone"
            return .success(json)
        }
    }

    func header(_ instanceId: String, name: String, version: String, _ watch: WatchPowerAuth) throws -> JSONObject {
        guard let token = try watch.token(instanceId, name: name) else {
            throw PowerAuthError(code: PowerAuthError.invalidToken, message: "no local token named '\(name)' (pa.token.request first)").controlError
        }
        // The watch's token store makes headers only for tokens of its current activation.
        let activationId = try watch.activationId(instanceId)
        guard let activationId, token.data.activationId == activationId else {
            throw PowerAuthError(code: PowerAuthError.missingActivation,
                                 message: "token '\(name)' does not belong to the watch's current activation; it cannot make a header").controlError
        }
        let milliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) + (watch.timeAdjustments[instanceId] ?? 0)
        let value = PowerAuthTokenHeader.value(tokenIdentifier: token.data.identifier, secret: token.data.secret,
                                               nonce: SecureRandom.bytes(16), timestampMilliseconds: milliseconds, version: version)
        return ["key": .string(PowerAuthTokenHeader.name), "value": .string(value)]
    }

    static func checkVersion(_ version: String, _ args: Arguments) throws {
        guard PowerAuthTokenHeader.supportedVersions.contains(version) else {
            throw args.invalid("argument 'version' must be one of \(PowerAuthTokenHeader.supportedVersions.joined(separator: ", ")), got '\(version)'")
        }
    }

    // MARK: - Arguments

    static func activationId(_ args: Arguments) throws -> String {
        let id = try args.string("activationId")
        guard !id.isEmpty else { throw args.invalid("argument 'activationId' must not be empty") }
        return id
    }

    static func instanceId(_ args: Arguments) throws -> String {
        let id = try args.string("instanceId")
        guard !id.isEmpty else { throw args.invalid("argument 'instanceId' must not be empty") }
        return id
    }

    func registered(_ args: Arguments, _ isRegistered: (String) -> Bool) throws -> String {
        let id = try Self.instanceId(args)
        guard isRegistered(id) else {
            throw args.invalid("no instance '\(id)' is registered (pa.instance.add first)")
        }
        return id
    }

    static func name(_ args: Arguments) throws -> String {
        let name = try args.string("name")
        guard !name.isEmpty else { throw args.invalid("argument 'name' must not be empty") }
        return name
    }

    /// `signatureType`: the SDK's factor names; `possession` when absent.
    static func signatureType(_ args: Arguments) throws -> SignatureFactor {
        guard let name = try args.optionalString("signatureType") else { return .possession }
        guard let factor = SignatureFactor(rawValue: name) else {
            throw args.invalid("argument 'signatureType' must be one of \(SignatureFactor.allCases.map(\.rawValue).joined(separator: ", ")), got '\(name)'")
        }
        return factor
    }

    static func mode(_ args: Arguments) throws -> String {
        let mode = try args.optionalString("mode") ?? "lazy"
        guard mode == "lazy" || mode == "completion" else {
            throw args.invalid("argument 'mode' must be \"lazy\" or \"completion\", got '\(mode)'")
        }
        return mode
    }

    static func activationResult(_ activationId: String?) -> JSONObject {
        ["hasValidActivation": .bool(activationId != nil), "activationIdentifier": activationId.map { .string($0) } ?? .null]
    }

    /// A token without its secret.
    static func tokenJSON(_ token: StoredToken) -> JSONValue {
        .object(["name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
                 "activationId": token.data.activationId.map { .string($0) } ?? .null,
                 "authenticationFactors": .int(Int64(token.data.authenticationFactors))])
    }
}

/// A failure to start the PowerAuth feature.
struct PowerAuthStartupError: Error, CustomStringConvertible {
    var description: String
}
