#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkJSON
import LinkRuntime
import PowerAuthServer
import WireProtocol

/// The phone's side of the activation status: the emulated server run inside phoned, the
/// emulated network to it, and the SDK's client logic (status fetch, counter, signing, time).
final class StatusService {
    typealias Respond = (Result<JSONObject, ControlError>) -> Void

    private let store: PowerAuthStore
    private let serverStore: ServerStore
    let server: EmulatedServer
    private let loop: EventLoop
    private(set) var network = EmulatedNetwork()
    /// Every status blob in transit gets a byte flipped while set.
    private(set) var tampersStatus = false
    /// Server clock minus the phone's clock.
    private(set) var clockOffset: Int64 = 0
    private var timeSynchronization: [String: TimeSynchronization] = [:]

    init(store: PowerAuthStore, serverStore: ServerStore, loop: EventLoop) {
        self.store = store
        self.serverStore = serverStore
        self.server = EmulatedServer(store: serverStore)
        self.loop = loop
    }

    func close() { serverStore.close() }

    /// The phone's device clock (its wall clock, in milliseconds since 1970): the server's
    /// clock runs ``clockOffset`` ahead of it.
    var localNow: Int64 { loop.wallMilliseconds }
    var serverNow: Int64 { localNow + clockOffset }

    // MARK: - Settings

    func setNetwork(up: Bool?, latency: Int64?, failRate: Double?, tamper: Bool?) -> JSONObject {
        if let up { network.isUp = up }
        if let latency { network.latencyMilliseconds = latency }
        if let failRate { network.failRate = failRate }
        if let tamper { tampersStatus = tamper }
        return [
            "up": .bool(network.isUp), "latencyMs": .int(network.latencyMilliseconds),
            "failRate": .double(network.failRate), "tamper": .bool(tampersStatus),
        ]
    }

    func setClock(offset: Int64?) -> JSONObject {
        if let offset { clockOffset = offset }
        return ["offsetMs": .int(clockOffset), "serverTime": .int(serverNow), "localTime": .int(localNow)]
    }

    // MARK: - Activation

    /// The key exchange in one step: the client makes its key pair and sends its public key,
    /// the server makes the record (``EmulatedServer/prepareActivation(devicePublicKey:committed:)``),
    /// the client agrees the same master secret from the answer and keeps its signing state
    /// (counter byte 0).
    func createActivation(_ instanceId: String, commit: Bool) throws -> (record: ServerActivation, client: ClientActivation) {
        let deviceKey = try P256PrivateKey()
        let record = try server.prepareActivation(devicePublicKey: deviceKey.publicKey.compressedRepresentation, committed: commit)
        let client = try Self.answer(record, deviceKey: deviceKey)
        try persistActivation(client, instanceId: instanceId)
        return (record, client)
    }

    /// `createActivation` as the SDK calls it: the device's public key goes to the server over
    /// the emulated network, and the client validates the answer; the activation stays pending
    /// until the app persists it (``persistActivation(_:instanceId:)``).
    func requestActivation(
        commit: Bool, respond: @escaping (Result<(record: ServerActivation, client: ClientActivation), ControlError>) -> Void
    ) throws {
        let deviceKey = try P256PrivateKey()
        let devicePublicKey = deviceKey.publicKey.compressedRepresentation
        request({ [server] in try server.prepareActivation(devicePublicKey: devicePublicKey, committed: commit) }) { result, _, _ in
            respond(result.flatMap { record in Result { (record, try Self.answer(record, deviceKey: deviceKey)) }.mapError(Self.controlError) })
        }
    }

    /// What the client makes of the server's answer (`activationId`, `serverPublicKey`, `ctrData`).
    private static func answer(_ record: ServerActivation, deviceKey: P256PrivateKey) throws -> ClientActivation {
        guard let serverPublicKey = record.serverPublicKey else {
            throw ControlError.control(.internalError, "the server answered the key exchange without its public key")
        }
        return try ClientActivation(
            deviceKey: deviceKey, activationId: record.activationId, serverPublicKey: serverPublicKey,
            counterData: record.counterData)
    }

    private static func controlError(_ error: Error) -> ControlError {
        error as? ControlError ?? .control(.internalError, "\(error)")
    }

    /// `persistActivation`: the client's signing state of the activation it agreed.
    func persistActivation(_ activation: ClientActivation, instanceId: String) throws {
        try store.setClientCounter(activation.counter, instanceId: instanceId)
        timeSynchronization[instanceId] = nil
    }

    /// `activationFingerprint` of the instance's activation: nil without one, or for one kept
    /// before the key exchange.
    func activationFingerprint(_ instanceId: String, activationId: String) throws -> String? {
        try store.clientCounter(instanceId: instanceId)?.activationFingerprint(activationId: activationId)
    }

    func removeLocal(_ instanceId: String) throws {
        try store.setClientCounter(nil, instanceId: instanceId)
        timeSynchronization[instanceId] = nil
    }

    // MARK: - Network

    /// Sends a request to the server: the body runs at the server half a latency after it is
    /// sent, the answer arrives half a latency later. A request that the network loses is a
    /// network error; the server never sees it.
    private func request<T>(
        _ body: @escaping () throws -> T,
        completion: @escaping (Result<T, ControlError>, _ sentAt: Int64, _ receivedAt: Int64) -> Void
    ) {
        let sentAt = localNow
        guard network.isUp else {
            completion(.failure(Self.networkError("the network is down")), sentAt, localNow)
            return
        }
        let delivers = network.delivers(random: Double.random(in: 0..<1))
        let oneWay = network.latencyMilliseconds / 2
        after(oneWay) { [weak self] in
            guard let self else { return }
            guard delivers else {
                self.after(network.latencyMilliseconds - oneWay) {
                    completion(.failure(Self.networkError("the request failed on the network")), sentAt, self.localNow)
                }
                return
            }
            let result: Result<T, ControlError>
            do { result = .success(try body()) } catch let error as ServerError {
                result = .failure(Self.serverError(error))
            } catch let error as ControlError {
                result = .failure(error)
            } catch {
                result = .failure(.control(.internalError, "the server failed: \(error)"))
            }
            self.after(self.network.latencyMilliseconds - oneWay) { completion(result, sentAt, self.localNow) }
        }
    }

    private func after(_ milliseconds: Int64, _ body: @escaping () -> Void) {
        // The emulated network's latency is real time: a request does not wait for a manual clock.
        if milliseconds <= 0 { body() } else { _ = loop.schedule(afterMilliseconds: milliseconds, on: .realTime, body) }
    }

    static func networkError(_ message: String) -> ControlError {
        PowerAuthError(code: 1, message: "Network error occurred: \(message).").controlError
    }

    static func serverError(_ error: ServerError) -> ControlError {
        switch error {
        case .unknownActivation, .invalidValue: return .control(.invalidArgument, error.description)
        case .invalidState: return PowerAuthError(code: PowerAuthError.invalidActivationState, message: error.description).controlError
        case .rejected(let code, let name, _): return ControlError(domain: "PowerAuthServer", code: code, name: name, message: error.description)
        }
    }

    // MARK: - Status

    /// `fetchActivationStatus`: a status request with a random challenge; the answer is
    /// decrypted and the counter placed as `Session::decodeActivationStatus` does. The request
    /// synchronises time while the instance's time is not synchronised yet (the SDK's HTTP
    /// client does so for endpoints that need synchronised time). With `raw`, the request's
    /// and response's fields are added as the real endpoint carries them.
    func fetchStatus(_ instanceId: String, activationId: String, raw: Bool, respond: @escaping Respond) throws {
        guard try store.clientCounter(instanceId: instanceId) != nil else { throw Self.noActivation(instanceId) }
        let challenge = SecureRandom.bytes(16)
        request({ [server, serverNow] in try server.status(activationId, challenge: challenge, now: serverNow) }) { [weak self] result, sentAt, receivedAt in
            guard let self else { return }
            switch result {
            case .failure(let error):
                respond(.failure(error))
            case .success(var response):
                if !(self.timeSynchronization[instanceId]?.isSynchronized ?? false) {
                    self.timeSynchronization[instanceId, default: TimeSynchronization()]
                        .processSample(serverTime: response.serverTime, startedAt: sentAt, now: receivedAt)
                }
                if self.tampersStatus { response.encryptedStatusBlob[0] ^= 0x80 }
                var rawFields: JSONObject = [:]
                if raw {
                    rawFields = [
                        "challenge": .string(Data(challenge).base64EncodedString()),
                        "nonce": .string(Data(response.nonce).base64EncodedString()),
                        "encryptedStatusBlob": .string(Data(response.encryptedStatusBlob).base64EncodedString()),
                    ]
                }
                do {
                    try self.evaluate(response, instanceId: instanceId, activationId: activationId, challenge: challenge) { outcome in
                        respond(
                            outcome.map { status in
                                var status = status
                                for (key, value) in rawFields { status[key] = value }
                                return status
                            })
                    }
                } catch let error as ControlError {
                    respond(.failure(error))
                } catch {
                    respond(.failure(.control(.internalError, "the status could not be evaluated: \(error)")))
                }
            }
        }
    }

    private func evaluate(
        _ response: EmulatedServer.StatusResponse, instanceId: String, activationId: String,
        challenge: [UInt8], respond: @escaping Respond
    ) throws {
        guard var counter = try store.clientCounter(instanceId: instanceId) else { throw Self.noActivation(instanceId) }
        let decoded: DecodedActivationStatus
        do {
            decoded = try DecodedActivationStatus.decode(
                encryptedStatusBlob: response.encryptedStatusBlob, challenge: challenge, nonce: response.nonce,
                transportKey: counter.keys.transport, counterData: counter.counterData, counterByte: counter.counterByte)
        } catch {
            throw PowerAuthError(code: 5, message: "the activation status is invalid: \(error)").controlError
        }
        let blob = decoded.blob
        func finish(_ synchronization: String) {
            var result = ClientActivationStatus(
                blob: blob, deadlock: decoded.isDeadlock, customObject: response.customObject,
                blockExpirationTime: response.blockExpiration
            ).json
            result["counterSynchronization"] = .string(synchronization)
            result["counterState"] = .string(decoded.counterState)
            respond(.success(result))
        }
        switch decoded.outcome {
        case .ok(.inSync):
            finish("inSync")
        case .ok(.clientAhead):
            finish("clientAhead")
        case .ok(.notChecked):
            finish("notChecked")
        case .invalid:
            finish("deadlock")
        case .updated:
            let moved = decoded.counterData != counter.counterData
            counter.counterData = decoded.counterData
            counter.counterByte = decoded.counterByte
            try store.setClientCounter(counter, instanceId: instanceId)
            finish(moved ? "fastForwarded" : "inSync")
        case .calculateSignature:
            guard decoded.isSignatureCalculationRecommended else { finish("clientAhead"); return }
            // PA2GetActivationStatusTask: a possession signature for /pa/signature/validate,
            // which makes the server catch up; its failure is the status fetch's failure.
            let body = Array(#"{"requestObject":{"reason":"COUNTER_SYNCHRONIZATION"}}"#.utf8)
            let (signature, _) = counter.sign(body, factor: .possession, format: .base64)
            try store.setClientCounter(counter, instanceId: instanceId)
            request({ [server, serverNow] in
                try server.verifySignature(activationId, signature: signature, factor: .possession, data: body, format: .base64, now: serverNow)
            }) { result, _, _ in
                switch result {
                case .failure(let error):
                    respond(.failure(error))
                case .success(let verification) where !verification.signatureValid:
                    respond(.failure(Self.refusedSignature()))
                case .success:
                    finish("synchronized")
                }
            }
        }
    }

    // MARK: - Signing

    /// Computes a signature with the instance's keys and counter (which moves on whether or
    /// not the request arrives); online signatures go to the server for validation.
    func sign(
        _ instanceId: String, activationId: String, online: Bool, data: [UInt8], factor: SignatureFactor,
        componentLength: Int, respond: @escaping Respond
    ) throws {
        guard var counter = try store.clientCounter(instanceId: instanceId) else { throw Self.noActivation(instanceId) }
        let format: PowerAuthSignature.Format = online ? .base64 : .decimal(componentLength: componentLength)
        let (signature, used) = counter.sign(data, factor: factor, format: format)
        try store.setClientCounter(counter, instanceId: instanceId)
        var result: JSONObject = [
            "signature": .string(signature), "signatureType": .string(factor.rawValue),
            "counterData": .string(Data(used).base64EncodedString()),
        ]
        guard online else {
            respond(.success(result))
            return
        }
        request({ [server, serverNow] in
            try server.verifySignature(activationId, signature: signature, factor: factor, data: data, format: format, now: serverNow)
        }) { outcome, _, _ in
            switch outcome {
            case .failure(let error):
                respond(.failure(error))
            case .success(let verification):
                result["valid"] = .bool(verification.signatureValid)
                if let skipped = verification.skipped { result["skipped"] = .int(Int64(skipped)) }
                respond(.success(result))
            }
        }
    }

    // MARK: - Tokens

    /// `/pa/v3/token/create`: a request signed with the factors the token is for; the server
    /// creates the token for an active activation.
    func createToken(
        _ instanceId: String, activationId: String, factor: SignatureFactor,
        respond: @escaping (Result<ServerToken, ControlError>) -> Void
    ) throws {
        try signedRequest(instanceId, "/pa/token/create", activationId: activationId, factor: factor, respond: respond) { server, now in
            try server.createToken(for: activationId, signatureType: factor, now: now)
        }
    }

    /// `/pa/v3/token/remove`, signed with possession: `removed` is false when the server had no
    /// such token of this activation.
    func removeToken(
        _ instanceId: String, activationId: String, tokenId: String,
        respond: @escaping (Result<Bool, ControlError>) -> Void
    ) throws {
        try signedRequest(instanceId, "/pa/token/remove", activationId: activationId, factor: .possession, respond: respond) { server, _ in
            try server.removeToken(tokenId, activationId: activationId)
        }
    }

    /// The signature types `/pa/v3/activation/remove` accepts: the integration's default for
    /// `validateRequestSignature`, 2FA or 3FA (`PowerAuthAuthenticationProviderBase`).
    static let removalSignatureTypes: Set<SignatureFactor> = [.possessionKnowledge, .possessionBiometry, .possessionKnowledgeBiometry]

    /// `removeActivation(with:)`: `/pa/v3/activation/remove`, a request signed with `factor`.
    /// The integration refuses a type it does not accept before asking the server; the server
    /// verifies the signature (an active activation only) and removes the record.
    func removeActivation(
        _ instanceId: String, activationId: String, factor: SignatureFactor,
        respond: @escaping (Result<Void, ControlError>) -> Void
    ) throws {
        let admitted = Self.removalSignatureTypes.contains(factor)
        try signedRequest(
            instanceId, "/pa/activation/remove", activationId: activationId, factor: factor,
            refusal: admitted
                ? nil
                : PowerAuthError(
                    code: 1,
                    message:
                        "Network error occurred: the server refused the signature type '\(factor.rawValue)' (HTTP 401; /pa/v3/activation/remove takes 2FA or 3FA)."
                ).controlError,
            respond: respond
        ) { server, now in
            try server.apply(.remove, to: activationId, now: now)
        }
    }

    /// A request to an endpoint that takes an online signature: the client signs `path` with
    /// `factor` (the counter moves on whether or not the request arrives); on the server, a
    /// `refusal` of the integration's answers first, then the server verifies the signature and
    /// does `work` for a valid one only. A refused signature is the SDK's error 1 (HTTP 401).
    private func signedRequest<T>(
        _ instanceId: String, _ path: String, activationId: String, factor: SignatureFactor, refusal: ControlError? = nil,
        respond: @escaping (Result<T, ControlError>) -> Void,
        work: @escaping (_ server: EmulatedServer, _ now: Int64) throws -> T
    ) throws {
        let body = Array(path.utf8)
        let signature = try signRequest(instanceId, body, factor: factor)
        request({ [server, serverNow] in
            if let refusal { throw refusal }
            let verification = try server.verifySignature(
                activationId, signature: signature, factor: factor, data: body, format: .base64, now: serverNow)
            guard verification.signatureValid else { throw Self.refusedSignature() }
            return try work(server, serverNow)
        }) { result, _, _ in respond(result) }
    }

    /// An online signature of a request, the counter moved on and stored.
    private func signRequest(_ instanceId: String, _ body: [UInt8], factor: SignatureFactor) throws -> String {
        guard var counter = try store.clientCounter(instanceId: instanceId) else { throw Self.noActivation(instanceId) }
        let (signature, _) = counter.sign(body, factor: factor, format: .base64)
        try store.setClientCounter(counter, instanceId: instanceId)
        return signature
    }

    /// `validateToken` of the server, for a header value as an app's backend passes it on.
    func validateToken(_ headerValue: String) throws -> JSONObject {
        let fields: TokenHeaderFields
        do { fields = try TokenHeaderFields.parse(headerValue) } catch {
            throw ControlError.control(.invalidArgument, "the token header is refused (\(error.name)): \(error.message)")
        }
        let validation: EmulatedServer.TokenValidation
        do { validation = try server.validateToken(fields, now: serverNow) } catch let error as ServerError {
            throw Self.serverError(error)
        }
        var result: JSONObject = ["tokenValid": .bool(validation.tokenValid)]
        if let record = validation.activation {
            result["activationId"] = .string(record.activationId)
            result["activationStatus"] = .string(record.state.serverName)
        }
        if let type = validation.signatureType { result["signatureType"] = .string(type.serverName) }
        return result
    }

    // MARK: - Time

    /// `synchronizeTime`: one sample of the server's time; error 20 when the sample leaves the
    /// time unsynchronised (the request took over 16 s before the time was ever synchronised).
    func synchronizeTime(_ instanceId: String, respond: @escaping Respond) {
        request({ [weak self] in self?.serverNow ?? 0 }) { [weak self] result, sentAt, receivedAt in
            guard let self else { return }
            switch result {
            case .failure(let error):
                respond(.failure(error))
            case .success(let serverTime):
                let wasSynchronized = self.timeSynchronization[instanceId]?.isSynchronized ?? false
                let outcome = self.timeSynchronization[instanceId, default: TimeSynchronization()]
                    .processSample(serverTime: serverTime, startedAt: sentAt, now: receivedAt)
                guard outcome.succeeded(wasSynchronized: wasSynchronized) else {
                    respond(
                        .failure(
                            PowerAuthError(
                                code: PowerAuthError.timeSynchronization,
                                message: "the time could not be synchronised (the request took \(receivedAt - sentAt) ms)"
                            ).controlError))
                    return
                }
                var json = self.currentTime(instanceId)
                json["roundTripMs"] = .int(receivedAt - sentAt)
                switch outcome {
                case .synchronized: json["outcome"] = "synchronized"
                case .kept: json["outcome"] = "kept"
                case .adjusted: json["outcome"] = "adjusted"
                case .discarded: json["outcome"] = "discarded"
                case .failed: json["outcome"] = "failed"
                }
                respond(.success(json))
            }
        }
    }

    /// The app entered the foreground: every instance's time is no longer synchronised, as the
    /// SDK resets it on `UIApplicationWillEnterForegroundNotification`.
    func resetTimeSynchronization() {
        timeSynchronization.removeAll()
    }

    /// `resetTimeSynchronization` of one instance.
    func resetTimeSynchronization(_ instanceId: String) {
        timeSynchronization[instanceId] = nil
    }

    /// The synchronised time of an instance (local time until a sample set an adjustment).
    func synchronizedTime(_ instanceId: String) -> Int64 {
        (timeSynchronization[instanceId] ?? TimeSynchronization()).currentTime(localTime: localNow)
    }

    /// The adjustment of a synchronised instance; nil while not synchronised.
    func timeAdjustment(_ instanceId: String) -> Int64? {
        guard let sync = timeSynchronization[instanceId], sync.isSynchronized else { return nil }
        return sync.adjustment
    }

    func currentTime(_ instanceId: String) -> JSONObject {
        let sync = timeSynchronization[instanceId] ?? TimeSynchronization()
        return [
            "time": .int(sync.currentTime(localTime: localNow)), "isTimeSynchronized": .bool(sync.isSynchronized),
            "adjustmentMs": .int(sync.adjustment), "precisionMs": .int(sync.precision),
        ]
    }

    static func noActivation(_ instanceId: String) -> ControlError {
        PowerAuthError(code: PowerAuthError.missingActivation, message: "instance '\(instanceId)' has no activation").controlError
    }

    /// What the SDK reports when the server answers a signed request with 401.
    static func refusedSignature() -> ControlError {
        PowerAuthError(code: 1, message: "Network error occurred: the server refused the signature (HTTP 401).").controlError
    }
}
