import LinkClient
import LinkControl
import LinkJSON
import XCTest

/// The `bench.*` ops behind `scripts/bench.sh`, run small: they answer with sane figures,
/// check their arguments, and refuse when the watch is not reachable.
final class BenchOpsTests: DaemonTestCase {
    func testEachBenchmarkRunsAndReports() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try w.call("replies.set", ["mode": "echo"])
        let roundTrip = try p.call("bench.roundTrip", ["size": 1024, "count": 50])
        XCTAssertEqual(roundTrip["count"], 50)
        XCTAssertEqual(roundTrip["bytes"], 1024)
        // The figures hang together: min <= p50 <= p99 <= max, and the mean lies between min and max.
        let figures = try ["minUs", "p50Us", "p99Us", "maxUs", "meanUs"].map { try XCTUnwrap(roundTrip[$0]?.doubleValue, $0) }
        let (minimum, p50, p99, maximum, mean) = (figures[0], figures[1], figures[2], figures[3], figures[4])
        XCTAssertGreaterThan(minimum, 0)
        XCTAssertTrue(minimum <= p50 && p50 <= p99 && p99 <= maximum, "\(roundTrip)")
        XCTAssertTrue(minimum <= mean && mean <= maximum, "\(roundTrip)")
        XCTAssertEqual(try Received.items(w, kind: "messageData").count, 50, "the watch received the 50 messages")

        let dictionary = try p.call("bench.roundTrip", ["size": 200, "count": 20, "kind": "dictionary"])
        XCTAssertEqual(dictionary["count"], 20)
        // About `size` bytes encoded: ten different strings, not one stored once.
        let large = try p.call("bench.roundTrip", ["size": 16_384, "count": 5, "kind": "dictionary"])
        let encoded = try XCTUnwrap(large["bytes"]?.intValue)
        XCTAssertTrue((16_384...16_384 + 256).contains(encoded), "a 16 KiB dictionary encodes to \(encoded) bytes")

        let receivedBefore = try Received.lastSeq(w)
        let oneWay = try p.call("bench.oneWay", ["size": 64, "count": 2_000])
        XCTAssertEqual(oneWay["count"], 2_000)
        XCTAssertEqual(oneWay["bytes"], 64)
        try assertRate(oneWay, count: 2_000, rate: "messagesPerSecond")
        XCTAssertEqual(try Received.lastSeq(w) - receivedBefore, 2_000, "the watch received each message once")

        let userInfo = try p.call("bench.userInfo", ["count": 1_000, "batch": 100])
        XCTAssertEqual(userInfo["count"], 1_000)
        try assertRate(userInfo, count: 1_000, rate: "transfersPerSecond")
        XCTAssertEqual(try p.call("status")["outstandingUserInfoTransfers"], 0, "every transfer was acknowledged")
        XCTAssertEqual(try Received.userInfos(w).count, 1_000, "the watch committed every transfer once")
    }

    /// `rate` is `count` divided by `seconds`, as the docs say.
    private func assertRate(_ result: JSONObject, count: Double, rate: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let seconds = try XCTUnwrap(result["seconds"]?.doubleValue, file: file, line: line)
        let perSecond = try XCTUnwrap(result[rate]?.doubleValue, file: file, line: line)
        XCTAssertGreaterThan(seconds, 0, file: file, line: line)
        XCTAssertEqual(perSecond, count / seconds, accuracy: perSecond * 1e-6, "\(result)", file: file, line: line)
    }

    func testArgumentsAndReachabilityAreChecked() throws {
        let (_, _, p, w) = try startActivatedPair()
        assertControlError("control", 3) { try p.call("bench.roundTrip", ["kind": "json"]) }
        assertControlError("control", 3) { try p.call("bench.oneWay", ["window": 0]) }
        assertControlError("control", 3) { try p.call("bench.userInfo", ["count": "many"]) }
        assertControlError("control", 2) { try p.call("bench.nothing") }
        _ = try w.call("app.setState", ["state": "background"])
        eventually("the watch to become unreachable") { try p.call("status")["isReachable"] == false }
        assertControlError("WCErrorDomain", 7007) { try p.call("bench.roundTrip", ["count": 5]) }
    }
}
