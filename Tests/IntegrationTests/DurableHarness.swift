import Foundation
import LinkControl
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A daemon that can be killed and started again any number of times, from any thread.
///
/// Every start appends to the same log file. A start may run the daemon under a file-size limit
/// (`ulimit -f`, through `/bin/sh`), which emulates a full disk.
final class RestartableDaemon: @unchecked Sendable {
    let name: String
    let home: String
    let logPath: String
    let logLevel: String

    private let lock = NSLock()
    private var process: Process?
    private var startCount = 0

    init(_ name: String, home: String, logLevel: String = "debug", logPath: String? = nil) {
        self.name = name
        self.home = home
        self.logLevel = logLevel
        self.logPath = logPath ?? home + "/" + name + ".log"
    }

    var controlPath: String { home + (name == "phoned" ? "/phone.ctl" : "/watch.ctl") }
    var stateDirectory: String { home + (name == "phoned" ? "/phone" : "/watch") }
    var databasePath: String { stateDirectory + (name == "phoned" ? "/phone.db" : "/watch.db") }

    var pid: Int32 { lock.withLock { process?.processIdentifier ?? 0 } }
    var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }
    var starts: Int { lock.withLock { startCount } }

    /// Starts the daemon; `activate` passes `--activate`; `fileSizeLimitBlocks` runs it under
    /// `ulimit -f` (in the shell's blocks).
    func start(activate: Bool = true, fileSizeLimitBlocks: Int? = nil, extra: [String] = []) throws {
        let binary = Binaries.path(name)
        var arguments = ["--home", home, "--log-level", logLevel] + extra
        if activate { arguments.append("--activate") }
        let process = Process()
        if let blocks = fileSizeLimitBlocks {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -f \(blocks) && exec \"$0\" \"$@\"", binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        log.write(Data("==== start \(starts + 1) of \(name): \(arguments.joined(separator: " "))\n".utf8))
        process.standardError = log
        process.standardOutput = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? log.close()
        lock.withLock {
            self.process = process
            startCount += 1
        }
    }

    /// Starts the daemon and waits until its control socket answers `status`.
    func startAndWait(activate: Bool = true, fileSizeLimitBlocks: Int? = nil, extra: [String] = [],
                      timeout: Double = 15) throws {
        try start(activate: activate, fileSizeLimitBlocks: fileSizeLimitBlocks, extra: extra)
        try waitUntilReady(timeout: timeout)
    }

    /// Polls until the control socket answers `status`; throws when the process exits first or
    /// the deadline passes.
    func waitUntilReady(timeout: Double = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let current = lock.withLock { process }
            if let current, !current.isRunning {
                throw HarnessError("\(name) (pid \(current.processIdentifier)) exited with \(current.terminationStatus) before it was ready; log tail:\n\(logTail())")
            }
            if let client = try? ControlClient(socketPath: controlPath, timeoutSeconds: 2) {
                defer { client.close() }
                if (try? client.call("status")) != nil { return }
            }
            usleep(5_000)
        }
        throw HarnessError("\(name) did not answer status within \(timeout) s; log tail:\n\(logTail())")
    }

    func client(timeout: Double = 10) throws -> ControlClient {
        try ControlClient(socketPath: controlPath, timeoutSeconds: timeout)
    }

    /// Waits for the process to exit; its status, or nil on timeout.
    @discardableResult
    func waitForExit(timeout: Double = 5) -> Int32? {
        guard let process = lock.withLock({ process }) else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// How the last run ended, once it has.
    var terminationReason: Process.TerminationReason? {
        guard let process = lock.withLock({ process }), !process.isRunning else { return nil }
        return process.terminationReason
    }

    func signal(_ signal: Int32) {
        guard let process = lock.withLock({ process }), process.isRunning else { return }
        kill(process.processIdentifier, signal)
    }

    /// SIGKILL by pid, then waits until the process is reaped.
    func kill9() {
        signal(SIGKILL)
        waitForExit(timeout: 10)
    }

    /// SIGTERM, then SIGKILL if it does not stop within 5 s.
    func stop() {
        guard isRunning else { return }
        signal(SIGTERM)
        if waitForExit(timeout: 5) == nil { kill9() }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func logTail(lines: Int = 40) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}

/// A failure of the test harness itself, with a message.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A value shared between threads behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withValue { $0 } }
}

/// SplitMix64: a small seeded generator, so a failing random schedule can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A test case whose daemons may be killed and restarted; stops them and removes their homes
/// at the end, and prints their logs when the test failed.
class DurableTestCase: DaemonTestCase {
    private(set) var restartables: [RestartableDaemon] = []
    private var ownClients: [ControlClient] = []
    private var failed = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        failed = true
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    override func tearDown() {
        for client in ownClients { client.close() }
        for daemon in restartables { daemon.stop() }
        if failed {
            for daemon in restartables {
                print("---- \(daemon.name) log (\(daemon.logPath)), last 200 lines:\n\(daemon.logTail(lines: 200))")
            }
        }
        ownClients.removeAll()
        restartables.removeAll()
        super.tearDown()
    }

    func restartable(_ name: String, home: String? = nil, logLevel: String = "debug") -> RestartableDaemon {
        let daemon = RestartableDaemon(name, home: home ?? self.home, logLevel: logLevel)
        restartables.append(daemon)
        return daemon
    }

    func client(_ daemon: RestartableDaemon, timeout: Double = 10) throws -> ControlClient {
        let client = try daemon.client(timeout: timeout)
        ownClients.append(client)
        return client
    }

    func subscribed(_ daemon: RestartableDaemon) throws -> ControlClient {
        let client = try client(daemon)
        try client.subscribe()
        return client
    }

    /// Starts phoned and watchd (`--activate` each unless told otherwise) and waits until the
    /// link is up, and until both sides are reachable when both are activated.
    func startDurablePair(activatePhone: Bool = true, activateWatch: Bool = true)
        throws -> (phone: RestartableDaemon, watch: RestartableDaemon, p: ControlClient, w: ControlClient) {
        let phone = restartable("phoned")
        let watch = restartable("watchd")
        try phone.startAndWait(activate: activatePhone)
        try watch.startAndWait(activate: activateWatch)
        let p = try client(phone)
        let w = try client(watch)
        eventually("the link to come up", timeout: 10) { try p.call("status")[path: "link", "connected"] == true }
        if activatePhone && activateWatch {
            eventually("both sides reachable", timeout: 10) {
                try p.call("status")["isReachable"] == true && w.call("status")["isReachable"] == true
            }
        }
        return (phone, watch, p, w)
    }
}

/// Reading what a daemon's app received.
enum Received {
    /// Every item of `received.list` (paging with `after` and `limit`), oldest first; only
    /// those of `kind` when given.
    static func items(_ client: ControlClient, kind: String? = nil, after start: Int64 = 0) throws -> [JSONValue] {
        var after = start
        var all: [JSONValue] = []
        while true {
            let page = try client.call("received.list", ["after": .int(after), "limit": 10_000], timeoutSeconds: 30)
            let items = page["items"]?.arrayValue ?? []
            all += items
            guard let last = items.last?["seq"]?.intValue else { break }
            after = last
            if page["more"]?.boolValue != true { break }
        }
        guard let kind else { return all }
        return all.filter { $0["kind"]?.stringValue == kind }
    }

    /// The userInfo dictionaries received, oldest first.
    static func userInfos(_ client: ControlClient, after: Int64 = 0) throws -> [JSONValue] {
        try items(client, kind: "userInfo", after: after).compactMap { $0["userInfo"] }
    }

    /// The highest `seq` received so far, 0 when nothing was.
    static func lastSeq(_ client: ControlClient) throws -> Int64 {
        try items(client).last?["seq"]?.intValue ?? 0
    }
}

extension ControlClient {
    /// The `status` field `key`.
    func status(_ key: String) throws -> JSONValue? {
        try call("status")[key]
    }

    /// Collects every event until one named `name` satisfies `predicate` (included, last).
    func events(until name: String, timeoutSeconds: Double,
                where predicate: (ControlEvent) -> Bool = { _ in true }) throws -> [ControlEvent] {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        var seen: [ControlEvent] = []
        while let event = try nextEvent(timeoutSeconds: max(0, deadline.timeIntervalSinceNow)) {
            seen.append(event)
            if event.name == name && predicate(event) { return seen }
        }
        throw HarnessError("no event '\(name)' within \(timeoutSeconds) s; saw \(seen.map(\.name))")
    }
}

/// Random bytes as a `{"$data": base64}` value.
func randomData(_ count: Int, using generator: inout some RandomNumberGenerator) -> JSONValue {
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
    return ["$data": .string(Data(bytes).base64EncodedString())]
}
