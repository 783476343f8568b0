import WatchConnectivity

// Written as Apple's WatchConnectivity documentation and sample code show it, against the
// public API only: this file must compile unchanged for the library to be a drop-in.

/// An iOS app's session controller.
final class SessionController: NSObject, WCSessionDelegate {
    private let log: (String) -> Void

    init(log: @escaping (String) -> Void) {
        self.log = log
        super.init()
    }

    func startSession() {
        if WCSession.isSupported() {
            let session = WCSession.default
            session.delegate = self
            session.activate()
        }
    }

    // MARK: Sending

    func requestStatus() {
        let session = WCSession.default
        session.sendMessage(
            ["request": "status"],
            replyHandler: { reply in
                self.log("reply: \(reply["status"] as? String ?? "none")")
            },
            errorHandler: { error in
                if let error = error as? WCError, error.code == .notReachable {
                    self.log("message failed: not reachable")
                } else {
                    self.log("message failed: \((error as NSError).domain) \((error as NSError).code)")
                }
            })
    }

    func sendPing(_ data: Data) {
        WCSession.default.sendMessageData(
            data, replyHandler: nil,
            errorHandler: { error in
                self.log("data failed: \((error as NSError).code)")
            })
    }

    func publish(counter: Int) {
        do {
            try WCSession.default.updateApplicationContext(["counter": counter, "updated": Date()])
        } catch let error as WCError where error.code == .notReachable {
            log("context failed: not reachable")
        } catch WCError.sessionNotActivated {
            log("context failed: not activated")
        } catch {
            log("context failed: \(error.localizedDescription)")
        }
    }

    @discardableResult
    func queue(_ item: [String: Any]) -> WCSessionUserInfoTransfer {
        WCSession.default.transferUserInfo(item)
    }

    func updateComplication(_ value: Int) {
        let session = WCSession.default
        if session.isComplicationEnabled, session.remainingComplicationUserInfoTransfers > 0 {
            session.transferCurrentComplicationUserInfo(["value": value])
        }
    }

    func send(file url: URL) {
        let transfer = WCSession.default.transferFile(url, metadata: ["name": url.lastPathComponent, "size": 3])
        log("file queued: \(transfer.file.fileURL.lastPathComponent) \(transfer.progress.totalUnitCount)")
    }

    func cancelPendingTransfers() {
        for transfer in WCSession.default.outstandingUserInfoTransfers where transfer.isTransferring {
            transfer.cancel()
        }
        WCSession.default.outstandingFileTransfers.forEach { $0.cancel() }
    }

    // MARK: WCSessionDelegate

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        if let error = error {
            let explanation = (error as NSError).userInfo["WatchLinkExplanation"] as? String ?? ""
            log("activation failed: \(activationState.rawValue) \((error as NSError).domain) \(error.localizedDescription) \(explanation)")
            return
        }
        log("activated: \(activationState == .activated) paired \(session.isPaired) installed \(session.isWatchAppInstalled)")
    }

    func sessionDidBecomeInactive(_ session: WCSession) {
        log("inactive")
    }

    func sessionDidDeactivate(_ session: WCSession) {
        // Activate the new session after having switched to a new watch.
        session.activate()
    }

    func sessionWatchStateDidChange(_ session: WCSession) {
        log("watch state: \(session.isPaired) \(session.watchDirectoryURL?.path ?? "no directory")")
    }

    func sessionReachabilityDidChange(_ session: WCSession) {
        log("reachable: \(session.isReachable)")
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        replyHandler(["status": "ok", "received": message.count])
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        log("userInfo: \(userInfo.count)")
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        log("context: \(session.receivedApplicationContext.count)")
    }

    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: Error?) {
        if let error = error {
            log("userInfo transfer failed: \((error as NSError).code) \(userInfoTransfer.userInfo.count) \(userInfoTransfer.isCurrentComplicationInfo)")
        }
    }

    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent(file.fileURL.lastPathComponent)
        try? FileManager.default.moveItem(at: file.fileURL, to: destination)
        log("file: \(file.metadata?["name"] as? String ?? "unnamed")")
    }

    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: Error?) {
        log("file transfer finished: \((error as NSError?)?.code ?? 0) \(fileTransfer.isTransferring)")
    }
}

/// A WatchKit extension's delegate: the activation callback and what a watch app receives;
/// no iOS-only methods.
final class ExtensionDelegate: NSObject, WCSessionDelegate {
    var counter = 0

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {}

    func sessionCompanionAppInstalledDidChange(_ session: WCSession) {
        counter += session.isCompanionAppInstalled ? 1 : 0
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        counter = applicationContext["counter"] as? Int ?? counter
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        replyHandler(messageData)
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        counter += 1
    }
}
