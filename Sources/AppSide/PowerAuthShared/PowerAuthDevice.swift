import Dispatch
import Foundation
import LinkJSON
import WatchLinkClient

/// What the PowerAuth SDK keeps on a device, beyond the app's process: the activation, the
/// tokens, the watch's copy of both. WatchLink's daemon of this side keeps them (`pa.*` ops), so
/// an app killed and launched again finds them, and a test sees and drives the same state over
/// the control socket. The SDK's objects ask it for every fact they report; nothing is cached
/// in the process but what the SDK itself keeps in memory.
///
/// Calls go over the emulated system's connection of this process (shared with PushKit and the
/// others). Synchronous calls are for the SDK's synchronous methods; they are never made on
/// that connection's queue, which the answer needs.
package final class PowerAuthDevice: @unchecked Sendable {
    /// Who asks, for errors and logs: `PowerAuth2` or `PowerAuth2ForWatch`.
    package let framework: String
    private let lock = NSLock()
    /// The instances of this process's SDK objects, counted: registered with the daemon while
    /// one lives (`pa.instance.add {"whileConnected": true}`).
    private var liveInstances: [String: Int] = [:]
    /// The connection the live instances are registered on; another one registers them again.
    private var registeredOn: ObjectIdentifier?

    package init(framework: String) {
        self.framework = framework
    }

    // MARK: Calls

    /// Calls `op` and waits for its answer.
    package func call(_ op: String, _ args: JSONObject = [:], timeoutSeconds: Double = 30) -> Result<JSONObject, NSError> {
        let connection: SystemConnection
        switch self.connection() {
        case .success(let shared): connection = shared
        case .failure(let error): return .failure(error)
        }
        return Self.wait(connection.client, op, args, timeoutSeconds: timeoutSeconds).mapError(nsError)
    }

    /// Calls `op`; `completion` gets the answer on the connection's queue (hop off it before a
    /// synchronous call).
    package func send(_ op: String, _ args: JSONObject = [:], completion: @escaping (Result<JSONObject, NSError>) -> Void) {
        let completion = UncheckedSendable(completion)
        switch connection() {
        case .success(let connection):
            connection.client.send(op, args) { [self] result in completion.value(result.mapError(nsError)) }
        case .failure(let error):
            completion.value(.failure(error))
        }
    }

    /// A fact the SDK answers synchronously: the answer, or `fallback` with the reason logged
    /// (a device whose daemon is gone has no activation to report).
    package func fact<T>(_ op: String, _ args: JSONObject, fallback: T, _ read: (JSONObject) -> T?) -> T {
        switch call(op, args) {
        case .success(let answer):
            return read(answer) ?? fallback
        case .failure(let error):
            log("\(op): \(error.localizedDescription)")
            return fallback
        }
    }

    // MARK: SDK objects

    /// An SDK object for `instanceId` exists in this process (its designated initializer).
    package func register(_ instanceId: String) {
        let first = lock.withLock { () -> Bool in
            liveInstances[instanceId, default: 0] += 1
            return liveInstances[instanceId] == 1
        }
        guard first, case .success(let connection) = connection() else { return }
        if case .failure(let error) = Self.wait(
            connection.client, "pa.instance.add",
            ["instanceId": .string(instanceId), "whileConnected": true], timeoutSeconds: 30)
        {
            log("cannot register instance '\(instanceId)': \(error)")
        }
    }

    /// The last SDK object for `instanceId` in this process is gone.
    package func release(_ instanceId: String) {
        let last = lock.withLock { () -> Bool in
            guard let count = liveInstances[instanceId] else { return false }
            liveInstances[instanceId] = count > 1 ? count - 1 : nil
            return count == 1
        }
        guard last, case .success(let connection) = connection() else { return }
        connection.client.send("pa.instance.remove", ["instanceId": .string(instanceId), "whileConnected": true]) { _ in }
    }

    /// The ids of this process's live SDK objects.
    package var instances: [String] { lock.withLock { Array(liveInstances.keys).sorted() } }

    // MARK: Helpers

    /// The process's connection; one made anew (the daemon restarted) gets the live instances
    /// registered again first, as the process's SDK objects still exist.
    private func connection() -> Result<SystemConnection, NSError> {
        let connection: SystemConnection
        switch SystemConnection.shared(framework: framework) {
        case .success(let shared): connection = shared
        case .failure(let failure): return .failure(PowerAuthErrorCode.wrongParameter.error(failure.description))
        }
        let identity = ObjectIdentifier(connection)
        let toRegister = lock.withLock { () -> [String]? in
            guard registeredOn != identity else { return nil }
            registeredOn = identity
            return Array(liveInstances.keys)
        }
        for instanceId in toRegister ?? [] {
            _ = Self.wait(
                connection.client, "pa.instance.add", ["instanceId": .string(instanceId), "whileConnected": true],
                timeoutSeconds: 30)
        }
        return .success(connection)
    }

    private static func wait(
        _ client: WatchLinkClient, _ op: String, _ args: JSONObject,
        timeoutSeconds: Double
    ) -> Result<JSONObject, WatchLinkError> {
        client.callAndWait(op, args, timeoutSeconds: timeoutSeconds)
    }

    /// The daemon's error as the SDK reports it: PowerAuth's and the server's with their domain
    /// and code, WatchConnectivity's as `WCErrorDomain`, anything else as a wrong parameter
    /// naming what happened.
    private func nsError(_ error: WatchLinkError) -> NSError {
        switch error {
        case .other(let domain, let code, _, let message):
            return NSError(domain: domain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
        case .watchConnectivity(let code, _, let message):
            return NSError(domain: WatchLinkError.watchConnectivityDomain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
        case .control, .connection, .invalidResponse:
            return PowerAuthErrorCode.wrongParameter.error("\(framework): \(error.message)")
        }
    }

    /// Writes a line to standard error: what the SDK's debug log would say.
    package func log(_ text: String) {
        FileHandle.standardError.write(Data("\(framework): \(text)\n".utf8))
    }
}
