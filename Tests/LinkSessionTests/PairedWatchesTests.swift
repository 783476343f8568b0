import XCTest
@testable import LinkSession
import LinkJSON
import WireProtocol

final class PairedWatchesTests: XCTestCase {
    func testTheFirstWatchIsActiveAndKeepsThePhoneDatabase() {
        var paired = PairedWatches()
        XCTAssertNil(paired.activeDeviceId)
        XCTAssertEqual(paired.admit("watch-a"), .added(.init(deviceId: "watch-a", directory: "")))
        XCTAssertEqual(paired.admit("watch-b"), .added(.init(deviceId: "watch-b", directory: "watches/watch-b")))
        XCTAssertEqual(paired.activeDeviceId, "watch-a", "only the first watch becomes active by itself")
        XCTAssertEqual(paired.admit("watch-b"), .known(.init(deviceId: "watch-b", directory: "watches/watch-b")))
        XCTAssertEqual(paired.watches.map(\.deviceId), ["watch-a", "watch-b"])
    }

    func testAPhoneKeepsAtMostTheMaximumOfWatches() {
        var paired = PairedWatches()
        for n in 0..<PairedWatches.maximumCount { _ = paired.admit("w\(n)") }
        XCTAssertEqual(paired.admit("one-too-many"), .full)
        XCTAssertEqual(paired.admit("w3"), .known(paired.watch("w3")!), "a paired watch still links")
        XCTAssertEqual(paired.watches.count, PairedWatches.maximumCount)
    }

    func testSwitching() {
        var paired = PairedWatches()
        _ = paired.admit("watch-a")
        _ = paired.admit("watch-b")
        XCTAssertEqual(try paired.switchTo("watch-a").get(), .alreadyActive)
        XCTAssertEqual(try paired.switchTo("watch-b").get(), .switched(from: "watch-a"))
        XCTAssertEqual(paired.activeDeviceId, "watch-b")
        guard case .failure(.wc(.invalidParameter, let message)) = paired.switchTo("watch-z") else {
            return XCTFail("an unknown watch is 7008")
        }
        XCTAssertTrue(message.contains("'watch-z'") && message.contains("'watch-a'"), message)
        XCTAssertEqual(paired.activeDeviceId, "watch-b", "a refused switch changes nothing")
        var empty = PairedWatches()
        guard case .failure(.wc(.invalidParameter, let none)) = empty.switchTo("watch-a") else {
            return XCTFail("no watch has linked yet")
        }
        XCTAssertTrue(none.contains("no watch has linked"), none)
    }

    func testDirectoriesAreSafeAndDistinctWhateverTheDeviceId() {
        var paired = PairedWatches()
        _ = paired.admit("first")
        let hostile = [
            "../../etc", "a/b", "a_b", ".hidden", "Watch", "watch", "nul\u{0}byte", "ü-watch",
            String(repeating: "x", count: 255), String(repeating: "/", count: 255),
        ]
        for id in hostile { _ = paired.admit(id) }
        let directories = paired.watches.dropFirst().map(\.directory)
        XCTAssertEqual(Set(directories.map { $0.lowercased() }).count, hostile.count, "\(directories)")
        for directory in directories {
            XCTAssertTrue(directory.hasPrefix("watches/"), directory)
            let name = directory.dropFirst("watches/".count)
            XCTAssertFalse(name.isEmpty)
            XCTAssertFalse(name.hasPrefix("."), directory)
            XCTAssertLessThanOrEqual(name.utf8.count, 100, directory)
            XCTAssertTrue(
                name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "0123456789._-".unicodeScalars.contains($0)) },
                directory)
        }
        XCTAssertEqual(paired.watch("a_b")?.directory, "watches/a_b")
        XCTAssertNotEqual(paired.watch("a/b")?.directory, "watches/a_b")
    }

    func testTheFileRoundTrips() throws {
        var paired = PairedWatches()
        _ = paired.admit("watch-a")
        _ = paired.admit("watch/b")
        _ = paired.switchTo("watch/b")
        let decoded = try PairedWatches.decode(paired.encoded(), path: "/state/watches.json")
        XCTAssertEqual(decoded, paired)
        XCTAssertEqual(try PairedWatches.decode(PairedWatches().encoded(), path: "x"), PairedWatches())
    }

    /// The app's directory for a watch is new after each uninstall or unpairing; the count is
    /// kept in the file (absent while 0, so files written before it are read as they were).
    func testTheAppsDirectoryOfAWatchIsRenewedAndTheCountKept() throws {
        var paired = PairedWatches()
        _ = paired.admit("watch-a")
        _ = paired.admit("watch/b")
        XCTAssertEqual(paired.watch("watch-a")?.appDirectoryName, "watch-a")
        paired.renewAppDirectory(of: "watch-a")
        paired.renewAppDirectory(of: "watch-a")
        paired.renewAppDirectory(of: "never-paired")
        XCTAssertEqual(paired.watch("watch-a")?.appDirectoryName, "watch-a+2")
        XCTAssertEqual(paired.watch("watch/b")?.appDirectoryName, PairedWatches.directoryName(for: "watch/b"))
        XCTAssertFalse(paired.watch("watch/b")?.appDirectoryName.contains("+") ?? true)
        let decoded = try PairedWatches.decode(paired.encoded(), path: "/state/watches.json")
        XCTAssertEqual(decoded, paired)
        XCTAssertThrowsError(
            try PairedWatches.decode(
                Array(#"{"version": 1, "activeWatch": "a", "watches": [{"deviceId": "a", "directory": "", "appDirectoryGeneration": -1}]}"#.utf8),
                path: "/state/watches.json")
        ) { XCTAssertTrue("\($0)".contains("appDirectoryGeneration"), "\($0)") }
    }

    /// `watches.json` as Foundation's `JSONEncoder` wrote it before the phone used the
    /// project's JSON: sorted keys, pretty printed with `" : "`, slashes not escaped.
    func testAFileWrittenByFoundationsEncoderIsRead() throws {
        let text = """
            {
              "activeWatch" : "watch/b",
              "version" : 1,
              "watches" : [
                {
                  "deviceId" : "watch-a",
                  "directory" : ""
                },
                {
                  "deviceId" : "watch/b",
                  "directory" : "watches/watch_b-5d2c6a6a4d0f1e6b"
                }
              ]
            }
            """
        let decoded = try PairedWatches.decode(Array(text.utf8), path: "/state/watches.json")
        XCTAssertEqual(decoded.activeDeviceId, "watch/b")
        XCTAssertEqual(
            decoded.watches,
            [
                PairedWatches.Watch(deviceId: "watch-a", directory: ""),
                PairedWatches.Watch(deviceId: "watch/b", directory: "watches/watch_b-5d2c6a6a4d0f1e6b"),
            ])
        XCTAssertEqual(try PairedWatches.decode(decoded.encoded(), path: "x"), decoded)
        XCTAssertEqual(try JSON.parse(decoded.encoded()), try JSON.parse(text))
        let empty = try PairedWatches.decode(Array(#"{"version" : 1, "watches" : []}"#.utf8), path: "x")
        XCTAssertEqual(empty, PairedWatches())
        XCTAssertEqual(try JSON.parse(empty.encoded()), try JSON.parse(#"{"version" : 1, "watches" : []}"#))
    }

    func testABadFileIsRefusedNamingItAndWhatWasWrong() {
        let cases: [(String, String)] = [
            ("not json", "watches.json"),
            (#"{"version": 2, "watches": []}"#, "version 2"),
            (#"{"version": 1, "activeWatch": "b", "watches": [{"deviceId": "a", "directory": ""}]}"#, "'b' is not in the list"),
            (#"{"version": 1, "watches": [{"deviceId": "a", "directory": ""}]}"#, "no active watch"),
            (#"{"version": 1, "activeWatch": "a", "watches": [{"deviceId": "a", "directory": "../a"}]}"#, "'../a'"),
            (#"{"version": 1, "activeWatch": "a", "watches": [{"deviceId": "a", "directory": "watches/.."}]}"#, "'watches/..'"),
            (#"{"version": 1, "activeWatch": "a", "watches": [{"deviceId": "a", "directory": ""}, {"deviceId": "a", "directory": "watches/a"}]}"#, "twice"),
            (
                #"{"version": 1, "activeWatch": "a", "watches": [{"deviceId": "a", "directory": "watches/x"}, {"deviceId": "b", "directory": "watches/X"}]}"#,
                "two watches"
            ),
            (#"{"version": 1, "activeWatch": "", "watches": [{"deviceId": "", "directory": ""}]}"#, "device id"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try PairedWatches.decode(Array(text.utf8), path: "/state/watches.json"), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains("/state/watches.json"), message)
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
            }
        }
    }
}
