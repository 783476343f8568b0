import WatchConnectivity

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// The watch half of the readings example, written only against Apple's WatchConnectivity API:
// it shows each reading the phone sends, by message (answered, so that the phone knows it
// arrived) or by userInfo.

final class ReadingsWatchApp: NSObject, WCSessionDelegate {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        say("watch: activated (\(activationState.rawValue))\(error.map { ", error \($0)" } ?? "")")
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        say("watch: reading \(message["reading"] ?? "?") by message")
        replyHandler(["shown": true])
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        say("watch: reading \(userInfo["reading"] ?? "?") by userInfo")
    }
}

let app = ReadingsWatchApp()
if WCSession.isSupported() {
    let session = WCSession.default
    session.delegate = app
    session.activate()
}
dispatchMain()
