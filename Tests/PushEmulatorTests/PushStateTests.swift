import XCTest
import LinkJSON
import LinkSystem
@testable import PushEmulator

final class PushStateTests: XCTestCase {
    /// `push/state.json` as Foundation's `JSONEncoder` (sorted keys, pretty printed, `/`
    /// escaped) wrote it before the push emulator used the project's JSON.
    private let foundationFile = #"""
        {
          "bundleId" : "com.example.app",
          "invalidated" : {
            "0a1b" : 1700000000123
          },
          "keys" : {
            "KEY123" : "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\/x+y\n-----END PUBLIC KEY-----\n"
          },
          "teamId" : "TEAM123456",
          "token" : "c0ffee",
          "tokenUpdateIntervalSeconds" : 1200,
          "types" : [
            "fileProvider",
            "voIP"
          ]
        }
        """#

    private func temporaryFile(_ contents: String) throws -> String {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "pushstate-")
        addTeardownBlock { try? FileSystem.removeRecursively(directory) }
        let path = directory + "/state.json"
        try FileSystem.writeFileAtomically(path, Array(contents.utf8), mode: 0o600)
        return path
    }

    func testAFileWrittenByFoundationsEncoderIsRead() throws {
        let state = try PushState.load(try temporaryFile(foundationFile))
        var expected = PushState()
        expected.token = "c0ffee"
        expected.types = ["fileProvider", "voIP"]
        expected.invalidated = ["0a1b": 1_700_000_000_123]
        expected.bundleId = "com.example.app"
        expected.teamId = "TEAM123456"
        expected.tokenUpdateIntervalSeconds = 1200
        expected.keys = ["KEY123": "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/x+y\n-----END PUBLIC KEY-----\n"]
        XCTAssertEqual(state, expected)
    }

    func testSavedStateReadsBackWithTheSameShape() throws {
        let path = try temporaryFile(foundationFile)
        let state = try PushState.load(path)
        try state.save(path)
        XCTAssertEqual(try PushState.load(path), state)
        let saved = try XCTUnwrap(JSON.parse(FileSystem.readFile(path)).objectValue)
        let old = try XCTUnwrap(JSON.parse(foundationFile).objectValue)
        // A file of an earlier version gains the newer fields, with their defaults, in key order.
        XCTAssertEqual(saved.keys, saved.keys.sorted())
        XCTAssertEqual(
            Set(saved.keys),
            Set(old.keys).union([
                "deviceTokenRateLimit", "environment", "expiredTokens", "keyEnvironments",
                "lowPriorityDelayMs", "online", "oneStreamUntilAuthenticated",
                "serviceAvailable", "stored",
            ]))
        for key in old.keys { XCTAssertEqual(saved[key], old[key], key) }
        XCTAssertEqual(saved["online"], true)
        XCTAssertEqual(saved["environment"], "development")
        XCTAssertEqual(saved["stored"], [])
        XCTAssertEqual(saved["oneStreamUntilAuthenticated"], true)
    }

    func testAStateWithoutATokenOmitsIt() throws {
        let path = try temporaryFile("{}")
        try PushState().save(path)
        XCTAssertNil(try JSON.parse(FileSystem.readFile(path))["token"])
        XCTAssertEqual(try PushState.load(path), PushState())
    }

    func testABadFileIsRefusedNamingIt() throws {
        for text in [
            "not json", "[]", #"{"types": []}"#,
            #"{"bundleId": "a", "invalidated": {}, "keys": {}, "teamId": "t", "tokenUpdateIntervalSeconds": "x", "types": []}"#,
        ] {
            let path = try temporaryFile(text)
            XCTAssertThrowsError(try PushState.load(path), text) { error in
                XCTAssertTrue("\(error)".contains(path), "\(error)")
            }
        }
    }
}
