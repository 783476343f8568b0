import Dispatch
import Foundation
@_spi(Testing) @testable import WatchConnectivity

private let queueKey = DispatchSpecificKey<String>()

/// Marks `session`'s delegate queue so that ``currentQueueLabel()`` can name it.
func markDelegateQueue(of session: WCSession) {
    session.delegateQueue.setSpecific(key: queueKey, value: session.delegateQueue.label)
}

/// The label of the session queue running the caller (see ``markDelegateQueue(of:)``), else "other".
func currentQueueLabel() -> String {
    DispatchQueue.getSpecific(key: queueKey) ?? "other"
}

/// A delegate with every method, recording what it is told (and on which queue).
final class RecordingDelegate: NSObject, WCSessionDelegate {
    let recorder = Recorder()
    let queues = Recorder()
    /// Transfers that finished, by their description.
    let finished = Recorder()

    private func note(_ text: String) {
        queues.record(currentQueueLabel())
        recorder.record(text)
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        if let error = error as? WCError {
            note("activation \(activationState.rawValue) error \(error.code.rawValue): \(error.localizedDescription) | \(error.explanation ?? "-")")
        } else {
            note("activation \(activationState.rawValue) paired \(session.isPaired) reachable \(session.isReachable)")
        }
    }

    func sessionDidBecomeInactive(_ session: WCSession) { note("inactive \(session.activationState.rawValue)") }
    func sessionDidDeactivate(_ session: WCSession) { note("deactivated \(session.activationState.rawValue)") }
    func sessionReachabilityDidChange(_ session: WCSession) { note("reachability \(session.isReachable)") }
    func sessionWatchStateDidChange(_ session: WCSession) { note("watchState \(session.isPaired) \(session.isComplicationEnabled)") }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        note("message \(message["n"] as? Int ?? -1)")
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        note("message with reply \(message["n"] as? Int ?? -1)")
        replyHandler(["echo": message["n"] as? Int ?? -1, "when": Date(timeIntervalSince1970: 0)])
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        note("data with reply \([UInt8](messageData))")
        replyHandler(Data(messageData.reversed()))
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        note("context \(applicationContext["v"] as? Int ?? -1) received \(session.receivedApplicationContext["v"] as? Int ?? -1)")
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {
        note("userInfo \(userInfo["n"] as? Int ?? -1)")
    }

    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        let code = (error as? WCError)?.code.rawValue ?? 0
        finished.record("\(ObjectIdentifier(userInfoTransfer).hashValue)")
        note("userInfo finished \(userInfoTransfer.userInfo["n"] as? Int ?? -1) \(code) \(userInfoTransfer.isTransferring)")
    }

    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let exists = FileManager.default.fileExists(atPath: file.fileURL.path)
        note("file \(file.fileURL.lastPathComponent) \(file.metadata?["name"] as? String ?? "-") exists \(exists)")
    }

    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        let code = (error as? WCError)?.code.rawValue ?? 0
        note("file finished \(code) \(fileTransfer.progress.completedUnitCount)/\(fileTransfer.progress.totalUnitCount)")
    }
}

/// A delegate with the activation methods only, as many watchOS apps have.
final class MinimalDelegate: NSObject, WCSessionDelegate {
    let recorder = Recorder()

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        recorder.record("activation \(activationState.rawValue)")
    }
}
