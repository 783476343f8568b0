import Dispatch
import Foundation
import LinkJSON

/// The emulated system's own connection to its daemon in an app process, shared by the
/// system frameworks that are not the app's session (`PushKit`, `FileProvider`): one per
/// control socket, subscribed to events before it is handed out, so that whatever a framework
/// asks for on it afterwards is answered after the daemon has begun sending it events.
///
/// A connection that closes (the daemon went away) is forgotten; the next ``shared(framework:)``
/// connects again.
package final class SystemConnection: Sendable {
    /// Why there is no connection, in words naming the daemon and how to point at one.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    package let location: DaemonLocation
    package let client: WatchLinkClient
    private let handlerKeys = Locked(Set<String>())
    /// Set when this process closes the connection itself (``useDaemon(controlSocketPath:)``).
    private let closedOnPurpose = Locked(false)

    private struct Shared {
        /// Set by ``useDaemon(controlSocketPath:)``; wins over the environment.
        var override: DaemonLocation?
        var connections: [String: SystemConnection] = [:]
    }

    private static let shared = Locked(Shared())

    private init(location: DaemonLocation, client: WatchLinkClient) {
        self.location = location
        self.client = client
    }

    /// Points the connections made from now on at the daemon listening at `controlSocketPath`
    /// (`nil`: the environment's again) and closes the current ones: for a test that runs app
    /// code in its own process.
    package static func useDaemon(controlSocketPath: String?) {
        let previous = shared.withLock { state -> [SystemConnection] in
            state.override = controlSocketPath.map(DaemonLocation.socket)
            defer { state.connections = [:] }
            return Array(state.connections.values)
        }
        for connection in previous {
            connection.closedOnPurpose.withLock { $0 = true }
            connection.client.close()
        }
    }

    /// The connection to this process's daemon, made now (connected and subscribed, waiting
    /// at most `timeoutSeconds` for the daemon's answer) when there is none.
    ///
    /// - Parameter framework: who asks, for the error's words (`PushKit`).
    package static func shared(framework: String, timeoutSeconds: Double = 10) -> Result<SystemConnection, Failure> {
        let location: DaemonLocation
        if let override = shared.withLock({ $0.override }) {
            location = override
        } else {
            do {
                location = try DaemonLocation.resolve()
            } catch {
                return .failure(Failure(description: "\(framework): \(error.description)"))
            }
        }
        if let existing = shared.withLock({ $0.connections[location.socketPath] }), !existing.client.isClosed {
            return .success(existing)
        }
        let client: WatchLinkClient
        do {
            client = try WatchLinkClient.connectNow(socketPath: location.socketPath)
        } catch {
            return .failure(Failure(description: location.unreachable(error, framework: framework)))
        }
        if case .failure(let error) = client.callAndWait("events.subscribe", timeoutSeconds: timeoutSeconds) {
            client.close()
            return .failure(Failure(description: location.unreachable(error, framework: framework)))
        }
        let connection = SystemConnection(location: location, client: client)
        let chosen = shared.withLock { state -> SystemConnection in
            if let raced = state.connections[location.socketPath], !raced.client.isClosed { return raced }
            state.connections[location.socketPath] = connection
            return connection
        }
        guard chosen === connection else {
            client.close()
            return .success(chosen)
        }
        client.onClose { [weak connection] reason in
            guard let connection else { return }
            shared.withLock { state in
                if state.connections[location.socketPath] === connection { state.connections[location.socketPath] = nil }
            }
            guard !connection.closedOnPurpose.current else { return }
            // What a device would log to the console; Apple's API has no error for it.
            let line = "\(framework): lost the connection to \(location.socketPath): \(reason.message); it is made again at the next registration or signal\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        return .success(connection)
    }

    /// Calls `handler` with every event of this connection, on its queue, once for each `key`
    /// (a framework's name): a second call with the same key does nothing. Handlers must not
    /// call app code there; they hand it to the app's queues.
    package func addEventHandler(key: String, _ handler: @escaping @Sendable (WatchLinkEvent) -> Void) {
        guard handlerKeys.withLock({ $0.insert(key).inserted }) else { return }
        client.onEvent(handler)
    }
}
