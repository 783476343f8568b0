import Foundation
import XCTest

/// The reference data the PowerAuth tests read, from the folder `reference/` of the data handed
/// to the project: `$WATCHLINK_SHARED_DIR` (which `scripts/test.sh` sets, `scripts/shared-dir.sh`),
/// else `../shared` beside the package. The repository holds none of it:
///
/// - `powerauth-test-vectors/`: the PowerAuth SDK's published vectors (the mobile SDK's
///   `src/PowerAuthTests/TestData/pa2/`, Apache License 2.0);
/// - `powerauth-real-transcripts/`: records computed by the SDK's C++ core 1.9.2 and
///   powerauth-java-crypto 1.9.0 (its README says what each file holds).
///
/// Every file is `{"description", "data": [{"input": {...}, "output": {...}}]}` with string
/// values. Without the folder a test says where it looked and is skipped.
enum PowerAuthVectors {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The folder of the data handed to the project.
    static var shared: URL {
        if let folder = ProcessInfo.processInfo.environment["WATCHLINK_SHARED_DIR"], !folder.isEmpty {
            return URL(fileURLWithPath: folder)
        }
        return packageRoot.appendingPathComponent("../shared").standardizedFileURL
    }

    /// The published vectors.
    static var reference: URL { shared.appendingPathComponent("reference/powerauth-test-vectors") }

    /// The real code's transcripts.
    static var transcripts: URL { shared.appendingPathComponent("reference/powerauth-real-transcripts") }

    typealias Case = (input: [String: String], output: [String: String])

    /// The `data` cases of one published vector file.
    static func cases(_ name: String) throws -> [Case] { try read(reference, name) }

    /// The records of one transcript file.
    static func records(_ name: String) throws -> [Case] { try read(transcripts, name) }

    private static func read(_ folder: URL, _ name: String) throws -> [Case] {
        let file = folder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw XCTSkip(
                "the PowerAuth reference file \(file.path) is not there ($WATCHLINK_SHARED_DIR, or ../shared beside the package: scripts/shared-dir.sh)")
        }
        let data = try Data(contentsOf: file)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let items = root["data"] as? [[String: Any]]
        else {
            XCTFail("\(name) has no data array")
            return []
        }
        return items.map { item in
            ((item["input"] as? [String: String]) ?? [:], (item["output"] as? [String: String]) ?? [:])
        }
    }

    static func bytes(_ base64: String?, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
        guard let base64, let data = Data(base64Encoded: base64) else {
            XCTFail("not base64: \(base64 ?? "nil")", file: file, line: line)
            return []
        }
        return Array(data)
    }
}
