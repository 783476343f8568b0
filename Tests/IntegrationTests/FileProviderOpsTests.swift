import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WatchLinkTesting
import XCTest

/// phoned's File Provider signals through the ops an app process uses
/// (`fileProvider.signalEnumerator`, `fileProvider.complete`), and WatchLinkTesting's provider
/// client (HTTP/2 over TLS, ES256 tokens) against the real endpoint.
final class FileProviderOpsTests: DaemonTestCase {
    static let root = "NSFileProviderRootContainerItemIdentifier"
    static let workingSet = "NSFileProviderWorkingSetContainerItemIdentifier"

    func testTheAppsSignalIsRecordedPublishedAndCompletedOnce() throws {
        let phone = try daemon("phoned").startAndWait()
        let events = try subscribed(phone)
        let c = try client(phone)

        let signal = try c.call("fileProvider.signalEnumerator", ["containerIdentifier": .string(Self.workingSet), "domain": "main"])
        XCTAssertEqual(signal["source"], "app")
        XCTAssertEqual(signal["apnsId"], .null)
        XCTAssertEqual(signal["container"], "workingSet")
        XCTAssertEqual(signal["completed"], false)
        let seq = try XCTUnwrap(signal["seq"]?.intValue)
        let event = try events.waitForEvent("fileProvider.signalEnumerator", timeoutSeconds: 5)
        XCTAssertEqual(event.data["seq"]?.intValue, seq)
        XCTAssertEqual(event.data["domain"], "main")

        let item = try c.call("fileProvider.signalEnumerator", ["containerIdentifier": "item-7"])
        XCTAssertEqual(item["container"], "item")
        XCTAssertEqual(item["domain"], .null, "the default domain")

        let error: JSONObject = ["domain": "NSFileProviderErrorDomain", "code": -1004, "message": "the server is unreachable"]
        let completed = try c.call("fileProvider.complete", ["seq": .int(seq), "error": .object(error)])
        XCTAssertEqual(completed["completed"], true)
        XCTAssertEqual(completed["error"], .object(error))
        XCTAssertNotNil(completed["completedAt"]?.stringValue)
        let done = try events.waitForEvent("fileProvider.signalCompleted", timeoutSeconds: 5)
        XCTAssertEqual(done.data["seq"]?.intValue, seq)
        XCTAssertEqual(done.data["error"], .object(error))
        XCTAssertEqual(done.data["containerIdentifier"]?.stringValue, Self.workingSet)
        _ = try c.call("fileProvider.complete", ["seq": item["seq"]!])

        let listed = try XCTUnwrap(c.call("push.signals")["signals"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(listed.map { $0["completed"] }, [true, true])
        XCTAssertEqual(listed.map { $0["error"] }, [.object(error), .null])

        assertControlError("control", 3) { try c.call("fileProvider.complete", ["seq": .int(seq)]) }  // completed already
        assertControlError("control", 3) { try c.call("fileProvider.complete", ["seq": 999]) }
        assertControlError("control", 3) { try c.call("fileProvider.complete", ["seq": 1, "error": ["code": 1]]) }
        assertControlError("control", 3) { try c.call("fileProvider.signalEnumerator", ["containerIdentifier": ""]) }
        assertControlError("control", 3) { try c.call("fileProvider.signalEnumerator", ["domain": "main"]) }
    }

    func testTheProviderClientReusesItsTokenAndConnectionAndSees410AfterInvalidation() throws {
        let phone = try daemon("phoned").startAndWait()
        let c = try client(phone)
        let events = try subscribed(phone)
        let token = try XCTUnwrap(c.call("push.register", ["types": ["fileProvider"]])["token"]?.stringValue)
        let provider = try WatchLinkPushProvider.configure(phone)
        defer { provider.close() }

        for (container, domain) in [(Self.root, "main"), (Self.workingSet, "main"), ("item-42", "shared")] {
            let response = try provider.sendFileProviderChange(container: container, domain: domain, to: token)
            XCTAssertEqual(response.status, 200, "\(response)")
            XCTAssertNotNil(response.apnsId)
            let received = try events.waitForEvent("push.received", timeoutSeconds: 5)
            XCTAssertEqual(received.data["payload"]?["container-identifier"]?.stringValue, container)
        }
        XCTAssertEqual(provider.tokens.signedCount, 1, "one provider token, reused")
        XCTAssertEqual(provider.connectionCount, 1, "one connection, reused")
        XCTAssertEqual(try c.call("push.goaway")["connections"], 1)
        let afterGoAway = try provider.sendFileProviderChange(container: Self.root, domain: "main", to: token)
        XCTAssertEqual(afterGoAway.status, 200, "sent again on a new connection: \(afterGoAway)")
        XCTAssertEqual(provider.connectionCount, 2)
        _ = try events.waitForEvent("push.received", timeoutSeconds: 5)
        let signals = try XCTUnwrap(c.call("push.signals")["signals"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(signals.map { $0["container"] }, ["root", "workingSet", "item", "root"])
        XCTAssertEqual(signals.map { $0["source"] }, ["push", "push", "push", "push"])
        XCTAssertEqual(signals.map { $0["completed"] }, [false, false, false, false], "no extension completed them")

        let refused = try provider.send(Array(#"{"aps":{}}"#.utf8), to: token, pushType: "voip")
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.reason, "DeviceTokenNotForTopic")

        let invalidatedAt = try XCTUnwrap(c.call("push.invalidate")["invalidatedAt"]?.intValue)
        let gone = try provider.sendFileProviderChange(container: Self.root, domain: "main", to: token)
        XCTAssertEqual(gone.status, 410)
        XCTAssertEqual(gone.reason, "Unregistered")
        XCTAssertEqual(gone.timestamp, invalidatedAt)
    }

    func testTheProviderClientTrustsOnlyTheEndpointsCA() throws {
        let phone = try daemon("phoned").startAndWait()
        let provider = try WatchLinkPushProvider.configure(phone)
        let otherPhone = try daemon("phoned", home: makeDirectory()).startAndWait()
        let otherCA = try XCTUnwrap(client(otherPhone).call("push.endpoint")["caFile"]?.stringValue)
        let untrusting = WatchLinkPushProvider(
            endpoint: .init(host: provider.endpoint.host, port: provider.endpoint.port, caFile: otherCA),
            bundleId: provider.bundleId, tokens: provider.tokens)
        XCTAssertThrowsError(try untrusting.sendFileProviderChange(container: Self.root, domain: nil, to: String(repeating: "ab", count: 32))) {
            XCTAssertTrue("\($0)".contains("TLS handshake"), "another phoned's CA does not vouch for this one: \($0)")
        }
        let wrongName = WatchLinkPushProvider(
            endpoint: .init(
                host: provider.endpoint.host, port: provider.endpoint.port,
                caFile: provider.endpoint.caFile, serverName: "example.com"),
            bundleId: provider.bundleId, tokens: provider.tokens)
        XCTAssertThrowsError(try wrongName.sendFileProviderChange(container: Self.root, domain: nil, to: String(repeating: "ab", count: 32))) {
            XCTAssertTrue("\($0)".contains("TLS handshake"), "\($0)")
        }
    }
}
