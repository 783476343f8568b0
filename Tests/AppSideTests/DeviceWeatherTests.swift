import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// The device weather with real daemons and app processes (docs/app-side.md, "Device weather"):
/// a seed replays the same weather, and the readings example (Examples/ReadingsPhoneApp) shows
/// what it does to an app that trusts `isReachable`.
final class DeviceWeatherTests: AppSideTestCase {
    /// Seed 2217: the watch's first spell comes 5.5 s after the watch app entered the
    /// foreground and lasts 7.6 s; the phone is told of it 2.0 s late.
    private let lossySeed = "2217"
    /// Seed 23892: a 1.1 s screen-off spell 5.0 s in; the phone's report of it (1.6 s) comes
    /// after the watch is back, so the phone's callback of the return is never made.
    private let glanceSeed = "23892"

    private func weatherArguments(_ seed: String) -> [String] { ["--weather", "device", "--weather-seed", seed] }

    private func readings(in output: String) -> Set<Int> {
        Set(
            output.split(separator: "\n").compactMap { line -> Int? in
                guard line.hasPrefix("watch: reading ") else { return nil }
                return Int(line.dropFirst("watch: reading ".count).prefix { $0.isNumber })
            })
    }

    /// The readings example, naive and with the fallback, on two pairs under the same weather:
    /// the naive phone app trusts a snapshot that says reachable while the watch's wrist is down
    /// and loses what it sent then; the one that falls back on the send's error loses nothing.
    func testTheNaiveSenderLosesReadingsUnderTheWeatherAndTheFallbackLosesNone() throws {
        let count = 150
        var runs: [(phone: AppProcess, watch: AppProcess, pair: WatchLinkPair)] = []
        for (index, fallback) in [false, true].enumerated() {
            let pair = try startWatchLinkPair(phoneArguments: weatherArguments(lossySeed), watchArguments: weatherArguments(lossySeed))
            let watch = try launch("readings-watch-\(index)", program: "WatchLinkExampleReadingsWatch", on: pair.watch, of: pair)
            try watch.waitForLine("activated") { $0.hasPrefix("watch: activated") }
            let phone = try launch(
                "readings-phone-\(index)", program: "WatchLinkExampleReadingsPhone", on: pair.phone, of: pair,
                arguments: ["--readings", "\(count)", "--interval-ms", "100"] + (fallback ? ["--fallback"] : []))
            runs.append((phone, watch, pair))
        }
        for run in runs { XCTAssertEqual(try run.phone.waitForExit(timeout: 90), 0, run.phone.output) }

        for (index, run) in runs.enumerated() {
            let trace = try control(run.pair.watch, "trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
            let spell = try XCTUnwrap(trace.first { $0["name"] == "weather.spellBegan" }, "the seed's spell came during the run")
            XCTAssertEqual(spell["seed"], .int(2217))
            XCTAssertEqual(spell["durationMilliseconds"], 7_586)
            let phoneTrace = try control(run.pair.phone, "trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
            XCTAssertTrue(
                phoneTrace.contains { $0["name"] == "weather.reportDelayed" && $0["isReachable"] == false && $0["lagMilliseconds"] == 1_993 },
                "the phone app was told 2 s late")

            let received = readings(in: run.watch.output)
            let done = try XCTUnwrap(run.phone.output.split(separator: "\n").last { $0.hasPrefix("phone: done:") })
            if index == 0 {
                let lost = run.phone.output.split(separator: "\n").filter { $0.contains(" lost: ") }
                XCTAssertFalse(lost.isEmpty, "the naive app lost readings: \(done)")
                XCTAssertEqual(received.count, count - lost.count, "each lost reading is missing on the watch")
                XCTAssertTrue(done.hasSuffix("\(lost.count) lost"), String(done))
                // The device's text, on which such an app logs and gives up.
                XCTAssertTrue(lost[0].hasSuffix("lost: WatchConnectivity session on paired device is not reachable."), String(lost[0]))
            } else {
                XCTAssertEqual(received, Set(1...count), "the fallback loses nothing: \(done)")
                XCTAssertTrue(done.hasSuffix(" 0 lost"), String(done))
                XCTAssertTrue(run.phone.output.contains("Queued with transferUserInfo."), "the fallback was needed")
            }
        }
    }

    /// The entries a test compares: what the weather did and what the app was told, without times.
    private func weatherEntries(_ daemon: WatchLinkDaemon) throws -> [JSONObject] {
        let entries = try control(daemon, "trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
        return entries.compactMap { entry -> JSONObject? in
            guard let name = entry["name"]?.stringValue, name.hasPrefix("weather.") || name == "session.reachabilityDidChange",
                case .object(let object) = entry
            else { return nil }
            var kept: JSONObject = [:]
            for key in ["name", "isReachable", "lagMilliseconds", "durationMilliseconds", "spell", "seed"] { kept[key] = object[key] }
            return kept
        }
    }

    /// Both daemons of a pair settled after the first spell: it ended, and no report is pending.
    private func settledAfterTheFirstSpell(_ pair: WatchLinkPair) throws -> Bool {
        let spellEnded = try weatherEntries(pair.watch).contains { $0["name"] == "weather.spellEnded" }
        let phonePending = try control(pair.phone, "status")["weather"]?.objectValue?["pendingReport"]
        let watchPending = try control(pair.watch, "status")["weather"]?.objectValue?["pendingReport"]
        return spellEnded && phonePending == nil && watchPending == nil
    }

    /// Two pairs under one seed go through the same weather: the same spell, the same lags, the
    /// same coalesced callback, entry for entry.
    func testTheSameSeedReplaysTheSameTraceOfReachability() throws {
        // The weather's seconds, of the pairs' manual clocks: both pairs are moved alike.
        let pairs = try (0..<2).map { _ in
            try startWatchLinkPair(
                activate: true, clock: .manual, phoneArguments: weatherArguments(glanceSeed), watchArguments: weatherArguments(glanceSeed))
        }
        for _ in 0..<10 {
            for pair in pairs { try pair.advanceClock(by: 1) }
        }
        XCTAssertTrue(try pairs.allSatisfy(settledAfterTheFirstSpell), "the first spell is over and told 10 s in")
        let phone = try weatherEntries(pairs[0].phone), watch = try weatherEntries(pairs[0].watch)
        XCTAssertEqual(try weatherEntries(pairs[1].phone), phone)
        XCTAssertEqual(try weatherEntries(pairs[1].watch), watch)

        let spell = try XCTUnwrap(watch.first { $0["name"] == "weather.spellBegan" })
        XCTAssertEqual(spell["spell"], "screenOff")
        XCTAssertEqual(spell["durationMilliseconds"], 1_061)
        XCTAssertEqual(spell["seed"], .int(23_892))
        // openradar 23337218: the phone's callback says not reachable, and the return is missed.
        XCTAssertTrue(phone.contains { $0["name"] == "weather.reportMissed" && $0["isReachable"] == true })
        XCTAssertEqual(phone.filter { $0["name"] == "session.reachabilityDidChange" }.map { $0["isReachable"] }, [true, false])
        XCTAssertEqual(try control(pairs[0].phone, "status")["isReachable"], false, "the phone app's snapshot is stale")
        XCTAssertEqual(try control(pairs[0].phone, "status")["weather"]?.objectValue?["isReachableInFact"], true)
        _ = try control(pairs[0].phone, "message.send", ["message": ["n": 1], "wantsReply": true])
        // The watch was told of both changes: its own lag was shorter than the spell.
        XCTAssertEqual(watch.filter { $0["name"] == "session.reachabilityDidChange" }.map { $0["isReachable"] }, [true, false, true])
    }
}
