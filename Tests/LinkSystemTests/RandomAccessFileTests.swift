#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem
import TestSupport
import XCTest

final class RandomAccessFileTests: XCTestCase {
    func testPositionedWritesAndReadsTruncateAndSync() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/partial"
            let file = try RandomAccessFile(path: path, mode: .readWrite)
            XCTAssertEqual(try fileMode(path), 0o600)
            try [UInt8]("world".utf8).withUnsafeBytes { try file.write($0, at: 6) }
            try [UInt8]("hello ".utf8).withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronizeData()
            XCTAssertEqual(try file.size(), 11)
            var buffer = [UInt8](repeating: 0, count: 20)
            let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            XCTAssertEqual(count, 11, "a read stops at the end of the file")
            XCTAssertEqual(String(decoding: buffer.prefix(count), as: UTF8.self), "hello world")
            try file.truncate(to: 5)
            try file.synchronize()
            XCTAssertEqual(try file.size(), 5)
            XCTAssertTrue(try file.isRegularFile)
            file.close()
            XCTAssertEqual(FileSystem.regularFileSize(path), 5)
        }
    }

    func testCreateNewRefusesAnExistingFileAndReadRefusesAMissingOne() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/copy"
            let file = try RandomAccessFile(path: path, mode: .createNew)
            try [UInt8](repeating: 7, count: 3).withUnsafeBytes { try file.write($0) }
            file.close()
            XCTAssertThrowsError(try RandomAccessFile(path: path, mode: .createNew)) { error in
                XCTAssertEqual((error as? SystemError)?.errno, .fileExists)
                XCTAssertTrue(String(describing: error).contains(path))
            }
            XCTAssertThrowsError(try RandomAccessFile(path: directory + "/missing", mode: .read)) { error in
                XCTAssertEqual((error as? SystemError)?.errno, .noSuchFileOrDirectory)
            }
            let reader = try RandomAccessFile(path: path, mode: .read)
            var buffer = [UInt8](repeating: 0, count: 8)
            XCTAssertEqual(try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }, 3)
            XCTAssertEqual(try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }, 0)
            XCTAssertFalse(try RandomAccessFile(path: directory, mode: .read).isRegularFile, "a directory opens but is not regular")
        }
    }

    func testRenameRemoveAndSyncDirectory() throws {
        try withTemporaryDirectory { directory in
            let from = directory + "/a", to = directory + "/b"
            try FileSystem.writeFileAtomically(from, [1, 2], mode: 0o600)
            try FileSystem.rename(from, to: to)
            try FileSystem.synchronizeDirectory(directory)
            XCTAssertNil(FileSystem.regularFileSize(from))
            XCTAssertEqual(FileSystem.regularFileSize(to), 2)
            XCTAssertTrue(try FileSystem.removeFile(to))
            XCTAssertFalse(try FileSystem.removeFile(to), "nothing to remove is not an error")
        }
    }

    func testNoSpaceErrors() {
        XCTAssertTrue(Errno.noSpace.isNoSpace)
        XCTAssertTrue(Errno(rawValue: EFBIG).isNoSpace)
        XCTAssertTrue(Errno(rawValue: EDQUOT).isNoSpace)
        XCTAssertFalse(Errno.permissionDenied.isNoSpace)
    }
}
