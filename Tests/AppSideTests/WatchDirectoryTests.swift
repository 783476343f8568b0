import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// `watchDirectoryURL` as `WCSession.h` has it: "Use this directory to persist any data specific
/// to the selected Watch. The location of the URL will change when the selected Watch changes.
/// This directory will be deleted upon next launch if the watch app is uninstalled for the
/// selected Watch, or that Watch is unpaired. If the watch app is not installed for the selected
/// Watch the value will be nil."
final class WatchDirectoryTests: AppSideTestCase {
    private func directory(_ app: AppProcess, write name: String? = nil) throws -> (path: String?, files: [String]) {
        var command: [String: Any] = ["cmd": "watchDirectory"]
        if let name { command["write"] = name }
        let count = app.names.filter { $0 == "watchDirectory" }.count
        app.send(command)
        let line = try app.waitFor("watchDirectory", count: count + 1)[count]
        return (line["path"] as? String, line["files"] as? [String] ?? [])
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func testADirectoryPerWatchDeletedAtTheNextLaunchAfterAnUninstallOrAnUnpairing() throws {
        let pair = try startWatchLinkPair(watchCount: 2)
        var app = try launchActivated("phone-app-1", on: pair.phone, of: pair)
        let first = try XCTUnwrap(try directory(app, write: "first.txt").path)
        XCTAssertTrue(first.hasSuffix("/phone-app/Watches/watch-1"), first)

        // The selected watch changes: so does the directory, and the first one stays.
        app.stop()
        _ = try control(pair.phone, "device.switchWatch", ["deviceId": "watch-2"])
        app = try launchActivated("phone-app-2", on: pair.phone, of: pair)
        let second = try XCTUnwrap(try directory(app, write: "second.txt").path)
        XCTAssertTrue(second.hasSuffix("/phone-app/Watches/watch-2"), second)
        XCTAssertTrue(exists(first + "/first.txt"))

        // Uninstalled for the selected watch: nil at once, deleted at the next launch only.
        _ = try control(pair.phone, "device.set", ["isWatchAppInstalled": false])
        let told = try app.waitFor("watchStateDidChange").last
        XCTAssertEqual(told?["isWatchAppInstalled"] as? Bool, false)
        XCTAssertNil(try directory(app).path, "nil while the watch app is not installed, from the delegate's call on")
        XCTAssertTrue(exists(second + "/second.txt"), "not before the next launch")
        app.stop()
        _ = try control(pair.phone, "device.set", ["isWatchAppInstalled": true])
        app = try launchActivated("phone-app-3", on: pair.phone, of: pair)
        XCTAssertFalse(exists(second), "deleted at the next launch, though the app is installed again")
        let reinstalled = try directory(app)
        XCTAssertEqual(reinstalled.files, [], "a new, empty directory")
        XCTAssertNotEqual(reinstalled.path, second)
        XCTAssertTrue(exists(first + "/first.txt"), "the other watch's stays")

        // Unpaired: every watch's directory goes at the next launch, and there is none.
        app.stop()
        _ = try control(pair.phone, "device.set", ["isPaired": false])
        app = try launchActivated("phone-app-4", on: pair.phone, of: pair)
        XCTAssertNil(try directory(app).path)
        XCTAssertFalse(exists(first))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: pair.phone.home + "/phone-app/Watches"), [])
    }
}
