#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem
import TestSupport
import XCTest

final class FileSystemTests: XCTestCase {
    func testEnsurePrivateDirectoryCreatesNestedDirectoriesWith0700() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/a/b/home"
            let fixed = try FileSystem.ensurePrivateDirectory(path)
            XCTAssertFalse(fixed)
            XCTAssertTrue(FileSystem.directoryExists(path))
            XCTAssertEqual(try fileMode(path), 0o700)
            XCTAssertEqual(try fileMode(directory + "/a"), 0o700)
            XCTAssertFalse(try FileSystem.ensurePrivateDirectory(path), "already private")
        }
    }

    func testEnsurePrivateDirectoryFixesLooserModes() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/home"
            XCTAssertEqual(mkdir(path, 0o755), 0)
            XCTAssertEqual(chmod(path, 0o755), 0)
            XCTAssertTrue(try FileSystem.ensurePrivateDirectory(path))
            XCTAssertEqual(try fileMode(path), 0o700)
        }
    }

    func testEnsurePrivateDirectoryRefusesAFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/home"
            try FileSystem.writeFileAtomically(path, [], mode: 0o600)
            XCTAssertThrowsError(try FileSystem.ensurePrivateDirectory(path)) { error in
                XCTAssertTrue(String(describing: error).contains(path))
                XCTAssertTrue(String(describing: error).contains("not a directory"))
            }
            XCTAssertThrowsError(try FileSystem.ensurePrivateDirectory(path + "/below")) { error in
                XCTAssertTrue(String(describing: error).contains(path), "\(error)")
            }
        }
    }

    func testAtomicWriteAndRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/pairing.key"
            let first = patternBytes(count: 32)
            try FileSystem.writeFileAtomically(path, first, mode: 0o600)
            XCTAssertEqual(try FileSystem.readFile(path), first)
            XCTAssertEqual(try fileMode(path), 0o600)

            let second = patternBytes(count: 200_000, seed: 9)
            try FileSystem.writeFileAtomically(path, second, mode: 0o644)
            XCTAssertEqual(try FileSystem.readFile(path), second)
            XCTAssertEqual(try fileMode(path), 0o644)
            XCTAssertEqual(try FileSystem.directoryEntries(directory), ["pairing.key"], "no temporary file left")

            try FileSystem.writeFileAtomically(path, [], mode: 0o600)
            XCTAssertEqual(try FileSystem.readFile(path), [])
        }
    }

    func testReadingAMissingFileNamesThePath() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/nothing"
            XCTAssertFalse(FileSystem.fileExists(path))
            XCTAssertThrowsError(try FileSystem.readFile(path)) { error in
                XCTAssertEqual((error as? SystemError)?.errno, .noSuchFileOrDirectory)
                XCTAssertTrue(String(describing: error).contains(path))
            }
            XCTAssertThrowsError(try FileSystem.readFile(directory)) { error in
                XCTAssertTrue(String(describing: error).contains(directory))
            }
        }
    }

    func testTemporaryDirectoryIsPrivateAndRemovable() throws {
        let directory = try FileSystem.makeTemporaryDirectory()
        XCTAssertTrue(directory.hasPrefix("/tmp/wlrt-"))
        XCTAssertEqual(try fileMode(directory), 0o700)
        try FileSystem.ensurePrivateDirectory(directory + "/x/y")
        try FileSystem.writeFileAtomically(directory + "/x/y/f", [1], mode: 0o600)
        XCTAssertEqual(symlink(directory + "/x", directory + "/link"), 0)
        try FileSystem.removeRecursively(directory)
        XCTAssertFalse(FileSystem.fileExists(directory))
        try FileSystem.removeRecursively(directory)
    }
}
