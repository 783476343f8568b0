import WatchConnectivity

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// The phone half of the readings example: the common pattern of a phone app that streams
// readings to its watch app, written only against Apple's WatchConnectivity API. Each reading
// goes as a message while `isReachable` says the watch app can take one, else queued with
// `transferUserInfo`, which is delivered whenever it can be.
//
// `isReachable` is a snapshot: on a device it lags the fact, and a watch whose wrist goes down
// is gone before the snapshot says so. A message sent then fails with 7007. The naive version
// (the default) only logs that error, and the reading is lost; with --fallback the error
// handler queues the reading with `transferUserInfo`, and nothing is lost. (README,
// "Device weather"; run both with `--weather device --weather-seed N` to see the difference.)
//
// It sends --readings N readings, one every --interval-ms, and exits once each one's outcome
// is known: a reply, a delivered userInfo, or (naive) a lost message.

// Its counts live on the main queue: the delegate's callbacks hop there.
final class ReadingsPhoneApp: NSObject, WCSessionDelegate, @unchecked Sendable {
    let readings: Int
    let interval: Int
    let fallback: Bool
    private var sent = 0
    private var settled = 0
    private var byMessage = 0
    private var byUserInfo = 0
    private var lost = 0

    init(readings: Int, interval: Int, fallback: Bool) {
        (self.readings, self.interval, self.fallback) = (readings, interval, fallback)
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        say("phone: activated (\(activationState.rawValue))\(error.map { ", error \($0)" } ?? "")")
        DispatchQueue.main.async { self.sendNext(session) }
    }

    private func sendNext(_ session: WCSession) {
        guard sent < readings else { return }
        sent += 1
        send(sent, session)
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(interval)) { self.sendNext(session) }
    }

    private func send(_ reading: Int, _ session: WCSession) {
        let payload: [String: Any] = ["reading": reading]
        guard session.isReachable else {
            session.transferUserInfo(payload)
            return
        }
        session.sendMessage(
            payload,
            replyHandler: { _ in
                DispatchQueue.main.async {
                    self.byMessage += 1
                    self.settle()
                }
            },
            errorHandler: { error in
                DispatchQueue.main.async {
                    if self.fallback {
                        say("phone: reading \(reading): \(error.localizedDescription) Queued with transferUserInfo.")
                        session.transferUserInfo(["reading": reading])
                    } else {
                        say("phone: reading \(reading) lost: \(error.localizedDescription)")
                        self.lost += 1
                        self.settle()
                    }
                }
            })
    }

    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: Error?) {
        DispatchQueue.main.async {
            if let error {
                say("phone: reading \(userInfoTransfer.userInfo["reading"] ?? "?") lost: \(error.localizedDescription)")
                self.lost += 1
            } else {
                self.byUserInfo += 1
            }
            self.settle()
        }
    }

    func sessionReachabilityDidChange(_ session: WCSession) {
        say("phone: watch app \(session.isReachable ? "reachable" : "not reachable")")
    }

    func sessionDidBecomeInactive(_ session: WCSession) {}
    func sessionDidDeactivate(_ session: WCSession) { session.activate() }

    private func settle() {
        settled += 1
        guard settled == readings else { return }
        say("phone: done: \(byMessage) by message, \(byUserInfo) by userInfo, \(lost) lost")
        exit(0)
    }
}

func option(_ name: String, default value: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return value }
    return Int(CommandLine.arguments[index + 1]) ?? value
}

let app = ReadingsPhoneApp(
    readings: option("--readings", default: 100), interval: option("--interval-ms", default: 100),
    fallback: CommandLine.arguments.contains("--fallback"))
if WCSession.isSupported() {
    let session = WCSession.default
    session.delegate = app
    session.activate()
}
dispatchMain()
