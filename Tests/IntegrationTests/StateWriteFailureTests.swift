import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest

/// A state file or the PowerAuth store that cannot be written (docs/durability.md): the op
/// that asked answers the fault, a `state.writeFailed` event names the file and the reason,
/// the change was not made, and the daemon goes on serving; the next write succeeds.
final class StateWriteFailureTests: PowerLossTestCase {
    private func writeFailure(_ events: ControlClient, _ what: String) throws -> JSONObject {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let event = try events.nextEvent(timeoutSeconds: deadline.timeIntervalSinceNow), event.name == "state.writeFailed" {
                return event.data
            }
        }
        throw HarnessError("no state.writeFailed event for \(what)")
    }

    private func refusal(_ body: () throws -> JSONObject) -> String {
        do {
            let result = try body()
            return "answered \(result)"
        } catch {
            return "\(error)"
        }
    }

    func testAStateFileOrStoreThatCannotBeWrittenIsAnEventAndTheOpAnswersTheFault() throws {
        let phone = restartable("phoned", logLevel: "info")
        let disk = try mountDisk(for: phone)
        try phone.startAndWait()
        let events = try subscribed(phone)
        let p = try client(phone, timeout: 30)
        let app: JSONObject = ["command": .array(["/bin/true"])]

        // apps.json: its temporary file cannot be renamed over it.
        try disk.fail("rename", nth: 1, errno: "EIO", name: "apps.json")
        let installRefused = refusal { try p.call("app.install", app) }
        XCTAssertTrue(installRefused.contains("apps.json") && installRefused.contains("Input/output error"), installRefused)
        var event = try writeFailure(events, "apps.json")
        XCTAssertEqual(event["reason"]?.stringValue, "writeFailed")
        XCTAssertTrue(event["file"]?.stringValue?.hasSuffix("/apps.json") == true, "\(event)")
        XCTAssertTrue(event["message"]?.stringValue?.contains("Input/output error") == true, "\(event)")
        XCTAssertNil(try p.call("status")["apps"]?["app"], "the app was not installed")

        // push/state.json: the same for the push emulator, a feature.
        try disk.fail("rename", nth: 1, errno: "ENOSPC", name: "state.json")
        let offlineRefused = refusal { try p.call("push.network.set", ["online": false]) }
        XCTAssertTrue(offlineRefused.contains("state.json"), offlineRefused)
        event = try writeFailure(events, "push/state.json")
        XCTAssertEqual(event["reason"]?.stringValue, "diskFull")
        XCTAssertTrue(event["file"]?.stringValue?.hasSuffix("/push/state.json") == true, "\(event)")

        // powerauth.db: the sync of its WAL at the commit fails.
        _ = try p.call("pa.instance.add", ["instanceId": "main"])
        try disk.fail("fsync", nth: 1, errno: "EIO", name: "powerauth.db-wal")
        let activationRefused = refusal { try p.call("pa.activation.create", ["instanceId": "main", "commit": true]) }
        XCTAssertTrue(activationRefused.lowercased().contains("i/o"), activationRefused)
        event = try writeFailure(events, "powerauth.db")
        XCTAssertTrue(event["file"]?.stringValue?.hasSuffix("/powerauth.db") == true, "\(event)")
        XCTAssertEqual(event["reason"]?.stringValue, "writeFailed")

        // It goes on serving, and the same writes succeed now.
        try disk.clearFaults()
        XCTAssertNoThrow(try p.call("app.install", app))
        XCTAssertNotNil(try p.call("status")["apps"]?["app"], "installed now")
        XCTAssertNoThrow(try p.call("push.network.set", ["online": false]))
        XCTAssertEqual(try disk.faults().count, 3, "each fault was reached once")
    }
}
