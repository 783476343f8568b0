import LinkJSON
import LinkTrace
import XCTest

/// The picture's model: arrows for frames that arrived, lost ones ending on the link, notes,
/// runs of alike steps summarised; and its Mermaid text.
final class TraceDiagramTests: XCTestCase {
    func testArrowsNotesAndLostFrames() {
        let phone = [
            e("phone", "P", 2, t: 2, .op, ["op": "message.send", "client": 1]),
            e("phone", "P", 3, t: 3, .frame, ["dir": "out", "peer": "W", "type": "MESSAGE", "id": 1, "preview": "{a: 1}", "cause": 2]),
            e("phone", "P", 4, t: 6, .frame, ["dir": "out", "peer": "W", "type": "MESSAGE", "id": 2, "cause": 2]),
            e("phone", "P", 5, t: 7, .link, ["name": "down", "by": "watch", "reason": "the watch closed the connection"]),
        ]
        let watch = [
            e("watch", "W", 1, t: 4, .frame, ["dir": "in", "peer": "P", "type": "MESSAGE", "id": 1]),
            e("watch", "W", 2, t: 5, .state, ["name": "app.stateDidChange", "appState": "background"]),
        ]
        let diagram = TraceDiagram(MergedTrace([phone, watch]))
        XCTAssertEqual(diagram.lanes, [.phone, .link, .watch("W")])
        XCTAssertEqual(
            diagram.steps.map(\.label),
            [
                "op message.send", "MESSAGE id=1 {a: 1}", "app background",
                "MESSAGE id=2 (lost)", "link down (by watch): the watch closed the connection",
            ])
        guard case .arrow(.phone, .watch("W"), false) = diagram.steps[1].shape else { return XCTFail("\(diagram.steps[1].shape)") }
        guard case .arrow(.phone, .link, true) = diagram.steps[3].shape else { return XCTFail("\(diagram.steps[3].shape)") }
        XCTAssertEqual(diagram.steps.map(\.isAlarm), [false, false, false, true, true])
        let mermaid = MermaidDiagram.render(diagram)
        XCTAssertEqual(
            mermaid,
            """
            sequenceDiagram
                participant phone as phone
                participant wire as link
                participant w1 as W
                Note over phone: 00:00:00.000 op message.send
                phone->>w1: 00:00:00.000 MESSAGE id=1 {a: 1}
                Note over w1: 00:00:00.000 app background
                phone-xwire: 00:00:00.000 ⚠ MESSAGE id=2 (lost)
                Note over phone,wire: 00:00:00.000 ⚠ link down (by watch): the watch closed the connection

            """)
    }

    /// The emulated OS's launches and ends are notes on their device's lane; a crash at launch
    /// stands out.
    func testAppLaunchesAndExitsAreNotesOnTheirLane() {
        let phone = [
            e("phone", "P", 1, t: 1, .app, ["name": "launched", "program": "app", "reason": "message", "pid": 42, "state": "background"]),
            e("phone", "P", 2, t: 2, .app, ["name": "exited", "program": "app", "pid": 42, "status": 3, "reason": "crashedAtLaunch"]),
            e("phone", "P", 3, t: 3, .app, ["name": "exited", "program": "fileProvider", "pid": 43, "signal": 15, "reason": "terminated"]),
        ]
        let diagram = TraceDiagram(MergedTrace([phone]))
        XCTAssertEqual(
            diagram.steps.map(\.label),
            [
                "app launched (pid 42) for message, background", "app (pid 42) exited 3: crashedAtLaunch",
                "fileProvider (pid 43) signal 15: terminated",
            ])
        XCTAssertEqual(diagram.steps.map(\.isAlarm), [false, true, false])
        XCTAssertEqual(diagram.steps.map(\.category), ["app", "app", "app"])
        guard case .note(.phone, nil) = diagram.steps[0].shape else { return XCTFail("\(diagram.steps[0].shape)") }
        XCTAssertTrue(MermaidDiagram.render(diagram).contains("Note over phone: 00:00:00.000 app launched (pid 42) for message, background"))
    }

    /// The device weather's entries say what happened and the seed that replays it.
    func testWeatherEntriesNameTheirSeed() {
        let watch = [
            e("watch", "W", 1, t: 1, .state, ["name": "weather.spellBegan", "spell": "wristDown", "durationMilliseconds": 7_586, "seed": 2_217]),
            e("watch", "W", 2, t: 2, .state, ["name": "weather.reportDelayed", "isReachable": false, "lagMilliseconds": 914, "seed": 2_217]),
            e("watch", "W", 3, t: 3, .state, ["name": "weather.reportMissed", "isReachable": true, "seed": 2_217]),
            e("watch", "W", 4, t: 4, .state, ["name": "weather.spellEnded", "spell": "wristDown", "seed": 2_217]),
            e("watch", "W", 5, t: 5, .state, ["name": "workout.stateDidChange", "running": true]),
        ]
        XCTAssertEqual(
            TraceDiagram(MergedTrace([watch])).steps.map(\.label),
            [
                "weather: wristDown for 7586 ms (seed 2217)", "weather: not reachable, told in 914 ms (seed 2217)",
                "weather: reachable, never told (seed 2217)", "weather: wristDown over", "workout started",
            ])
    }

    func testRunsOfAlikeStepsBecomeOne() {
        var phone: [TraceEntry] = [], watch: [TraceEntry] = []
        for i in 0..<100 {
            let t = Int64(i * 10)
            phone.append(e("phone", "P", UInt64(2 * i + 1), t: t, .frame, ["dir": "out", "peer": "W", "type": "MESSAGE", "id": .int(Int64(i))]))
            watch.append(e("watch", "W", UInt64(3 * i + 1), t: t + 1, .frame, ["dir": "in", "peer": "P", "type": "MESSAGE", "id": .int(Int64(i))]))
            watch.append(e("watch", "W", UInt64(3 * i + 2), t: t + 2, .frame, ["dir": "out", "peer": "P", "type": "REPLY", "id": .int(Int64(i))]))
            phone.append(e("phone", "P", UInt64(2 * i + 2), t: t + 3, .frame, ["dir": "in", "peer": "W", "type": "REPLY", "id": .int(Int64(i))]))
        }
        watch.append(e("watch", "W", 1000, t: 5000, .link, ["name": "down", "by": "phone"]))
        let diagram = TraceDiagram(MergedTrace([phone, watch]))
        XCTAssertEqual(diagram.steps.count, 2, diagram.steps.map(\.label).joined(separator: "\n"))
        XCTAssertEqual(diagram.steps[0].label, "×200: MESSAGE phone→W ×100, REPLY W→phone ×100")
        guard case .run(.phone, .watch("W"), 200) = diagram.steps[0].shape else { return XCTFail("\(diagram.steps[0].shape)") }
        XCTAssertTrue(diagram.steps[1].isAlarm)
        XCTAssertEqual(TraceDiagram(MergedTrace([phone, watch]), options: .init(runThreshold: 0)).steps.count, 201)
    }

    func testMermaidTextCannotBreakTheDiagram() {
        let entry = e("phone", "P", 1, t: 1, .error, ["op": "x", "code": 1, "name": "n;a#m<e>%%x\nnext", "message": "m"])
        let text = MermaidDiagram.render(TraceDiagram(MergedTrace([[entry]])))
        XCTAssertFalse(text.contains("n;a"))
        XCTAssertTrue(text.contains("n,ano.m‹e›% x next"), text)
        XCTAssertEqual(text.split(separator: "\n").count, 4)
    }
}
