import Foundation
import LinkJSON
import WatchLinkClient

/// The device's PushKit in this process: the registries, the token phoned gave, and the
/// events of the process's connection to phoned, dispatched to the registries' delegates.
///
/// State is under a lock; events and answers arrive on the connection's queue, in order, and
/// delegate methods run on each registry's queue.
final class PushKitSystem: Sendable {
    static let shared = PushKitSystem()
    static let framework = "PushKit"

    private struct WeakRegistry {
        weak var registry: PKPushRegistry?
    }

    private struct State {
        var registries: [ObjectIdentifier: WeakRegistry] = [:]
        var token: String?
        /// The types phoned registered, as it names them.
        var registered: Set<String> = []
    }

    private let state = Locked(State())

    func add(_ registry: PKPushRegistry) {
        state.withLock { state in
            state.registries = state.registries.filter { $0.value.registry != nil }
            state.registries[ObjectIdentifier(registry)] = WeakRegistry(registry: registry)
        }
    }

    private var registries: [PKPushRegistry] {
        state.withLock { $0.registries.values.compactMap(\.registry) }
    }

    func token(for type: PKPushType) -> Data? {
        state.withLock { state in
            guard let name = type.daemonName, state.registered.contains(name) else { return nil }
            return state.token.flatMap(Self.bytes(hex:))
        }
    }

    func forgetRegistration() {
        state.withLock { state in
            state.token = nil
            state.registered = []
        }
        for registry in registries { registry.state.withLock { $0.delivered = [:] } }
    }

    // MARK: Registering

    /// Registers the union of the registries' desired types with phoned.
    func desiredTypesChanged() {
        let desired = registries.reduce(into: Set<PKPushType>()) { $0.formUnion($1.desiredPushTypes ?? []) }
        for type in desired where type.daemonName == nil {
            warn("\(type.rawValue) is not a push type WatchLink emulates (fileProvider, voIP, complication); not registered")
        }
        let connection: SystemConnection
        switch SystemConnection.shared(framework: Self.framework) {
        case .success(let shared): connection = shared
        case .failure(let failure): return warn(failure.description)
        }
        connection.addEventHandler(key: Self.framework) { [self] event in handle(event, on: connection) }
        let names = desired.compactMap(\.daemonName).sorted()
        connection.client.send("push.register", ["types": .array(names.map(JSONValue.string))]) { [self] result in
            switch result {
            case .success(let answer):
                let token = answer["token"]?.stringValue
                let registered = Set(answer["types"]?.arrayValue?.compactMap(\.stringValue) ?? [])
                state.withLock { state in
                    state.token = token
                    state.registered = registered
                }
                guard let token else { return }
                for registry in registries { offer(token, for: registered.compactMap(PKPushType.init(daemonName:)), to: registry) }
            case .failure(let error):
                warn("cannot register \(names) with \(connection.location.socketPath): \(error)")
            }
        }
    }

    /// Gives `registry`'s delegate the token for each of `types` it desires and has not had.
    private func offer(_ token: String, for types: [PKPushType], to registry: PKPushRegistry) {
        guard let data = Self.bytes(hex: token) else { return warn("phoned sent a token that is not hex: \(token)") }
        for type in types {
            let isNew = registry.state.withLock { state -> Bool in
                guard state.desired?.contains(type) == true, state.delivered[type] != token, state.delegate != nil else { return false }
                state.delivered[type] = token
                return true
            }
            guard isNew else { continue }
            let credentials = PKPushCredentials(type: type, token: data)
            registry.queue.async { registry.delegate?.pushRegistry(registry, didUpdate: credentials, for: type) }
        }
    }

    // MARK: Events

    private func handle(_ event: WatchLinkEvent, on connection: SystemConnection) {
        guard let name = event.data["type"]?.stringValue, let type = PKPushType(daemonName: name) else { return }
        let desiring = registries.filter { $0.desiredPushTypes?.contains(type) == true }
        switch event.name {
        case "push.didUpdateCredentials":
            guard let token = event.data["token"]?.stringValue else { return }
            state.withLock { state in
                state.token = token
                state.registered.insert(name)
            }
            for registry in desiring { offer(token, for: [type], to: registry) }
        case "push.didInvalidateToken":
            state.withLock { state in
                if state.token == event.data["token"]?.stringValue { state.token = nil }
                state.registered.remove(name)
            }
            for registry in desiring {
                registry.state.withLock { $0.delivered[type] = nil }
                registry.queue.async { registry.delegate?.pushRegistry(registry, didInvalidatePushTokenFor: type) }
            }
        case "push.received":
            let payload = event.data["payload"] ?? .null
            // The push is handled once every delegate's completion handler ran: phoned learns it
            // (`push.complete`), and checks then that a VoIP push was reported to CallKit.
            let pending = Locked(desiring.count)
            let complete: @Sendable () -> Void = { [self] in
                let last = pending.withLock { count -> Bool in
                    count -= 1
                    return count == 0
                }
                guard last, let id = event.data["id"]?.intValue else { return }
                connection.client.send("push.complete", ["id": .int(id)]) { [self] result in
                    if case .failure(let error) = result { warn("cannot report push \(id) handled: \(error)") }
                }
            }
            if desiring.isEmpty { pending.withLock { $0 = 1 }; complete() }
            for registry in desiring {
                let pushPayload = PKPushPayload(type: type, payload: payload)
                let once = Locked(false)
                registry.queue.async {
                    registry.delegate?.pushRegistry(registry, didReceiveIncomingPushWith: pushPayload, for: type) {
                        guard
                            once.withLock({ called in
                                defer { called = true }; return !called
                            })
                        else { return }
                        complete()
                    }
                }
            }
        default:
            break
        }
    }

    // MARK: Helpers

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var data = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            data.append(byte)
        }
        return data
    }

    /// Writes a line to standard error: what a device would log to the console.
    func warn(_ text: String) {
        let line = text.hasPrefix(Self.framework) ? text : "\(Self.framework): \(text)"
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
