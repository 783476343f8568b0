#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
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

    var localNow: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    var serverNow: Int64 { localNow + clockOffset }

    // MARK: - Settings

    func setNetwork(up: Bool?, latency: Int64?, failRate: Double?, tamper: Bool?) -> JSONObject {
        if let up { network.isUp = up }
        if let latency { network.latencyMilliseconds = latency }
        if let failRate { network.failRate = failRate }
        if let tamper { tampersStatus = tamper }
        return ["up": .bool(network.isUp), "latencyMs": .int(network.latencyMilliseconds),
                "failRate": .double(network.failRate), "tamper": .bool(tampersStatus)]
    }

    func setClock(offset: Int64?) -> JSONObject {
        if let offset { clockOffset = offset }
        return ["offsetMs": .int(clockOffset), "serverTime": .int(serverNow), "localTime": .int(localNow)]
    }

    // MARK: - Activation

    /// Creates the server record and the client's counter state (the outcome of the key exchange).
    func createActivation(_ instanceId: String, commit: Bool) throws -> ServerActivation {
        let record = try server.createActivation(committed: commit)
        try store.setClientCounter(ClientCounter(transportKey: record.transportKey, counterData: record.counterData),
                                   instanceId: instanceId)
        timeSynchronization[instanceId] = nil
        return record
    }

    func removeLocal(_ instanceId: String) throws {
        try store.setClientCounter(nil, instanceId: instanceId)
        timeSynchronization[instanceId] = nil
    }

    // MARK: - Network

    /// Sends a request to the server: the body runs at the server half a latency after it is
    /// sent, the answer arrives half a latency later. A request that the network loses is a
    /// network error; the server never sees it.
    private func request<T>(_ body: @escaping () throws -> T,
                            completion: @escaping (Result<T, ControlError>, _ sentAt: Int64, _ receivedAt: Int64) -> Void) {
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
        if milliseconds <= 0 { body() } else { _ = loop.schedule(afterMilliseconds: milliseconds, body) }
    }

    static func networkError(_ message: String) -> ControlError {
        PowerAuthError(code: 1, message: "Network error occurred: \(message).").controlError
    }

    static func serverError(_ error: ServerError) -> ControlError {
        switch error {
        case .unknownActivation, .invalidValue: return .control(.invalidArgument, error.description)
        case .invalidState: return PowerAuthError(code: PowerAuthError.invalidActivationState, message: error.description).controlError
        }
    }

    // MARK: - Status

    func fetchStatus(_ instanceId: String, activationId: String, respond: @escaping Respond) throws {
        guard try store.clientCounter(instanceId: instanceId) != nil else { throw Self.noActivation(instanceId) }
        let challenge = SecureRandom.bytes(16)
        request({ [server, serverNow] in try server.status(activationId, challenge: challenge, now: serverNow) }) { [weak self] result, sentAt, receivedAt in
            guard let self else { return }
            switch result {
            case .failure(let error):
                respond(.failure(error))
            case .success(var response):
                self.timeSynchronization[instanceId, default: TimeSynchronization()]
                    .processSample(serverTime: response.serverTime, sentAt: sentAt, receivedAt: receivedAt)
                if self.tampersStatus { response.encryptedStatusBlob[0] ^= 0x80 }
                do { try self.evaluate(response, instanceId: instanceId, activationId: activationId, challenge: challenge, respond: respond) } catch let error as ControlError {
                    respond(.failure(error))
                } catch {
                    respond(.failure(.control(.internalError, "pa.status.fetch: \(error)")))
                }
            }
        }
    }

    private func evaluate(_ response: EmulatedServer.StatusResponse, instanceId: String, activationId: String,
                          challenge: [UInt8], respond: @escaping Respond) throws {
        guard var counter = try store.clientCounter(instanceId: instanceId) else { throw Self.noActivation(instanceId) }
        let blob: StatusBlob
        do {
            blob = try StatusBlobCipher.decrypt(response.encryptedStatusBlob, transportKey: counter.transportKey,
                                                challenge: challenge, nonce: response.nonce)
        } catch {
            throw PowerAuthError(code: 5, message: "the activation status is invalid: \(error)").controlError
        }
        var comparison = CounterComparison.inSync
        if blob.state != .removed {
            comparison = CounterComparison.compare(counterData: counter.counterData, history: counter.history,
                                                   serverHash: blob.counterDataHash, lookAhead: Int(blob.lookAhead),
                                                   transportKey: counter.transportKey)
        }
        func finish(_ synchronization: String, deadlock: Bool = false) {
            var result = ClientActivationStatus(blob: blob, deadlock: deadlock, customObject: response.customObject,
                                                blockExpirationTime: response.blockExpiration).json
            result["counterSynchronization"] = .string(synchronization)
            respond(.success(result))
        }
        switch comparison {
        case .inSync:
            finish("inSync")
        case .clientAhead:
            finish("clientAhead")
        case .deadlock:
            finish("deadlock", deadlock: true)
        case .serverAhead(let distance, _):
            for _ in 0..<distance { counter.moveTo(HashCounter.next(counter.counterData), steps: 1) }
            try store.setClientCounter(counter, instanceId: instanceId)
            finish("fastForwarded")
        case .synchronizationNeeded:
            guard blob.state == .active else { finish("clientAhead"); return }
            let code = counter.sign(data: [])
            try store.setClientCounter(counter, instanceId: instanceId)
            request({ [server, serverNow] in try server.validate(activationId, code: code, data: [], now: serverNow) }) { result, _, _ in
                if case .success(let validation) = result, validation.isValid { finish("synchronized") } else { finish("clientAhead") }
            }
        }
    }

    // MARK: - Signing

    func sign(_ instanceId: String, activationId: String, online: Bool, data: [UInt8], respond: @escaping Respond) throws {
        guard var counter = try store.clientCounter(instanceId: instanceId) else { throw Self.noActivation(instanceId) }
        let code = counter.sign(data: data)
        try store.setClientCounter(counter, instanceId: instanceId)
        var result: JSONObject = ["code": .string(code), "counter": .int(counter.counter)]
        guard online else {
            respond(.success(result))
            return
        }
        request({ [server, serverNow] in try server.validate(activationId, code: code, data: data, now: serverNow) }) { outcome, _, _ in
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

    // MARK: - Time

    func synchronizeTime(_ instanceId: String, respond: @escaping Respond) {
        request({ [weak self] in self?.serverNow ?? 0 }) { [weak self] result, sentAt, receivedAt in
            guard let self else { return }
            switch result {
            case .failure(let error):
                respond(.failure(error))
            case .success(let serverTime):
                let outcome = self.timeSynchronization[instanceId, default: TimeSynchronization()]
                    .processSample(serverTime: serverTime, sentAt: sentAt, receivedAt: receivedAt)
                var json = self.currentTime(instanceId)
                json["roundTripMs"] = .int(receivedAt - sentAt)
                switch outcome {
                case .adjusted: json["outcome"] = "adjusted"
                case .kept: json["outcome"] = "kept"
                case .discarded: json["outcome"] = "discarded"
                }
                respond(.success(json))
            }
        }
    }

    /// The synchronised time of an instance (local time until a sample was taken).
    func synchronizedTime(_ instanceId: String) -> Int64 {
        (timeSynchronization[instanceId] ?? TimeSynchronization()).currentTime(localTime: localNow)
    }

    func timeAdjustment(_ instanceId: String) -> Int64? { timeSynchronization[instanceId]?.adjustment }

    func currentTime(_ instanceId: String) -> JSONObject {
        let sync = timeSynchronization[instanceId] ?? TimeSynchronization()
        return ["time": .int(sync.currentTime(localTime: localNow)), "isTimeSynchronized": .bool(sync.isSynchronized),
                "adjustmentMs": .int(sync.adjustment ?? 0)]
    }

    static func noActivation(_ instanceId: String) -> ControlError {
        PowerAuthError(code: PowerAuthError.missingActivation, message: "instance '\(instanceId)' has no activation").controlError
    }
}
