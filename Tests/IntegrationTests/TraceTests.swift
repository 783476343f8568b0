import Foundation
import LinkClient
import LinkControl
import LinkJSON
import LinkTrace
import WatchLinkTesting
import XCTest

extension DaemonTestCase {
    /// Runs the scenario; the phone's trace comes from `trace.get`, the watch's (two runs: one
    /// killed) from its trace file. Both daemons keep running, with their trace files in the home.
    func runTraceScenario() throws -> (merged: MergedTrace, phone: [TraceEntry], watchFile: [TraceEntry]) {
        let (phone, watch) = try startPair(phoneArgs: ["--trace-file", "phone.trace"], watchArgs: ["--trace-file", "watch.trace"])
        let p = try client(phone)
        var w = try client(watch)
        _ = try p.call("session.activate")
        _ = try w.call("session.activate")
        eventually("both sides reachable") {
            try p.call("status")["isReachable"]?.boolValue == true && w.call("status")["isReachable"]?.boolValue == true
        }
        _ = try w.call("replies.set", ["mode": "echo"])
        XCTAssertEqual(try p.call("message.send", ["message": ["hello": "watch"], "wantsReply": true])["reply"], .object(["hello": "watch"]))

        _ = try p.call("link.set", ["up": false])
        eventually("the watch to see the link down") { try w.call("status")["link"]?["connected"]?.boolValue == false }
        _ = try p.call("userInfo.transfer", ["userInfo": ["n": 1]])
        watch.kill9()
        try watch.startAndWait()
        w = try client(watch)
        _ = try p.call("link.set", ["up": true])
        _ = try w.call("session.activate")
        eventually("the userInfo to arrive and be acknowledged") {
            try p.call("status")["outstandingUserInfoTransfers"]?.intValue == 0
                && w.call("received.list")["items"]?.arrayValue?.contains { $0["kind"] == "userInfo" } == true
        }
        eventually("both sides reachable again") {
            try p.call("status")["isReachable"]?.boolValue == true && w.call("status")["isReachable"]?.boolValue == true
        }

        _ = try p.call("context.update", ["context": ["counter": 1]])
        eventually("the context to arrive") { try w.call("context.get")["receivedApplicationContext"]?["counter"] == 1 }

        let source = home + "/photo.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: source, contents: Data(repeating: 7, count: 300_000)))
        _ = try p.call("file.transfer", ["path": .string(source), "metadata": ["kind": "photo"]])
        eventually("the file to arrive") {
            try p.call("file.outstanding")["transfers"]?.arrayValue?.isEmpty == true
                && w.call("received.list")["items"]?.arrayValue?.contains { $0["kind"] == "file" } == true
        }

        _ = try w.call("app.setState", ["state": "background"])
        eventually("the phone to see the watch unreachable") { try p.call("status")["isReachable"]?.boolValue == false }
        assertControlError("WCErrorDomain", 7007) { try p.call("message.send", ["message": ["late": true]]) }

        let phoneEntries = try traceEntries(p)
        // The watch's file is written once a loop turn, maybe while it is read: poll until it
        // has the scenario's end, the STATE that told the phone of the app's state, whole.
        var watchFile: [TraceEntry] = []
        eventually("the watch's trace file to have the app's state") {
            let (entries, skipped) = TraceFile.read(Array(try Data(contentsOf: URL(fileURLWithPath: home + "/watch.trace"))))
            watchFile = entries
            guard skipped == 0, let state = entries.lastIndex(where: { $0.string("name") == "app.stateDidChange" }) else { return false }
            return entries[state...].contains { $0.isFrame("out", "STATE") }
        }
        return (MergedTrace([phoneEntries, watchFile]), phoneEntries, watchFile)
    }

    func traceEntries(_ client: ControlClient) throws -> [TraceEntry] {
        var entries: [TraceEntry] = []
        var after: Int64 = 0
        while true {
            let page = try client.call("trace.get", ["after": .int(after), "limit": 500])
            let batch = (page["entries"]?.arrayValue ?? []).compactMap(TraceEntry.init(json:))
            entries += batch
            guard let last = batch.last else { return entries }
            after = Int64(last.n)
        }
    }
}

/// The trace of both daemons through a known scenario: activation, a message with a reply,
/// a userInfo across a link drop and a SIGKILL of watchd, a context update, a file and a 7007
/// error. The merged trace is checked entry by entry: the order, both sides, the causes.
final class TraceTests: DaemonTestCase {
    func testTheMergedTraceOfAScenarioEntryByEntry() throws {
        let (merged, _, watchFile) = try runTraceScenario()
        let entries = merged.entries
        defer {
            // A failure is easier to read beside the whole merged trace.
            if recordedIssue {
                for (i, e) in entries.enumerated() {
                    print("#\(i) \(e.side) \(TraceText.label(e)) cause=\(merged.causeIndex(of: i).map(String.init) ?? "-")")
                }
            }
        }
        var checker = TraceChecker(merged: merged)

        XCTAssertEqual(Set(watchFile.map(\.pid)).count, 2, "the killed watchd and its successor each have a run in the file")
        XCTAssertEqual(watchFile.filter { $0.kind == .daemon && $0.string("name") == "start" }.count, 2)
        XCTAssertEqual(watchFile.filter { $0.kind == .daemon && $0.string("name") == "stop" }.count, 0, "a SIGKILL leaves no stop")

        // Start and activation.
        checker.expect("phone starts") { $0.side == "phone" && $0.kind == .daemon && $0.string("name") == "start" }
        let linkUp = checker.expect("the phone's link up") { $0.side == "phone" && $0.kind == .link && $0.string("name") == "up" }
        // Each side's activation follows its op; the two sides' entries may interleave (the
        // phone's answer can reach the test before the phone records its activation).
        let start = checker.position
        let activate = checker.expect("the phone's session.activate") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "session.activate" }
        checker.position = start
        let watchActivate = checker.expect("the watch's session.activate") { $0.side == "watch" && $0.kind == .op && $0.string("op") == "session.activate" }
        for (side, op) in [("phone", activate), ("watch", watchActivate)] {
            let activation = entries.indices.first {
                entries[$0].side == side && entries[$0].kind == .state && entries[$0].string("name") == "session.activationDidComplete"
            }
            XCTAssertNotNil(activation, "the \(side)'s activation")
            XCTAssertEqual(activation.flatMap { merged.causeIndex(of: $0) }, op, "the \(side)'s activation is caused by its op")
            XCTAssertGreaterThan(activation ?? 0, op)
        }
        checker.position = max(activate, watchActivate) + 1
        _ = linkUp

        // A message with its reply.
        let send = checker.expect("message.send") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "message.send" }
        let message = checker.expect("the MESSAGE sent", cause: send) { $0.side == "phone" && $0.isFrame("out", "MESSAGE") }
        XCTAssertEqual(entries[message].string("preview"), "{hello: \"watch\"}")
        let arrived = checker.expect("the MESSAGE received") { $0.side == "watch" && $0.isFrame("in", "MESSAGE") }
        XCTAssertEqual(merged.received[message], arrived, "the arrow joins the MESSAGE's two ends")
        let reply = checker.expect("the REPLY, caused by the MESSAGE", cause: arrived) { $0.side == "watch" && $0.isFrame("out", "REPLY") }
        XCTAssertEqual(entries[reply].int("id"), entries[message].int("id"))
        let replyIn = checker.expect("the REPLY received") { $0.side == "phone" && $0.isFrame("in", "REPLY") }
        XCTAssertEqual(merged.sent[replyIn], reply)

        // The link taken down by the phone.
        let down = checker.expect("link.set") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "link.set" }
        checker.expect("the link disabled", cause: down) { $0.side == "phone" && $0.kind == .link && $0.string("name") == "disabled" }
        let goAway = checker.expect("the GOAWAY", cause: down) { $0.side == "phone" && $0.isFrame("out", "GOAWAY") }
        XCTAssertEqual(entries[goAway].string("preview")?.hasPrefix("linkDisabled"), true)
        // Each side learns of it in its own time: either may come first.
        for side in ["phone", "watch"] {
            XCTAssertTrue(
                entries[goAway...].contains {
                    $0.side == side && $0.kind == .link && $0.string("name") == "down" && $0.string("by") == "phone"
                }, "the \(side)'s link down, by the phone")
        }
        XCTAssertEqual(
            entries[goAway...].first { $0.side == "watch" && $0.kind == .link }?.string("reason")?.contains("linkDisabled"), true,
            "the watch says why the link went down")
        let transfer = checker.expect("userInfo.transfer while down") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "userInfo.transfer" }

        // watchd killed and started again: a new run.
        let restart = checker.expect("the second watchd starts") {
            $0.side == "watch" && $0.kind == .daemon && $0.string("name") == "start" && $0.pid != entries[watchActivate].pid
        }
        XCTAssertFalse(entries[transfer..<restart].contains { $0.isFrame("out", "ITEM") }, "nothing went out while the link was down")
        let up = checker.expect("link.set up") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "link.set" }
        checker.expect("the link enabled", cause: up) { $0.side == "phone" && $0.kind == .link && $0.string("name") == "enabled" }
        let phoneUp = checker.expect("the phone's link up again") { $0.side == "phone" && $0.kind == .link && $0.string("name") == "up" }
        let item = checker.expect("the userInfo ITEM, sent when the link came up") {
            $0.side == "phone" && $0.isFrame("out", "ITEM") && $0.int("channel") == 1
        }
        XCTAssertEqual(merged.causeIndex(of: item).map { entries[$0].kind }, .frame, "the watch's resume point (ACK) let it go")
        XCTAssertGreaterThan(item, phoneUp)
        let itemIn = checker.expect("the ITEM received by the new watchd") {
            $0.side == "watch" && $0.isFrame("in", "ITEM") && $0.int("channel") == 1 && $0.pid == entries[restart].pid
        }
        XCTAssertEqual(merged.received[item], itemIn)
        let ack = checker.expect("its ACK") {
            $0.side == "watch" && $0.isFrame("out", "ACK") && $0.int("channel") == 1 && $0.int("seq") == entries[item].int("seq")
        }
        let ackIn = checker.expect("the ACK received") {
            $0.side == "phone" && $0.isFrame("in", "ACK") && $0.int("channel") == 1 && $0.int("seq") == entries[item].int("seq")
        }
        XCTAssertEqual(merged.sent[ackIn], ack)
        checker.expect("didFinish, caused by the ACK", cause: ackIn) { $0.side == "phone" && $0.kind == .note && $0.string("name") == "userInfo.didFinish" }
        XCTAssertTrue(
            entries.contains { $0.side == "watch" && $0.kind == .note && $0.string("name") == "userInfo.received" },
            "the watch app got it once its session was activated")

        // The context.
        let update = checker.expect("context.update") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "context.update" }
        let context = checker.expect("the context ITEM", cause: update) { $0.side == "phone" && $0.isFrame("out", "ITEM") && $0.int("channel") == 2 }
        XCTAssertEqual(entries[context].string("preview"), "{counter: 1}")
        let contextIn = checker.expect("the context received") { $0.side == "watch" && $0.isFrame("in", "ITEM") && $0.int("channel") == 2 }
        checker.expect("the watch app told", cause: contextIn) { $0.side == "watch" && $0.kind == .note && $0.string("name") == "context.received" }

        // The file.
        let file = checker.expect("file.transfer") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "file.transfer" }
        checker.expect("the file's ITEM, once the copy into the outbox is done", cause: file) {
            $0.side == "phone" && $0.isFrame("out", "ITEM") && $0.int("channel") == 3
        }
        checker.expect("a chunk") { $0.side == "phone" && $0.isFrame("out", "FILE_CHUNK") }
        checker.expect("a chunk received") { $0.side == "watch" && $0.isFrame("in", "FILE_CHUNK") }
        checker.expect("the file received") { $0.side == "watch" && $0.kind == .note && $0.string("name") == "file.received" }
        checker.expect("the file acknowledged") { $0.side == "watch" && $0.isFrame("out", "ACK") && $0.int("channel") == 3 }
        let fileAck = checker.expect("the file's ACK received") { $0.side == "phone" && $0.isFrame("in", "ACK") && $0.int("channel") == 3 }
        checker.expect("the file's didFinish", cause: fileAck) { $0.side == "phone" && $0.kind == .note && $0.string("name") == "file.didFinish" }
        XCTAssertEqual(entries.filter { $0.side == "phone" && $0.isFrame("out", "FILE_CHUNK") }.count, 2, "300,000 bytes in chunks of 256 KiB")
        let quiet = entries.indices.filter {
            entries[$0].kind == .op && ["status", "received.list", "context.get", "file.outstanding"].contains(entries[$0].string("op"))
        }
        XCTAssertEqual(
            quiet.map { JSON.serialize(entries[$0].json) }, [],
            "ops that cause nothing leave no entry; caused: \(quiet.flatMap { q in entries.indices.filter { merged.causeIndex(of: $0) == q }.map { JSON.serialize(entries[$0].json) } })"
        )

        // The watch app leaves the foreground; the phone's message fails with 7007.
        let background = checker.expect("app.setState") { $0.side == "watch" && $0.kind == .op && $0.string("op") == "app.setState" }
        checker.expect("the watch's app state", cause: background) { $0.side == "watch" && $0.kind == .state && $0.string("name") == "app.stateDidChange" }
        let stateOut = checker.expect("its STATE", cause: background) { $0.side == "watch" && $0.isFrame("out", "STATE") }
        let stateIn = checker.expect("the STATE received") { $0.side == "phone" && $0.isFrame("in", "STATE") }
        XCTAssertEqual(merged.sent[stateIn], stateOut)
        checker.expect("the phone sees the watch unreachable", cause: stateIn) {
            $0.side == "phone" && $0.kind == .state && $0.string("name") == "session.reachabilityDidChange" && $0["isReachable"] == false
        }
        let late = checker.expect("the late message.send") { $0.side == "phone" && $0.kind == .op && $0.string("op") == "message.send" }
        checker.expect("its 7007, caused by the op", cause: late) { $0.side == "phone" && $0.kind == .error && $0.int("code") == 7007 }
        XCTAssertFalse(entries[late...].contains { $0.isFrame("out", "MESSAGE") }, "the refused message never went out")

        // Each frame's two ends agree on its size on the wire (a chunk's payload, written
        // beside the frame's head, included).
        XCTAssertGreaterThan(merged.received.count, 10)
        for (out, arrived) in merged.received.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(entries[out].int("size"), entries[arrived].int("size"), "\(TraceText.label(entries[out])) at both ends")
        }
        XCTAssertGreaterThan(entries.first { $0.side == "phone" && $0.isFrame("out", "FILE_CHUNK") }?.int("size") ?? 0, 200_000)

        // Both sides' entries are in each run's order, and times never go back.
        for run in Set(entries.map(\.run)) {
            let numbers = entries.filter { $0.run == run }.map(\.n)
            XCTAssertEqual(numbers, numbers.sorted(), "\(run) keeps its order")
        }
        XCTAssertEqual(entries.map(\.time), entries.map(\.time).sorted())
    }

    func testSecretsAreNeverTraced() throws {
        let (phone, watch) = try startPair(phoneArgs: ["--trace-file", "phone.trace"], watchArgs: ["--trace-file", "watch.trace"])
        let p = try client(phone)
        _ = try client(watch).call("session.activate")
        _ = try p.call("pa.instance.add", ["instanceId": "main"])
        _ = try p.call("session.activate")
        let activation = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
        let secrets = try p.call("pa.server.secrets", ["activationId": activation["activationId"] ?? .null])
        let token = try p.call("pa.token.create", ["instanceId": "main", "name": "t1"])
        _ = try p.call("pa.token.sendToWatch", ["instanceId": "main", "name": "t1", "mode": "completion"])
        let key = try Data(contentsOf: URL(fileURLWithPath: home + "/pairing.key"))
        var forbidden = secrets.values.compactMap(\.stringValue) + [token["tokenSecret"]?.stringValue].compactMap { $0 }
        forbidden += [key.base64EncodedString(), key.map { String(format: "%02x", $0) }.joined()]
        XCTAssertGreaterThanOrEqual(forbidden.count, 6)
        eventually("both trace files to have the token's frames") {
            let phoneText = try String(contentsOfFile: home + "/phone.trace", encoding: .utf8)
            let watchText = try String(contentsOfFile: home + "/watch.trace", encoding: .utf8)
            return phoneText.contains("pa.token.sendToWatch") && watchText.contains("\"MESSAGE\"") || watchText.contains("\"ITEM\"")
        }
        let texts = try [
            String(contentsOfFile: home + "/phone.trace", encoding: .utf8), String(contentsOfFile: home + "/watch.trace", encoding: .utf8),
            JSON.serialize(.object(p.call("trace.get", ["limit": 100_000]))),
        ]
        for text in texts {
            for secret in forbidden { XCTAssertFalse(text.contains(secret), "a secret in the trace") }
        }
    }

    func testWatchesPairedAndSwitched() throws {
        let pair = try WatchLinkPair.start(watchCount: 2, activate: true)
        defer { pair.stop(keepingLogs: false) }
        let p = try pair.phone.client()
        defer { p.close() }
        _ = try p.call("device.switchWatch", ["deviceId": "watch-2"])
        var entries: [TraceEntry] = []
        eventually("the app's session to move to watch-2") {
            entries = try TraceReader.read { try p.call("trace.get", $0) }
            return entries.contains { $0.string("name") == "sessionWatch" }
        }
        let paired = entries.filter { $0.kind == .state && $0.string("name") == "paired" }
        XCTAssertEqual(paired.map { $0.string("peer") }, ["watch-1", "watch-2"])
        XCTAssertEqual(paired.map { $0["isActive"]?.boolValue }, [true, false])
        let switched = try XCTUnwrap(entries.first { $0.string("name") == "activeWatch" })
        XCTAssertEqual(switched.string("value"), "watch-2")
        XCTAssertEqual(switched.string("previous"), "watch-1")
        XCTAssertEqual(entries.first { $0.n == switched.cause }?.string("op"), "device.switchWatch")
        let inactive = try XCTUnwrap(entries.first { $0.string("name") == "session.didBecomeInactive" })
        XCTAssertEqual(inactive.cause, switched.cause)
        XCTAssertEqual(inactive.string("peer"), "watch-1")
        XCTAssertEqual(entries.last { $0.string("name") == "sessionWatch" }?.string("value"), "watch-2")
    }

    func testATraceFileThatCannotBeOpenedStopsTheStart() throws {
        let outcome = try children.run(Binaries.path("phoned"), ["--home", home, "--trace-file", home + "/missing/phone.trace"])
        XCTAssertNotEqual(outcome.status, 0)
        XCTAssertTrue(outcome.standardError.contains("cannot open the trace file \(home)/missing/phone.trace"), outcome.standardError)
    }

    func testTraceGetPagesAndFollows() throws {
        let (phone, _) = try startPair(phoneArgs: ["--trace-entries", "50"])
        let p = try client(phone)
        let follower = try client(phone)
        let first = try follower.call("trace.get", ["follow": true, "limit": 1])
        XCTAssertEqual(first["capacity"], 50)
        XCTAssertEqual(first["entries"]?.arrayValue?.count, 1)
        // The link's start may still be recording its frames; none of them is a status op.
        let before = try XCTUnwrap(try p.call("trace.get", ["limit": 100_000])["last"])
        for _ in 0..<10 { _ = try p.call("status") }
        let since = try p.call("trace.get", ["after": before, "limit": 100_000])["entries"]?.arrayValue ?? []
        XCTAssertEqual(since.filter { $0["op"]?.stringValue == "status" }.count, 0, "ops that cause nothing leave no entry")
        for latency in 1...40 { _ = try p.call("link.set", ["latencyMs": .int(Int64(latency))]) }
        let page = try p.call("trace.get", ["limit": 100_000])
        XCTAssertEqual(page["entries"]?.arrayValue?.count, 50, "the ring keeps the newest 50")
        XCTAssertEqual(page["oldest"]?.intValue, (page["recorded"]?.intValue ?? 0) - 49)
        let after = try p.call("trace.get", ["after": page["last"] ?? 0])
        XCTAssertEqual(after["entries"]?.arrayValue?.count, 0, "trace.get itself is not traced")
        // Frames of the link's start may come first; then the first link.set, written when its
        // latency entry was, and that entry.
        var followed: [TraceEntry] = []
        while followed.count < 200, let event = try follower.nextEvent(timeoutSeconds: 5) {
            XCTAssertEqual(event.name, "trace.entry")
            followed += [TraceEntry(json: .object(event.data))].compactMap { $0 }
            if followed.contains(where: { $0.string("name") == "latency" }) { break }
        }
        let op = try XCTUnwrap(followed.first { $0.kind == .op }, "\(followed)")
        XCTAssertEqual(op.string("op"), "link.set")
        let latency = try XCTUnwrap(followed.first { $0.string("name") == "latency" })
        XCTAssertEqual(latency.cause, op.n)
        XCTAssertEqual(latency.int("latencyMs"), 1)
        assertControlError("control", 3) { try p.call("trace.get", ["limit": 0]) }
    }
}

/// Walks a merged trace in order: each expectation is found after the previous one.
struct TraceChecker {
    let merged: MergedTrace
    var position = 0

    @discardableResult
    mutating func expect(
        _ what: String, cause: Int? = nil, file: StaticString = #filePath, line: UInt = #line,
        _ matches: (TraceEntry) -> Bool
    ) -> Int {
        let entries = merged.entries
        guard let index = entries[position...].firstIndex(where: matches) else {
            let context = entries[max(0, position - 3)..<min(entries.count, position + 12)].map { JSON.serialize($0.json) }
            XCTFail("no entry after #\(position) for: \(what); from there:\n\(context.joined(separator: "\n"))", file: file, line: line)
            return position
        }
        if let cause {
            XCTAssertEqual(merged.causeIndex(of: index), cause, "\(what): the cause \(JSON.serialize(entries[index].json))", file: file, line: line)
        }
        position = index + 1
        return index
    }
}

extension TraceEntry {
    func isFrame(_ direction: String, _ type: String) -> Bool {
        kind == .frame && string("dir") == direction && string("type") == type
    }
}
