import LinkJSON
import Testing
import WatchLinkTesting

/// The fixture from Swift Testing: a pair for the body, stopped after it.
@Suite struct SwiftTestingFixtureTests {
    @Test func aPairRunsForTheBodyAndStopsAfterIt() async throws {
        var pids: [Int32] = []
        let role = try await withWatchLinkPair(activate: true) { pair in
            pids = [pair.phone.pid, pair.watch.pid]
            let client = try pair.phone.client()
            defer { client.close() }
            return try client.call("status")["role"]?.stringValue
        }
        #expect(role == "phone")
        #expect(pids.allSatisfy { $0 > 0 })
        #expect(pids.allSatisfy { !processExists($0) }, "stopped by pid after the body")
    }
}

private func processExists(_ pid: Int32) -> Bool {
    (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)).map { !$0.contains(") Z ") } ?? false
}
