import Foundation
import LinkClient
import LinkJSON
import LinkTrace
import TestSupport
import XCTest

/// Faults in the trace with their causes: a reply that times out (the timer, then 7012), a
/// latency set, and a full disk on the receiving side (the write that failed, the ITEM_ERROR,
/// the sender's didFinish with 7015).
final class TraceFaultTests: DurableTestCase {
    func entries(_ client: ControlClient) throws -> [TraceEntry] {
        try TraceReader.read { try client.call("trace.get", $0) }
    }

    func testAReplyTimeoutAndALatency() throws {
        let (_, _, p, w) = try startDurablePair()
        _ = try w.call("replies.set", ["mode": "none"])
        _ = try p.call("link.set", ["latencyMs": 3])
        assertControlError("WCErrorDomain", 7012) { try p.call("message.send", ["message": ["q": 1], "wantsReply": true, "timeoutMs": 150]) }
        let trace = try entries(p)
        let number = Dictionary(trace.map { ($0.n, $0) }, uniquingKeysWith: { a, _ in a })
        let latency = try XCTUnwrap(trace.first { $0.kind == .link && $0.string("name") == "latency" })
        XCTAssertEqual(latency.int("latencyMs"), 3)
        XCTAssertEqual(latency.cause.flatMap { number[$0] }?.string("op"), "link.set")
        let timer = try XCTUnwrap(trace.first { $0.kind == .timer && $0.string("name") == "replyTimeout" })
        let error = try XCTUnwrap(trace.first { $0.kind == .error && $0.int("code") == 7012 })
        XCTAssertEqual(error.cause, timer.n, "the 7012 comes from the timer")
        XCTAssertEqual(error.int("opEntry").flatMap { number[UInt64($0)] }?.string("op"), "message.send", "and answers the op")
        XCTAssertGreaterThan(error.n, timer.n)
    }

    func testAFullDiskOnTheReceivingSide() throws {
        // 2 MiB in the shell's 512-byte blocks.
        let (_, _, p, w) = try startDurablePair(watchFileSizeLimitBlocks: 4_096, logLevel: "info")
        var generator = SeededGenerator(seed: 7)
        for n in 1...80 {
            _ = try? p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n)), "b": randomData(60_000, using: &generator)]])
        }
        var phoneTrace: [TraceEntry] = []
        eventually("the phone to hear of a 7015", timeout: 30) {
            phoneTrace = try self.entries(p)
            return phoneTrace.contains { $0.kind == .fault && $0.string("name") == "userInfo.didFinish" && $0["error"]?["code"]?.intValue == 7015 }
        }
        let watchTrace = try entries(w)
        let failed = try XCTUnwrap(watchTrace.first { $0.kind == .fault && $0.string("name") == "diskFull" }, "the watch's failed write")
        let refusal = try XCTUnwrap(watchTrace.first { $0.isFrame("out", "ITEM_ERROR") && $0.int("code") == 7015 })
        XCTAssertGreaterThan(refusal.n, failed.n, "the refusal follows the failed write")
        let merged = MergedTrace([phoneTrace, watchTrace])
        let index = try XCTUnwrap(merged.entries.firstIndex { $0.isFrame("in", "ITEM_ERROR") && $0.int("code") == 7015 })
        let finished = try XCTUnwrap(merged.entries.indices.first { merged.causeIndex(of: $0) == index }, "what the ITEM_ERROR set off")
        XCTAssertEqual(merged.entries[finished].string("name"), "userInfo.didFinish")
        XCTAssertNotNil(merged.sent[index], "paired with the watch's ITEM_ERROR")
    }
}
