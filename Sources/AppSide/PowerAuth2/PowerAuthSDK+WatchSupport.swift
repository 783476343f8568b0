import Dispatch
import Foundation

/// Sending the activation's status to the watch, as the SDK's `PowerAuthSDK (WatchSupport)`.
extension PowerAuthSDK {
    /// Sends whether the instance has an activation to the watch, lazily: a message while the
    /// watch is reachable, else a userInfo, which arrives when the system gets to it. False when
    /// the session cannot carry it (not activated, not paired, the watch app not installed).
    /// Without an activation it also removes the instance's tokens from the watch.
    @discardableResult
    public func sendActivationStatusToWatch() -> Bool {
        PowerAuthWCSessionManager.sharedInstance.channel.requestLazily("put_session", instanceId: sdkInstanceId)
    }

    /// Sends the status as a message the watch must answer; the watch must be reachable.
    /// `completion` runs on the main queue with nil, or the error (PowerAuth's
    /// `PowerAuthErrorCode.watchConnectivity`, or WatchConnectivity's of the send).
    public func sendActivationStatusToWatch(completion: @escaping (Error?) -> Void) {
        PowerAuthWCSessionManager.sharedInstance.channel.request("put_session", instanceId: sdkInstanceId) { result in
            completion(result.failure)
        }
    }
}

extension Result {
    /// The error, nil on success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
