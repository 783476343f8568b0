import Foundation
import LinkClient
import LinkControl
import XCTest

/// `received.list` keeps the newest immediate messages within `--received-list-bytes`.
final class ReceivedListTests: DaemonTestCase {
    func testTheByteBudgetKeepsTheNewestMessages() throws {
        let (_, _, p, w) = try startActivatedPair(watchArgs: ["--received-list-bytes", "20000"])
        // Three messages of 8 KiB: the first falls out of a 20,000-byte budget.
        let payloads = (1...3).map { index in Data(repeating: UInt8(index), count: 8192).base64EncodedString() }
        for payload in payloads {
            _ = try p.call("message.sendData", ["data": ["$data": .string(payload)], "wantsReply": true])
        }
        let items = try XCTUnwrap(w.call("received.list")["items"]?.arrayValue)
        XCTAssertEqual(items.compactMap { $0["data"]?["$data"]?.stringValue }, Array(payloads.suffix(2)))
        XCTAssertEqual(items.compactMap { $0["seq"]?.intValue }, [2, 3])

        // The default (256 KiB) keeps all three on the phone's side.
        for payload in payloads {
            _ = try w.call("message.sendData", ["data": ["$data": .string(payload)], "wantsReply": true])
        }
        let phoneItems = try XCTUnwrap(p.call("received.list")["items"]?.arrayValue)
        XCTAssertEqual(phoneItems.compactMap { $0["data"]?["$data"]?.stringValue }, payloads)
    }

    func testABadBudgetIsRefusedByName() throws {
        for value in ["-1", "lots", "2000000000"] {
            let outcome = try children.run(Binaries.path("watchd"), ["--home", home, "--received-list-bytes", value])
            XCTAssertEqual(outcome.reason, .exit, "value \(value)")
            XCTAssertEqual(outcome.status, 2, "value \(value)")
            let stderr = outcome.standardError
            XCTAssertTrue(stderr.contains("--received-list-bytes must be an integer from 0 to 1073741824, got '\(value)'"), stderr)
        }
    }
}
