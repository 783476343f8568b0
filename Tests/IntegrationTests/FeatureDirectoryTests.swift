import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Each feature of a daemon makes its own directory durable at start (synced into its parent),
/// whether it made the directory then or found it, so that what it keeps there does not depend
/// on another part syncing the same parent later (docs/durability.md, "The stores").
final class FeatureDirectoryTests: PowerLossTestCase {
    /// `push/` as a start killed between its `mkdir` and its sync leaves it (there, not durable);
    /// the PowerAuth feature, which starts after the push feature and whose databases sync the
    /// same state directory, cannot open its store and stops the daemon before it syncs anything.
    /// What the push feature keeps outlives a power cut by its own sync.
    func testThePushFeaturesDirectoryIsDurableByItsOwnSyncWhateverStartsAfterIt() throws {
        let phone = restartable("phoned")
        let disk = try mountDisk(for: phone)
        try phone.startAndWait(activate: false)
        XCTAssertEqual(phone.stop(), 0)
        let push = phone.stateDirectory + "/push"
        let pushFiles = try FileManager.default.contentsOfDirectory(atPath: push).sorted()
        XCTAssertTrue(pushFiles.contains("ca.pem"), "\(pushFiles)")
        try FileManager.default.removeItem(atPath: push)
        try syncDirectory(phone.stateDirectory)
        XCTAssertEqual(mkdir(push, 0o700), 0)

        try disk.fail("open", nth: 1, errno: "EIO", name: "powerauth.db")
        try phone.start(activate: false)
        XCTAssertEqual(phone.waitForExit(timeout: 20), 1, phone.logTail())
        XCTAssertTrue(phone.log.contains("cannot open the PowerAuth store"), phone.logTail())
        XCTAssertEqual(try disk.faults().count, 1, "the PowerAuth store's open failed")
        try cutPower(phone)

        XCTAssertEqual(
            (try? FileManager.default.contentsOfDirectory(atPath: push))?.sorted(), pushFiles,
            "push/ and what the push feature synced in it outlived the cut")
        try phone.startAndWait(activate: false)
    }
}
