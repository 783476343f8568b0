import Foundation
import LinkClient
import LinkJSON
import WatchLinkTesting
import XCTest

/// The fixture the package offers: a phone and its watches for a test, stopped by pid.
final class WatchLinkPairTests: XCTestCase {
    func testAPairWithTwoWatchesStartsLinkedAndStopsLeavingNothingButKeptLogs() throws {
        let keep = NSTemporaryDirectory() + "/wl-keep-\(getpid())"
        setenv("WATCHLINK_KEEP_DIR", keep, 1)
        defer {
            unsetenv("WATCHLINK_KEEP_DIR")
            try? FileManager.default.removeItem(atPath: keep)
        }
        let pair = try WatchLinkPair.start(watchCount: 2, activate: true)
        let p = try pair.phone.client()
        defer { p.close() }
        let paired = try p.call("status")["pairedWatches"]?.arrayValue ?? []
        XCTAssertEqual(paired.map { $0["deviceId"] }, ["watch-1", "watch-2"])
        XCTAssertEqual(paired.map { $0["isConnected"] }, [true, true])
        XCTAssertEqual(pair.environment(for: pair.watches[1])["WATCHLINK_HOME"], pair.watches[1].home)
        XCTAssertEqual(pair.environment(for: pair.phone)["WATCHLINK_SIDE"], "phone")
        let pids = ([pair.phone] + pair.watches).map(\.pid)
        let homes = Set(([pair.phone] + pair.watches).map(\.home))

        let kept = try XCTUnwrap(pair.stop(keepingLogs: true))
        XCTAssertTrue(kept.hasPrefix(keep), kept)
        let logs = try FileManager.default.contentsOfDirectory(atPath: kept).sorted()
        XCTAssertEqual(logs, ["phone.trace", "phoned.log", "trace.html", "watch-1.trace", "watch-2.trace", "watchd-1.log", "watchd-2.log"])
        XCTAssertTrue(try String(contentsOfFile: kept + "/phoned.log", encoding: .utf8).contains("paired with watch 'watch-2'"))
        let page = try String(contentsOfFile: kept + "/trace.html", encoding: .utf8)
        for lane in ["phone", "link", "watch-1", "watch-2"] {
            XCTAssertTrue(page.contains("data-lane=\"\(lane)\""), "trace.html has a lane for \(lane)")
        }
        XCTAssertTrue(page.contains("HELLO watch 'watch-2'"), "the second watch's handshake is in the picture")
        XCTAssertTrue(page.contains("watchd stopped"), "the trace files run to the daemons' stop")
        for pid in pids { XCTAssertEqual(kill(pid, 0), -1, "process \(pid) is gone") }
        for home in homes { XCTAssertFalse(FileManager.default.fileExists(atPath: home), "\(home) is removed") }
        XCTAssertNil(pair.stop(keepingLogs: true), "stopping twice does nothing")
    }
}
