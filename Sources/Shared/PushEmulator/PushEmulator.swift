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

    init(statePath: String, logger: Logger, publish: @escaping (String, JSONObject) -> Void,
         hasEventSubscribers: @escaping () -> Bool = { true }) throws {
        self.statePath = statePath
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
            do { authenticator.addKey(id: id, try P256PublicKey(pem: pem)) } catch {
                logger.warning("push: ignoring provider key \(id) in \(statePath): \(error)")
            }
        }
    }

    static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    func save() throws {
        do { try state.save(statePath) } catch {
            throw ControlError.control(.internalError, "cannot write \(statePath): \(error)")
        }
    }

    var registeredTypes: [PushKitType] {
        state.types.compactMap(PushKitType.init(rawValue:)).sorted()
    }

    private static func validator(_ state: PushState, _ device: DeviceRegistration, _ ids: APNsIdSource) -> APNsRequestValidator {
        APNsRequestValidator(bundleId: state.bundleId, device: device, newApnsId: ids.next)
    }

    private static func registration(of state: PushState) -> DeviceRegistration {
        DeviceRegistration(token: state.token, types: Set(state.types.compactMap(PushKitType.init(rawValue:))),
                           invalidated: state.invalidated)
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

    /// The token stops being valid: APNs answers it with 410 from now on.
    func invalidate() throws -> JSONObject {
        guard let token = state.token else {
            throw ControlError.control(.invalidArgument, "push.invalidate: there is no device token (call push.register first)")
        }
        let now = PushEmulator.nowMilliseconds
        let types = registeredTypes
        state.invalidated[token] = now
        state.token = nil
        state.types = []
        try save()
        for type in types {
            publish("push.didInvalidateToken", ["type": .string(type.rawValue), "token": .string(token)])
        }
        logger.info("push: invalidated token \(token.prefix(8))…")
        return ["token": .string(token), "invalidatedAt": .int(now)]
    }

    // MARK: APNs

    /// Answers one provider request, as APNs does, and delivers what it accepts.
    func handle(_ request: APNsRequest) -> APNsResponse {
        requestCount += 1
        if let forced = faults.takeRejection() {
            let apnsId = request.value("apns-id").flatMap { APNsRequestValidator.isUUID($0) ? $0 : nil } ?? apnsIds.next()
            let response = APNsResponse(status: forced.status, apnsId: apnsId, reason: forced.reason,
                                        timestamp: forced.status == 410 ? PushEmulator.nowMilliseconds : nil)
            rejected(response, injected: true)
            return response
        }
        let now = PushEmulator.nowMilliseconds
        switch validator.validate(request, authenticator: authenticator, now: now / 1000) {
        case .failure(let response):
            rejected(response, injected: false)
            return response
        case .success(let push):
            acceptedCount += 1
            deliver(push, at: now)
            return APNsResponse(status: 200, apnsId: push.apnsId)
        }
    }

    private func rejected(_ response: APNsResponse, injected: Bool) {
        rejectedCount += 1
        logger.debug("push: \(response.status) \(response.reason ?? "") (apns-id \(response.apnsId))")
        guard hasEventSubscribers() else { return }
        publish("push.rejected", ["status": .int(Int64(response.status)), "reason": .string(response.reason ?? ""),
                                  "apnsId": .string(response.apnsId), "injected": .bool(injected)])
    }

    private func deliver(_ push: APNsPush, at now: Int64) {
        guard let type = push.pushType.pushKitType else { return }
        if hasEventSubscribers() || recipients?.holdsFor(type) == true {
            var received: JSONObject = ["type": .string(type.rawValue), "pushType": .string(push.pushType.rawValue),
                                        "apnsId": .string(push.apnsId), "topic": .string(push.topic),
                                        "payload": Self.payloadJSON(push.payload)]
            if let priority = push.priority { received["priority"] = .int(Int64(priority)) }
            if let collapseId = push.collapseId { received["collapseId"] = .string(collapseId) }
            if let recipients { recipients.deliver(type, received) } else { publish("push.received", received) }
        }
        logger.debug("push: delivered \(push.pushType.rawValue) push \(push.apnsId)")
        guard type == .fileProvider else { return }
        let record = signalLog.add(source: .push, apnsId: push.apnsId, outcome: FileProviderSignal.interpret(push.payload),
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
