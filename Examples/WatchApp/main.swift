import WatchConnectivity

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// The watch half of the example: written only against Apple's WatchConnectivity API. It
// answers the phone's ping, shows the counter the phone keeps in the application context,
// and lists the todos the phone queued; killed and relaunched, it gets what it had not
// finished taking, in order. With --ping-phone it pings the phone app once it is activated:
// the ping wakes a phone app that is not running (README, "The OS launches the app").

final class WatchApp: NSObject, WCSessionDelegate {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        say("watch: activated (\(activationState.rawValue))\(error.map { ", error \($0)" } ?? "")")
        guard CommandLine.arguments.contains("--ping-phone") else { return }
        session.sendMessage(
            ["ping": Date().timeIntervalSince1970],
            replyHandler: { reply in
                say("watch: phone replied \(reply["pong"] as? Bool == true ? "pong" : "\(reply)")")
            },
            errorHandler: { error in
                say("watch: phone ping failed: \(error)")
            })
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        say("watch: ping")
        replyHandler(["pong": true])
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        say("watch: counter \(applicationContext["counter"] ?? "?")")
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        say("watch: todo \(userInfo["todo"] ?? "?")")
        if millisecondsPerTodo > 0 { usleep(millisecondsPerTodo * 1_000) }  // showing it takes a moment
    }
}

/// `--ms-per-todo N`: how long the app takes to show a todo (0 by default).
let millisecondsPerTodo: UInt32 = {
    guard let index = CommandLine.arguments.firstIndex(of: "--ms-per-todo"), index + 1 < CommandLine.arguments.count else { return 0 }
    return UInt32(CommandLine.arguments[index + 1]) ?? 0
}()

let app = WatchApp()
if WCSession.isSupported() {
    let session = WCSession.default
    session.delegate = app
    session.activate()
}
dispatchMain()
