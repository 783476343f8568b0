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

    /// Creates the server record and the client's signing state (the outcome of the key
    /// exchange): the same master secret and counter data on both sides, counter byte 0.
    func createActivation(_ instanceId: String, commit: Bool) throws -> ServerActivation {
        let record = try server.createActivation(committed: commit)
        try store.setClientCounter(
            ClientCounter(masterSecret: record.masterSecret, counterData: record.counterData, counterByte: 0),
            instanceId: instanceId)
        timeSynchronization[instanceId] = nil
        return record
    }

    /// `createActivation` as the SDK calls it: a request to the server, which creates the
    /// record (the key exchange's outcome); the client keeps it pending until it persists it
    /// (``persistActivation(_:instanceId:)``).
    func requestActivation(commit: Bool, respond: @escaping (Result<ServerActivation, ControlError>) -> Void) {
        request({ [server] in try server.createActivation(committed: commit) }) { result, _, _ in respond(result) }
    }

    /// `persistActivation`: the client's signing state of a record the server created.
    func persistActivation(_ record: ServerActivation, instanceId: String) throws {
        try store.setClientCounter(
            ClientCounter(masterSecret: record.masterSecret, counterData: record.counterData, counterByte: 0),
            instanceId: instanceId)
        timeSynchronization[instanceId] = nil
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
        let blob: StatusBlob
        do {
            blob = try StatusBlobCipher.decrypt(
                response.encryptedStatusBlob, transportKey: counter.keys.transport,
                challenge: challenge, nonce: response.nonce)
        } catch {
            throw PowerAuthError(code: 5, message: "the activation status is invalid: \(error)").controlError
        }
        let outcome = CounterSynchronization.synchronize(
            counterData: counter.counterData, counterByte: counter.counterByte,
            blob: blob, transportKey: counter.keys.transport)
        func finish(_ synchronization: String, counterState: String, deadlock: Bool = false) {
            var result = ClientActivationStatus(
                blob: blob, deadlock: deadlock, customObject: response.customObject,
                blockExpirationTime: response.blockExpiration
            ).json
            result["counterSynchronization"] = .string(synchronization)
            result["counterState"] = .string(counterState)
            respond(.success(result))
        }
        switch outcome {
        case .ok(.inSync):
            finish("inSync", counterState: "ok")
        case .ok(.clientAhead):
            finish("clientAhead", counterState: "ok")
        case .ok(.notChecked):
            finish("notChecked", counterState: "ok")
        case .invalid:
            finish("deadlock", counterState: "invalid", deadlock: true)
        case .updated(let counterData, let counterByte):
            let moved = counterData != counter.counterData
            counter.counterData = counterData
            counter.counterByte = counterByte
            try store.setClientCounter(counter, instanceId: instanceId)
            finish(moved ? "fastForwarded" : "inSync", counterState: "updated")
        case .calculateSignature:
            // isSignatureCalculationRecommended: only for an active activation.
            guard blob.state == .active else { finish("clientAhead", counterState: "calculateSignature"); return }
            // PA2GetActivationStatusTask: a possession signature for /pa/signature/validate,
            // which makes the server catch up; its failure is the status fetch's failure.
            let body = Array(#"{"requestObject":{"reason":"COUNTER_SYNCHRONIZATION"}}"#.utf8)
            let (signature, _) = counter.sign(body, factor: .possession, format: .base64)
            try store.setClientCounter(counter, instanceId: instanceId)
            request({ [server, serverNow] in
                try server.validate(activationId, signature: signature, factor: .possession, data: body, format: .base64, now: serverNow)
            }) { result, _, _ in
                switch result {
                case .failure(let error):
                    respond(.failure(error))
                case .success(let validation) where !validation.isValid:
                    respond(.failure(Self.refusedSignature()))
                case .success:
                    finish("synchronized", counterState: "calculateSignature")
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
            try server.validate(activationId, signature: signature, factor: factor, data: data, format: format, now: serverNow)
        }) { outcome, _, _ in
            switch outcome {
            case .failure(let error):
                respond(.failure(error))
            case .success(let validation):
                result["valid"] = .bool(validation.isValid)
                if let skipped = validation.skipped { result["skipped"] = .int(Int64(skipped)) }
                respond(.success(result))
            }
        }
    }

    // MARK: - Tokens

    /// `/pa/v3/token/create`: a request signed with the factors the token is for (the counter
    /// moves on whether or not it arrives); the server checks the signature and creates the
    /// token for an active activation.
    func createToken(
        _ instanceId: String, activationId: String, factor: SignatureFactor,
        respond: @escaping (Result<ServerToken, ControlError>) -> Void
    ) throws {
        let body = Array("/pa/token/create".utf8)
        let signature = try signRequest(instanceId, body, factor: factor)
        request({ [server, serverNow] in
            guard try server.validate(activationId, signature: signature, factor: factor, data: body, format: .base64, now: serverNow).isValid else {
                throw Self.refusedSignature()
            }
            return try server.createToken(for: activationId, signatureType: factor, now: serverNow)
        }) { result, _, _ in respond(result) }
    }

    /// `/pa/v3/token/remove`, signed with possession: `removed` is false when the server had no
    /// such token of this activation.
    func removeToken(
        _ instanceId: String, activationId: String, tokenId: String,
        respond: @escaping (Result<Bool, ControlError>) -> Void
    ) throws {
        let body = Array("/pa/token/remove".utf8)
        let signature = try signRequest(instanceId, body, factor: .possession)
        request({ [server, serverNow] in
            guard try server.validate(activationId, signature: signature, factor: .possession, data: body, format: .base64, now: serverNow).isValid else {
                throw Self.refusedSignature()
            }
            return try server.removeToken(tokenId, activationId: activationId)
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
