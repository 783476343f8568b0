import Foundation
import LinkJSON
import TestSupport
import WatchLinkTesting
import XCTest

/// Between the daemon and the app nothing is lost: a userInfo counts as delivered once the
/// app's delegate returned (`app.acknowledge`), so an app killed before that gets it again.
final class NothingLostTests: AppSideTestCase {
    func testUserInfoSurvivesTheReceivingAppBeingKilledAtRandomMoments() throws {
        let seed = ProcessInfo.processInfo.environment["WATCHLINK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("seed \(seed) (WATCHLINK_SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let pair = try startWatchLinkPair()
        let total = 2_000
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        // Each delegate call works 2 ms, as an app does something with what it gets.
        let work = ["--work-ms", "2"]
        var watches = [try launchActivated("watch-app-1", on: pair.watch, of: pair, arguments: work)]
        phone.send(["cmd": "transferUserInfos", "count": total])
        // The kills start at once: while the phone app still queues and the transfers stream
        // (waiting for "queued" first let a slow phone, under a sanitizer, queue the last
        // transfer only after the watch app had received them all).

        func received() -> [Int] {
            watches.flatMap { app in
                app.callbacks.filter { $0["cb"] as? String == "didReceiveUserInfo" }
                    .compactMap { ($0["userInfo"] as? [String: Any])?["n"] as? Int }
            }
        }
        var kills = 0
        let deadline = Date().addingTimeInterval(120)
        while Set(received()).count < total, Date() < deadline {
            usleep(UInt32.random(in: 20_000...150_000, using: &random))
            if Set(received()).count >= total { break }
            watches.last?.kill9()
            kills += 1
            watches.append(try launchActivated("watch-app-\(watches.count + 1)", on: pair.watch, of: pair, arguments: work))
        }
        try phone.waitFor("queued", timeout: 60)
        _ = try phone.waitFor("didFinishUserInfo", count: total, timeout: 60)

        let sequence = received()
        var firstSeen: [Int] = []
        var seen = Set<Int>()
        for n in sequence where seen.insert(n).inserted { firstSeen.append(n) }
        XCTAssertEqual(firstSeen, Array(0..<total), "every accepted transfer reached a delegate, in order, none missing")
        let twice = sequence.count - firstSeen.count
        print("nothing lost: \(total) transfers, \(kills) kills of the receiving app, \(twice) reached the delegate twice")
        XCTAssertGreaterThan(kills, 2, "the receiving app was killed while the transfers streamed")
        // Each process got a contiguous, increasing run: redelivery starts where acknowledgement stopped.
        for app in watches {
            let run = app.callbacks.filter { $0["cb"] as? String == "didReceiveUserInfo" }
                .compactMap { ($0["userInfo"] as? [String: Any])?["n"] as? Int }
            XCTAssertEqual(run, run.isEmpty ? [] : Array(run[0]...run[run.count - 1]), "\(app.name) got a contiguous run")
        }
    }
}
