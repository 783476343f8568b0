import Foundation
import SyncCore
import WatchLinkClient
import WatchLinkTesting
import XCTest

/// The app's code against a pair of WatchLink's daemons, as an app team's test runs it.
final class SyncCoreTests: XCTestCase {
    func testThePhoneActivatesAndPingsTheWatch() async throws {
        let pair = try startWatchLinkPair(activate: true)
        let watch = try await WatchLinkClient.connect(socketPath: pair.watch.controlPath)
        defer { watch.close() }
        _ = try await watch.call("replies.set", ["mode": "echo"])
        // The app process's environment names its daemon, as on a device the system does.
        for (name, value) in pair.environment(for: pair.phone) where name.hasPrefix("WATCHLINK_") {
            setenv(name, value, 1)
        }

        let outbox = URL(fileURLWithPath: pair.phone.home).appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        let sync = PhoneSync(outbox: outbox)
        let activated = expectation(description: "activationDidComplete")
        sync.start { state, error in
            XCTAssertEqual(state, .activated)
            XCTAssertNil(error)
            activated.fulfill()
        }
        await fulfillment(of: [activated], timeout: 10)

        let replied = expectation(description: "reply")
        sync.ping("hello") { result in
            XCTAssertEqual(try? result.get(), "hello")
            replied.fulfill()
        }
        await fulfillment(of: [replied], timeout: 10)

        let tokenArrived = expectation(description: "push token")
        let pushes = FileProviderPushes(queue: DispatchQueue(label: "pushes")) { token in
            XCTAssertEqual(token.count, 32)
            tokenArrived.fulfill()
        }
        await fulfillment(of: [tokenArrived], timeout: 10)
        withExtendedLifetime(pushes) {}
    }
}
