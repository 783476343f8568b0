@testable import LinkDaemon
import LinkJSON
import LinkTrace
import WireProtocol
import XCTest

/// The recorder: a bounded ring read by number, causes, ops written only when they cause
/// something, and frames described without their secrets.
final class TracerTests: XCTestCase {
    func testTheRingKeepsTheNewestAndReadsAfterANumber() {
        let tracer = Tracer(capacity: 3, filePath: nil)
        tracer.side = "phone"
        for index in 1...5 { tracer.record(.link, ["name": "latency", "latencyMs": .int(Int64(index))]) }
        XCTAssertEqual(tracer.lastNumber, 5)
        XCTAssertEqual(tracer.oldestNumber, 3)
        XCTAssertEqual(tracer.entries(after: 0, limit: 10).map(\.n), [3, 4, 5])
        XCTAssertEqual(tracer.entries(after: 3, limit: 10).map(\.n), [4, 5])
        XCTAssertEqual(tracer.entries(after: 0, limit: 2).map(\.n), [3, 4])
        XCTAssertEqual(tracer.entries(after: 5, limit: 10).map(\.n), [])
        XCTAssertEqual(tracer.entries(after: 4, limit: 10).first?.int("latencyMs"), 5)
        let entry = tracer.entries(after: 4, limit: 1)[0]
        XCTAssertEqual(entry.side, "phone")
        XCTAssertGreaterThan(entry.time, 1_700_000_000_000_000, "microseconds of the real-time clock")
    }

    /// Previews are copied into a ring of bytes that wraps: the newest entries' previews stay
    /// exact across the wrap (a payload split between the end and the start), rare details are
    /// dropped with their entries, and the notes' transfer ids and peers come back.
    func testPreviewsSurviveTheWrapOfTheirRing() throws {
        // 1,000 bytes of previews: most payloads (about 170 bytes) are split by the wrap.
        let tracer = Tracer(capacity: 5, filePath: nil, textBytes: 1_000)
        var expected: [UInt64: String] = [:]
        for index in 0..<1_500 {
            let value = String(repeating: Character(Unicode.Scalar(UInt8(97 + index % 26))), count: 150)
            let payload = try PropertyListCodec.encode(["i": .integer(Int64(index)), "v": .string(value)])
            let n = try XCTUnwrap(
                tracer.frame(
                    .message(id: UInt64(index), wantsReply: false, payload: .dictionary(payload)),
                    outgoing: index % 2 == 0, peer: "watch-\(index % 3)"))
            expected[n] = TracePreview.text(payload, isData: false)
            // Each one read back at once: every split by the wrap is checked.
            XCTAssertEqual(tracer.entries(after: n - 1, limit: 1).first?.string("preview"), expected[n], "entry \(n)")
            if index % 7 == 0 { tracer.record(.link, ["name": "latency", "latencyMs": .int(Int64(index))]) }
        }
        tracer.record(.link, ["name": "latency", "latencyMs": 9])
        XCTAssertEqual(tracer.entries(after: 0, limit: 100).last?.int("latencyMs"), 9, "a rare entry's members")
        for index in 1_500..<1_504 {
            let payload = try PropertyListCodec.encode(["i": .integer(Int64(index)), "v": .string(String(repeating: "z", count: 150))])
            let n = try XCTUnwrap(
                tracer.frame(
                    .message(id: UInt64(index), wantsReply: false, payload: .dictionary(payload)),
                    outgoing: true, peer: "watch-\(index % 3)"))
            expected[n] = TracePreview.text(payload, isData: false)
        }
        tracer.note(.userInfoDidFinish, transferId: "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D", peer: "watch-1")
        let entries = tracer.entries(after: 0, limit: 100)
        XCTAssertEqual(entries.count, 5)
        for entry in entries.dropLast() where entry.kind == .frame {
            XCTAssertEqual(entry.string("preview"), expected[entry.n], "entry \(entry.n)")
            XCTAssertEqual(entry.string("peer"), "watch-\((entry.int("id") ?? 0) % 3)")
        }
        XCTAssertEqual(entries.filter { $0.kind == .frame }.count, 4)
        XCTAssertEqual(entries.last?.string("transferId"), "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D")
        XCTAssertEqual(entries.last?.string("peer"), "watch-1")
    }

    /// An entry written over forgets its detail with it: the details held never outnumber the
    /// ring, and each entry read back has its own members.
    func testTheDetailsLeaveWithTheirEntries() {
        let tracer = Tracer(capacity: 4, filePath: nil)
        for index in 0..<1_000 {
            if index % 3 == 0 {
                tracer.record(.link, ["name": "latency", "latencyMs": .int(Int64(index))])
            } else {
                tracer.frame(.ping(UInt64(index)), outgoing: true, peer: nil)
            }
            XCTAssertLessThanOrEqual(tracer.detailCount, 4, "after entry \(index)")
        }
        let entries = tracer.entries(after: 0, limit: 10)
        XCTAssertEqual(entries.map(\.n), [997, 998, 999, 1_000])
        XCTAssertEqual(entries.map { $0.int("latencyMs") ?? $0.int("id") }, [996, 997, 998, 999])
        XCTAssertEqual(entries.map { $0.kind }, [.link, .frame, .frame, .link])
        XCTAssertEqual(tracer.detailCount, 2)
    }

    /// A slot is 48 bytes (docs/trace.md, "Bounds"): the default ring stays about the size of a core's L2.
    func testASlotIs48Bytes() {
        XCTAssertEqual(MemoryLayout<Tracer.Slot>.stride, 48)
    }

    /// Followers (as the trace file) get the same entries whether a ring keeps them or not
    /// (`--trace-entries 0` with a trace file or `trace.get {"follow": true}`): every member but
    /// the time agrees, the preview, the op written when it causes something, the cause and a
    /// rare frame's detail among them.
    func testFollowersGetTheSameEntriesWithAndWithoutARing() throws {
        let payload = try PropertyListCodec.encode(["k": .string("v"), "n": .integer(2)])
        func record(_ tracer: Tracer) -> [JSONObject] {
            var followed: [JSONObject] = []
            tracer.follow = { entry in
                var object = entry.object
                object["t"] = nil
                followed.append(object)
            }
            tracer.withOp("message.send", client: 3) { _ in
                _ = tracer.frame(.message(id: 7, wantsReply: true, payload: .dictionary(payload)), outgoing: true, peer: "watch-1")
            }
            let received = tracer.frame(.reply(id: 7, payload: .data([1, 2, 3])), outgoing: false, peer: "watch-1")
            tracer.withCause(received) {
                _ = tracer.note(.userInfoDidFinish, seq: 4, transferId: "T-1", peer: "watch-1")
                _ = tracer.frame(
                    .fileChunkAck(seq: 5, flags: [], receivedOffset: 10, committedOffset: 8), outgoing: true, peer: "watch-1")
            }
            return followed
        }
        let withRing = record(Tracer(capacity: 10, filePath: nil))
        let withoutRing = record(Tracer(capacity: 0, filePath: nil))
        XCTAssertEqual(withRing.count, 5)
        XCTAssertEqual(withRing, withoutRing)
        XCTAssertEqual(withRing[1]["preview"]?.stringValue, TracePreview.text(payload, isData: false))
        XCTAssertEqual(withRing[1]["cause"]?.intValue, 1, "the op, written when its frame is")
        XCTAssertEqual(withRing[3]["transferId"]?.stringValue, "T-1")
        XCTAssertEqual(withRing[3]["cause"]?.intValue, 3)
        XCTAssertEqual(withRing[4]["committedOffset"]?.intValue, 8)
    }

    func testOffRecordsNothing() {
        let tracer = Tracer(capacity: 0, filePath: nil)
        XCTAssertFalse(tracer.isOn)
        XCTAssertNil(tracer.record(.link, ["name": "up"]))
        XCTAssertNil(tracer.frame(.ping(1), outgoing: true, peer: nil))
        XCTAssertEqual(tracer.lastNumber, 0)
    }

    func testAnOpIsWrittenOnlyWhenItCausesSomething() {
        let tracer = Tracer(capacity: 10, filePath: nil)
        tracer.withOp("status", client: 1) { _ in }
        XCTAssertEqual(tracer.lastNumber, 0, "an op that caused nothing")
        var kept: Tracer.Cause?
        tracer.withOp("link.set", client: 2) { _ in
            kept = tracer.pendingCause
            tracer.record(.link, ["name": "disabled"])
        }
        let entries = tracer.entries(after: 0, limit: 10)
        XCTAssertEqual(entries.map(\.kind), [.op, .link])
        XCTAssertEqual(entries[0].string("op"), "link.set")
        XCTAssertEqual(entries[1].cause, entries[0].n)
        XCTAssertLessThanOrEqual(entries[0].time, entries[1].time, "the op keeps the time it arrived")
        tracer.withCause(kept) { tracer.record(.link, ["name": "down"]) }
        XCTAssertEqual(tracer.entries(after: 2, limit: 1)[0].cause, entries[0].n, "a kept cause, later")
        var late: Tracer.PendingOp?
        tracer.withOp("userInfo.transfer", client: 3) { late = $0 }
        XCTAssertEqual(tracer.lastNumber, 3)
        let number = tracer.number(of: late!)
        XCTAssertEqual(number, 4, "written when asked for, as an error answered later does")
        XCTAssertEqual(tracer.number(of: late!), 4, "once")
    }

    /// An op's entry names the op and its client, whether the name is in the table of names
    /// seen (as registered ops are), too long for it, or the table is full (a client may send
    /// any name).
    func testAnOpEntryNamesItsOpAndClientPastTheTableOfNames() {
        let tracer = Tracer(capacity: 4 * Tracer.opNameLimit, filePath: nil)
        func causeSomething(_ op: String, client: UInt64) {
            tracer.withOp(op, client: client) { _ in tracer.record(.link, ["name": "up"]) }
        }
        causeSomething("message.send", client: 1)
        causeSomething("status", client: 2)
        causeSomething("message.send", client: 3)
        let long = String(repeating: "x", count: Tracer.opNameMaxBytes + 1)
        causeSomething(long, client: 7)
        for index in 0..<Tracer.opNameLimit { causeSomething("op\(index)", client: 4) }
        causeSomething("one.more", client: 5)
        causeSomething("status", client: 6)
        let ops = tracer.entries(after: 0, limit: 4 * Tracer.opNameLimit).filter { $0.kind == .op }
        XCTAssertEqual(ops.count, 4 + Tracer.opNameLimit + 2)
        XCTAssertEqual(ops.prefix(4).map { $0.string("op") }, ["message.send", "status", "message.send", long])
        XCTAssertEqual(ops.prefix(4).map { $0.int("client") }, [1, 2, 3, 7])
        XCTAssertEqual(
            ops[4 + Tracer.opNameLimit - 3].string("op"), "op\(Tracer.opNameLimit - 3)",
            "the last name the table takes (two were there before; the long one is not kept there)")
        XCTAssertEqual(ops.suffix(2).map { $0.string("op") }, ["one.more", "status"], "past the table, and a name in it")
        XCTAssertEqual(ops.suffix(2).map { $0.int("client") }, [5, 6])
    }

    func testFramesAreDescribedWithoutSecrets() throws {
        let tracer = Tracer(capacity: 10, filePath: nil)
        let message = try PropertyListCodec.encode(["hello": .string("watch"), "token": .data(Array(repeating: 0xAB, count: 32))])
        tracer.frame(.message(id: 7, wantsReply: true, payload: .dictionary(message)), outgoing: true, peer: "watch-1")
        tracer.frame(.auth(proof: Array(repeating: 0x5A, count: 32)), outgoing: false, peer: nil)
        tracer.frame(.item(channel: 1, seq: 3, flags: 0, payload: Array(repeating: 1, count: 1_000)), outgoing: true, peer: "watch-1")
        tracer.frame(.fileChunk(seq: 2, offset: 262_144, data: Array(repeating: 0, count: 100)), outgoing: false, peer: "phone-1")
        tracer.frame(.reply(id: 7, payload: .data(Array(repeating: 0xCD, count: 5_000))), outgoing: false, peer: "watch-1")
        let entries = tracer.entries(after: 0, limit: 10)
        XCTAssertEqual(entries[0].string("type"), "MESSAGE")
        XCTAssertEqual(entries[0].int("id"), 7)
        XCTAssertEqual(entries[0].string("dir"), "out")
        XCTAssertEqual(entries[0].string("peer"), "watch-1")
        XCTAssertEqual(entries[0].string("preview"), "{hello: \"watch\", token: <32 bytes>}", "Data by its size only")
        XCTAssertEqual(entries[0].int("size"), Int64(FrameEncoder.encodedLength(of: .message(id: 7, wantsReply: true, payload: .dictionary(message)))))
        XCTAssertNil(entries[1].string("preview"), "the pairing proof is not shown")
        XCTAssertFalse(JSON.serialize(entries[1].json).contains("5a5a"))
        XCTAssertEqual(entries[2].string("preview"), "{…}", "a payload over 256 bytes is not kept")
        XCTAssertEqual(entries[2].int("channel"), 1)
        XCTAssertEqual(entries[2].int("seq"), 3)
        XCTAssertEqual(entries[3].int("offset"), 262_144)
        XCTAssertEqual(entries[3].string("dir"), "in")
        XCTAssertEqual(entries[4].string("preview"), "<5000 bytes>", "Data over 256 bytes by its size, though not kept")
    }

    /// docs/trace.md's bounds on previews: at most 80 characters, strings cut at 24, and no
    /// content for a payload over 256 bytes.
    func testPreviewsAtTheirBounds() throws {
        let tracer = Tracer(capacity: 10, filePath: nil)
        func payload(encodedTo size: Int) throws -> [UInt8] {
            for count in stride(from: size - 10, through: size - 120, by: -1) {
                let encoded = try PropertyListCodec.encode(["a": .string(String(repeating: "x", count: 20)), "b": .data(Array(repeating: 1, count: count))])
                if encoded.count == size { return encoded }
            }
            throw XCTSkip("no payload encodes to \(size) bytes")
        }
        for size in [256, 257] {
            tracer.frame(.item(channel: 1, seq: UInt64(size), flags: 0, payload: try payload(encodedTo: size)), outgoing: true, peer: nil)
        }
        let entries = tracer.entries(after: 0, limit: 10)
        XCTAssertEqual(entries[0].string("preview")?.hasPrefix("{a: \"xxxx"), true, "256 bytes are shown: \(entries[0])")
        XCTAssertEqual(entries[1].string("preview"), "{…}", "257 bytes are not")

        func shown(_ text: String) throws -> String {
            TracePreview.text(try PropertyListCodec.encode(["k": .string(text)]), isData: false)
        }
        XCTAssertEqual(try shown(String(repeating: "s", count: 24)), "{k: \"" + String(repeating: "s", count: 24) + "\"}")
        XCTAssertEqual(try shown(String(repeating: "s", count: 25)), "{k: \"" + String(repeating: "s", count: 23) + "…\"}")
        let x24 = String(repeating: "x", count: 24)
        func rendering(_ count: Int) throws -> String {
            TracePreview.text(
                try PropertyListCodec.encode([
                    "a": .string(x24), "b": .string(x24),
                    "c": .string(String(repeating: "y", count: count)),
                ]), isData: false)
        }
        let eighty = "{a: \"\(x24)\", b: \"\(x24)\", c: \"" + String(repeating: "y", count: 11) + "\"}"
        XCTAssertEqual(eighty.count, 80)
        XCTAssertEqual(try rendering(11), eighty, "80 characters are shown whole")
        let eightyOne = "{a: \"\(x24)\", b: \"\(x24)\", c: \"" + String(repeating: "y", count: 12) + "\"}"
        XCTAssertEqual(try rendering(12), String(eightyOne.prefix(79)) + "…", "81 are cut to 79 and an ellipsis")
    }

    /// The clock is read once a batch: frames decoded from the same bytes share a time, the
    /// bytes that arrive next take a new one, and times never go back.
    func testTheClockIsReadOnceABatch() throws {
        let tracer = Tracer(capacity: 100, filePath: nil)
        tracer.bytesArrived()
        for id in 1...3 { tracer.frame(.messageAck(id: UInt64(id)), outgoing: false, peer: "watch-1") }
        let batch = tracer.entries(after: 0, limit: 10).map(\.time)
        XCTAssertEqual(Set(batch).count, 1, "one read for the frames of one read from the link")
        func microseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }
        let readAt = microseconds()
        while microseconds() <= readAt + 1 {}
        tracer.bytesArrived()
        tracer.frame(.messageAck(id: 4), outgoing: false, peer: "watch-1")
        let next = try XCTUnwrap(tracer.entries(after: 3, limit: 1).first?.time)
        XCTAssertGreaterThan(next, readAt, "a frame received takes a time read after its bytes arrived")
        tracer.frame(.messageAck(id: 5), outgoing: true, peer: "watch-1")
        tracer.flush()
        tracer.record(.link, ["name": "latency", "latencyMs": 1])
        let times = tracer.entries(after: 0, limit: 10).map(\.time)
        XCTAssertEqual(times, times.sorted(), "never earlier than the entry before")
    }
}

extension Tracer {
    /// A frame with its peer named by device id, as the tests name them (a channel asks for
    /// the index once).
    @discardableResult
    func frame(_ frame: Frame, outgoing: Bool, peer: String?) -> UInt64? {
        self.frame(frame, outgoing: outgoing, peerIndex: peerIndex(peer))
    }
}
