import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WatchLinkTesting
import XCTest

/// phoned and watchd do all their work on one thread: the release build relies on it, counting
/// references without atomic instructions (scripts/build-release.sh). A library that starts a
/// thread of its own, or a change that hands work to one, fails this test before it can corrupt
/// a reference count in a release build.
final class DaemonThreadTests: DaemonTestCase {
    private func threads(of pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").sorted()
    }

    func testEachDaemonRunsOneThroughEveryKindOfWork() throws {
        if sanitizer == "thread" { throw XCTSkip("TSan's runtime runs a thread of its own in each daemon") }
        let (phone, watch, p, w) = try startActivatedPair()
        _ = try w.call("replies.set", ["mode": "echo"])
        let events = try subscribed(watch)
        // The link: a message and its reply, queued transfers, a context, a file.
        XCTAssertEqual(try p.call("message.send", ["message": ["k": "v"], "wantsReply": true])["reply"], ["k": "v"])
        _ = try p.call("userInfo.transfer", ["userInfo": ["n": 1]])
        _ = try p.call("complication.transfer", ["userInfo": ["temp": 21]])
        _ = try p.call("context.update", ["context": ["v": 1]])
        let file = home + "/thread-test.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(repeating: 7, count: 200_000)))
        _ = try p.call("file.transfer", ["path": .string(file)])
        _ = try events.waitForEvent("file.received", timeoutSeconds: 30)
        // The APNs endpoint: a provider's push over TLS and HTTP/2.
        let token = try XCTUnwrap(p.call("push.register", ["types": ["fileProvider"]])["token"]?.stringValue)
        let provider = try WatchLinkPushProvider.configure(phone)
        defer { provider.close() }
        let response = try provider.sendFileProviderChange(
            container: "NSFileProviderRootContainerItemIdentifier", domain: "main", to: token)
        XCTAssertEqual(response.status, 200, "\(response)")
        // The trace and the state written to disk.
        XCTAssertFalse(try p.call("trace.get", ["limit": 5])["entries"]?.arrayValue?.isEmpty ?? true)

        for daemon in [phone, watch] {
            let threads = try threads(of: daemon.pid)
            XCTAssertEqual(threads.count, 1, "threads of pid \(daemon.pid): \(threads)")
        }
    }
}
