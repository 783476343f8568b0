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
    private let role: Role
    private var context: FeatureContext?
    private var store: PowerAuthStore?
    private var manager: PowerAuthSessionManager?
    private var phone: PhonePowerAuth?
    private var watch: WatchPowerAuth?
    private var status: StatusService?
    /// Watch: the callers waiting for one `get_token` message, by instance and name.
    private var pendingTokenRequests: [String: [(Result<JSONObject, ControlError>) -> Void]] = [:]

    public init(role: Role) {
        self.role = role
    }

    public var operations: [String] {
        switch role {
        case .phone:
            return ["pa.instance.add", "pa.instance.remove", "pa.instance.list", "pa.activation.create",
                    "pa.activation.removeLocal", "pa.activation.get", "pa.status.sendToWatch", "pa.token.create",
                    "pa.token.sendToWatch", "pa.token.removeFromWatch", "pa.token.list", "pa.token.header",
                    "pa.server.activation", "pa.server.set", "pa.server.get", "pa.server.secrets", "pa.server.clock", "pa.network.set",
                    "pa.status.fetch", "pa.sign", "pa.time.sync", "pa.time.current", "pa.time.sendToWatch"]
        case .watch:
            return ["pa.instance.add", "pa.instance.remove", "pa.instance.list", "pa.activation.get", "pa.status.update",
                    "pa.token.request", "pa.token.local", "pa.token.remove", "pa.token.removeAll", "pa.token.header"]
        }
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

    public func handle(_ request: ControlRequest, respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        let args = Arguments(request.args, op: request.op)
        do {
            if let instances = phone?.instances ?? watch?.instances,
               let result = try Self.handleInstanceOp(request.op, args, instances) { respond(.success(result)) }
            else if let phone, let status { try handlePhone(request.op, args, phone, status, respond) }
            else if let watch { try handleWatch(request.op, args, watch, respond) }
            else { respond(.failure(.control(.internalError, "\(request.op): PowerAuth is not started"))) }
        } catch let error as ControlError {
            respond(.failure(error))
        } catch {
            respond(.failure(.control(.internalError, "\(request.op): \(error)")))
        }
    }

    // MARK: - Ops of both roles

    /// `pa.instance.add`, `pa.instance.remove`, `pa.instance.list`; nil for any other op.
    private static func handleInstanceOp(_ op: String, _ args: Arguments, _ instances: InstanceRegistry) throws -> JSONObject? {
        switch op {
        case "pa.instance.add", "pa.instance.remove":
            try args.rejectUnknownKeys(allowed: ["instanceId"])
            let instanceId = try instanceId(args)
            let changed = op == "pa.instance.add" ? instances.add(instanceId) : instances.remove(instanceId)
            return [op == "pa.instance.add" ? "added" : "removed": .bool(changed),
                    "instances": .array(instances.ids.map { .string($0) })]
        case "pa.instance.list":
            try args.rejectUnknownKeys(allowed: [])
            return ["instances": .array(instances.ids.map { .string($0) })]
        default:
            return nil
        }
    }

    // MARK: - Phone ops

    private func handlePhone(_ op: String, _ args: Arguments, _ phone: PhonePowerAuth, _ status: StatusService,
                             _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        switch op {
        case "pa.activation.create":
            let instanceId = try registered(args, phone.isRegistered, extra: ["commit"])
            let commit = try args.optionalBool("commit") ?? false
            try phone.requireNoActivation(instanceId)
            let record = try status.createActivation(instanceId, commit: commit)
            try phone.storeActivation(record.activationId, instanceId: instanceId)
            respond(.success(["activationId": .string(record.activationId), "state": .string(record.state.name)]))
        case "pa.activation.removeLocal":
            let instanceId = try registered(args, phone.isRegistered)
            let removed = try phone.removeActivation(instanceId)
            try status.removeLocal(instanceId)
            let notified = manager?.sendLazily(try phone.statusPacket(instanceId)) ?? false
            respond(.success(["removed": .bool(removed), "watchNotified": .bool(notified)]))
        case "pa.token.header":
            let instanceId = try registered(args, phone.isRegistered, extra: ["name", "version"])
            let version = try args.optionalString("version") ?? PowerAuthTokenHeader.sdkVersion
            try Self.checkVersion(version)
            let token = try phone.token(instanceId, name: try Self.name(args))
            let value = PowerAuthTokenHeader.value(tokenIdentifier: token.data.identifier, secret: token.data.secret,
                                                   nonce: SecureRandom.bytes(16),
                                                   timestampMilliseconds: status.synchronizedTime(instanceId), version: version)
            respond(.success(["key": .string(PowerAuthTokenHeader.name), "value": .string(value)]))
        case "pa.server.activation", "pa.server.set", "pa.server.get", "pa.server.secrets", "pa.server.clock", "pa.network.set":
            try handleServer(op, args, status, respond)
        case "pa.status.fetch":
            let instanceId = try registered(args, phone.isRegistered, extra: ["raw"])
            guard let activationId = try phone.activationId(instanceId) else { throw StatusService.noActivation(instanceId) }
            try status.fetchStatus(instanceId, activationId: activationId, raw: try args.optionalBool("raw") ?? false, respond: respond)
        case "pa.sign":
            let instanceId = try registered(args, phone.isRegistered, extra: ["online", "data", "signatureType", "componentLength"])
            guard let activationId = try phone.activationId(instanceId) else { throw StatusService.noActivation(instanceId) }
            let online = try args.bool("online")
            let componentLength = try args.optionalInt("componentLength", range: 4...8)
            if online, componentLength != nil { throw args.invalid("argument 'componentLength' applies to offline signatures only") }
            try status.sign(instanceId, activationId: activationId, online: online,
                            data: Array((try args.optionalString("data") ?? "").utf8), factor: try Self.signatureType(args),
                            componentLength: Int(componentLength ?? 8), respond: respond)
        case "pa.time.sync":
            status.synchronizeTime(try registered(args, phone.isRegistered), respond: respond)
        case "pa.time.current":
            respond(.success(status.currentTime(try registered(args, phone.isRegistered))))
        case "pa.time.sendToWatch":
            let instanceId = try registered(args, phone.isRegistered, extra: ["mode"])
            guard let adjustment = status.timeAdjustment(instanceId) else {
                throw PowerAuthError(code: PowerAuthError.wrongParameter, message: "instance '\(instanceId)' has no synchronised time (pa.time.sync first)").controlError
            }
            send(.timeAdjustment(adjustment, instanceId: instanceId), mode: try Self.mode(args), respond)
        case "pa.activation.get":
            let instanceId = try registered(args, phone.isRegistered)
            respond(.success(Self.activationResult(try phone.activationId(instanceId))))
        case "pa.status.sendToWatch":
            let instanceId = try registered(args, phone.isRegistered, extra: ["mode"])
            send(try phone.statusPacket(instanceId), mode: try Self.mode(args), respond)
        case "pa.token.create":
            let instanceId = try registered(args, phone.isRegistered, extra: ["name", "signatureType"])
            let (token, created) = try phone.createToken(instanceId, name: try Self.name(args), factor: try Self.signatureType(args))
            respond(.success(["name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
                              "authenticationFactors": .int(Int64(token.data.authenticationFactors)),
                              "tokenSecret": .string(Data(token.data.secret).base64EncodedString()),
                              "created": .bool(created)]))
        case "pa.token.sendToWatch", "pa.token.removeFromWatch":
            let instanceId = try registered(args, phone.isRegistered, extra: ["name", "mode"])
            let token = try phone.token(instanceId, name: try Self.name(args))
            let packet = op == "pa.token.sendToWatch" ? PhonePowerAuth.putTokenPacket(token) : PhonePowerAuth.removeTokenPacket(token)
            send(packet, mode: try Self.mode(args), respond)
        case "pa.token.list":
            let instanceId = try registered(args, phone.isRegistered)
            respond(.success(["tokens": .array(try phone.tokens(instanceId).map(Self.tokenJSON))]))
        default:
            throw ControlError.control(.unknownOp, "unknown op '\(op)'")
        }
    }

    /// Sends a packet to the watch lazily (`{"issued"}`) or with a response (`{"delivered": true}`).
    private func send(_ packet: PowerAuthPacket, mode: String, _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
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

    private func handleWatch(_ op: String, _ args: Arguments, _ watch: WatchPowerAuth,
                             _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        switch op {
        case "pa.activation.get":
            let instanceId = try registered(args, watch.isRegistered)
            respond(.success(Self.activationResult(try watch.activationId(instanceId))))
        case "pa.status.update":
            let instanceId = try registered(args, watch.isRegistered, extra: ["mode"])
            try updateStatus(instanceId, mode: try Self.mode(args), watch, respond)
        case "pa.token.request":
            let instanceId = try registered(args, watch.isRegistered, extra: ["name"])
            try requestToken(instanceId, name: try Self.name(args), watch, respond)
        case "pa.token.local":
            let instanceId = try registered(args, watch.isRegistered, extra: ["name"])
            if let name = try args.optionalString("name") {
                guard let token = try watch.token(instanceId, name: name) else {
                    throw PowerAuthError(code: PowerAuthError.invalidToken, message: "no local token named '\(name)'").controlError
                }
                respond(.success(Self.tokenJSON(token).objectValue ?? [:]))
            } else {
                respond(.success(["tokens": .array(try watch.tokens(instanceId).map(Self.tokenJSON))]))
            }
        case "pa.token.remove":
            let instanceId = try registered(args, watch.isRegistered, extra: ["name"])
            respond(.success(["removed": .bool(try watch.removeToken(instanceId, name: try Self.name(args)))]))
        case "pa.token.removeAll":
            let instanceId = try registered(args, watch.isRegistered)
            respond(.success(["removed": .int(Int64(try watch.removeAllTokens(instanceId)))]))
        case "pa.token.header":
            let instanceId = try registered(args, watch.isRegistered, extra: ["name", "version"])
            let version = try args.optionalString("version") ?? PowerAuthTokenHeader.sdkVersion
            respond(.success(try header(instanceId, name: try Self.name(args), version: version, watch)))
        default:
            throw ControlError.control(.unknownOp, "unknown op '\(op)'")
        }
    }

    private func updateStatus(_ instanceId: String, mode: String, _ watch: WatchPowerAuth,
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
                    respond(.failure(.control(.internalError, "pa.status.update: cannot store the status: \(error)")))
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
    private func requestToken(_ instanceId: String, name: String, _ watch: WatchPowerAuth,
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
                return .failure(.control(.internalError, "pa.token.request: cannot store the token: \(error)"))
            }
            var json = Self.tokenJSON(token).objectValue ?? [:]
            json["source"] = "phone"
            return .success(json)
        }
    }

    private func header(_ instanceId: String, name: String, version: String, _ watch: WatchPowerAuth) throws -> JSONObject {
        try Self.checkVersion(version)
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

    private static func checkVersion(_ version: String) throws {
        guard PowerAuthTokenHeader.supportedVersions.contains(version) else {
            throw ControlError.control(.invalidArgument, "pa.token.header: argument 'version' must be one of \(PowerAuthTokenHeader.supportedVersions.joined(separator: ", ")), got '\(version)'")
        }
    }

    // MARK: - Server ops (phone)

    private func handleServer(_ op: String, _ args: Arguments, _ status: StatusService,
                              _ respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        let server = status.server
        do {
            switch op {
            case "pa.server.activation":
                try args.rejectUnknownKeys(allowed: ["activationId", "action", "durationMs", "count"])
                let id = try Self.activationId(args)
                let actionName = try args.string("action")
                let action: ServerAction
                switch actionName {
                case "commit": action = .commit
                case "block": action = .block
                case "unblock": action = .unblock
                case "remove": action = .remove
                case "failAttempt": action = .failAttempt
                case "succeedAttempt": action = .succeedAttempt
                case "temporaryBlock":
                    action = .temporaryBlock(until: status.serverNow + (try args.optionalInt("durationMs", range: 1...86_400_000) ?? 300_000))
                case "advanceCounter":
                    action = .advanceCounter(steps: Int(try args.optionalInt("count", range: 1...1000) ?? 1))
                default:
                    throw args.invalid("argument 'action' must be one of commit, block, unblock, remove, failAttempt, succeedAttempt, temporaryBlock, advanceCounter; got '\(actionName)'")
                }
                respond(.success(try server.apply(action, to: id, now: status.serverNow).json))
            case "pa.server.set":
                try args.rejectUnknownKeys(allowed: ["activationId", "maxFailCount", "customObject", "currentVersion", "upgradeVersion", "lookAhead"])
                let id = try Self.activationId(args)
                var customObject: JSONObject??
                if let value = args.value("customObject") {
                    if value.isNull { customObject = .some(nil) } else {
                        guard case .object(let object) = value else { throw args.invalid("argument 'customObject' must be an object or null") }
                        customObject = .some(object)
                    }
                }
                let record = try server.configure(id, maxFailCount: try args.optionalInt("maxFailCount", range: 1...255).map { Int($0) },
                                                  customObject: customObject,
                                                  currentVersion: try args.optionalInt("currentVersion", range: 2...3).map { Int($0) },
                                                  upgradeVersion: try args.optionalInt("upgradeVersion", range: 2...255).map { Int($0) },
                                                  lookAhead: try args.optionalInt("lookAhead", range: 1...64).map { Int($0) },
                                                  now: status.serverNow)
                respond(.success(record.json))
            case "pa.server.get":
                try args.rejectUnknownKeys(allowed: ["activationId"])
                if args.contains("activationId") {
                    respond(.success(try server.activation(try Self.activationId(args), now: status.serverNow).json))
                } else {
                    respond(.success(["activations": .array(try server.activations(now: status.serverNow).map { .object($0.json) })]))
                }
            case "pa.server.secrets":
                // Emulator-only: the keys a real server never hands out. Never logged.
                try args.rejectUnknownKeys(allowed: ["activationId"])
                let keys = try server.secrets(try Self.activationId(args), now: status.serverNow)
                respond(.success(["transportKey": .string(Data(keys.transport).base64EncodedString()),
                                  "signaturePossessionKey": .string(Data(keys.possession).base64EncodedString()),
                                  "signatureKnowledgeKey": .string(Data(keys.knowledge).base64EncodedString()),
                                  "signatureBiometryKey": .string(Data(keys.biometry).base64EncodedString())]))
            case "pa.server.clock":
                try args.rejectUnknownKeys(allowed: ["offsetMs"])
                respond(.success(status.setClock(offset: try args.optionalInt("offsetMs", range: -31_536_000_000...31_536_000_000))))
            case "pa.network.set":
                try args.rejectUnknownKeys(allowed: ["up", "latencyMs", "failRate", "tamper"])
                let failRate = try args.optionalDouble("failRate")
                if let failRate, !(0...1).contains(failRate) { throw args.invalid("argument 'failRate' must be in 0...1, got \(failRate)") }
                respond(.success(status.setNetwork(up: try args.optionalBool("up"),
                                                   latency: try args.optionalInt("latencyMs", range: 0...60_000),
                                                   failRate: failRate, tamper: try args.optionalBool("tamper"))))
            default:
                throw ControlError.control(.unknownOp, "unknown op '\(op)'")
            }
        } catch let error as ServerError {
            throw StatusService.serverError(error)
        }
    }

    private static func activationId(_ args: Arguments) throws -> String {
        let id = try args.string("activationId")
        guard !id.isEmpty else { throw args.invalid("argument 'activationId' must not be empty") }
        return id
    }

    // MARK: - Arguments

    private static func instanceId(_ args: Arguments) throws -> String {
        let id = try args.string("instanceId")
        guard !id.isEmpty else { throw args.invalid("argument 'instanceId' must not be empty") }
        return id
    }

    private func registered(_ args: Arguments, _ isRegistered: (String) -> Bool, extra: Set<String> = []) throws -> String {
        try args.rejectUnknownKeys(allowed: extra.union(["instanceId"]))
        let id = try Self.instanceId(args)
        guard isRegistered(id) else {
            throw args.invalid("no instance '\(id)' is registered (pa.instance.add first)")
        }
        return id
    }

    private static func name(_ args: Arguments) throws -> String {
        let name = try args.string("name")
        guard !name.isEmpty else { throw args.invalid("argument 'name' must not be empty") }
        return name
    }

    /// `signatureType`: the SDK's factor names; `possession` when absent.
    private static func signatureType(_ args: Arguments) throws -> SignatureFactor {
        guard let name = try args.optionalString("signatureType") else { return .possession }
        guard let factor = SignatureFactor(rawValue: name) else {
            throw args.invalid("argument 'signatureType' must be one of \(SignatureFactor.allCases.map(\.rawValue).joined(separator: ", ")), got '\(name)'")
        }
        return factor
    }

    private static func mode(_ args: Arguments) throws -> String {
        let mode = try args.optionalString("mode") ?? "lazy"
        guard mode == "lazy" || mode == "completion" else {
            throw args.invalid("argument 'mode' must be \"lazy\" or \"completion\", got '\(mode)'")
        }
        return mode
    }

    private static func activationResult(_ activationId: String?) -> JSONObject {
        ["hasValidActivation": .bool(activationId != nil), "activationIdentifier": activationId.map { .string($0) } ?? .null]
    }

    /// A token without its secret.
    private static func tokenJSON(_ token: StoredToken) -> JSONValue {
        .object(["name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
                 "activationId": token.data.activationId.map { .string($0) } ?? .null,
                 "authenticationFactors": .int(Int64(token.data.authenticationFactors))])
    }
}

/// A failure to start the PowerAuth feature.
struct PowerAuthStartupError: Error, CustomStringConvertible {
    var description: String
}
