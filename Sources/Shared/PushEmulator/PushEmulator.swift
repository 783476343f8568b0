#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkJSON
import LinkRuntime
import WireProtocol

/// The emulated device's PushKit registry and the APNs that serves it: it answers provider
/// requests, delivers accepted pushes, and keeps its state in `push/state.json`.
///
/// Everything runs on the daemon's loop thread.
final class PushEmulator {
    let statePath: String
    let publish: (String, JSONObject) -> Void
    /// Reports the state file not written (``FeatureContext/stateWriteFailed``).
    let stateWriteFailed: (String, Error) -> Void
    let hasEventSubscribers: () -> Bool
    let logger: Logger
    private(set) var state: PushState {
        didSet {
            device = Self.registration(of: state)
            validator = Self.validator(state, device, apnsIds)
        }
    }
    /// The registration the endpoint checks tokens against, kept up to date with `state`.
    private(set) var device: DeviceRegistration
    /// The checks of a request, made for the current state (they hold it as bytes).
    private var validator: APNsRequestValidator
    /// Where generated `apns-id`s come from.
    private let apnsIds = APNsIdSource()
    let authenticator = ProviderAuthenticator()
    var faults = PushFaults()

    /// File Provider signals and unusable payloads.
    let signalLog = FileProviderSignalLog()
    /// Who gets what pushes bring: the app's processes, its extension (PushRecipients.swift).
    var recipients: PushRecipients?

    private(set) var requestCount = 0
    private(set) var acceptedCount = 0
    private(set) var rejectedCount = 0

    /// Runs `body` after a delay on the daemon's loop (nil in a unit test: at once).
    var schedule: ((Int64, @escaping () -> Void) -> Void)?
    /// Recent requests to each device token (ms), for `TooManyRequests`.
    private var recentRequests: [String: [Int64]] = [:]
    /// Pushes of priority 5 and 1 waiting to go out (``PushState/lowPriorityDelayMilliseconds``).
    private var heldLowPriority: [(push: APNsPush, at: Int64)] = []
    private var burstArmed = false
    private var expiryArmedFor: Int64?
    /// Set while phoned stops: requests are `503 Shutdown`.
    var isShuttingDown = false

    init(
        statePath: String, logger: Logger, publish: @escaping (String, JSONObject) -> Void,
        hasEventSubscribers: @escaping () -> Bool = { true },
        stateWriteFailed: @escaping (String, Error) -> Void = { _, _ in }
    ) throws {
        self.statePath = statePath
        self.stateWriteFailed = stateWriteFailed
        self.logger = logger
        self.publish = publish
        self.hasEventSubscribers = hasEventSubscribers
        let loaded = try PushState.load(statePath)
        state = loaded
        device = Self.registration(of: loaded)
        validator = Self.validator(loaded, device, apnsIds)
        authenticator.teamId = state.teamId
        authenticator.updateIntervalSeconds = state.tokenUpdateIntervalSeconds
        for (id, pem) in state.keys {
            do {
                authenticator.addKey(
                    id: id, try P256PublicKey(pem: pem),
                    environment: state.keyEnvironments[id].flatMap(APNsEnvironment.init(rawValue:)))
            } catch {
                logger.warning("push: ignoring provider key \(id) in \(statePath): \(error)")
            }
        }
    }

    /// The device's wall clock, in milliseconds since 1970: the phone's device clock (the
    /// daemon sets it), by which pushes expire and provider tokens age.
    var wallClock: () -> Int64 = PushEmulator.systemMilliseconds {
        didSet { signalLog.clock = wallClock }
    }

    static func systemMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    func save() throws {
        try save(state)
    }

    /// Writes `candidate` to the state file; a failure is reported (``stateWriteFailed``) and
    /// thrown as the control error that names the file.
    private func save(_ candidate: PushState) throws(ControlError) {
        do { try candidate.save(statePath) } catch {
            stateWriteFailed(statePath, error)
            throw .control(.internalError, "cannot write \(statePath): \(error)")
        }
    }

    var registeredTypes: [PushKitType] {
        state.types.compactMap(PushKitType.init(rawValue:)).sorted()
    }

    private static func validator(_ state: PushState, _ device: DeviceRegistration, _ ids: APNsIdSource) -> APNsRequestValidator {
        APNsRequestValidator(bundleId: state.bundleId, device: device, newApnsId: ids.next)
    }

    private static func registration(of state: PushState) -> DeviceRegistration {
        DeviceRegistration(
            token: state.token, types: Set(state.types.compactMap(PushKitType.init(rawValue:))),
            invalidated: state.invalidated, environment: state.environment, expired: Set(state.expiredTokens))
    }

    // MARK: PushKit

    /// `desiredPushTypes = types`: a token for each new type (the device's one token).
    func register(_ types: [PushKitType]) throws -> JSONObject {
        let previous = Set(registeredTypes)
        if state.token == nil, !types.isEmpty {
            state.token = SecureRandom.bytes(32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        state.types = Array(Set(types)).sorted().map(\.rawValue)
        try save()
        if let token = state.token {
            for type in types.sorted() where !previous.contains(type) {
                publish("push.didUpdateCredentials", ["type": .string(type.rawValue), "token": .string(token)])
            }
        }
        logger.info("push: registered for \(state.types.joined(separator: ", "))")
        return tokenResult()
    }

    func tokenResult() -> JSONObject {
        ["token": state.token.map(JSONValue.string) ?? .null, "types": .array(state.types.map(JSONValue.string))]
    }

    /// The token stops being valid: APNs answers it with 410 from now on, `Unregistered`, or
    /// `ExpiredToken` when it expired.
    func invalidate(expired: Bool = false) throws -> JSONObject {
        guard let token = state.token else {
            throw ControlError.control(.invalidArgument, "push.invalidate: there is no device token (call push.register first)")
        }
        let now = wallClock()
        let types = registeredTypes
        state.invalidated[token] = now
        if expired { state.expiredTokens.append(token) }
        state.token = nil
        state.types = []
        try save()
        for type in types {
            publish("push.didInvalidateToken", ["type": .string(type.rawValue), "token": .string(token)])
        }
        logger.info("push: invalidated token \(token.prefix(8))…")
        return ["token": .string(token), "invalidatedAt": .int(now), "reason": .string(expired ? "ExpiredToken" : "Unregistered")]
    }

    // MARK: APNs

    /// Answers one provider request, as APNs does, and delivers (or stores) what it accepts.
    /// - Parameters:
    ///   - credentials: how the request's connection authenticates, kept per connection.
    ///   - environment: the environment of the endpoint the connection reached.
    func handle(
        _ request: APNsRequest, credentials: inout ConnectionCredentials,
        environment: APNsEnvironment = .development
    ) -> APNsResponse {
        requestCount += 1
        func requestApnsId() -> String {
            request.value("apns-id").flatMap { APNsRequestValidator.isUUID($0) ? $0 : nil } ?? apnsIds.next()
        }
        if let forced = faults.takeRejection() {
            let response = APNsResponse(
                status: forced.status, apnsId: requestApnsId(), reason: forced.reason,
                timestamp: forced.status == 410 ? wallClock() : nil)
            rejected(response, injected: true)
            return response
        }
        if isShuttingDown || !state.serviceAvailable {
            let reason: APNsReason = isShuttingDown ? .shutdown : .serviceUnavailable
            let response = APNsResponse(status: reason.status, apnsId: requestApnsId(), reason: reason.rawValue)
            rejected(response, injected: false)
            return response
        }
        let now = wallClock()
        switch validator.validate(
            request, authenticator: authenticator, credentials: &credentials, environment: environment,
            now: now / 1000)
        {
        case .failure(let response):
            rejected(response, injected: false)
            return response
        case .success(let push):
            if let reason = admit(push, now: now) {
                let response = APNsResponse(status: reason.status, apnsId: push.apnsId, reason: reason.rawValue)
                rejected(response, injected: false)
                return response
            }
            acceptedCount += 1
            // "An identifier that is only available in the Development environment."
            return APNsResponse(status: 200, apnsId: push.apnsId, uniqueId: environment == .development ? apnsIds.next() : nil)
        }
    }

    /// What happens to a push that passed the checks: the device token's rate, then delivery
    /// while the device is online, the store while it is not. A reason when it is refused.
    private func admit(_ push: APNsPush, now: Int64) -> APNsReason? {
        if state.deviceTokenRateLimit > 0 {
            var recent = recentRequests[push.deviceToken, default: []]
            recent.removeAll { now - $0 >= 1000 }
            guard recent.count < Int(state.deviceTokenRateLimit) else {
                recentRequests[push.deviceToken] = recent
                return .tooManyRequests
            }
            recent.append(now)
            recentRequests[push.deviceToken] = recent
        }
        guard state.online else { return store(push, now: now) }
        route(push, now: now)
        return nil
    }

    // MARK: Store and forward

    /// Keeps a push for the offline device under Apple's rules (``APNsStore``); a store that
    /// cannot be written is APNs' `InternalServerError`, and the push is not accepted.
    private func store(_ push: APNsPush, now: Int64) -> APNsReason? {
        var next = state
        let outcome = next.store.store(push, bundleId: state.bundleId, now: now)
        switch outcome {
        case .notStored(let reason):
            logger.info("push: \(push.apnsId) not stored for the offline device (\(reason))")
            publish("push.dropped", ["apnsId": .string(push.apnsId), "topic": .string(push.topic), "reason": .string(reason)])
            return nil
        case .stored(let replaced):
            do { try save(next) } catch {
                logger.error("push: cannot store \(push.apnsId) for the offline device: \(error)")
                return .internalServerError
            }
            state = next
            if let replaced {
                publish(
                    "push.dropped",
                    [
                        "apnsId": .string(replaced.push.apnsId), "topic": .string(replaced.push.topic),
                        "reason": "replaced", "by": .string(push.apnsId),
                    ])
            }
            publish(
                "push.stored",
                [
                    "apnsId": .string(push.apnsId), "topic": .string(push.topic),
                    "expiresAt": .int(state.store.pushes.last?.expiresAt ?? now),
                ])
            armExpiry()
            return nil
        }
    }

    /// The pushes stored for the offline device.
    var storedJSON: JSONObject {
        ["online": .bool(state.online), "stored": .array(state.store.pushes.map { .object($0.json) })]
    }

    /// Takes the device off line (`false`: APNs stores) or back (the stored pushes go out, in
    /// the order they were accepted; the expired are dropped).
    func setOnline(_ online: Bool) throws -> JSONObject {
        let now = wallClock()
        guard online != state.online else { return storedJSON }
        if !online {
            // Pushes still waiting to go out were accepted: APNs now keeps them.
            let waiting = heldLowPriority
            heldLowPriority.removeAll()
            updateState { $0.online = false }
            for held in waiting { _ = store(held.push, now: now) }
            try save()
            return storedJSON
        }
        var next = state
        next.online = true
        let (ready, expired) = next.store.takeAll(now: now)
        try save(next)
        state = next
        for push in expired { dropExpired(push) }
        for stored in ready { deliver(stored.push, at: now, heldMilliseconds: now - stored.acceptedAt) }
        // The device is awake: what waited for it goes too.
        flushLowPriority(now: now, waking: true)
        return storedJSON
    }

    private func dropExpired(_ stored: StoredPush) {
        logger.info("push: \(stored.push.apnsId) expired in the store before the device came back")
        publish("push.dropped", ["apnsId": .string(stored.push.apnsId), "topic": .string(stored.push.topic), "reason": "expired"])
    }

    /// A timer for the next stored push's expiration, when there is one and none is armed for it.
    private func armExpiry() {
        guard let schedule, let next = state.store.nextExpiration, expiryArmedFor.map({ next < $0 }) ?? true else { return }
        expiryArmedFor = next
        schedule(max(0, next - wallClock())) { [weak self] in
            guard let self else { return }
            self.expiryArmedFor = nil
            var next = self.state
            let expired = next.store.expire(now: self.wallClock())
            if !expired.isEmpty {
                do {
                    try self.save(next)
                    self.state = next
                } catch {
                    self.logger.warning("push: the store after an expiration was not saved: \(error)")
                }
                for push in expired { self.dropExpired(push) }
            }
            self.armExpiry()
        }
    }

    // MARK: Priorities

    /// Priority 10 goes out at once and wakes the device; with a low-priority delay set, 5
    /// waits for the next burst and 1 for the device to wake.
    private func route(_ push: APNsPush, now: Int64) {
        let priority = push.priority ?? 10
        guard state.lowPriorityDelayMilliseconds > 0, priority != 10 else {
            deliver(push, at: now)
            if priority == 10 { flushLowPriority(now: now, waking: true) }
            return
        }
        heldLowPriority.append((push, now))
        guard priority == 5, !burstArmed else { return }
        guard let schedule else { return flushLowPriority(now: now, waking: false) }
        burstArmed = true
        schedule(state.lowPriorityDelayMilliseconds) { [weak self] in
            guard let self else { return }
            self.burstArmed = false
            self.flushLowPriority(now: self.wallClock(), waking: false)
        }
    }

    /// Delivers the held pushes of priority 5 (a burst), and those of priority 1 too when the
    /// device wakes.
    private func flushLowPriority(now: Int64, waking: Bool) {
        let ready = heldLowPriority.filter { waking || $0.push.priority == 5 }
        heldLowPriority.removeAll { waking || $0.push.priority == 5 }
        for held in ready { deliver(held.push, at: now, heldMilliseconds: now - held.at) }
    }

    private func rejected(_ response: APNsResponse, injected: Bool) {
        rejectedCount += 1
        logger.debug("push: \(response.status) \(response.reason ?? "") (apns-id \(response.apnsId))")
        guard hasEventSubscribers() else { return }
        publish(
            "push.rejected",
            [
                "status": .int(Int64(response.status)), "reason": .string(response.reason ?? ""),
                "apnsId": .string(response.apnsId), "injected": .bool(injected),
            ])
    }

    private func deliver(_ push: APNsPush, at now: Int64, heldMilliseconds: Int64? = nil) {
        guard let type = push.pushType.pushKitType else { return }
        if hasEventSubscribers() || recipients?.holdsFor(type) == true {
            var received: JSONObject = [
                "type": .string(type.rawValue), "pushType": .string(push.pushType.rawValue),
                "apnsId": .string(push.apnsId), "topic": .string(push.topic),
                "payload": Self.payloadJSON(push.payload),
            ]
            if let priority = push.priority { received["priority"] = .int(Int64(priority)) }
            if let collapseId = push.collapseId { received["collapseId"] = .string(collapseId) }
            if let heldMilliseconds { received["heldMs"] = .int(heldMilliseconds) }
            if let recipients { recipients.deliver(type, received) } else { publish("push.received", received) }
        }
        logger.debug("push: delivered \(push.pushType.rawValue) push \(push.apnsId)")
        guard type == .fileProvider else { return }
        let record = signalLog.add(
            source: .push, apnsId: push.apnsId, outcome: FileProviderSignal.interpret(push.payload),
            payload: push.payload, at: now)
        switch record.outcome {
        case .failure(let unusable):
            logger.warning("push: a fileprovider push (\(push.apnsId)) cannot be used: \(unusable.problem)")
        case .success(let signal):
            // "When the system receives the notification, it automatically calls the
            // signalEnumerator(for:completionHandler:) method": the extension runs for it.
            if let recipients, !recipients.hasExtension(for: signal.domain) { recipients.runExtension(for: signal.domain) }
        }
        if hasEventSubscribers() { publish(record.eventName, record.json) }
    }

    /// A payload as events show it: its JSON, or `{"$data": base64}` when it is not JSON.
    static func payloadJSON(_ bytes: [UInt8]) -> JSONValue {
        (try? JSON.parse(bytes)) ?? ["$data": .string(Data(bytes).base64EncodedString())]
    }
}

extension PushEmulator {
    /// Changes the kept state and applies it to the authenticator; call ``save()`` after.
    func updateState(_ change: (inout PushState) -> Void) {
        change(&state)
        authenticator.teamId = state.teamId
        authenticator.updateIntervalSeconds = state.tokenUpdateIntervalSeconds
    }
}
