import WatchConnectivity

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// The phone half of the example: written only against Apple's WatchConnectivity API, it runs
// unchanged against WatchLink (WATCHLINK_HOME and WATCHLINK_SIDE=phone say which daemon).
//
// Once the watch app is reachable it pings it and prints the reply, counts a counter up to
// --counter N through the application context (latest wins), and queues --todos M userInfo
// items, which survive the watch app being killed and relaunched. It exits once the watch
// answered and every item is delivered. (Delegate callbacks and handlers run on one serial
// queue, so the counts need no lock.)
//
// It answers the watch app's ping too: installed in phoned (`app.install`, README), it is
// launched into the background by that ping, as iOS launches the app for a watch's message.

final class PhoneApp: NSObject, WCSessionDelegate {
    let counter: Int
    let todos: Int
    private var finished = 0
    private var pinged = false
    private var answered = false

    init(counter: Int, todos: Int) {
        self.counter = counter
        self.todos = todos
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        say("phone: activated (\(activationState.rawValue))\(error.map { ", error \($0)" } ?? "")")
        for value in 1...counter { try? session.updateApplicationContext(["counter": value]) }
        for number in 1...todos { session.transferUserInfo(["todo": number]) }
        if session.isReachable { ping(session) }
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        say("phone: ping from the watch")
        replyHandler(["pong": true])
    }

    func sessionDidBecomeInactive(_ session: WCSession) {}
    func sessionDidDeactivate(_ session: WCSession) { session.activate() }

    func sessionReachabilityDidChange(_ session: WCSession) {
        say("phone: watch app \(session.isReachable ? "reachable" : "not reachable")")
        if session.isReachable { ping(session) }
    }

    private func ping(_ session: WCSession) {
        guard !pinged else { return }
        pinged = true
        session.sendMessage(
            ["ping": Date().timeIntervalSince1970],
            replyHandler: { reply in
                say("phone: reply \(reply["pong"] as? Bool == true ? "pong" : "\(reply)")")
                self.answered = true
                self.exitWhenDone()
            },
            errorHandler: { error in
                say("phone: ping failed: \(error)")
                self.pinged = false
                if session.isReachable { self.ping(session) }  // else when it is reachable again
            })
    }

    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: Error?) {
        finished += 1
        if finished == todos { say("phone: all \(todos) todos delivered") }
        exitWhenDone()
    }

    private func exitWhenDone() {
        if answered && finished >= todos { exit(0) }
    }
}

func option(_ name: String, default value: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return value }
    return Int(CommandLine.arguments[index + 1]) ?? value
}

let app = PhoneApp(counter: option("--counter", default: 5), todos: option("--todos", default: 20))
if WCSession.isSupported() {
    let session = WCSession.default
    session.delegate = app
    session.activate()
}
dispatchMain()
