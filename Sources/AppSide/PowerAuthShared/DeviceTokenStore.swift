import Dispatch
import Foundation
import LinkJSON

/// The token store of an SDK object, over the tokens the device keeps (`pa.token.*`): on the
/// phone the server creates them, on the watch the iPhone app hands them over
/// (``WatchPacketChannel``). Completions of asynchronous requests run on the main queue, as the
/// SDK's do; a local token is handed out synchronously.
package final class DeviceTokenStore: PowerAuthTokenStore, @unchecked Sendable {
    package enum Side { case phone, watch }

    private let side: Side
    private let instanceId: String
    private let device: PowerAuthDevice
    private let channel: WatchPacketChannel
    /// The SDK object the store belongs to, which says whether there is a valid activation.
    package weak var statusProvider: (any PowerAuthSessionStatusProvider)?
    private let lock = NSLock()
    /// Requests for a token not on the device yet, by name: one request serves every caller.
    private var waiting: [String: [(CancellableTask, (PowerAuthToken?, Error?) -> Void)]] = [:]

    package init(side: Side, instanceId: String, device: PowerAuthDevice, channel: WatchPacketChannel) {
        self.side = side
        self.instanceId = instanceId
        self.device = device
        self.channel = channel
    }

    private var instance: JSONObject { ["instanceId": .string(instanceId)] }

    private func args(_ name: String) -> JSONObject {
        ["instanceId": .string(instanceId), "name": .string(name)]
    }

    package func canRequestForAccessToken() -> Bool { statusProvider?.hasValidActivation() ?? false }

    // MARK: Requests

    @discardableResult
    package func requestAccessToken(
        withName name: String, authentication: PowerAuthAuthentication,
        completion: @escaping (PowerAuthToken?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        request(name, authentication: authentication, completion: completion)
    }

    @discardableResult
    package func requestAccessToken(withName name: String, completion: @escaping (PowerAuthToken?, Error?) -> Void) -> PowerAuthOperationTask? {
        guard side == .watch else {
            completion(nil, PowerAuthErrorCode.wrongParameter.error("Authentication object is missing."))
            return nil
        }
        return request(name, authentication: nil, completion: completion)
    }

    private func request(
        _ name: String, authentication: PowerAuthAuthentication?,
        completion: @escaping (PowerAuthToken?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        guard !name.isEmpty else {
            completion(nil, PowerAuthErrorCode.wrongParameter.error("Missing required parameter"))
            return nil
        }
        guard canRequestForAccessToken() else {
            completion(nil, PowerAuthErrorCode.missingActivation.error("Activation is no longer valid."))
            return nil
        }
        if let local = localTokenRecord(name) {
            if side == .phone, let authentication, local["authenticationFactors"]?.intValue != Self.mask(authentication) {
                completion(nil, PowerAuthErrorCode.wrongParameter.error("Different PowerAuthAuthentication used for the same token creation."))
                return nil
            }
            completion(token(from: local, name: name), nil)
            return nil
        }
        let task = CancellableTask()
        let first = lock.withLock { () -> Bool in
            waiting[name, default: []].append((task, completion))
            return waiting[name]?.count == 1
        }
        guard first else { return task }
        let finish: (Result<JSONObject, NSError>) -> Void = { [self] result in
            let callers = lock.withLock { waiting.removeValue(forKey: name) ?? [] }
            for (task, completion) in callers where !task.isCancelled {
                switch result {
                case .success(let record): completion(token(from: record, name: name), nil)
                case .failure(let error): completion(nil, error)
                }
            }
        }
        switch side {
        case .phone:
            var args = args(name)
            args["signatureType"] = .string((authentication ?? .possession()).signatureType)
            device.send("pa.token.create", args) { result in DispatchQueue.main.asyncCompletion { finish(result) } }
        case .watch:
            // From the iPhone app, which answers from its token store (the SDK's remote provider).
            channel.request("get_token", instanceId: instanceId, name: name, completion: finish)
        }
        return task
    }

    @discardableResult
    package func removeAccessToken(withName name: String, completion: @escaping (Bool, Error?) -> Void) -> PowerAuthOperationTask? {
        guard side == .phone else {
            completion(false, PowerAuthErrorCode.invalidToken.error("Removing token on iPhone is unsupported operation"))
            return nil
        }
        let task = CancellableTask()
        var args = args(name)
        args["server"] = true
        device.send("pa.token.remove", args) { result in
            DispatchQueue.main.asyncCompletion {
                guard !task.isCancelled else { return }
                switch result {
                case .success(let answer): completion(answer["removed"]?.boolValue ?? false, nil)
                case .failure(let error): completion(false, error)
                }
            }
        }
        return task
    }

    // MARK: Local tokens

    package func removeLocalToken(withName name: String) {
        if case .failure(let error) = device.call("pa.token.remove", args(name)) {
            device.log("removeLocalToken(withName: \(name)): \(error.localizedDescription)")
        }
    }

    package func removeAllLocalTokens() {
        if case .failure(let error) = device.call("pa.token.removeAll", instance) {
            device.log("removeAllLocalTokens(): \(error.localizedDescription)")
        }
    }

    package func hasLocalToken(withName name: String) -> Bool { localTokenRecord(name) != nil }

    package func localToken(withName name: String) -> PowerAuthToken? {
        localTokenRecord(name).map { token(from: $0, name: name) }
    }

    /// The device's record of a local token (no secret), nil when there is none.
    private func localTokenRecord(_ name: String) -> JSONObject? {
        switch device.call("pa.token.local", args(name)) {
        case .success(let record): return record
        case .failure(let error):
            if (error as NSError).powerAuthErrorCode != .invalidToken { device.log("localToken(withName: \(name)): \(error.localizedDescription)") }
            return nil
        }
    }

    private func token(from record: JSONObject, name: String) -> PowerAuthToken {
        PowerAuthToken(
            name: record["name"]?.stringValue ?? name, identifier: record["tokenIdentifier"]?.stringValue ?? "",
            instanceId: instanceId, store: self)
    }

    /// A header of `token`, made by the device with its secret and the synchronised time.
    package func header(for token: PowerAuthToken) -> PowerAuthAuthorizationHttpHeader? {
        switch device.call("pa.token.header", args(token.tokenName)) {
        case .success(let answer):
            return PowerAuthAuthorizationHttpHeader.tokenHeader(withValue: answer["value"]?.stringValue)
        case .failure(let error):
            device.log("generateHeader() of '\(token.tokenName)': \(error.localizedDescription)")
            return nil
        }
    }

    /// The SDK's factor mask of an authentication (possession 0x1, knowledge 0x10, biometry 0x100).
    private static func mask(_ authentication: PowerAuthAuthentication) -> Int64 {
        (authentication.usePossession ? 0x1 : 0) | (authentication.password != nil ? 0x10 : 0) | (authentication.useBiometry ? 0x100 : 0)
    }
}
