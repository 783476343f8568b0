import Foundation
import LinkJSON
import LinkTrace
import XCTest

/// `linkctl trace --html` in a real browser: headless Chromium loads the page from a file, its
/// DOM has the lanes and the arrows, and screenshots are kept in `.build/trace-pictures/`.
final class TraceHTMLTests: DaemonTestCase {
    func testTheScenarioInChromium() throws {
        _ = try Browser.chromium()
        _ = try runTraceScenario()
        let page = Browser.pictures + "/trace-scenario.html"
        let result = try linkctl(timeout: 300, ["trace", "--html", page, "--from", home + "/phone.trace", "--from", home + "/watch.trace"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertFalse(html.contains(" src=") || html.contains(" href=") || html.contains("url("), "nothing is loaded from elsewhere")
        XCTAssertEqual(
            html.components(separatedBy: "http").count - 1, html.components(separatedBy: "http://www.w3.org/2000/svg").count - 1,
            "no address but the SVG namespace")

        let dom = try Browser.run(page, ["--dump-dom", "--window-size=1400,4000"])
        XCTAssertTrue(dom.contains("<div class=\"lane-head phone\" data-lane=\"phone\""), "the phone's lane")
        XCTAssertTrue(dom.contains("<div class=\"lane-head link\" data-lane=\"link\""), "the link's lane")
        XCTAssertTrue(dom.contains("<div class=\"lane-head watch\" data-lane=\"watch-"), "the watch's lane")
        func count(_ text: String) -> Int { dom.components(separatedBy: text).count - 1 }
        XCTAssertGreaterThanOrEqual(count("<g class=\"step arrow message"), 2, "the MESSAGE and its REPLY")
        XCTAssertGreaterThanOrEqual(count("<g class=\"step arrow message reverse"), 1, "the REPLY goes back")
        XCTAssertGreaterThanOrEqual(count("<g class=\"step arrow userInfo"), 2, "the userInfo item and its ACK")
        XCTAssertGreaterThanOrEqual(count("<g class=\"step arrow context"), 1)
        XCTAssertGreaterThanOrEqual(count("<g class=\"step arrow file"), 3, "the file's item and chunks")
        XCTAssertGreaterThanOrEqual(count("<g class=\"step note state"), 4, "activations and reachability")
        XCTAssertGreaterThanOrEqual(count(" alarm"), 3, "the link drop, the kill and the 7007 stand out")
        XCTAssertTrue(dom.contains("ended without stopping (killed)"))
        XCTAssertTrue(dom.contains("7007 notReachable"))
        XCTAssertTrue(dom.contains("<title>"), "hover details")
        XCTAssertTrue(dom.contains("id=\"next-alarm\"") && dom.contains("marked ⚠"), "a way from one alarm to the next")

        let png = Browser.pictures + "/trace-scenario.png"
        try? FileManager.default.removeItem(atPath: png)
        _ = try Browser.run(page, ["--screenshot=\(png)", "--window-size=1400,1800"])
        let size = (try FileManager.default.attributesOfItem(atPath: png)[.size] as? Int) ?? 0
        XCTAssertGreaterThan(size, 20_000, "a screenshot of the page at \(png)")
        print("trace picture of the scenario: \(png) (\(size) bytes), page \(page)")
    }

    /// 100,000 entries: linkctl writes the page and Chromium renders it, at the top and in the
    /// middle (the page draws only the rows in view).
    func testAHundredThousandEntriesRender() throws {
        _ = try Browser.chromium()
        let (phone, watch) = Self.syntheticTraces(entries: 100_000)
        try phone.write(toFile: home + "/phone.trace", atomically: true, encoding: .utf8)
        try watch.write(toFile: home + "/watch.trace", atomically: true, encoding: .utf8)
        let page = Browser.pictures + "/trace-100000.html"
        let started = Date()
        let result = try linkctl(timeout: 300, ["trace", "--html", page, "--from", home + "/phone.trace", "--from", home + "/watch.trace"])
        let writing = Date().timeIntervalSince(started)
        XCTAssertEqual(result.status, 0, result.stderr)
        let written = result.stderr.split(separator: " ").firstIndex(of: "entries").map { Int(result.stderr.split(separator: " ")[$0 - 1]) ?? 0 } ?? 0
        XCTAssertGreaterThanOrEqual(written, 100_000, result.stderr)
        let pageSize = (try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int) ?? 0

        let loading = Date()
        let dom = try Browser.run(page, ["--dump-dom", "--window-size=1400,1000"])
        let rendering = Date().timeIntervalSince(loading)
        let steps = try XCTUnwrap(Self.attribute("data-steps", in: dom).flatMap(Int.init), "the page ran its script")
        XCTAssertGreaterThan(steps, 100, "alike frames are summarised, but not everything")
        XCTAssertLessThan(steps, 20_000, "runs of alike frames are summarised")
        XCTAssertTrue(dom.contains("\(written) entries"), "the summary counts every entry")
        let drawn = dom.components(separatedBy: "<g class=\"step ").count - 1
        XCTAssertGreaterThan(drawn, 20, "the first rows are drawn")
        XCTAssertLessThan(drawn, 200, "only the rows in view (and a margin) are drawn")
        XCTAssertTrue(dom.contains("×"), "a run summarised")

        // The middle of the trace, as after scrolling there.
        let middle = try Browser.run(page, ["--dump-dom", "--window-size=1400,1000"], fragment: "row=\(steps / 2)")
        let rows = middle.components(separatedBy: "data-step=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        XCTAssertTrue(rows.contains { abs($0 - steps / 2) < 100 }, "rows near the middle are drawn: \(rows.prefix(5))")
        _ = try Browser.run(page, ["--screenshot=\(Browser.pictures)/trace-100000.png", "--window-size=1400,1000"])
        print(
            "100,000 entries: linkctl wrote \(pageSize) bytes in \(String(format: "%.1f", writing)) s; \(steps) steps; Chromium loaded and drew it in \(String(format: "%.1f", rendering)) s (draw \(Self.attribute("data-draw-ms", in: dom) ?? "?") ms)"
        )
    }

    static func attribute(_ name: String, in dom: String) -> String? {
        guard let start = dom.range(of: "\(name)=\"") else { return nil }
        return String(dom[start.upperBound...].prefix { $0 != "\"" })
    }

    /// Trace files of a phone and a watch: messages with replies, userInfo items and their
    /// acknowledgements, files in chunks with progress, and now and then a link drop, a state
    /// change and an error.
    static func syntheticTraces(entries total: Int) -> (phone: String, watch: String) {
        var phone: [String] = [], watch: [String] = []
        var pn: UInt64 = 0, wn: UInt64 = 0
        var t: Int64 = 1_796_000_000_000_000
        func add(_ side: String, _ fields: JSONObject) {
            t += 37
            var object: JSONObject = [:]
            if side == "phone" { pn += 1; object["n"] = .int(Int64(pn)) } else { wn += 1; object["n"] = .int(Int64(wn)) }
            object["t"] = .int(t)
            object["side"] = .string(side)
            object["device"] = .string(side == "phone" ? "phone-1" : "watch-1")
            object["pid"] = .int(side == "phone" ? 100 : 200)
            for (key, value) in fields { object[key] = value }
            let line = JSON.serialize(.object(object))
            if side == "phone" { phone.append(line) } else { watch.append(line) }
        }
        func frame(_ from: String, _ type: String, _ extra: JSONObject) {
            let to = from == "phone" ? "watch" : "phone"
            var out: JSONObject = ["kind": "frame", "dir": "out", "peer": .string(to == "phone" ? "phone-1" : "watch-1"), "type": .string(type), "size": 40]
            var arrival: JSONObject = [
                "kind": "frame", "dir": "in", "peer": .string(from == "phone" ? "phone-1" : "watch-1"), "type": .string(type), "size": 40,
            ]
            for (key, value) in extra { out[key] = value; arrival[key] = value }
            add(from, out)
            add(to, arrival)
        }
        var id: Int64 = 0, seq: Int64 = 0, fileSeq: Int64 = 0, round = 0
        while phone.count + watch.count < total {
            round += 1
            add("phone", ["kind": "op", "op": "bench.roundTrip"])
            for _ in 0..<(40 + round % 17) {
                id += 1
                frame("phone", "MESSAGE", ["id": .int(id), "wantsReply": true, "preview": .string("{n: \(id)}")])
                frame("watch", "REPLY", ["id": .int(id), "preview": .string("{n: \(id)}")])
            }
            for _ in 0..<(20 + round % 11) {
                seq += 1
                frame("phone", "ITEM", ["channel": 1, "seq": .int(seq), "preview": .string("{item: \(seq)}")])
                frame("watch", "ACK", ["channel": 1, "seq": .int(seq)])
                add("phone", ["kind": "note", "name": "userInfo.didFinish", "transferId": .string("T\(seq)")])
            }
            fileSeq += 1
            frame("phone", "ITEM", ["channel": 3, "seq": .int(fileSeq), "preview": "file header"])
            for chunk in 0..<12 {
                frame("phone", "FILE_CHUNK", ["channel": 3, "seq": .int(fileSeq), "offset": .int(Int64(chunk) * 262_144)])
                frame(
                    "watch", "FILE_CHUNK_ACK",
                    [
                        "channel": 3, "seq": .int(fileSeq), "receivedOffset": .int(Int64(chunk + 1) * 262_144),
                        "committedOffset": .int(Int64(chunk + 1) * 262_144),
                    ])
                add("phone", ["kind": "note", "name": "file.progress", "completedBytes": .int(Int64(chunk + 1)), "totalBytes": 12])
            }
            if round % 5 == 0 {
                add("phone", ["kind": "op", "op": "link.set"])
                add("phone", ["kind": "link", "name": "disabled", "cause": .int(Int64(pn))])
                add("phone", ["kind": "link", "name": "down", "by": "phone", "reason": "linkDisabled"])
                add("watch", ["kind": "link", "name": "down", "by": "phone", "reason": "linkDisabled"])
                add(
                    "phone",
                    ["kind": "error", "op": "message.send", "domain": "WCErrorDomain", "code": 7007, "name": "notReachable", "message": "the link is down"])
                add("phone", ["kind": "link", "name": "up", "peer": "watch-1"])
                add("watch", ["kind": "link", "name": "up", "peer": "phone-1"])
                add("watch", ["kind": "state", "name": "app.stateDidChange", "appState": "foreground"])
            }
        }
        return (phone.joined(separator: "\n") + "\n", watch.joined(separator: "\n") + "\n")
    }
}
