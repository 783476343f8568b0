import Foundation
import LinkClient
import LinkJSON
import LinkTrace
import XCTest

/// `linkctl trace`: both daemons (and the trace file of a killed one) merged, as JSON lines,
/// as a Mermaid diagram that Mermaid itself parses, and live in two columns.
final class TraceCommandTests: DaemonTestCase {
    func testMergesTheDaemonsAndTheFileOfAKilledOne() throws {
        let (phone, watch) = try startPair(phoneArgs: ["--trace-file", "phone.trace"], watchArgs: ["--trace-file", "watch.trace"])
        let p = try client(phone)
        _ = try p.call("session.activate")
        _ = try client(watch).call("session.activate")
        eventually("the phone reachable") { try p.call("status")["isReachable"]?.boolValue == true }
        watch.kill9()
        try watch.startAndWait()
        let w = try client(watch)
        _ = try w.call("session.activate")
        eventually("the link up again") { try p.call("status")["isReachable"]?.boolValue == true }

        // The daemons answer trace.get; the killed run is only in the file.
        let live = try linkctl(["trace"])
        XCTAssertEqual(live.status, 0, live.stderr)
        let liveEntries = live.stdout.split(separator: "\n").compactMap { try? JSON.parse(String($0)) }.compactMap(TraceEntry.init(json:))
        XCTAssertEqual(Set(liveEntries.filter { $0.side == "watch" }.map(\.pid)), [Int64(watch.pid)])

        let files = try linkctl(["trace", "--from", home + "/phone.ctl", "--from", home + "/watch.ctl", "--from", home + "/watch.trace"])
        XCTAssertEqual(files.status, 0, files.stderr)
        let entries = files.stdout.split(separator: "\n").compactMap { try? JSON.parse(String($0)) }.compactMap(TraceEntry.init(json:))
        XCTAssertEqual(entries.count, files.stdout.split(separator: "\n").count, "every line is an entry")
        XCTAssertEqual(Set(entries.filter { $0.side == "watch" }.map(\.pid)).count, 2, "both runs of watchd, once each")
        XCTAssertEqual(entries.filter { $0.side == "watch" && $0.kind == .daemon && $0.string("name") == "start" }.count, 2)
        XCTAssertEqual(entries.map(\.time), entries.map(\.time).sorted(), "one order by time")
        XCTAssertTrue(entries.contains { $0.side == "phone" && $0.kind == .link && $0.string("name") == "down" })

        // Only files: a daemon that is gone.
        phone.stop()
        let offline = try linkctl(["trace", "--from", home + "/phone.trace", "--from", home + "/watch.trace"])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertTrue(offline.stdout.contains("\"name\":\"stop\""), "the stopped phone's file ends with its stop")
        let none = try linkctl(["trace", "--from", home + "/phone.ctl"])
        XCTAssertEqual(none.status, 3, "no daemon answered")
        XCTAssertEqual(try linkctl(["trace", "--html", "x", "--mermaid"]).status, 2)
        XCTAssertEqual(try linkctl(["phone", "status", "--mermaid"]).status, 2)
    }

    func testMermaidOfTheScenarioParses() throws {
        let (merged, _, _) = try runTraceScenario()
        let result = try linkctl(["trace", "--mermaid", "--from", home + "/phone.trace", "--from", home + "/watch.trace"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = result.stdout
        XCTAssertTrue(text.hasPrefix("sequenceDiagram\n    participant phone as phone\n    participant wire as link\n    participant w1 as watch-"), text)
        XCTAssertTrue(text.contains("phone->>w1: "), "an arrow from the phone")
        XCTAssertTrue(text.contains("w1-->>phone: "), "an answer from the watch")
        XCTAssertTrue(text.contains("MESSAGE id=1 {hello: \"watch\"}"))
        XCTAssertTrue(text.contains("REPLY id=1"))
        XCTAssertTrue(text.contains("ITEM userInfo seq=1 {n: 1}"))
        XCTAssertTrue(text.contains("ITEM context seq=1 {counter: 1}"))
        XCTAssertTrue(text.contains("FILE_CHUNK seq=1 @0"))
        XCTAssertTrue(text.contains("Note over phone,wire: ") && text.contains("⚠ link down (by phone)"), "the drop stands out")
        XCTAssertTrue(text.contains("ended without stopping (killed)"), "the SIGKILL stands out")
        XCTAssertTrue(text.contains("⚠ 7007 notReachable ← message.send"))
        XCTAssertFalse(text.contains("op status"), "ops that set nothing off are left out")
        XCTAssertEqual(MermaidGrammar.violations(text), [])
        XCTAssertGreaterThan(merged.entries.count, 50)
        try MermaidInBrowser.assertParses(text, keepingAs: "trace-scenario")

        let short = try linkctl(["trace", "--mermaid", "--last", "12", "--from", home + "/phone.trace", "--from", home + "/watch.trace"])
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertLessThanOrEqual(short.stdout.split(separator: "\n").count, 4 + 12, "the header and at most one line an entry")
        XCTAssertTrue(short.stdout.contains("7007 notReachable"), "the newest entries")
        XCTAssertEqual(MermaidGrammar.violations(short.stdout), [])
    }

    func testFollowShowsBothSidesLiveInTwoColumns() throws {
        let (phone, watch) = try startPair()
        let p = try client(phone)
        let w = try client(watch)
        let follower = children.make(Binaries.path("linkctl"), ["--home", home, "trace", "--follow", "--width", "120"])
        try follower.start()
        eventually("the backlog: both daemons started") {
            follower.standardOutput.contains("phoned started") && follower.standardOutput.contains("watchd started")
        }
        _ = try p.call("link.set", ["latencyMs": 7])
        _ = try w.call("app.setState", ["state": "background"])
        eventually("the live entries", timeout: 10) {
            follower.standardOutput.contains("latency 7 ms") && follower.standardOutput.contains("app background")
        }
        let lines = follower.standardOutput.split(separator: "\n")
        XCTAssertTrue(lines[0].contains("phone") && lines[0].contains("│ watch"), String(lines[0]))
        let latency = try XCTUnwrap(lines.first { $0.contains("latency 7 ms") })
        let background = try XCTUnwrap(lines.first { $0.contains("app background") })
        XCTAssertLessThan(latency.range(of: "latency")!.lowerBound, latency.range(of: "│")!.lowerBound, "the phone's column is on the left")
        XCTAssertGreaterThan(background.range(of: "app background")!.lowerBound, background.range(of: "│")!.lowerBound, "the watch's on the right")
        XCTAssertTrue(lines.contains { $0.contains("→ STATE") } && lines.contains { $0.contains("← STATE") }, "frames where sent and where received")
        follower.kill()
    }
}

/// The grammar `linkctl trace --mermaid` keeps to, checked line by line (docs/trace.md): the
/// header, participants with plain ids, arrows `->>`, `-->>` and `-x` between declared ids,
/// and notes over one or two of them; no text Mermaid would read as syntax.
enum MermaidGrammar {
    static func violations(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == "sequenceDiagram" else { return ["the first line is not sequenceDiagram"] }
        if lines.last == "" { lines.removeLast() }
        var ids = Set<String>()
        var problems: [String] = []
        // Words of the sequence diagram's grammar, which a participant id must not be.
        let keywords: Set<String> = [
            "link", "links", "note", "end", "loop", "alt", "else", "opt", "par", "and", "rect", "critical",
            "break", "box", "participant", "actor", "activate", "deactivate", "autonumber", "title",
            "properties", "details", "create", "destroy", "over", "left", "right", "of", "as",
        ]
        let participant = #/^    participant ([A-Za-z][A-Za-z0-9_]*) as ([^;#<>\n%]+)$/#
        let arrow = #/^    ([A-Za-z][A-Za-z0-9_]*)(->>|-->>|-x)([A-Za-z][A-Za-z0-9_]*): ([^;#<>\n]*)$/#
        let note = #/^    Note over ([A-Za-z][A-Za-z0-9_]*)(,([A-Za-z][A-Za-z0-9_]*))?: ([^;#<>\n]*)$/#
        for line in lines.dropFirst() {
            if let match = line.wholeMatch(of: participant) {
                if keywords.contains(match.1.lowercased()) { problems.append("a keyword as participant id: \(line)") }
                ids.insert(String(match.1))
            } else if let match = line.wholeMatch(of: arrow) {
                if !ids.contains(String(match.1)) || !ids.contains(String(match.3)) { problems.append("undeclared participant: \(line)") }
                if match.4.contains("%%") { problems.append("%% in text: \(line)") }
            } else if let match = line.wholeMatch(of: note) {
                if !ids.contains(String(match.1)) || (match.3.map { !ids.contains(String($0)) } ?? false) { problems.append("undeclared participant: \(line)") }
            } else {
                problems.append("not a participant, arrow or note: \(line)")
            }
        }
        return problems
    }
}

extension DaemonTestCase {
    /// Runs `linkctl` on this test's home; it must end by itself within `timeout` seconds.
    func linkctl(timeout: Double = 60, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let outcome = try children.run(Binaries.path("linkctl"), ["--home", home] + arguments, timeout: timeout)
        XCTAssertEqual(outcome.reason, .exit, "linkctl \(arguments) ends by itself")
        return (outcome.status, outcome.standardOutput, outcome.standardError)
    }
}
