import Foundation
import LinkClient
import LinkJSON
import LinkTrace

/// A phone and its watches, from the package's built daemons, in short temporary homes: the
/// fixture of a test that runs app code against WatchLink.
///
/// `start` spawns phoned and the watches and waits until every watch is linked; `stop` stops
/// them by pid and removes the homes, first copying the daemons' logs to a directory it names
/// when asked to keep them (a failing test), with `trace.html`: the picture of what crossed the
/// link (docs/trace.md), from the trace file each daemon appends to in its home. The phone and the first watch share one home
/// (`phone.ctl`, `watch.ctl`); every further watch has a home of its own, linked to the phone's
/// `link.sock` with the phone's `pairing.key`.
public final class WatchLinkPair: @unchecked Sendable {
    /// phoned.
    public let phone: WatchLinkDaemon
    /// The watches, in the order they were started; the first is the phone's active watch.
    public let watches: [WatchLinkDaemon]
    /// The first watch.
    public var watch: WatchLinkDaemon { watches[0] }
    private let homes: [TemporaryHome]
    private var stopped = false

    /// Starts phoned and `watchCount` watches (device ids `watch-1`, `watch-2`, ...), and
    /// returns once each watch is linked on both ends (phoned lists it as connected).
    /// `activate` starts each daemon with its session activated (`--activate`).
    public static func start(
        watchCount: Int = 1, activate: Bool = false, phoneArguments: [String] = [],
        watchArguments: [String] = [], timeout: Double = 10
    ) throws -> WatchLinkPair {
        precondition(watchCount >= 1, "a pair has at least one watch")
        let shared = TemporaryHome()
        var homes = [shared]
        let activation = activate ? ["--activate"] : []
        let phone = WatchLinkDaemon("phoned", home: shared.path, extraArguments: activation + ["--trace-file", traceFileName(of: 0)] + phoneArguments)
        var watches: [WatchLinkDaemon] = []
        for index in 1...watchCount {
            var arguments = activation + ["--device-id", "watch-\(index)", "--trace-file", traceFileName(of: index)] + watchArguments
            var home = shared.path
            if index > 1 {
                let own = TemporaryHome()
                homes.append(own)
                home = own.path
                arguments += ["--link", shared.path + "/link.sock", "--pairing-key", shared.path + "/pairing.key"]
            }
            watches.append(WatchLinkDaemon("watchd", home: home, extraArguments: arguments))
        }
        let pair = WatchLinkPair(phone: phone, watches: watches, homes: homes)
        do {
            try phone.startAndWait(timeout: timeout)
            for (index, watch) in watches.enumerated() {
                try watch.startAndWait(timeout: timeout)
                try pair.waitUntilLinked(watch, deviceId: "watch-\(index + 1)", timeout: timeout)
            }
        } catch {
            pair.stop(keepingLogs: true)
            throw error
        }
        return pair
    }

    /// The trace file of the phone (0) and of each watch, in its home.
    private static func traceFileName(of index: Int) -> String {
        index == 0 ? "phone.trace" : "watch-\(index).trace"
    }

    private init(phone: WatchLinkDaemon, watches: [WatchLinkDaemon], homes: [TemporaryHome]) {
        self.phone = phone
        self.watches = watches
        self.homes = homes
    }

    deinit { stop(keepingLogs: false) }

    /// Waits until both ends have the link up: the watch can end its handshake before phoned
    /// has taken the last frame of it, so phoned must list the watch as connected too (else
    /// an op naming the watch, `device.switchWatch` say, could find no such watch yet).
    private func waitUntilLinked(_ watch: WatchLinkDaemon, deviceId: String, timeout: Double) throws {
        let client = try watch.client(timeout: timeout)
        defer { client.close() }
        let phoneClient = try phone.client(timeout: timeout)
        defer { phoneClient.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? client.call("status"))?["link"]?["connected"]?.boolValue == true,
                let watches = (try? phoneClient.call("status"))?["pairedWatches"]?.arrayValue,
                watches.contains(where: { $0["deviceId"]?.stringValue == deviceId && $0["isConnected"]?.boolValue == true })
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        throw WatchLinkTestingError("\(watch.name) (\(watch.home)) did not link with phoned within \(timeout) s:\n\(watch.log)\n\(phone.log)")
    }

    /// The environment an app process of `daemon`'s side runs with: `WATCHLINK_HOME` and
    /// `WATCHLINK_SIDE`, which the `WatchConnectivity` library reads, on top of this process's.
    public func environment(for daemon: WatchLinkDaemon) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHLINK_HOME"] = daemon.home
        environment["WATCHLINK_SIDE"] = daemon.name == "phoned" ? "phone" : "watch"
        environment.removeValue(forKey: "WATCHLINK_CONTROL")
        return environment
    }

    /// Stops every daemon (SIGTERM, then SIGKILL, by pid) and removes the homes. With
    /// `keepingLogs`, the daemons' logs and trace files, and `trace.html` (their traces merged
    /// and drawn as a sequence diagram), are first put in a directory that is returned and
    /// printed (`WATCHLINK_KEEP_DIR` when set, else a new one under the system's temporary
    /// directory). Stopping twice does nothing.
    @discardableResult
    public func stop(keepingLogs: Bool) -> String? {
        guard !stopped else { return nil }
        stopped = true
        for daemon in watches.reversed() + [phone] { daemon.stop() }
        var kept: String?
        if keepingLogs { kept = keepLogs() }
        for home in homes { home.remove() }
        return kept
    }

    private func keepLogs() -> String? {
        let base = ProcessInfo.processInfo.environment["WATCHLINK_KEEP_DIR"] ?? NSTemporaryDirectory()
        let directory = (base as NSString).appendingPathComponent("watchlink-logs-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var traces: [[TraceEntry]] = []
            for (index, daemon) in ([phone] + watches).enumerated() {
                let name = index == 0 ? "phoned.log" : "watchd-\(index).log"
                try? FileManager.default.copyItem(atPath: daemon.logPath, toPath: directory + "/" + name)
                let trace = daemon.home + "/" + Self.traceFileName(of: index)
                if let data = FileManager.default.contents(atPath: trace) {
                    traces.append(TraceFile.read(Array(data)).entries)
                    try? data.write(to: URL(fileURLWithPath: directory + "/" + Self.traceFileName(of: index)))
                }
            }
            if !traces.isEmpty {
                let page = TraceHTMLPage.render(TraceDiagram(MergedTrace(traces)), title: "WatchLink trace of a failed test")
                try Data(page.utf8).write(to: URL(fileURLWithPath: directory + "/trace.html"))
            }
        } catch {
            print("WatchLinkTesting: could not keep the daemons' logs in \(directory): \(error)")
            return nil
        }
        print("WatchLinkTesting: kept the daemons' logs and trace.html in \(directory)")
        return directory
    }
}

/// Runs `body` with a started pair and stops it afterwards; when `body` throws, the daemons'
/// logs are kept (see ``WatchLinkPair/stop(keepingLogs:)``). For Swift Testing and plain code;
/// XCTest cases can use `XCTestCase.startWatchLinkPair()`.
public func withWatchLinkPair<T>(
    watchCount: Int = 1, activate: Bool = false,
    _ body: (WatchLinkPair) async throws -> T
) async throws -> T {
    let pair = try WatchLinkPair.start(watchCount: watchCount, activate: activate)
    do {
        let result = try await body(pair)
        pair.stop(keepingLogs: false)
        return result
    } catch {
        pair.stop(keepingLogs: true)
        throw error
    }
}
