import LinkJSON
import LinkTrace
import XCTest

/// Merging the traces of two daemons: one order by time, each run's own order kept, frames
/// sent paired with the same frames received, causes found within their run.
final class MergedTraceTests: XCTestCase {
    func testMergesByTimeAndPairsFramesOnTheirStream() {
        let phone = [
            e("phone", "P", 1, t: 100, .op, ["op": "message.send"]),
            e("phone", "P", 2, t: 110, .frame, ["dir": "out", "peer": "W", "type": "MESSAGE", "id": 1, "cause": 1]),
            e("phone", "P", 3, t: 140, .frame, ["dir": "in", "peer": "W", "type": "REPLY", "id": 1]),
            e("phone", "P", 4, t: 150, .frame, ["dir": "out", "peer": "W", "type": "MESSAGE", "id": 2]),
        ]
        let watch = [
            e("watch", "W", 1, t: 120, .frame, ["dir": "in", "peer": "P", "type": "MESSAGE", "id": 1]),
            e("watch", "W", 2, t: 130, .frame, ["dir": "out", "peer": "P", "type": "REPLY", "id": 1, "cause": 1]),
        ]
        let merged = MergedTrace([watch, phone])
        XCTAssertEqual(merged.entries.map { "\($0.side)\($0.n)" }, ["phone1", "phone2", "watch1", "watch2", "phone3", "phone4"])
        XCTAssertEqual(merged.received[1], 2, "the phone's MESSAGE arrives at the watch")
        XCTAssertEqual(merged.received[3], 4, "the watch's REPLY arrives at the phone")
        XCTAssertNil(merged.received[5], "the second MESSAGE never arrived")
        XCTAssertEqual(merged.causeIndex(of: 1), 0)
        XCTAssertEqual(merged.causeIndex(of: 3), 2, "a cause is found in its own run")
        XCTAssertEqual(merged.watches, ["W"])
    }

    /// Under a manual clock both daemons stamp everything between two moves with one time: a
    /// frame received still comes after the frame sent, whichever trace is read first.
    func testAmongEntriesOfOneTimeAFrameReceivedComesAfterItsFrameSent() {
        let phone = [
            e("phone", "P", 1, t: 500, .timer, ["name": "replyTimeout"]),
            e("phone", "P", 2, t: 500, .frame, ["dir": "in", "peer": "W", "type": "REPLY", "id": 7]),
            e("phone", "P", 3, t: 500, .frame, ["dir": "out", "peer": "W", "type": "ACK", "channel": 1, "seq": 2]),
        ]
        let watch = [
            e("watch", "W", 1, t: 500, .frame, ["dir": "out", "peer": "P", "type": "REPLY", "id": 7]),
            e("watch", "W", 2, t: 500, .frame, ["dir": "in", "peer": "P", "type": "ACK", "channel": 1, "seq": 2]),
        ]
        for traces in [[phone, watch], [watch, phone]] {
            let merged = MergedTrace(traces)
            let order = merged.entries.map { "\($0.side)\($0.n)" }
            XCTAssertLessThan(order.firstIndex(of: "watch1")!, order.firstIndex(of: "phone2")!, "\(order)")
            XCTAssertLessThan(order.firstIndex(of: "phone3")!, order.firstIndex(of: "watch2")!, "\(order)")
            XCTAssertEqual(merged.sent.count, 2, "both frames are paired: \(order)")
        }
    }

    func testARestartedDaemonIsANewRunAndDuplicatesAreDropped() {
        let first = [
            e("watch", "W", pid: 10, 1, t: 100, .daemon, ["name": "start"]),
            e("watch", "W", pid: 10, 2, t: 200, .frame, ["dir": "out", "peer": "P", "type": "ITEM", "channel": 1, "seq": 1]),
        ]
        let second = [
            e("watch", "W", pid: 11, 1, t: 300, .daemon, ["name": "start"]),
            e("watch", "W", pid: 11, 2, t: 400, .frame, ["dir": "out", "peer": "P", "type": "ITEM", "channel": 1, "seq": 1]),
        ]
        let phone = [e("phone", "P", 1, t: 450, .frame, ["dir": "in", "peer": "W", "type": "ITEM", "channel": 1, "seq": 1])]
        let merged = MergedTrace([first + second, phone, first])
        XCTAssertEqual(merged.entries.count, 5)
        XCTAssertEqual(merged.entries.map(\.pid), [10, 10, 11, 11, 1])
        XCTAssertEqual(merged.received[3], 4, "the copy sent after the restart is the one that arrived")
        XCTAssertNil(merged.received[1], "the killed run's copy never arrived")
    }

    func testReadsTraceFilesAndSkipsCutLines() {
        let e = self.e("phone", "P", 1, t: 5, .daemon, ["name": "start"])
        var bytes = TraceFile.line(e)
        bytes += Array("{\"n\": 2, \"t\"".utf8)
        let (entries, skipped) = TraceFile.read(bytes)
        XCTAssertEqual(entries, [e])
        XCTAssertEqual(skipped, 1)
    }
}
