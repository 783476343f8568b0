import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The power-loss file system itself: what survives its cut is what was synced, and the faults
/// it injects are the ones it was told to.
final class PowerLossFileSystemTests: DaemonTestCase {
    private var disk: PowerLossFileSystem!

    /// Mounts the test's file system in its home (made by `setUp`, which runs after `setUpWithError`).
    private func mount() throws {
        disk = try PowerLossFileSystem(mountpoint: home + "/disk", controlPath: home + "/disk.fs")
    }

    override func tearDown() {
        disk?.unmount()
        super.tearDown()
    }

    private var root: String { disk.mountpoint }

    private func write(_ path: String, _ text: String, flags: Int32 = O_WRONLY | O_CREAT | O_TRUNC, sync: Bool = false) throws {
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw HarnessError("write \(path): \(String(cString: strerror(errno)))") }
        if sync, fsync(fd) != 0 { throw HarnessError("fsync \(path): \(String(cString: strerror(errno)))") }
    }

    /// 0, or the errno of the failed call.
    private func syncFile(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? 0 : errno
    }

    /// Makes directories in the mount's root and syncs the root, so that they outlive a cut.
    private func makeDurableDirectories(_ names: String...) throws {
        for name in names {
            guard mkdir(root + "/" + name, 0o700) == 0 else { throw HarnessError("mkdir \(name): \(String(cString: strerror(errno)))") }
        }
        try syncDirectory(root)
    }

    private func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    func testWhatWasSyncedSurvivesTheCutAndNothingElse() throws {
        try mount()
        try write(root + "/kept", "synced", sync: true)
        try write(root + "/kept", "+later", flags: O_WRONLY | O_APPEND)
        try write(root + "/unnamed", "synced data, its name never synced", sync: false)
        XCTAssertEqual(syncFile(root + "/unnamed"), 0)
        try syncDirectory(root)
        try write(root + "/created-after", "data synced, entry not", sync: true)
        XCTAssertEqual(read(root + "/kept"), "synced+later", "before the cut every write is visible")

        try disk.cut()
        XCTAssertEqual(read(root + "/kept"), "synced", "the write after the last fsync is gone")
        XCTAssertEqual(read(root + "/unnamed"), "synced data, its name never synced")
        XCTAssertNil(read(root + "/created-after"), "a file whose directory was not synced since its creation is gone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root).sorted(), ["kept", "unnamed"])
    }

    func testARenameLastsOnceItsDirectoryIsSynced() throws {
        try mount()
        try write(root + "/state", "old", sync: true)
        try syncDirectory(root)
        try write(root + "/state.tmp", "new", sync: true)
        XCTAssertEqual(rename(root + "/state.tmp", root + "/state"), 0)
        try disk.cut()
        XCTAssertEqual(read(root + "/state"), "old", "the rename was not synced")

        try write(root + "/state.tmp", "new", sync: true)
        XCTAssertEqual(rename(root + "/state.tmp", root + "/state"), 0)
        try syncDirectory(root)
        try disk.cut()
        XCTAssertEqual(read(root + "/state"), "new")
        XCTAssertNil(read(root + "/state.tmp"))

        // Across directories: syncing the destination makes the move whole.
        try makeDurableDirectories("a", "b")
        try write(root + "/a/file", "moved", sync: true)
        try syncDirectory(root + "/a")
        XCTAssertEqual(rename(root + "/a/file", root + "/b/file"), 0)
        try syncDirectory(root + "/b")
        try disk.cut()
        XCTAssertEqual(read(root + "/b/file"), "moved")
        XCTAssertNil(read(root + "/a/file"), "a synced rename has left its source")
    }

    /// A file moved out and back before either directory was synced is where it was: syncing
    /// the directory it passed through does not replay the first move over the second (the
    /// journal holds both, in order).
    func testAFileMovedAwayAndBackStaysWhereItEnded() throws {
        try mount()
        try makeDurableDirectories("inbox", "partial")
        try write(root + "/inbox/file", "received", sync: true)
        try syncDirectory(root + "/inbox")
        XCTAssertEqual(rename(root + "/inbox/file", root + "/partial/file"), 0)
        XCTAssertEqual(rename(root + "/partial/file", root + "/inbox/file"), 0)
        try syncDirectory(root + "/inbox")
        try write(root + "/partial/other", "another file", sync: true)
        try syncDirectory(root + "/partial")
        try disk.cut()
        XCTAssertEqual(read(root + "/inbox/file"), "received")
        XCTAssertNil(read(root + "/partial/file"))
        XCTAssertEqual(read(root + "/partial/other"), "another file")

        // Moved on to a third directory whose sync is the last: there, and only there.
        try makeDurableDirectories("third")
        XCTAssertEqual(rename(root + "/inbox/file", root + "/partial/file"), 0)
        XCTAssertEqual(rename(root + "/partial/file", root + "/third/file"), 0)
        try syncDirectory(root + "/partial")
        try syncDirectory(root + "/third")
        try disk.cut()
        XCTAssertEqual(read(root + "/third/file"), "received")
        XCTAssertNil(read(root + "/inbox/file"))
        XCTAssertNil(read(root + "/partial/file"))
    }

    /// As Linux: a failed fsync marks what was written clean without writing it, so the next
    /// fsync succeeds and the data is still not on the disk.
    func testAFailedFsyncLosesTheWritesBeforeItEvenWhenTheNextOneSucceeds() throws {
        try mount()
        try write(root + "/log", "first", sync: true)
        try syncDirectory(root)
        try write(root + "/log", "+second", flags: O_WRONLY | O_APPEND)
        try disk.fail("fsync", nth: 1, errno: "EIO", name: "log")
        XCTAssertEqual(syncFile(root + "/log"), EIO)
        XCTAssertEqual(syncFile(root + "/log"), 0, "the retry succeeds")
        try write(root + "/log", "+third", flags: O_WRONLY | O_APPEND, sync: true)
        XCTAssertEqual(read(root + "/log"), "first+second+third")
        try disk.cut()
        XCTAssertEqual(
            read(root + "/log"), "first\0\0\0\0\0\0\0+third",
            "what the failed fsync covered never reached the disk; what came after did")
    }

    func testTheNthCallOfAnOpFailsOnceWithTheErrnoAsked() throws {
        try mount()
        try disk.resetCounts()
        try disk.fail("write", nth: 2, errno: "ENOSPC", name: "data")
        try write(root + "/data", "one", flags: O_WRONLY | O_CREAT | O_APPEND)
        XCTAssertThrowsError(try write(root + "/data", "two", flags: O_WRONLY | O_APPEND)) {
            XCTAssertTrue("\($0)".contains("No space left on device"), "\($0)")
        }
        try write(root + "/data", "three", flags: O_WRONLY | O_APPEND)
        XCTAssertEqual(read(root + "/data"), "onethree")

        try disk.fail("rename", nth: 1, errno: "EIO")
        XCTAssertEqual(rename(root + "/data", root + "/moved"), -1)
        XCTAssertEqual(errno, EIO)
        try disk.fail("open", nth: 1, errno: "EIO", name: "data")
        XCTAssertEqual(open(root + "/data", O_RDONLY), -1)
        XCTAssertEqual(errno, EIO)
        XCTAssertEqual(try disk.count("write"), 3)
        XCTAssertEqual(try disk.faults().map { $0["op"]?.stringValue }, ["write", "rename", "open"])
        XCTAssertThrowsError(try disk.fail("chmod", nth: 1, errno: "EIO"), "an op it cannot fail is refused")
    }
}
