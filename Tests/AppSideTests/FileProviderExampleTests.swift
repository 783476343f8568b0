import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// The File Provider example (Examples/FileProviderApp, Examples/FileProviderServer): an app
/// process with the page's PushKit code and an extension a domain, and a provider that
/// pushes to phoned's APNs endpoint over HTTP/2 and TLS.
final class FileProviderExampleTests: AppSideTestCase {
    static let root = "NSFileProviderRootContainerItemIdentifier"
    static let workingSet = "NSFileProviderWorkingSetContainerItemIdentifier"

    private func launchApp(_ pair: WatchLinkPair, _ arguments: [String], domains: [String]) throws -> AppProcess {
        let app = try launch(
            "file-provider-app", program: "WatchLinkExampleFileProviderApp", on: pair.phone, of: pair,
            arguments: arguments + ["--domains", domains.joined(separator: ",")])
        for domain in domains { try app.waitForLine("extension \(domain) attached") { $0 == "extension \(domain): attached" } }
        return app
    }

    private func lines(_ app: AppProcess, _ prefix: String) -> [String] {
        app.output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// The signals phoned lists, once every one of them has its extension's answer.
    private func completedSignals(_ pair: WatchLinkPair, count: Int, timeout: Double = 20) throws -> [JSONObject] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let signals = (try control(pair.phone, "push.signals")["signals"]?.arrayValue ?? []).compactMap(\.objectValue)
            if signals.count >= count, signals.allSatisfy({ $0["completed"] == true }) { return signals }
            if Date() > deadline { throw AppProcessError("signals not all completed within \(timeout) s: \(signals)") }
            usleep(5_000)
        }
    }

    func testTheServerGetsTheTokenAndItsWorkingSetPushReachesTheDelegatesAndTheExtension() throws {
        let pair = try startWatchLinkPair()
        let inbox = TemporaryHome()
        defer { inbox.remove() }
        let app = try launchApp(pair, ["--server-inbox", inbox.path], domains: ["main"])
        let server = try launch(
            "file-provider-server", program: "WatchLinkExampleFileProviderServer", on: pair.phone, of: pair,
            arguments: ["--control", pair.phone.controlPath, "--inbox", inbox.path, "--domain", "main"])
        XCTAssertEqual(try server.waitForExit(timeout: 30), 0, server.output)

        let appToken = try XCTUnwrap(lines(app, "app: token ").first)
        XCTAssertEqual(lines(server, "server: device token "), [appToken], "the token reached the server")
        XCTAssertEqual(appToken, try control(pair.phone, "push.token")["token"]?.stringValue)
        XCTAssertTrue(server.output.contains("server: APNs answered 200"), server.output)
        try app.waitForLine("the push at the app delegate") { $0 == "app: push \(Self.workingSet) main" }
        try app.waitForLine("the push at the extension's registry") { $0 == "extension main: push \(Self.workingSet) main" }
        try app.waitForLine("the extension's signal handler") { $0 == "extension main: signalled \(Self.workingSet)" }
        let signal = try XCTUnwrap(completedSignals(pair, count: 1).first)
        XCTAssertEqual(signal["container"], "workingSet")
        XCTAssertEqual(signal["error"], .null, "the extension fetched the changes")
    }

    func testInvalidationPushesAndSignalsOfEveryContainerKindInTwoDomains() throws {
        let pair = try startWatchLinkPair()
        let app = try launchApp(pair, ["--unreachable-domain", "shared"], domains: ["main", "shared"])
        let provider = try WatchLinkPushProvider.configure(pair.phone)
        defer { provider.close() }
        for registry in ["app", "extension main", "extension shared"] {
            try app.waitForLine("\(registry)'s token") { $0.hasPrefix("\(registry): token ") }
        }
        let token = try XCTUnwrap(lines(app, "app: token ").first)
        XCTAssertEqual(lines(app, "extension main: token "), [token], "every registry of the process gets the token")
        XCTAssertEqual(lines(app, "extension shared: token "), [token])

        let sent = [
            ("main", Self.root), ("main", Self.workingSet), ("main", "doc-17"),
            ("shared", Self.root), ("shared", Self.workingSet), ("shared", "doc-42"),
        ]
        for (domain, container) in sent {
            let response = try provider.sendFileProviderChange(container: container, domain: domain, to: token)
            XCTAssertEqual(response.status, 200, "\(container) in \(domain): \(response)")
        }
        let signals = try completedSignals(pair, count: sent.count)
        XCTAssertEqual(signals.map { $0["container"] }, ["root", "workingSet", "item", "root", "workingSet", "item"])
        XCTAssertEqual(signals.map { $0["domain"]?.stringValue }, sent.map(\.0))
        for signal in signals.prefix(3) { XCTAssertEqual(signal["error"], .null, "\(signal)") }
        for signal in signals.suffix(3) {
            XCTAssertEqual(signal["error"]?["domain"], "NSFileProviderErrorDomain", "the shared extension's completion error: \(signal)")
            XCTAssertEqual(signal["error"]?["code"], -1004, "serverUnreachable")
        }
        for domain in ["main", "shared"] {
            let expected = sent.filter { $0.0 == domain }.map(\.1)
            XCTAssertEqual(lines(app, "extension \(domain): signalled "), expected, "each domain's extension gets its own signals")
        }
        try app.waitForLine("the last push at the app delegate") { $0 == "app: push doc-42 shared" }
        XCTAssertEqual(lines(app, "app: push "), sent.map { "\($0.1) \($0.0)" }, "the app delegate got every payload, in order")

        let invalidatedAt = try XCTUnwrap(control(pair.phone, "push.invalidate")["invalidatedAt"]?.intValue)
        try app.waitForLine("the app delegate's invalidation") { $0 == "app: invalidated PKPushTypeFileProvider" }
        for domain in ["main", "shared"] {
            try app.waitForLine("\(domain)'s invalidation") { $0 == "extension \(domain): invalidated PKPushTypeFileProvider" }
        }
        let gone = try provider.sendFileProviderChange(container: Self.root, domain: "main", to: token)
        XCTAssertEqual(gone.status, 410)
        XCTAssertEqual(gone.reason, "Unregistered")
        XCTAssertEqual(gone.timestamp, invalidatedAt)
        XCTAssertEqual(provider.tokens.signedCount, 1, "the provider reused its token")
    }
}
