import Foundation
import LinkStore
import XCTest

/// A directory under the system temporary directory, removed with everything in it.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("linkstore-test-XXXXXX")
        var bytes = Array(template.utf8CString)
        guard let created = mkdtemp(&bytes) else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        path = String(cString: created)
    }

    func file(_ name: String) -> String {
        path + "/" + name
    }

    /// The names in the directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

func fileBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
}

/// Asserts that `body` throws a ``StoreFileError`` and returns it.
func assertRefused<T>(
    _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line
) -> StoreFileError? {
    do {
        _ = try body()
        XCTFail("the file was accepted", file: file, line: line)
    } catch let error as StoreFileError {
        return error
    } catch {
        XCTFail("expected a StoreFileError, got \(error)", file: file, line: line)
    }
    return nil
}

/// Asserts that `body` throws an ``SQLiteError`` and returns it.
func assertSQLiteError<T>(
    _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line
) -> SQLiteError? {
    do {
        _ = try body()
        XCTFail("no error was thrown", file: file, line: line)
    } catch let error as SQLiteError {
        return error
    } catch {
        XCTFail("expected an SQLiteError, got \(error)", file: file, line: line)
    }
    return nil
}

/// Fills `count` bytes with a pattern that depends on `seed`, so each row's content can be
/// recognised.
func pattern(_ seed: Int, count: Int) -> [UInt8] {
    var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

/// A test case with a fresh temporary directory for each test, removed after it.
class DirectoryTestCase: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
        super.tearDown()
    }
}
