import Foundation
import LinkClient
import LinkControl
import LinkJSON
import XCTest

/// The daemons' op tables, as `ops.list` shows them, against docs/control-protocol.md and
/// against the requests the table refuses.
final class OperationTableTests: DaemonTestCase {
    /// The op names docs/control-protocol.md documents: the backticked names of its `###`
    /// headings and of the first column of its `| op | … |` tables.
    static func documentedOps() throws -> Set<String> {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/control-protocol.md").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var names = Set<String>()
        var inOpTable = false
        func backticked(_ line: Substring) -> [String] {
            line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
                .filter { $0.range(of: #"^[a-z][a-zA-Z]*(\.[a-zA-Z]+)*$"#, options: .regularExpression) != nil }
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") {
                names.formUnion(backticked(line))
            } else if line.hasPrefix("| op |") {
                inOpTable = true
            } else if inOpTable, line.hasPrefix("| `") {
                names.formUnion(backticked(line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""))
            } else if !line.hasPrefix("|") {
                inOpTable = false
            }
        }
        return names
    }

    private static func opNames(_ listing: JSONObject) -> [String] {
        (listing["ops"]?.arrayValue ?? []).compactMap { $0.objectValue?["name"]?.stringValue }
    }

    func testEveryOpIsDocumentedAndEveryDocumentedOpExists() throws {
        let (phone, watch) = try startPair()
        let phoneOps = Self.opNames(try client(phone).call("ops.list"))
        let watchOps = Self.opNames(try client(watch).call("ops.list"))
        XCTAssertEqual(Set(phoneOps).count, phoneOps.count, "each op once")
        XCTAssertTrue(phoneOps.contains("pa.server.secrets") && phoneOps.contains("push.register") && phoneOps.contains("ops.list"))
        XCTAssertFalse(watchOps.contains("device.switchWatch"), "a phone op")
        XCTAssertTrue(watchOps.contains("pa.token.request"))
        let tables = Set(phoneOps + watchOps)
        let documented = try Self.documentedOps()
        XCTAssertEqual(tables.subtracting(documented).sorted(), [], "ops missing from docs/control-protocol.md")
        XCTAssertEqual(documented.subtracting(tables).sorted(), [], "documented ops that no daemon has")
    }

    func testTheListingDescribesArguments() throws {
        let phone = try daemon("phoned").startAndWait()
        let listing = try client(phone).call("ops.list")
        XCTAssertEqual(listing["role"], "phone")
        let send = try XCTUnwrap(listing["ops"]?.arrayValue?.compactMap(\.objectValue).first { $0["name"] == "message.send" })
        XCTAssertEqual(send["sides"], ["phone", "watch"])
        XCTAssertFalse((send["summary"]?.stringValue ?? "").isEmpty)
        let arguments = try XCTUnwrap(send["arguments"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(arguments.map { $0["name"] }, ["message", "wantsReply", "timeoutMs"])
        XCTAssertEqual(arguments.map { $0["required"] }, [true, false, false])
        XCTAssertEqual(arguments[2]["type"], "integer 1...3600000")
    }

    func testTheTableRefusesUnknownOpsOtherSidesAndBadArguments() throws {
        let (phone, watch) = try startPair()
        let p = try client(phone), w = try client(watch)
        XCTAssertThrowsError(try p.call("message.shout")) { error in
            let error = error as? ControlError
            XCTAssertEqual(error?.name, "unknownOp")
            XCTAssertTrue(error?.message.contains("unknown op 'message.shout' (known: status,") == true, "\(String(describing: error))")
        }
        XCTAssertThrowsError(try w.call("device.switchWatch", ["deviceId": "x"])) { error in
            XCTAssertEqual((error as? ControlError)?.message, "device.switchWatch is an op of the phone, not the watch")
        }
        XCTAssertThrowsError(try p.call("message.send", ["message": [:], "wantReply": true])) { error in
            XCTAssertEqual(
                (error as? ControlError)?.message,
                "message.send: unknown argument 'wantReply' (expected one of: message, timeoutMs, wantsReply)")
        }
        XCTAssertThrowsError(try p.call("link.set", ["latencyMs": 70_000])) { error in
            XCTAssertEqual((error as? ControlError)?.message, "link.set: argument 'latencyMs' must be in 0...60000, got 70000")
        }
        XCTAssertThrowsError(try w.call("device.set", ["isPaired": true])) { error in
            XCTAssertEqual(
                (error as? ControlError)?.message, "device.set: unknown argument 'isPaired' (expected one of: isCompanionAppInstalled, isWatchOnlyApp)")
        }
        XCTAssertThrowsError(try p.call("message.send", [:])) { error in
            XCTAssertEqual((error as? ControlError)?.message, "message.send: missing required argument 'message'")
        }
        XCTAssertEqual(try p.call("status")["role"], "phone", "the daemon keeps serving")
    }

    /// `linkctl phone --help` prints the table the daemon answers to `ops.list`.
    func testLinkctlHelpPrintsTheDaemonsOps() throws {
        let phone = try daemon("phoned").startAndWait()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("linkctl"))
        process.arguments = ["--home", phone.home, "phone", "--help"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        XCTAssertFalse(process.isRunning, "linkctl did not finish")
        XCTAssertEqual(process.terminationStatus, 0)
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "Ops of the phone (linkctl phone OP [--json '{...}']):")
        let listed = Self.opNames(try client(phone).call("ops.list"))
        for name in listed {
            XCTAssertTrue(lines.contains { $0.hasPrefix("  \(name) ") }, "\(name) is not in linkctl's help")
        }
        XCTAssertTrue(lines.contains { $0.contains("message (object, required); wantsReply (bool); timeoutMs (integer 1...3600000)") })
    }
}
