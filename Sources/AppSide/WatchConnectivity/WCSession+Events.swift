import Foundation
import LinkJSON
import WatchLinkClient

/// The daemon's events, read on the client's queue. What they change in the session's
/// properties is applied on the session's queue just before the delegate hears of it, in
/// the order the events came, so a delegate method reads the state its news left.
extension WCSession {
    func handle(_ event: WatchLinkEvent, from client: WatchLinkClient) {
        let data = event.data
        switch event.name {
        case "session.activationDidComplete":
            guard let activation = data["activationState"]?.stringValue.flatMap(WCSessionActivationState.init(name:)) else { return }
            enqueue { [self] in state.withLock { $0.activationState = activation } }
        case "session.didBecomeInactive":
            deliver(update: { $0.activationState = .inactive }) { [self] delegate in delegate.sessionDidBecomeInactive(self) }
        case "session.didDeactivate":
            deliver(update: { $0.activationState = .notActivated }) { [self] delegate in delegate.sessionDidDeactivate(self) }
        case "session.reachabilityDidChange":
            guard let reachable = data["isReachable"]?.boolValue else { return }
            deliver(update: { $0.isReachable = reachable }) { [self] delegate in delegate.sessionReachabilityDidChange(self) }
        case "session.watchStateDidChange":
            refreshStatus(client)
            deliver(update: { state in
                state.isPaired = data["isPaired"]?.boolValue ?? state.isPaired
                state.isWatchAppInstalled = data["isWatchAppInstalled"]?.boolValue ?? state.isWatchAppInstalled
                state.isComplicationEnabled = data["isComplicationEnabled"]?.boolValue ?? state.isComplicationEnabled
                if let directory = data["watchDirectory"] { state.watchDirectory = directory.stringValue }
            }) { [self] delegate in delegate.sessionWatchStateDidChange(self) }
        case "session.companionAppInstalledDidChange":
            guard let installed = data["isCompanionAppInstalled"]?.boolValue else { return }
            deliver(update: { $0.isCompanionAppInstalled = installed }) { [self] delegate in
                delegate.sessionCompanionAppInstalledDidChange(self)
            }
        case "app.stateDidChange":
            refreshStatus(client)
        case "message.received":
            receiveMessage(data, from: client)
        case "userInfo.received":
            guard let userInfo = data["userInfo"]?.objectValue else { return }
            receiveQueued(data, from: client) { [self] delegate in
                delegate.session(self, didReceiveUserInfo: PropertyListConversion.dictionary(from: userInfo))
            }
        case "context.received":
            guard let context = data["applicationContext"]?.objectValue else { return }
            receiveQueued(data, from: client, update: { $0.receivedApplicationContext = context }) { [self] delegate in
                delegate.session(self, didReceiveApplicationContext: PropertyListConversion.dictionary(from: context))
            }
        case "file.received":
            guard let path = data["path"]?.stringValue else { return }
            let metadata = data["metadata"]?.objectValue ?? [:]
            receiveQueued(data, from: client) { [self] delegate in
                let file = WCSessionFile(
                    fileURL: URL(fileURLWithPath: path),
                    metadata: metadata.isEmpty ? nil : PropertyListConversion.dictionary(from: metadata))
                delegate.session(self, didReceive: file)
            }
        case "userInfo.didFinish":
            guard let id = data["transferId"]?.stringValue else { return }
            let error = data["error"].flatMap(WatchLinkError.init(json:)).map { WCError($0) }
            let acknowledge = acknowledgement(of: data, from: client)
            if let transfer = transfers.removeUserInfoTransfer(id) {
                finish(transfer, error: error, then: acknowledge)
            } else if let userInfo = data["userInfo"]?.objectValue {
                // A transfer of an earlier launch: "Will be called on next launch if the sender
                // was not running when the user info finished" (WCSession.h).
                let transfer = WCSessionUserInfoTransfer(
                    userInfo: PropertyListConversion.dictionary(from: userInfo),
                    isCurrentComplicationInfo: data["isCurrentComplicationInfo"]?.boolValue ?? false, session: self, transferId: id)
                finish(transfer, error: error, then: acknowledge)
            }
        case "file.progress":
            guard let id = data["transferId"]?.stringValue, let transfer = transfers.fileTransfer(id) else { return }
            transfer.update(completed: data["completedBytes"]?.intValue ?? -1, total: data["totalBytes"]?.intValue ?? 0)
        case "file.didFinish":
            guard let id = data["transferId"]?.stringValue else { return }
            let error = data["error"].flatMap(WatchLinkError.init(json:)).map { WCError($0) }
            let acknowledge = acknowledgement(of: data, from: client)
            if let transfer = transfers.removeFileTransfer(id) {
                finish(transfer, error: error, then: acknowledge)
            } else if let file = data["file"]?.objectValue, let path = file["path"]?.stringValue {
                // A transfer of an earlier launch (WCSession.h, as for userInfo).
                let metadata = file["metadata"]?.objectValue ?? [:]
                let transfer = WCSessionFileTransfer(
                    file: WCSessionFile(
                        fileURL: URL(fileURLWithPath: path),
                        metadata: metadata.isEmpty ? nil : PropertyListConversion.dictionary(from: metadata)),
                    totalBytes: file["totalBytes"]?.intValue ?? 0, session: self, transferId: id)
                finish(transfer, error: error, then: acknowledge)
            }
        default:
            break
        }
    }

    // MARK: Messages

    private func receiveMessage(_ data: JSONObject, from client: WatchLinkClient) {
        let replyId = data["replyId"]?.intValue
        let responder = replyId.map { ReplyResponder(session: self, client: client, replyId: $0) }
        if data["kind"]?.stringValue == "messageData" {
            guard let bytes = data["data"].flatMap(WatchLinkData.data) else {
                warn("a data message without valid 'data': \(data)")
                responder?.decline()
                return
            }
            deliver(
                { [self] delegate in
                    if let responder {
                        delegate.session(self, didReceiveMessageData: bytes, replyHandler: { reply in responder.reply(data: reply) })
                    } else {
                        delegate.session(self, didReceiveMessageData: bytes)
                    }
                    declineIfDefault(responder)
                }, otherwise: { responder?.decline() })
        } else {
            let message = data["message"]?.objectValue ?? [:]
            deliver(
                { [self] delegate in
                    let dictionary = PropertyListConversion.dictionary(from: message)
                    if let responder {
                        delegate.session(self, didReceiveMessage: dictionary, replyHandler: { reply in responder.reply(reply) })
                    } else {
                        delegate.session(self, didReceiveMessage: dictionary)
                    }
                    declineIfDefault(responder)
                }, otherwise: { responder?.decline() })
        }
    }

    /// After a delegate method ran: when it was the default one, the app has no such method;
    /// a message that wants a reply is declined (its sender gets 7014 `deliveryFailed`).
    private func declineIfDefault(_ responder: ReplyResponder?) {
        let lacked = lacksMethod.withLock { lacked -> Bool in
            defer { lacked = false }
            return lacked
        }
        if lacked { responder?.decline() }
    }

    // MARK: Queued items

    /// Hands a received queued item to the delegate, then acknowledges it
    /// (`app.acknowledge`): the daemon counts it delivered once the delegate method returned.
    private func receiveQueued(
        _ data: JSONObject, from client: WatchLinkClient,
        update: (@Sendable (inout SessionState) -> Void)? = nil,
        _ body: @escaping @Sendable (any WCSessionDelegate) -> Void
    ) {
        guard let acknowledge = acknowledgement(of: data, from: client) else { return }
        // Received: pending from now until the delegate method has returned.
        state.withLock { $0.pendingDeliveries += 1 }
        // Without a delegate nothing took the item: it stays the daemon's, handed again at the
        // app's next launch.
        // The acknowledgement is written before `hasContentPending` can turn false: an app that
        // completes its background task when it does is suspended with nothing unacknowledged.
        deliver(
            update: update,
            { [self] delegate in
                body(delegate)
                acknowledge()
                state.withLock { $0.pendingDeliveries = max(0, $0.pendingDeliveries - 1) }
            }, otherwise: {})
    }
}

extension WCSession {
    /// What tells the daemon that the delegate took the event's item (`app.acknowledge` of its
    /// `seq`): a received item, or a transfer that finished while the app was not running. Nil
    /// for an event without a `seq`.
    func acknowledgement(of data: JSONObject, from client: WatchLinkClient) -> (@Sendable () -> Void)? {
        guard let seq = data["seq"]?.intValue else { return nil }
        return { [weak self, weak client] in
            client?.send("app.acknowledge", ["seq": .int(seq)]) { [weak self] result in
                if case .failure(let error) = result, !error.isConnectionLoss { self?.warn("cannot acknowledge item \(seq): \(error)") }
            }
        }
    }
}

/// The reply handler given to the delegate for one message: answers at most once
/// (`message.reply`), or declines (`message.decline`).
final class ReplyResponder: @unchecked Sendable {
    private weak var session: WCSession?
    private weak var client: WatchLinkClient?
    private let replyId: Int64
    private let answered = Locked(false)

    init(session: WCSession, client: WatchLinkClient, replyId: Int64) {
        self.session = session
        self.client = client
        self.replyId = replyId
    }

    func reply(_ dictionary: [String: Any]) {
        do {
            let reply = try PropertyListConversion.json(from: dictionary)
            answer("message.reply", ["replyId": .int(replyId), "reply": .object(reply)])
        } catch {
            session?.warn("the reply to message \(replyId) cannot be sent: \(error.localizedDescription)")
            decline()
        }
    }

    func reply(data: Data) {
        answer("message.reply", ["replyId": .int(replyId), "replyData": WatchLinkData.json(data)])
    }

    func decline() {
        answer("message.decline", ["replyId": .int(replyId)])
    }

    private func answer(_ op: String, _ args: JSONObject) {
        let first = answered.withLock { answered -> Bool in
            defer { answered = true }
            return !answered
        }
        guard first else {
            session?.warn("the reply handler of message \(replyId) was called more than once; only the first answer counts")
            return
        }
        client?.send(op, args) { [weak session, replyId] result in
            if case .failure(let error) = result, !error.isConnectionLoss {
                session?.warn("cannot answer message \(replyId) (\(op)): \(error)")
            }
        }
    }
}

extension WatchLinkError {
    /// The connection closed: said once, when the session notices (or not at all when the
    /// app closed it), rather than for every answer that could not go out.
    var isConnectionLoss: Bool {
        if case .connection = self { return true }
        return false
    }
}
