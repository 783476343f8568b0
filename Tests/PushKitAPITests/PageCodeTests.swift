import FileProvider
import Foundation
import LinkClient
import LinkJSON
@_spi(Testing) import PushKit
import WatchLinkTesting
import XCTest

/// The page's classes, and PushKit and File Provider as a test process uses them, against a
/// real phoned: callbacks on the registries' queues (the main queue for `queue: nil`).
final class PageCodeTests: XCTestCase {
    private var home: TemporaryHome!
    private var phone: WatchLinkDaemon!

    override func setUpWithError() throws {
        home = TemporaryHome()
        phone = try WatchLinkDaemon("phoned", home: home.path).startAndWait()
        PKPushRegistry.useDaemon(controlSocketPath: phone.controlPath)
    }

    override func tearDown() {
        PKPushRegistry.useDaemon(controlSocketPath: nil)
        phone?.stop()
        if testRun.map({ $0.totalFailureCount > 0 }) ?? false, let phone { print("---- phoned log:\n\(phone.log)") }
        home?.remove()
    }

    private func control(_ op: String, _ args: JSONObject = [:]) throws -> JSONObject {
        let client = try phone.client()
        defer { client.close() }
        return try client.call(op, args)
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    func testThePagesAppDelegateAndExtensionEachGetTheTokenOnTheMainQueue() throws {
        let appGotIt = expectation(description: "the app delegate's didUpdate")
        let extensionGotIt = expectation(description: "the extension's didUpdate")
        let app = RecordingAppDelegate { appGotIt.fulfill() }
        XCTAssertTrue(app.application(UIApplication(), didFinishLaunchingWithOptions: nil))
        let fileProvider = RecordingExtension { extensionGotIt.fulfill() }
        wait(for: [appGotIt, extensionGotIt], timeout: 10)

        let token = try XCTUnwrap(control("push.token")["token"]?.stringValue)
        XCTAssertEqual(app.tokens, [token])
        XCTAssertEqual(fileProvider.tokens, [token])
        XCTAssertEqual(app.onMainThread + fileProvider.onMainThread, [true, true], "queue: nil is the main queue")
        XCTAssertEqual(app.pushRegistry.pushToken(for: .fileProvider).map(Self.hex), token)
        XCTAssertNil(app.pushRegistry.pushToken(for: .voIP), "not a desired type")
        XCTAssertEqual(try control("push.token")["types"], ["fileProvider"])

        fileProvider.pushRegistry.desiredPushTypes = []
        app.pushRegistry.desiredPushTypes = []
        try eventually("phoned to unregister once no registry wants a type") { try control("push.token")["types"] == [] }
    }

    func testPushesAndInvalidationReachEveryRegistryOnItsQueue() throws {
        let provider = try WatchLinkPushProvider.configure(phone)
        defer { provider.close() }
        let first = PushRecorder(queue: DispatchQueue(label: "first registry")), second = PushRecorder(queue: nil)
        let token = try first.waitForToken(self)
        XCTAssertEqual(try second.waitForToken(self), token, "the device has one token")

        let pushed = [expectation(description: "first push"), expectation(description: "second push")]
        first.onPush = { pushed[0].fulfill() }
        second.onPush = { pushed[1].fulfill() }
        let response = try provider.sendFileProviderChange(container: "NSFileProviderWorkingSetContainerItemIdentifier", domain: "main", to: token)
        XCTAssertEqual(response.status, 200, "\(response)")
        wait(for: pushed, timeout: 10)
        for recorder in [first, second] {
            let payload = try XCTUnwrap(recorder.payloads.first)
            XCTAssertEqual(payload["container-identifier"] as? String, "NSFileProviderWorkingSetContainerItemIdentifier")
            XCTAssertEqual(payload["domain"] as? String, "main")
        }
        XCTAssertEqual(first.queueLabels, ["first registry"])
        XCTAssertEqual(second.queueLabels, [DispatchQueue.main.label])

        let invalidated = [expectation(description: "first invalidated"), expectation(description: "second invalidated")]
        first.onInvalidate = { invalidated[0].fulfill() }
        second.onInvalidate = { invalidated[1].fulfill() }
        _ = try control("push.invalidate")
        wait(for: invalidated, timeout: 10)
        XCTAssertNil(first.registry.pushToken(for: .fileProvider))
        let gone = try provider.sendFileProviderChange(container: "NSFileProviderRootContainerItemIdentifier", domain: "main", to: token)
        XCTAssertEqual(gone.status, 410)
        XCTAssertEqual(gone.reason, "Unregistered")

        first.registry.desiredPushTypes = [.fileProvider]
        let renewed = try first.waitForToken(self, after: 1)
        XCTAssertNotEqual(renewed, token, "registering again gives a new token")
    }

    func testSignalEnumeratorReachesTheAttachedExtensionAndItsErrorReachesPhoned() throws {
        let domain = NSFileProviderDomain(identifier: NSFileProviderDomainIdentifier("main"), displayName: "Main")
        let receiver = SignalRecorder(error: NSFileProviderError(.notAuthenticated))
        try WatchLinkFileProvider.attach(receiver, to: domain)
        defer { WatchLinkFileProvider.detach(receiver) }
        let fileProvider = AttachableExtension()
        try WatchLinkFileProvider.attach(fileProvider, to: NSFileProviderDomain(identifier: NSFileProviderDomainIdentifier("other"), displayName: "Other"))
        XCTAssertEqual(fileProvider.domain?.identifier.rawValue, "other", "attaching sets the extension's domain")

        let taken = expectation(description: "signalEnumerator's completion")
        let manager = try XCTUnwrap(NSFileProviderManager(for: domain))
        manager.signalEnumerator(for: .workingSet) { error in
            XCTAssertNil(error)
            taken.fulfill()
        }
        wait(for: [taken], timeout: 10)
        try eventually("the extension to report its error") {
            try control("push.signals")["signals"]?[0]?["completed"] == true
        }
        let signal = try XCTUnwrap(control("push.signals")["signals"]?[0]?.objectValue)
        XCTAssertEqual(receiver.signals, ["NSFileProviderWorkingSetContainerItemIdentifier main"])
        XCTAssertEqual(signal["source"], "app")
        XCTAssertEqual(signal["error"]?["domain"], "NSFileProviderErrorDomain")
        XCTAssertEqual(signal["error"]?["code"], -1000)
    }

    func testWithoutADaemonTheErrorsNameTheSocketAndTheEnvironment() throws {
        PKPushRegistry.useDaemon(controlSocketPath: home.path + "/nothing.ctl")
        XCTAssertThrowsError(try WatchLinkFileProvider.attach(SignalRecorder(error: nil), to: nil)) { error in
            XCTAssertEqual((error as? NSFileProviderError)?.code, .providerNotFound)
            XCTAssertTrue(error.localizedDescription.contains(home.path + "/nothing.ctl"), error.localizedDescription)
            XCTAssertTrue(error.localizedDescription.contains("WATCHLINK_HOME"), error.localizedDescription)
        }
        let failed = expectation(description: "signalEnumerator fails")
        NSFileProviderManager.default.signalEnumerator(for: .rootContainer) { error in
            XCTAssertEqual((error as? NSFileProviderError)?.code, .providerNotFound)
            failed.fulfill()
        }
        wait(for: [failed], timeout: 10)
        let registry = PKPushRegistry(queue: nil)
        registry.desiredPushTypes = [.fileProvider]  // written to standard error; nothing to wait for
        XCTAssertNil(registry.pushToken(for: .fileProvider))
    }

    /// Polls `condition` until it holds, failing after `timeout` seconds.
    private func eventually(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw WatchLinkTestingError("no \(what) within \(timeout) s") }
            RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        }
    }
}
