import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// The example apps (Examples/PhoneApp, Examples/WatchApp, Examples/PowerAuthPhoneApp,
/// Examples/PowerAuthWatchApp) against a pair, as README shows.
final class ExamplesTests: AppSideTestCase {
    func testThePhoneAndWatchExamplesPingCountAndDeliverTodosAcrossAWatchAppKill() throws {
        let pair = try startWatchLinkPair()
        let slow = ["--ms-per-todo", "10"]
        let firstWatch = try launch("watch-example-1", program: "WatchLinkExampleWatch", on: pair.watch, of: pair, arguments: slow)
        try firstWatch.waitForLine("activated") { $0.hasPrefix("watch: activated") }
        let phone = try launch(
            "phone-example", program: "WatchLinkExamplePhone", on: pair.phone, of: pair,
            arguments: ["--counter", "5", "--todos", "200"])
        try firstWatch.waitForLine("a todo") { $0.hasPrefix("watch: todo") }
        firstWatch.kill9()
        XCTAssertFalse(firstWatch.output.contains("watch: todo 200"), "killed while the todos streamed")
        let secondWatch = try launch("watch-example-2", program: "WatchLinkExampleWatch", on: pair.watch, of: pair, arguments: slow)
        XCTAssertEqual(try phone.waitForExit(timeout: 60), 0, phone.output)
        XCTAssertTrue(phone.output.contains("phone: all 200 todos delivered"))
        XCTAssertTrue(phone.output.contains("phone: reply pong"), "the watch app answered the ping")
        try secondWatch.waitForLine("the last todo") { $0 == "watch: todo 200" }

        let lines = (firstWatch.output + secondWatch.output).split(separator: "\n")
        let todos = lines.compactMap { $0.hasPrefix("watch: todo ") ? Int($0.dropFirst("watch: todo ".count)) : nil }
        var firstSeen: [Int] = []
        var seen = Set<Int>()
        for todo in todos where seen.insert(todo).inserted { firstSeen.append(todo) }
        XCTAssertEqual(firstSeen, Array(1...200), "every todo, in order, across the kill")
        let counters = lines.filter { $0.hasPrefix("watch: counter") }
        XCTAssertEqual(counters.last, "watch: counter 5", "the latest counter wins")
        XCTAssertTrue(lines.contains("watch: ping"))
    }

    /// README, "The OS launches the app": the phone example installed in phoned is launched
    /// into the background by the watch example's ping, and answers it.
    func testTheWatchExamplesPingLaunchesTheInstalledPhoneExample() throws {
        // The phone's session activated: the phone app activated it when it last ran (a
        // device remembers it; phoned's --activate stands for it).
        let pair = try startWatchLinkPair(activate: true)
        let events = try pair.phone.client()
        defer { events.close() }
        try events.subscribe()
        _ = try control(
            pair.phone, "app.install",
            [
                "command": [.string(DaemonBinaries.path("WatchLinkExamplePhone")), "--counter", "1", "--todos", "1"],
                "environment": ["LSAN_OPTIONS": "detect_leaks=0"],
            ])
        let watch = try launch("watch-example", program: "WatchLinkExampleWatch", on: pair.watch, of: pair, arguments: ["--ping-phone"])
        try watch.waitForLine("the phone's answer") { $0 == "watch: phone replied pong" }
        let launched = try events.waitForEvent("app.launched", timeoutSeconds: 10)
        XCTAssertEqual(launched.data["reason"], "message")
        let log = try XCTUnwrap(launched.data["log"]?.stringValue)
        XCTAssertTrue(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("phone: ping from the watch"))
    }

    /// README, "PowerAuth": the PowerAuth examples activate, wait for the server's commit, share
    /// the status and a token with the watch, and the watch's headers pass the server's check.
    func testThePowerAuthExamplesMakeWatchHeadersTheServerAccepts() throws {
        let pair = try startWatchLinkPair()
        let phone = try launch("powerauth-phone-example", program: "WatchLinkExamplePowerAuthPhone", on: pair.phone, of: pair)
        let watch = try launch("powerauth-watch-example", program: "WatchLinkExamplePowerAuthWatch", on: pair.watch, of: pair)
        try phone.waitForLine("the activation") { $0.contains("waiting for the server's commit") }
        let line = try XCTUnwrap(phone.output.split(separator: "\n").first { $0.contains("waiting for the server's commit") })
        let activationId = try XCTUnwrap(line.split(separator: " ").dropFirst(2).first.map(String.init))
        _ = try control(pair.phone, "pa.server.activation", ["activationId": .string(activationId), "action": "commit"])

        XCTAssertEqual(try watch.waitForExit(timeout: 60), 0, watch.output)
        XCTAssertTrue(watch.output.contains("watch: the iPhone has activation \(activationId)"), watch.output)
        XCTAssertTrue(phone.output.contains("phone: token MyToken sent to the watch"), phone.output)
        for (name, factors) in [("MyToken", "POSSESSION"), ("Balance", "POSSESSION_KNOWLEDGE")] {
            let prefix = "watch: \(name) X-PowerAuth-Token: "
            let header = try XCTUnwrap(watch.output.split(separator: "\n").first { $0.hasPrefix(prefix) }?.dropFirst(prefix.count), watch.output)
            XCTAssertEqual(
                try control(pair.phone, "pa.server.validateToken", ["header": .string(String(header))]),
                [
                    "tokenValid": true, "activationId": .string(activationId), "activationStatus": "ACTIVE",
                    "signatureType": .string(factors),
                ])
        }
    }
}
