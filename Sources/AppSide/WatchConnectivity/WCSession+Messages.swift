import Foundation
import LinkJSON
import WatchLinkClient

/// Messages and the application context.
extension WCSession {
    func sendDictionaryMessage(
        _ message: [String: Any], replyHandler: (([String: Any]) -> Void)?,
        errorHandler: ((any Error) -> Void)?
    ) {
        let replies = UncheckedBox(replyHandler)
        let errors = UncheckedBox(errorHandler)
        let json: JSONObject
        do {
            json = try PropertyListConversion.json(from: message)
        } catch {
            return report(error, to: errors)
        }
        let client: WatchLinkClient
        switch sendingClient() {
        case .success(let connected): client = connected
        case .failure(let error): return report(error, to: errors)
        }
        var args: JSONObject = ["message": .object(json)]
        if replyHandler != nil { args["wantsReply"] = true }
        client.send("message.send", args) { [self] result in
            switch result {
            case .success(let answer):
                guard replies.value != nil else { return }
                let reply = answer["reply"]?.objectValue ?? [:]
                delegateQueue.async { replies.value?(PropertyListConversion.dictionary(from: reply)) }
            case .failure(let error):
                report(WCError(error), to: errors)
            }
        }
    }

    func sendDataMessage(_ data: Data, replyHandler: ((Data) -> Void)?, errorHandler: ((any Error) -> Void)?) {
        let replies = UncheckedBox(replyHandler)
        let errors = UncheckedBox(errorHandler)
        let client: WatchLinkClient
        switch sendingClient() {
        case .success(let connected): client = connected
        case .failure(let error): return report(error, to: errors)
        }
        var args: JSONObject = ["data": WatchLinkData.json(data)]
        if replyHandler != nil { args["wantsReply"] = true }
        client.send("message.sendData", args) { [self] result in
            switch result {
            case .success(let answer):
                guard replies.value != nil else { return }
                guard let reply = answer["replyData"].flatMap(WatchLinkData.data) else {
                    return report(WCError(.messageReplyFailed, "the daemon's answer to message.sendData has no valid replyData: \(answer)"), to: errors)
                }
                delegateQueue.async { replies.value?(reply) }
            case .failure(let error):
                report(WCError(error), to: errors)
            }
        }
    }

    /// Calls `errors`' handler with `error` on the session's queue.
    private func report(_ error: WCError, to errors: UncheckedBox<((any Error) -> Void)?>) {
        guard errors.value != nil else { return }
        delegateQueue.async { errors.value?(error) }
    }

    func updateContext(_ context: [String: Any]) throws(WCError) {
        let json = try PropertyListConversion.json(from: context)
        let client = try sendingClient().get()
        switch callSynchronously(client, "context.update", ["context": .object(json)]) {
        case .success:
            state.withLock { $0.applicationContext = json }
        case .failure(let error):
            throw WCError(error)
        }
    }
}
