import LinkClient
import LinkControl
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
        let p50 = try XCTUnwrap(roundTrip["p50Us"]?.doubleValue)
        let p99 = try XCTUnwrap(roundTrip["p99Us"]?.doubleValue)
        XCTAssertGreaterThan(p50, 0)
        XCTAssertGreaterThanOrEqual(p99, p50)

        let dictionary = try p.call("bench.roundTrip", ["size": 200, "count": 20, "kind": "dictionary"])
        XCTAssertEqual(dictionary["count"], 20)
        // About `size` bytes encoded: ten different strings, not one stored once.
        let large = try p.call("bench.roundTrip", ["size": 16_384, "count": 5, "kind": "dictionary"])
        let encoded = try XCTUnwrap(large["bytes"]?.intValue)
        XCTAssertTrue((16_384...16_384 + 256).contains(encoded), "a 16 KiB dictionary encodes to \(encoded) bytes")

        let oneWay = try p.call("bench.oneWay", ["size": 64, "count": 2_000])
        XCTAssertEqual(oneWay["count"], 2_000)
        XCTAssertGreaterThan(oneWay["messagesPerSecond"]?.doubleValue ?? 0, 0)

        let userInfo = try p.call("bench.userInfo", ["count": 1_000, "batch": 100])
        XCTAssertEqual(userInfo["count"], 1_000)
        XCTAssertGreaterThan(userInfo["transfersPerSecond"]?.doubleValue ?? 0, 0)
        XCTAssertEqual(try p.call("status")["outstandingUserInfoTransfers"], 0, "every transfer was acknowledged")
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
