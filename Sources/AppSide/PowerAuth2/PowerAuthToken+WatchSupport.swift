import Foundation

/// Sending tokens to the watch, as the SDK's `PowerAuthToken (WatchSupport)`.
extension PowerAuthToken {
    /// Sends the token to the watch lazily (a message while reachable, else a userInfo); false
    /// when the session cannot carry it or the store has no valid activation any more.
    @discardableResult
    public func sendToWatch() -> Bool {
        guard tokenStore?.canRequestForAccessToken() == true else { return false }
        return PowerAuthWCSessionManager.sharedInstance.channel.requestLazily("put_token", instanceId: instanceId, name: tokenName)
    }

    /// Sends the token as a message the watch must answer; the watch must be reachable.
    /// `completion` runs on the main queue.
    public func sendToWatch(completion: @escaping (Error?) -> Void) {
        guard tokenStore?.canRequestForAccessToken() == true else {
            let error = PowerAuthErrorCode.missingActivation.error("Cannot send token to watch, because token store has no longer a valid activation.")
            DispatchQueue.main.asyncCompletion { completion(error) }
            return
        }
        PowerAuthWCSessionManager.sharedInstance.channel.request("put_token", instanceId: instanceId, name: tokenName) { result in
            completion(result.failure)
        }
    }

    /// Removes the token from the watch lazily; also after the activation is gone, for the
    /// app's cleanup. False when the session cannot carry it.
    @discardableResult
    public func removeFromWatch() -> Bool {
        PowerAuthWCSessionManager.sharedInstance.channel.requestLazily("remove_token", instanceId: instanceId, name: tokenName)
    }

    /// Removes the token from the watch with a message it must answer; the watch must be
    /// reachable. `completion` runs on the main queue.
    public func removeFromWatch(completion: @escaping (Error?) -> Void) {
        PowerAuthWCSessionManager.sharedInstance.channel.request("remove_token", instanceId: instanceId, name: tokenName) { result in
            completion(result.failure)
        }
    }
}

/// The iOS token store's header with synchronised time.
extension PowerAuthTokenStore {
    /// A header of the local token `name`, after synchronising the time with the server when it
    /// is not yet; `completion` runs on the main queue.
    @discardableResult
    public func generateAuthorizationHeader(
        withName name: String,
        completion: @escaping (PowerAuthAuthorizationHttpHeader?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        let task = CancellableTask()
        let finish: (PowerAuthAuthorizationHttpHeader?, Error?) -> Void = { header, error in
            DispatchQueue.main.asyncCompletion { if !task.isCancelled { completion(header, error) } }
        }
        guard !name.isEmpty else {
            finish(nil, PowerAuthErrorCode.wrongParameter.error("Missing required parameter"))
            return task
        }
        guard let token = localToken(withName: name) else {
            finish(nil, PowerAuthErrorCode.invalidToken.error("Token not found"))
            return task
        }
        let make = {
            guard let header = token.generateHeader() else {
                return finish(nil, PowerAuthErrorCode.invalidToken.error("Failed to generate authorization header"))
            }
            finish(header, nil)
        }
        let sdk = (token.tokenStore as? DeviceTokenStore)?.statusProvider as? PowerAuthSDK
        guard let service = sdk?.timeSynchronizationService, !service.isTimeSynchronized else {
            make()
            return task
        }
        service.synchronizeTime(
            callback: { error in
                if let error { return finish(nil, error) }
                DispatchQueue.global().asyncCompletion { make() }
            }, callbackQueue: .global())
        return task
    }
}
