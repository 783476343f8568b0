import WatchConnectivity

/// The iOS app's side of the watch sync, written as apps write it against Apple's framework:
/// this file imports WatchConnectivity and nothing else, and uses Foundation through it.
public final class PhoneSync: NSObject, WCSessionDelegate, @unchecked Sendable {
    private let queue = DispatchQueue(label: "SyncCore.PhoneSync")
    private var activated: ((WCSessionActivationState, (any Error)?) -> Void)?

    /// Where the app keeps what it sends: a `URL` and `Data` from Foundation.
    public let outbox: URL

    public init(outbox: URL) {
        self.outbox = outbox
        super.init()
    }

    /// Activates the default session; `completion` gets the outcome.
    public func start(completion: @escaping (WCSessionActivationState, (any Error)?) -> Void) {
        guard WCSession.isSupported() else { return completion(.notActivated, nil) }
        queue.sync { activated = completion }
        let session = WCSession.default
        session.delegate = self
        session.activate()
    }

    /// Sends `text` to the watch and hands back what the watch replied.
    public func ping(_ text: String, completion: @escaping (Result<String, any Error>) -> Void) {
        let stamp = Data(text.utf8)
        try? stamp.write(to: outbox.appendingPathComponent("last-ping"))
        WCSession.default.sendMessage(
            ["ping": text, "stamp": stamp],
            replyHandler: { reply in
                completion(.success(reply["ping"] as? String ?? ""))
            },
            errorHandler: { error in
                completion(.failure(error))
            })
    }

    /// Queues `counter` for the watch; the transfer object is of no interest here, as in most apps.
    public func queueCounter(_ counter: Int) {
        WCSession.default.transferUserInfo(["counter": counter])
        WCSession.default.transferCurrentComplicationUserInfo(["counter": counter])
    }

    /// Sends the file at `url`; the transfer object is ignored.
    public func send(_ url: URL) {
        WCSession.default.transferFile(url, metadata: ["name": url.lastPathComponent])
    }

    public func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        let completion = queue.sync { () -> ((WCSessionActivationState, (any Error)?) -> Void)? in
            defer { activated = nil }
            return activated
        }
        completion?(activationState, error)
    }

    public func sessionDidBecomeInactive(_ session: WCSession) {}

    public func sessionDidDeactivate(_ session: WCSession) {
        session.activate()
    }

    public func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        replyHandler(message)
    }
}
