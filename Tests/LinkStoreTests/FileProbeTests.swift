import Foundation
import LinkSystem
import XCTest

@testable import LinkStore

/// A new database file is published only once it and its name are durable: a failed sync is an
/// error, never ignored.
final class FileProbeTests: DirectoryTestCase {
    private func makeScratch() throws -> String {
        let scratch = directory.file("phone.db.new")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: scratch))
        return scratch
    }

    func testAFailedSyncOfTheNewFileIsAnErrorAndPublishesNothing() throws {
        let scratch = try makeScratch()
        let path = directory.file("phone.db")
        XCTAssertThrowsError(
            try FileProbe.publish(scratch, as: path) { _, path throws(SystemError) in
                throw SystemError(operation: "fsync", errno: Errno(rawValue: EIO), path: path)
            }
        ) { error in
            XCTAssertEqual(error as? StoreFileError, .inaccessible(path: scratch, operation: "fsync", errno: EIO))
        }
        XCTAssertEqual(try directory.contents(), [], "neither the scratch file nor the database is left")
    }

    func testAFailedSyncOfTheDirectoryIsAnError() throws {
        let scratch = try makeScratch()
        let path = directory.file("phone.db")
        var synced: [String] = []
        XCTAssertThrowsError(
            try FileProbe.publish(scratch, as: path) { _, path throws(SystemError) in
                synced.append(path)
                if path == self.directory.path { throw SystemError(operation: "fsync", errno: Errno(rawValue: EIO), path: path) }
            }
        ) { error in
            XCTAssertEqual(error as? StoreFileError, .inaccessible(path: directory.path, operation: "fsync", errno: EIO))
        }
        XCTAssertEqual(synced, [scratch, directory.path])
    }

    func testBothSyncsSucceedingPublishesTheFile() throws {
        let scratch = try makeScratch()
        let path = directory.file("phone.db")
        try FileProbe.publish(scratch, as: path)
        XCTAssertEqual(try directory.contents(), ["phone.db"])
        XCTAssertEqual(try fileBytes(path), [1, 2, 3])
    }
}
