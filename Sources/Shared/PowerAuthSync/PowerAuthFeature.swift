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

/// The PowerAuth SDK's watch synchronisation on one daemon (`pa.*` ops): the SDK state a device
/// keeps (activations, tokens, the watch's copy), and the SDK's packet handling. While the
/// daemon plays the app, its packets are routed here by the session; an app that is a process
/// hands them to its `PowerAuthWCSessionManager`, whose library brings them here
/// (`pa.packet.*`).
public final class PowerAuthFeature: DaemonFeature {
    let role: Role
    var context: FeatureContext?
    /// The device's wall clock in milliseconds since 1970 (its daemon's device clock).
    var deviceNow: Int64 { context?.loop.wallMilliseconds ?? Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    var store: PowerAuthStore?
    var manager: PowerAuthSessionManager?
    var phone: PhonePowerAuth?
    var watch: WatchPowerAuth?
    var status: StatusService?
    /// Watch: the callers waiting for one `get_token` message, by instance and name.
    var pendingTokenRequests: [String: [(Result<JSONObject, ControlError>) -> Void]] = [:]
    /// Phone: the callers waiting for one token to be created on the server, by instance and name.
    var pendingTokenCreations: [String: [(Result<JSONObject, ControlError>) -> Void]] = [:]
    /// Phone: activations created on the server and not persisted yet, as an SDK object holds
    /// them in memory: gone with the connection that created them.
    var pendingActivations: [String: PendingActivation] = [:]

    struct PendingActivation {
        var activation: ClientActivation
        var connection: UInt64?
    }

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
        store.writeFailed = context.stateWriteFailed
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
        for (_, waiting) in pendingTokenRequests.merging(pendingTokenCreations, uniquingKeysWith: +) {
            for respond in waiting { respond(.failure(.control(.shuttingDown, "the daemon is shutting down"))) }
        }
        pendingTokenRequests.removeAll()
        pendingTokenCreations.removeAll()
        status?.close()
        status = nil
        store?.close()
        store = nil
    }

    var instances: InstanceRegistry? { phone?.instances ?? watch?.instances }

    public func addStatus(to status: inout JSONObject) {
        let instances = (phone?.instances.ids ?? watch?.instances.ids ?? []).map { JSONValue.string($0) }
        status["powerAuth"] = .object([
            "messageDropped": .int(Int64(manager?.droppedCount ?? 0)),
            "instances": .array(instances),
        ])
    }

    /// A control connection closed: the SDK objects of its process are gone, and so are the
    /// activations they had created and not persisted.
    public func clientClosed(_ serial: UInt64) {
        instances?.connectionClosed(serial)
        pendingActivations = pendingActivations.filter { $0.value.connection != serial }
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
        .object([
            "name": .string(token.data.name), "tokenIdentifier": .string(token.data.identifier),
            "activationId": token.data.activationId.map { .string($0) } ?? .null,
            "authenticationFactors": .int(Int64(token.data.authenticationFactors)),
        ])
    }
}

/// A failure to start the PowerAuth feature.
struct PowerAuthStartupError: Error, CustomStringConvertible {
    var description: String
}
