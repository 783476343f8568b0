import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import WatchLinkTesting
import XCTest

/// The pair's device clock with real daemons: phoned's manual clock, which its watches follow
/// (docs/control-protocol.md, "The device clock"; docs/wire-protocol.md, "The pair's clock").
final class PairClockTests: DaemonTestCase {
    /// 2026-12-31T23:59:00Z, in milliseconds since 1970.
    static let newYearsEveMinute: Int64 = 1_798_761_540_000

    func testTheWatchFollowsThePhonesManualClockAndBothShowTheSameTimeAfterEveryMove() throws {
        let (_, _, p, w) = try startManualClockPair()
        for client in [p, w] {
            let clock = try clock(client)
            XCTAssertEqual(clock["mode"], "manual")
            XCTAssertEqual(clock["time"], "2026-12-31T23:59:00.000Z")
            XCTAssertEqual(clock["wallMs"]?.intValue, Self.newYearsEveMinute)
        }
        XCTAssertEqual(try clock(p)["followsPhone"], nil, "only a watch follows")
        // Real time passing moves neither.
        usleep(50_000)
        XCTAssertEqual(try clock(p)["wallMs"]?.intValue, Self.newYearsEveMinute)

        let advanced = try p.call("clock.advance", ["ms": 61_000])
        XCTAssertEqual(advanced["time"], "2027-01-01T00:00:01.000Z")
        XCTAssertEqual(try clock(w)["time"], "2027-01-01T00:00:01.000Z", "the watch shows the phone's time when the advance answers")
        XCTAssertEqual(try p.call("clock.advance", ["ms": 0])["time"], "2027-01-01T00:00:01.000Z")

        let set = try p.call("clock.set", ["time": "2030-06-15T12:00:00+02:00"])
        XCTAssertEqual(set["time"], "2030-06-15T10:00:00.000Z")
        XCTAssertEqual(try clock(w)["time"], "2030-06-15T10:00:00.000Z")
        _ = try p.call("clock.set", ["time": "2020-01-01T00:00:00Z"])
        XCTAssertEqual(try clock(w)["time"], "2020-01-01T00:00:00.000Z", "a set may go back, as a device's date may")
        XCTAssertEqual(try p.call("clock.advance", ["ms": .int(86_400_000 * 366)])["time"], "2021-01-01T00:00:00.000Z")
        XCTAssertEqual(try clock(w)["time"], "2021-01-01T00:00:00.000Z")

        // Events are stamped with the device's time.
        let phoneEvents = try subscribed(phoneDaemon())
        _ = try w.call("message.send", ["message": ["hello": "phone"]])
        let received = try phoneEvents.waitForEvent("message.received", timeoutSeconds: 5)
        XCTAssertEqual(received.at, "2021-01-01T00:00:00.000Z")
    }

    func testAMessageGets7012ExactlyWhenTheClockPassesItsTimeout() throws {
        let (_, watch, p, w) = try startManualClockPair()
        _ = try w.call("replies.set", ["mode": "none"])
        let watchEvents = try subscribed(watch)
        let sender = try client(phoneDaemon())
        let outcome = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            outcome.set(Result { try sender.call("message.send", ["message": ["q": "?"], "wantsReply": true], timeoutSeconds: 60) })
        }
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 5)
        // 10 s is the shipped reply timeout: a millisecond before it, nothing.
        _ = try p.call("clock.advance", ["ms": 9_999])
        XCTAssertTrue(try timerEntries(p).isEmpty, "no timer fired before the timeout")
        XCTAssertFalse(outcome.isDone)
        _ = try p.call("clock.advance", ["ms": 1])
        do {
            let value = try outcome.wait(timeout: 10)
            XCTFail("expected 7012, got \(value)")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7012, "\(error)")
        }
        let timers = try timerEntries(p)
        XCTAssertEqual(timers.map(\.name), ["replyTimeout"])
        XCTAssertEqual(timers.first?.t, (Self.newYearsEveMinute + 10_000) * 1_000, "the trace shows the timer at its deadline")
    }

    func testAnAdvanceOfADayFiresTheTimersOfThePairInTheOrderOfTheirDeadlines() throws {
        let pair = try WatchLinkPair.start(
            watchCount: 2, activate: true, phoneArguments: ["--clock", "manual", "--clock-start", "2026-12-31T12:00:00Z"])
        // `hasSucceeded` is false until the run is over: what counts is a failure recorded so far.
        defer { pair.stop(keepingLogs: testRun.map { $0.totalFailureCount > 0 } ?? false) }
        let p = try client(pair.phone)
        let watchClients = try pair.watches.map { try client($0) }
        for w in watchClients {
            eventually("the watch to follow the phone's clock") { try w.call("status")["clock"]?["followsPhone"]?.boolValue == true }
        }
        eventually("the first watch reachable") { try watchClients[0].call("status")["isReachable"]?.boolValue == true }
        _ = try p.call("replies.set", ["mode": "none"])
        _ = try watchClients[0].call("replies.set", ["mode": "none"])
        let phoneEvents = try subscribed(pair.phone)
        let watchEvents = try subscribed(pair.watch)
        // The phone waits 10 s and an hour for replies, the watch 30 minutes.
        var outcomes: [AsyncResult<JSONObject>] = []
        for (sender, timeout) in [(try client(pair.phone), 10_000), (try client(pair.phone), 3_600_000), (try client(pair.watch), 1_800_000)] {
            let outcome = AsyncResult<JSONObject>()
            outcomes.append(outcome)
            DispatchQueue.global().async {
                outcome.set(
                    Result {
                        try sender.call(
                            "message.send", ["message": ["timeoutMs": .int(Int64(timeout))], "wantsReply": true, "timeoutMs": .int(Int64(timeout))],
                            timeoutSeconds: 60)
                    })
            }
            let events = sender.socketPath == pair.watch.controlPath ? phoneEvents : watchEvents
            _ = try events.waitForEvent("message.received", timeoutSeconds: 5) { $0.data["message"]?["timeoutMs"]?.intValue == Int64(timeout) }
        }

        let answer = try p.call("clock.advance", ["ms": 86_400_000])
        XCTAssertEqual(answer["time"], "2027-01-01T12:00:00.000Z")
        for w in watchClients {
            XCTAssertEqual(try clock(w)["time"], "2027-01-01T12:00:00.000Z", "every watch shows the phone's time")
        }
        for outcome in outcomes {
            XCTAssertThrowsError(try outcome.wait(timeout: 10)) { XCTAssertEqual(($0 as? ControlError)?.code, 7012, "\($0)") }
        }
        let start: Int64 = 1_798_718_400_000
        let fired = (try timerEntries(p).map { ("phone", $0.name, $0.t) } + timerEntries(watchClients[0]).map { ("watch", $0.name, $0.t) })
            .sorted { $0.2 < $1.2 }
        XCTAssertEqual(fired.map(\.0), ["phone", "watch", "phone"])
        XCTAssertEqual(fired.map(\.1), ["replyTimeout", "replyTimeout", "replyTimeout"])
        XCTAssertEqual(fired.map(\.2), [start + 10_000, start + 1_800_000, start + 3_600_000].map { $0 * 1_000 })
        XCTAssertTrue(try timerEntries(watchClients[1]).isEmpty)
    }

    /// The phone steps to the watch's timers too: a reply the watch holds for 5 s reaches the
    /// phone at 5 s, inside the phone's 10 s reply timeout, when one advance spans both.
    func testAnAdvanceFiresTheWatchsEarlierTimerBeforeThePhonesLaterOne() throws {
        let (_, watch, p, w) = try startManualClockPair()
        _ = try w.call("replies.set", ["mode": "echo", "delayMs": 5_000])
        let watchEvents = try subscribed(watch)
        let sender = try client(phoneDaemon())
        let outcome = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            outcome.set(Result { try sender.call("message.send", ["message": ["q": "?"], "wantsReply": true], timeoutSeconds: 60) })
        }
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 5)
        try advance(p, 60_000)
        let reply = try outcome.wait(timeout: 10)
        XCTAssertEqual(reply["reply"]?["q"], "?", "the echo, in time: \(reply)")
        XCTAssertEqual(try timerEntries(w).first?.t, (Self.newYearsEveMinute + 5_000) * 1_000, "the watch's held reply, at 5 s")
    }

    func testTheComplicationBudgetIsBackToFiftyAfterTheDayBoundary() throws {
        let (_, _, p, _) = try startManualClockPair(start: "2026-12-31T23:59:00Z")
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        for index in 0..<3 {
            _ = try p.call("complication.transfer", ["userInfo": ["n": .int(Int64(index))]])
        }
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"]?.intValue, 47)
        _ = try p.call("clock.advance", ["ms": 59_999])
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"]?.intValue, 47, "23:59:59.999 is the same day")
        _ = try p.call("clock.advance", ["ms": 1])
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"]?.intValue, 50, "a new day (UTC), a new budget")
        // A set back into the day that was spent finds it spent.
        _ = try p.call("clock.set", ["time": "2026-12-31T23:59:30Z"])
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"]?.intValue, 47)
    }

    func testAWatchGoesBackToTheSystemClockWithAPhoneThatHasIt() throws {
        let (phone, _, _, w) = try startManualClockPair(start: "2030-01-01T00:00:00Z")
        XCTAssertEqual(try clock(w)["time"], "2030-01-01T00:00:00.000Z")
        XCTAssertEqual(phone.stop(), 0)
        let restarted = try daemon("phoned").startAndWait()
        let p = try client(restarted)
        eventually("the watch to link with the restarted phone") { try p.call("status")["link"]?["connected"]?.boolValue == true }
        eventually("the watch to take the system's clock") { try self.clock(w)["mode"] == "system" }
        let wall = try XCTUnwrap(try clock(w)["wallMs"]?.intValue)
        XCTAssertLessThan(abs(wall - Int64(Date().timeIntervalSince1970 * 1000)), 5_000)
        assertControlError("control", 3) { try p.call("clock.advance", ["ms": 1]) }
    }

    func testTheClockOpsRefuseWhatTheyCannotDoAndTheDaemonsKeepServing() throws {
        let (_, _, p, w) = try startManualClockPair()
        // A watch names its phone.
        assertControlError("control", 2, containing: "move it on the phone") { try w.call("clock.advance", ["ms": 1]) }
        assertControlError("control", 2) { try w.call("clock.set", ["time": "2026-12-31T23:59:00Z"]) }
        for bad: JSONObject in [[:], ["ms": -1], ["ms": 31_622_400_001], ["ms": "1h"], ["ms": 1, "extra": true]] {
            assertControlError("control", 3) { try p.call("clock.advance", bad) }
        }
        for bad: JSONObject in [[:], ["time": "tomorrow"], ["time": "2026-12-31T23:59:00"], ["time": "1969-12-31T23:59:59Z"], ["time": 5]] {
            assertControlError("control", 3) { try p.call("clock.set", bad) }
        }
        XCTAssertEqual(try clock(w)["time"], "2026-12-31T23:59:00.000Z", "nothing moved")
        XCTAssertEqual(try p.call("clock.advance", ["ms": 1])["time"], "2026-12-31T23:59:00.001Z")
    }

    func testTheSystemClockIsNotMovedAndReadsTheRealTime() throws {
        let (_, _, p, w) = try startActivatedPair()
        for client in [p, w] {
            let clock = try clock(client)
            XCTAssertEqual(clock["mode"], "system")
            XCTAssertLessThan(abs((clock["wallMs"]?.intValue ?? 0) - Int64(Date().timeIntervalSince1970 * 1000)), 5_000)
        }
        assertControlError("control", 3, containing: "--clock manual") { try p.call("clock.advance", ["ms": 1]) }
        assertControlError("control", 3) { try p.call("clock.set", ["time": "2026-12-31T23:59:00Z"]) }
    }

    func testLinkctlShowsAdvancesAndSetsThePairsClock() throws {
        _ = try startManualClockPair(start: "2026-12-31T12:00:00Z")
        let advanced = try linkctl(["--home", home, "clock", "advance", "1h30m"])
        XCTAssertEqual(advanced.status, 0, advanced.stderr)
        XCTAssertEqual(try JSON.parse(advanced.stdout)["time"], "2026-12-31T13:30:00.000Z")
        XCTAssertEqual(try linkctl(["--home", home, "clock", "advance", "500ms"]).status, 0)
        XCTAssertEqual(try linkctl(["--home", home, "clock", "set", "2027-01-01T00:00:00Z"]).status, 0)
        let shown = try linkctl(["--home", home, "clock"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        let clocks = try JSON.parse(shown.stdout)
        XCTAssertEqual(clocks["phone"]?["time"], "2027-01-01T00:00:00.000Z")
        XCTAssertEqual(clocks["watch"]?["time"], "2027-01-01T00:00:00.000Z")
        XCTAssertEqual(clocks["watch"]?["followsPhone"], true)
        for (arguments, status) in [(["clock", "advance", "soon"], Int32(2)), (["clock", "rewind"], 2), (["clock", "set", "noon"], 1)] {
            let refused = try linkctl(["--home", home] + arguments)
            XCTAssertEqual(refused.status, status, "\(arguments): \(refused.stderr)")
            XCTAssertFalse(refused.stderr.isEmpty)
        }
    }

    // MARK: - Helpers

    private func linkctl(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let outcome = try children.run(Binaries.path("linkctl"), arguments)
        XCTAssertEqual(outcome.reason, .exit, "linkctl \(arguments) ends by itself")
        return (outcome.status, outcome.standardOutput, outcome.standardError)
    }

    private func phoneDaemon() -> DaemonProcess {
        daemons.first { $0.name == "phoned" && $0.isRunning }!
    }

    /// The `timer` entries of a daemon's trace: their names and times (µs since 1970).
    private func timerEntries(_ client: ControlClient) throws -> [(name: String, t: Int64)] {
        let entries = try client.call("trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
        return entries.compactMap { entry in
            guard entry["kind"] == "timer", let name = entry["name"]?.stringValue, let t = entry["t"]?.intValue else { return nil }
            return (name, t)
        }
    }
}
