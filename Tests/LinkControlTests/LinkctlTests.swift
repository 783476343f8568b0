import Foundation
import TestSupport
import XCTest
@testable import LinkControl
import LinkJSON

/// Runs the built `linkctl` executable against a test server.
final class LinkctlTests: XCTestCase {
    private var server: TestControlServer!
    private var linkctl: URL!
    private let children = ChildProcesses()

    override func setUpWithError() throws {
        linkctl = try XCTUnwrap(Self.executableURL(), "linkctl is not built next to the tests")
        server = try TestControlServer(socketName: WatchLinkHome.phoneControlSocketName)
    }

    override func tearDown() {
        children.killAll()
        server?.stop()
        server = nil
    }

    private static func executableURL() -> URL? {
        var candidates: [URL] = []
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        return candidates.map { $0.appendingPathComponent("linkctl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    private struct Outcome {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    private func start(_ arguments: [String], home: String? = nil) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHLINK_HOME"] = home ?? server.directory
        let child = children.make(linkctl.path, arguments, environment: environment)
        try child.start()
        return child
    }

    private func finish(_ child: ChildProcess) throws -> Outcome {
        let outcome = try child.finish(timeout: 30)
        XCTAssertEqual(outcome.reason, .exit, "linkctl ends by itself, not by a signal")
        return Outcome(status: outcome.status, standardOutput: outcome.standardOutput, standardError: outcome.standardError)
    }

    private func run(_ arguments: [String], home: String? = nil) throws -> Outcome {
        try finish(start(arguments, home: home))
    }

    func testCallPrintsResult() throws {
        let outcome = try run(["phone", "echo", "--json", #"{"message": {"b": 1, "a": [true]}}"#])
        XCTAssertEqual(outcome.status, 0, outcome.standardError)
        XCTAssertEqual(outcome.standardOutput, #"{"op":"echo","args":{"message":{"b":1,"a":[true]}}}"# + "\n")
        XCTAssertEqual(outcome.standardError, "")
    }

    func testHomeOptionAndTimeout() throws {
        let outcome = try run(["--home", server.directory, "--timeout", "5", "phone", "echo"], home: "/nonexistent")
        XCTAssertEqual(outcome.status, 0, outcome.standardError)
        XCTAssertEqual(outcome.standardOutput, #"{"op":"echo","args":{}}"# + "\n")
        let timedOut = try run(["--timeout=0.05", "phone", "sleep", "--json={\"ms\": 300}"])
        XCTAssertEqual(timedOut.status, 4)
        XCTAssertEqual(timedOut.standardError, "linkctl: timed out: no response to 'sleep' within 0.05 s\n")
    }

    func testErrorResponseExitsOne() throws {
        let outcome = try run(["phone", "fail"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertEqual(outcome.standardOutput, "")
        XCTAssertEqual(outcome.standardError, "linkctl: WCErrorDomain 7007 notReachable: counterpart not reachable\n")
    }

    func testCannotConnectExitsThree() throws {
        let outcome = try run(["watch", "status"])
        XCTAssertEqual(outcome.status, 3)
        XCTAssertEqual(
            outcome.standardError,
            "linkctl: cannot connect to \(server.directory)/watch.ctl: No such file or directory — is watchd running?\n")
    }

    func testUsageErrorsExitTwo() throws {
        let cases: [([String], String)] = [
            ([], "missing the daemon to talk to: phone or watch"),
            (["tablet", "status"], "unknown daemon 'tablet' (expected phone or watch)"),
            (["phone"], "missing the operation, e.g. 'linkctl phone status'"),
            (["phone", "status", "extra"], "unexpected argument 'extra' (pass arguments with --json)"),
            (["phone", "status", "--json", "[1]"], "--json must be a JSON object, got array"),
            (["phone", "status", "--json", "{"], "--json is not valid JSON: unexpected end of input, expected '\"' to begin object key at byte 1"),
            (["phone", "status", "--json"], "option --json needs a value"),
            (["--timeout", "0", "phone", "status"], "--timeout needs a positive number of seconds, got '0'"),
            (["--bogus", "phone", "status"], "unknown option '--bogus'"),
            (["phone", "events", "--json", "{}"], "'events' takes no --json arguments"),
        ]
        for (arguments, message) in cases {
            let outcome = try run(arguments)
            XCTAssertEqual(outcome.status, 2, "\(arguments)")
            XCTAssertEqual(outcome.standardError, "linkctl: \(message)\nTry 'linkctl --help'.\n", "\(arguments)")
        }
    }

    func testHelpAndVersion() throws {
        let version = try run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.standardOutput, "linkctl \(WatchLinkVersion.current)\n")
        let help = try run(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.standardOutput.hasPrefix("Usage:\n  linkctl [--home DIR]"), help.standardOutput)
    }

    func testEventsStreamUntilTheDaemonCloses() throws {
        let linkctlEvents = try start(["phone", "events"])
        XCTAssertTrue(waitUntil(10) { self.server.subscriberCount == 1 }, "linkctl did not subscribe")
        server.broadcast("session.activationDidComplete", ["activationState": 2])
        server.broadcast("session.reachabilityDidChange", ["isReachable": true])
        server.disconnectAll()
        let outcome = try finish(linkctlEvents)
        XCTAssertEqual(outcome.status, 0, outcome.standardError)
        let lines = outcome.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, outcome.standardOutput)
        let events = try lines.map { try JSON.parse(Array($0.utf8)) }
        XCTAssertEqual(events.map { $0["event"] }, ["session.activationDidComplete", "session.reachabilityDidChange"])
        XCTAssertEqual(events.map { $0["data"] }, [["activationState": 2], ["isReachable": true]])
        XCTAssertNotNil(events.first?["at"]?.stringValue.flatMap(ISO8601Timestamp.date(from:)))
    }
}
