import Foundation
import XCTest

/// The PowerAuth SDK's own test vectors (copied unchanged from the mobile SDK's
/// `TestData/pa2/`, Apache License 2.0). A copy travels with the package in `Vectors/`, so a
/// fresh clone runs them; when the reference folder `../shared/reference/powerauth-test-vectors/`
/// stands beside the package, the cases are read from there and the copy must equal it byte
/// for byte.
enum PowerAuthVectors {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The copy in the package.
    static var bundled: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")
    }

    /// The reference folder beside the package, when it is there.
    static var reference: URL {
        packageRoot.appendingPathComponent("../shared/reference/powerauth-test-vectors").standardizedFileURL
    }

    static var directory: URL {
        FileManager.default.fileExists(atPath: reference.path) ? reference : bundled
    }

    /// The `data` cases of one file: each case's `input` and `output` as string dictionaries.
    /// Skips (with the path in the message) only when neither folder is there.
    static func cases(_ name: String) throws -> [(input: [String: String], output: [String: String])] {
        let folder = directory
        guard FileManager.default.fileExists(atPath: folder.path) else {
            throw XCTSkip("the PowerAuth test vectors are neither at \(reference.path) nor at \(bundled.path)")
        }
        let data = try Data(contentsOf: folder.appendingPathComponent(name))
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
