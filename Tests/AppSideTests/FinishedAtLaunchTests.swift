import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// `WCSession.h`, `session:didFinishUserInfoTransfer:error:` (and the same for files): "Will be
/// called on next launch if the sender was not running when the user info finished." With real
/// app processes and a restart of phoned in between.
final class FinishedAtLaunchTests: AppSideTestCase {
    /// The outstanding transfers of the phone's session, by kind.
    private func outstanding(_ pair: WatchLinkPair) throws -> (userInfo: [JSONValue], files: [JSONValue]) {
        let userInfo = try control(pair.phone, "userInfo.outstanding")["transfers"]?.arrayValue ?? []
        let files = try control(pair.phone, "file.outstanding")["transfers"]?.arrayValue ?? []
        return (userInfo, files)
    }

    private func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw AppProcessError("timed out waiting for \(what)") }
            usleep(20_000)
        }
    }

    func testTransfersThatFinishedWhileThePhoneAppWasNotRunningAreToldAtItsNextLaunchOnce() throws {
        let pair = try startWatchLinkPair(activate: true)
        let source = pair.phone.home + "/photo.jpg"
        try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: source))
        _ = try control(pair.phone, "link.set", ["up": false])

        // The app queues two userInfo and two files while the watch is out of reach, and quits.
        let first = try launchActivated("phone-app-1", on: pair.phone, of: pair)
        first.send(["cmd": "transferUserInfo", "userInfo": ["n": 1]])
        first.send(["cmd": "transferUserInfo", "userInfo": ["n": 2]])
        first.send(["cmd": "transferFile", "path": source, "metadata": ["kind": "delivered"]])
        first.send(["cmd": "transferFile", "path": source, "metadata": ["kind": "timedOut"]])
        try waitUntil("four queued transfers") {
            let o = try outstanding(pair); return o.userInfo.count == 2 && o.files.count == 2
        }
        first.stop()

        // One of each times out, the others reach the watch, while the app is not running; then
        // phoned restarts.
        let queued = try outstanding(pair)
        let failingUserInfo = try XCTUnwrap(queued.userInfo.last?["transferId"]?.stringValue)
        let failingFile = try XCTUnwrap(queued.files.last?["transferId"]?.stringValue)
        XCTAssertEqual(try control(pair.phone, "transfer.timeOut", ["transferId": .string(failingUserInfo)])["timedOut"], true)
        XCTAssertEqual(try control(pair.phone, "transfer.timeOut", ["transferId": .string(failingFile)])["timedOut"], true)
        _ = try control(pair.phone, "link.set", ["up": true])
        try waitUntil("the watch's acknowledgements") {
            let o = try outstanding(pair); return o.userInfo.isEmpty && o.files.isEmpty
        }
        pair.phone.stop()
        try pair.phone.startAndWait()

        let second = try launchActivated("phone-app-2", on: pair.phone, of: pair)
        let userInfo = try second.waitFor("didFinishUserInfo", count: 2)
        let files = try second.waitFor("didFinishFile", count: 2)
        XCTAssertEqual(
            Set(userInfo.map { "\($0["userInfo"] as? [String: Int] ?? [:]) \($0["error"] ?? "")" }),
            ["[\"n\": 1] <null>", "[\"n\": 2] 7017"], "each with its userInfo and its outcome")
        XCTAssertEqual(
            Set(files.map { "\($0["metadata"] as? [String: String] ?? [:]) \($0["error"] ?? "")" }),
            ["[\"kind\": \"delivered\"] <null>", "[\"kind\": \"timedOut\"] 7017"])
        XCTAssertTrue((userInfo + files).allSatisfy { $0["isTransferring"] as? Bool == false })
        let delivered = try XCTUnwrap(files.first { $0["error"] is NSNull })
        XCTAssertEqual(delivered["total"] as? Int, 5_000)
        XCTAssertEqual(delivered["completed"] as? Int, 5_000)

        // Told once: the next launch hears nothing of them.
        second.send(["cmd": "status"])
        try second.waitFor("status")
        second.stop()
        let third = try launchActivated("phone-app-3", on: pair.phone, of: pair)
        third.send(["cmd": "sendMessage", "message": ["barrier": true], "wantsReply": true])
        third.send(["cmd": "status"])
        try third.waitFor("status")
        XCTAssertFalse(third.names.contains("didFinishUserInfo") || third.names.contains("didFinishFile"), "\(third.names)")
        let trace = try control(pair.phone, "trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
        XCTAssertEqual(trace.filter { $0["name"] == "userInfo.didFinish" && $0["seq"] != nil }.count, 2, "traced as told at a launch")
    }
}
