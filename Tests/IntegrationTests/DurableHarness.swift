import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
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
final class RestartableDaemon: ControlEndpoint, @unchecked Sendable {
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
        process.environment = daemonEnvironment()
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
    func startAndWait(
        activate: Bool = true, fileSizeLimitBlocks: Int? = nil, extra: [String] = [],
        timeout: Double = 15
    ) throws {
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
                throw HarnessError(
                    "\(name) (pid \(current.processIdentifier)) exited with \(current.terminationStatus) before it was ready; log tail:\n\(logTail())")
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

    /// SIGTERM, then SIGKILL if it does not stop within 30 s (a sanitizer's exit checks take
    /// time). Returns the exit status of a daemon it stopped, nil if it was not running.
    @discardableResult
    func stop() -> Int32? {
        guard let process = lock.withLock({ process }), process.isRunning else { return nil }
        signal(SIGTERM)
        if waitForExit(timeout: 30) == nil { kill9() }
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }

    var log: String { readTextFile(logPath) ?? "" }

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

/// A test case whose daemons may be killed and restarted; stops them and removes their homes
/// at the end, and prints their logs when the test failed.
class DurableTestCase: DaemonTestCase {
    private(set) var restartables: [RestartableDaemon] = []

    override func tearDown() {
        for daemon in restartables {
            checkDaemonEnded(daemon.name, status: daemon.stop(), log: daemon.log)
        }
        if recordedIssue {
            for daemon in restartables {
                print("---- \(daemon.name) log (\(daemon.logPath)), last 200 lines:\n\(daemon.logTail(lines: 200))")
            }
        }
        restartables.removeAll()
        daemonsStopped()
        super.tearDown()
    }

    /// Runs once the daemons have stopped, before the home is removed (a file system mounted
    /// in it is unmounted here).
    func daemonsStopped() {}

    func restartable(_ name: String, home: String? = nil, logLevel: String = "debug") -> RestartableDaemon {
        let daemon = RestartableDaemon(name, home: home ?? self.home, logLevel: logLevel)
        restartables.append(daemon)
        return daemon
    }

    /// Starts phoned and watchd (`--activate` each unless told otherwise) and waits until the
    /// link is up, and until both sides are reachable when both are activated.
    /// - Parameter watchFileSizeLimitBlocks: a file-size limit for watchd (512-byte blocks):
    ///   a receiving side whose disk fills up.
    func startDurablePair(
        activatePhone: Bool = true, activateWatch: Bool = true, watchFileSizeLimitBlocks: Int? = nil,
        logLevel: String = "debug"
    )
        throws -> (phone: RestartableDaemon, watch: RestartableDaemon, p: ControlClient, w: ControlClient)
    {
        let phone = restartable("phoned", logLevel: logLevel)
        let watch = restartable("watchd", logLevel: logLevel)
        try phone.startAndWait(activate: activatePhone)
        try watch.startAndWait(activate: activateWatch, fileSizeLimitBlocks: watchFileSizeLimitBlocks)
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
    func events(
        until name: String, timeoutSeconds: Double,
        where predicate: (ControlEvent) -> Bool = { _ in true }
    ) throws -> [ControlEvent] {
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

/// Runs an SQL script on the database at `path` with the sqlite3 shell (`scripts/ensure-deps.sh`
/// installs it), else Python's sqlite3 module. Skips the test only when neither tool is installed;
/// a tool that runs and fails is a test failure, with its output.
func runSQLite(at path: String, _ sql: String) throws {
    let candidates: [(tool: String, arguments: [String])] = [
        ("/usr/bin/sqlite3", ["-bail", path, sql]),
        ("/usr/bin/python3", ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()", path, sql]),
    ]
    guard let (tool, arguments) = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.tool) }) else {
        throw XCTSkip("neither /usr/bin/sqlite3 nor /usr/bin/python3 is installed (scripts/ensure-deps.sh installs sqlite3)")
    }
    let children = ChildProcesses()
    defer { children.killAll() }
    let outcome = try children.run(tool, arguments, timeout: 60)
    guard outcome.reason == .exit, outcome.status == 0 else {
        throw HarnessError("\(tool) failed (status \(outcome.status)) running SQL on \(path): \(outcome.standardError)\(outcome.standardOutput)")
    }
}

extension ControlClient {
    /// Calls `userInfo.transfer` and returns the transferId.
    func transferUserInfo(_ userInfo: JSONValue) throws -> String {
        let result = try call("userInfo.transfer", ["userInfo": userInfo])
        guard let id = result["transferId"]?.stringValue else { throw HarnessError("no transferId in \(result)") }
        return id
    }

    /// The transferIds of `userInfo.outstanding`, oldest first.
    func outstandingIds() throws -> [String] {
        try call("userInfo.outstanding")["transfers"]?.arrayValue?.compactMap { $0["transferId"]?.stringValue } ?? []
    }

    /// The next `count` `userInfo.received` events, other events dropped.
    func userInfoReceived(count: Int, timeoutSeconds: Double = 10) throws -> [ControlEvent] {
        var received: [ControlEvent] = []
        while received.count < count {
            received.append(try waitForEvent("userInfo.received", timeoutSeconds: timeoutSeconds))
        }
        return received
    }
}

extension DurableTestCase {
    func makeStateDirectory(_ daemon: RestartableDaemon) throws {
        try FileManager.default.createDirectory(
            atPath: daemon.stateDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    /// Starts the daemon, expects it to exit non-zero on its own, and returns its log.
    func refusedStart(_ daemon: RestartableDaemon, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try daemon.start(activate: false)
        guard let status = daemon.waitForExit(timeout: 10) else {
            XCTFail("\(daemon.name) kept running", file: file, line: line)
            return daemon.log
        }
        XCTAssertEqual(daemon.terminationReason, .exit, file: file, line: line)
        XCTAssertNotEqual(status, 0, "\(daemon.name) exits non-zero", file: file, line: line)
        return daemon.log
    }
}

/// One direction of the crash test: sends `{"dir", "n"}` one after another with `op`
/// (`userInfo.transfer` by default, or `context.update`), a new attempt number for every
/// attempt, and reconnects whenever the daemon goes away.
final class TransferStream: @unchecked Sendable {
    let direction: String
    let sender: RestartableDaemon
    let minimumAttempts: Int
    /// Never more attempts than this: the receiver lists only its newest 10,000 items.
    let maximumAttempts: Int
    let op: String
    let argument: String

    private struct State {
        var attempts = 0
        var acknowledged: [Int] = []
        var errors: [Int: Int] = [:]
        var reconnects = 0
        var failure: String?
    }
    private let state = Locked(State())

    init(
        direction: String, sender: RestartableDaemon, minimumAttempts: Int, maximumAttempts: Int = 8_000,
        op: String = "userInfo.transfer", argument: String = "userInfo"
    ) {
        self.maximumAttempts = max(minimumAttempts, maximumAttempts)
        self.op = op
        self.argument = argument
        self.direction = direction
        self.sender = sender
        self.minimumAttempts = minimumAttempts
    }

    var attempts: Int { state.current.attempts }
    var acknowledged: [Int] { state.current.acknowledged }
    var errors: [Int: Int] { state.current.errors }
    var reconnects: Int { state.current.reconnects }
    var failure: String? { state.current.failure }

    func run(stopped: () -> Bool) {
        var client: ControlClient?
        var n = 0
        while n < maximumAttempts && (n < minimumAttempts || !stopped()) {
            if client == nil {
                client = connect(deadline: Date().addingTimeInterval(30))
                guard client != nil else {
                    state.withValue { $0.failure = "\(sender.name)'s control socket did not answer for 30 s" }
                    return
                }
            }
            n += 1
            state.withValue { $0.attempts = n }
            do {
                _ = try client!.call(
                    op, [argument: ["dir": .string(direction), "n": .int(Int64(n))]],
                    timeoutSeconds: 15)
                state.withValue { $0.acknowledged.append(n) }
            } catch let error as ControlError {
                state.withValue { $0.errors[error.code, default: 0] += 1 }
                if error.code == 7004 { waitUntilActivated(client!) }
            } catch {
                client?.close()
                client = nil
            }
        }
        client?.close()
    }

    private func connect(deadline: Date) -> ControlClient? {
        while Date() < deadline {
            if let client = try? sender.client(timeout: 15) {
                if (try? client.call("status", timeoutSeconds: 5)) != nil {
                    state.withValue { $0.reconnects += 1 }
                    return client
                }
                client.close()
            }
            usleep(2_000)
        }
        return nil
    }

    private func waitUntilActivated(_ client: ControlClient) {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            guard let status = try? client.call("status", timeoutSeconds: 5) else { return }
            if status["activationState"] == "activated" { return }
            usleep(2_000)
        }
    }
}

/// Kills a random one of the daemons at random moments (SIGKILL, or the `fault` given: a power
/// cut) and restarts it at once with `--activate`, until `done` says enough.
final class Killer: @unchecked Sendable {
    let daemons: [RestartableDaemon]
    private let state: Locked<(kills: [Int], failure: String?)>
    private var generator: SeededGenerator
    private let pause: ClosedRange<UInt32>
    private let fault: (RestartableDaemon) throws -> Void
    private let restarted: (RestartableDaemon) throws -> Void

    let extra: [String]

    /// - Parameters:
    ///   - pause: the random wait before each kill, in microseconds.
    ///   - fault: what ends the daemon; it must have exited when it returns.
    ///   - restarted: what to do once the daemon answers again.
    init(
        daemons: [RestartableDaemon], seed: UInt64, extra: [String] = [], pause: ClosedRange<UInt32> = 10_000...250_000,
        fault: @escaping (RestartableDaemon) throws -> Void = { $0.kill9() },
        restarted: @escaping (RestartableDaemon) throws -> Void = { _ in }
    ) {
        self.daemons = daemons
        self.extra = extra
        self.pause = pause
        self.fault = fault
        self.restarted = restarted
        state = Locked((Array(repeating: 0, count: daemons.count), nil))
        generator = SeededGenerator(seed: seed)
    }

    var kills: [Int] { state.current.kills }
    var failure: String? { state.current.failure }

    func run(done: () -> Bool) {
        while !done() {
            usleep(UInt32.random(in: pause, using: &generator))
            let index = Int.random(in: 0..<daemons.count, using: &generator)
            let daemon = daemons[index]
            do {
                try fault(daemon)
                state.withValue { $0.kills[index] += 1 }
                try daemon.startAndWait(extra: extra, timeout: 30)
                try restarted(daemon)
            } catch {
                state.withValue { $0.failure = "\(daemon.name) after kill \($0.kills[index]): \(error)" }
                return
            }
        }
    }
}
