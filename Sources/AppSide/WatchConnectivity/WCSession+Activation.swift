import Foundation
import LinkJSON
import WatchLinkClient

/// Activation: connect, `app.attach` (the connection becomes the running app, subscribed to
/// events), `session.activate`, then `status` and `context.get` for the properties; only then
/// `activationDidComplete`, followed by whatever the daemon handed over meanwhile.
extension WCSession {
    /// Every message method, as `app.attach` names them: without the Objective-C runtime the
    /// session cannot ask the delegate, so it declines at delivery instead (`message.decline`).
    static let attachArguments: JSONObject = [
        "state": "foreground",
        "handles": .array(WatchLinkAppHandles.all.names.map { .string($0) }),
    ]

    func startActivation() {
        let start = state.withLock { state -> (client: WatchLinkClient?, location: DaemonLocation?)? in
            guard !state.activating else { return nil }
            state.activating = true
            if state.heldDeliveries == nil { state.heldDeliveries = [] }
            if let client = state.client, !client.isClosed { return (client, state.location) }
            return (nil, state.location)
        }
        guard let start else { return }
        if delegate == nil {
            warn("activate() called without a delegate: set WCSession.default.delegate first, or activation and messages go unheard")
        }
        if let client = start.client {
            activateSession(client)
            return
        }
        let location: DaemonLocation
        if let known = start.location {
            location = known
        } else {
            do {
                location = try DaemonLocation.resolveForSession()
            } catch {
                return finishActivation(.notActivated, error: error)
            }
        }
        let client: WatchLinkClient
        do {
            client = try WatchLinkClient.connectNow(socketPath: location.socketPath)
        } catch {
            return finishActivation(.notActivated, error: location.unreachable(error))
        }
        state.withLock { state in
            state.location = location
            state.client = client
        }
        client.onEvent { [weak self, weak client] event in
            guard let self, let client else { return }
            handle(event, from: client)
        }
        client.onClose { [weak self, weak client] reason in
            guard let self, let client else { return }
            connectionClosed(client, reason: reason)
        }
        // From here WatchKit's tasks wait for what watchd wrote to this connection before them.
        AppSessionConnection.attached(client)
        client.send("app.attach", Self.attachArguments) { [self] result in
            switch result {
            case .success:
                activateSession(client)
            case .failure(let error):
                state.withLock { if $0.client === client { $0.client = nil } }
                client.close()
                finishActivation(.notActivated, error: WCError(error, doing: "attach the app to \(location.socketPath)"))
            }
        }
    }

    private func activateSession(_ client: WatchLinkClient) {
        client.send("session.activate") { [self] result in
            let activation: WCSessionActivationState
            switch result {
            case .success(let answer):
                activation = answer["activationState"]?.stringValue.flatMap(WCSessionActivationState.init(name:)) ?? .activated
            case .failure(let error):
                return finishActivation(.notActivated, error: WCError(error, doing: "activate the session"))
            }
            client.send("status") { [self] result in
                let status = readStatus(result)
                if let status { removeWatchDirectoriesNoLongerKept(status) }
                client.send("context.get") { [self] result in
                    let contexts = try? result.get()
                    finishActivation(activation, error: nil) { state in
                        if let status { state.apply(status) }
                        state.activationState = activation
                        if let contexts {
                            state.applicationContext = contexts["applicationContext"]?.objectValue ?? state.applicationContext
                            state.receivedApplicationContext = contexts["receivedApplicationContext"]?.objectValue ?? state.receivedApplicationContext
                        }
                    }
                }
            }
        }
    }

    /// Takes `update` in and reports the activation on the session's queue, then releases the
    /// deliveries held back meanwhile, in order.
    private func finishActivation(
        _ activation: WCSessionActivationState, error: WCError?,
        update: (@Sendable (inout SessionState) -> Void)? = nil
    ) {
        // The device's text says only what kind of failure it was: the log says what happened.
        if let explanation = error?.explanation { warn("activation failed: \(explanation)") }
        let report: @Sendable () -> Void = { [self] in
            let reported = state.withLock { state -> WCSessionActivationState in
                update?(&state)
                if error != nil, state.client == nil { state.activationState = .notActivated }
                return error == nil ? activation : state.activationState
            }
            delegate?.session(self, activationDidCompleteWith: reported, error: error)
        }
        state.withLock { state in
            state.activating = false
            delegateQueue.async(execute: report)
            for delivery in state.heldDeliveries ?? [] { delegateQueue.async(execute: delivery) }
            state.heldDeliveries = nil
        }
    }

    private func readStatus(_ result: Result<JSONObject, WatchLinkError>) -> WatchLinkStatus? {
        guard case .success(let answer) = result else { return nil }
        do {
            return try WatchLinkStatus(answer)
        } catch {
            warn("cannot read the daemon's status: \(error)")
            return nil
        }
    }

    /// Asks for `status` and takes its fields in, in order with the delegate's news.
    func refreshStatus(_ client: WatchLinkClient) {
        client.send("status") { [self] result in
            guard let status = readStatus(result) else { return }
            enqueue { [self] in state.withLock { $0.apply(status) } }
        }
    }

    /// The daemon went away: the session is not activated any more; `activate()` reconnects.
    private func connectionClosed(_ client: WatchLinkClient, reason: WatchLinkError) {
        let ours = state.withLock { state -> Bool in
            guard state.client === client else { return false }
            state.client = nil
            return true
        }
        guard ours else { return }
        warn("lost the connection to the daemon: \(reason.message); call activate() to reconnect")
        enqueue { [self] in
            let wasReachable = state.withLock { state -> Bool in
                defer { state.disconnect() }
                return state.isReachable
            }
            if wasReachable { delegate?.sessionReachabilityDidChange(self) }
        }
    }

    /// Takes `update` in and runs `body` with the delegate, on the session's queue, in order
    /// with the other news (after the activation report while activation is under way), so
    /// that the delegate reads the properties as the news it hears left them. `otherwise`
    /// runs there instead when there is no delegate.
    func deliver(
        update: (@Sendable (inout SessionState) -> Void)? = nil,
        _ body: @escaping @Sendable (any WCSessionDelegate) -> Void,
        otherwise: (@Sendable () -> Void)? = nil
    ) {
        enqueue { [self] in
            if let update { state.withLock(update) }
            if let delegate { body(delegate) } else { otherwise?() }
        }
    }

    /// Runs `block` on the session's queue in order with the delegate's news.
    func enqueue(_ block: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if state.heldDeliveries != nil {
                state.heldDeliveries?.append(block)
            } else {
                delegateQueue.async(execute: block)
            }
        }
    }

    /// The connection, or the error that a call made before activation gets.
    func connectedClient() -> Result<WatchLinkClient, WCError> {
        guard let client = state.withLock({ $0.client }), !client.isClosed else {
            return .failure(
                WCError(
                    .sessionNotActivated,
                    "WatchConnectivity session has not been activated: call activate() and wait for session(_:activationDidCompleteWith:error:)"))
        }
        return .success(client)
    }

    /// The connection a send goes out on: as ``connectedClient()`` (7004 before activation),
    /// then 7003 `sessionMissingDelegate` while the session has no delegate (nothing could
    /// hear of the outcome).
    func sendingClient() -> Result<WatchLinkClient, WCError> {
        let client = connectedClient()
        guard case .success = client, delegate == nil else { return client }
        return .failure(WCError(.sessionMissingDelegate, "WatchConnectivity session has no delegate: set WCSession.default.delegate before sending"))
    }

    /// Calls `op` and waits for its answer, for Apple's synchronous methods. Never called on
    /// the client's queue, which the answer needs.
    func callSynchronously(
        _ client: WatchLinkClient, _ op: String, _ args: JSONObject = [:],
        timeoutSeconds: Double = 30
    ) -> Result<JSONObject, WatchLinkError> {
        client.callAndWait(op, args, timeoutSeconds: timeoutSeconds)
    }

    func currentWatchDirectoryURL() -> URL? {
        let (role, activation, path) = state.withLock { ($0.role ?? $0.location?.side, $0.activationState, $0.watchDirectory) }
        guard role == .phone, activation != .notActivated, let path else { return nil }
        let url = URL(fileURLWithPath: path, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            warn("cannot create the watch directory \(url.path): \(error.localizedDescription)")
            return nil
        }
        return url
    }

    /// The app's launch (phone): the directories of watches that were unpaired, or for which the
    /// watch app was uninstalled, go: "This directory will be deleted upon next launch if the
    /// watch app is uninstalled for the selected Watch, or that Watch is unpaired" (`WCSession.h`,
    /// `watchDirectoryURL`). The daemon names those to keep (`status.watchDirectories`).
    private func removeWatchDirectoriesNoLongerKept(_ status: WatchLinkStatus) {
        guard status.role == .phone, let kept = status.raw["watchDirectories"]?.arrayValue else { return }
        let keptPaths = Set(kept.compactMap { $0.stringValue })
        let parents = Set(keptPaths.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path })
        let parent =
            parents.first
            ?? status.raw["watchDirectory"]?.stringValue.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
            ?? state.withLock { $0.location?.home }.map { $0 + "/phone-app/Watches" }
        guard let parent, parents.count <= 1, let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where !keptPaths.contains(parent + "/" + name) {
            do { try FileManager.default.removeItem(atPath: parent + "/" + name) } catch {
                warn("cannot delete the watch directory \(parent)/\(name): \(error.localizedDescription)")
            }
        }
    }

    /// Writes a line to standard error: what a device would log to the console.
    func warn(_ text: String) {
        FileHandle.standardError.write(Data("WatchConnectivity: \(text)\n".utf8))
    }
}

extension WCError {
    /// The ``WCError`` that a daemon's error stands for.
    init(_ error: WatchLinkError, doing what: String? = nil) {
        let prefix = what.map { "cannot \($0): " } ?? ""
        switch error {
        case .watchConnectivity(let code, _, let message):
            self.init(Code(rawValue: code) ?? .genericError, message)
        case .control(_, let name, let message) where name == "invalidArgument":
            self.init(.invalidParameter, prefix + message)
        default:
            self.init(.genericError, prefix + error.description)
        }
    }
}
