import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import WatchLinkTesting
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the built daemons are (WatchLinkTesting finds them).
enum Binaries {
    static var directory: URL { DaemonBinaries.directory }
    static func path(_ name: String) -> String { DaemonBinaries.path(name) }
}

/// The project's tests start daemons with the fixture the package offers its users.
typealias TemporaryDirectory = TemporaryHome
typealias DaemonProcess = WatchLinkDaemon

extension WatchLinkDaemon: ControlEndpoint {}

/// The environment of a spawned daemon: the tests' own, with `LSAN_OPTIONS` set to
/// `WATCHLINK_DAEMON_LSAN_OPTIONS` when that is set. `scripts/test.sh --sanitize address` checks
/// the daemons for leaks (with scripts/lsan-suppressions.txt) but not the test runner itself:
/// XCTest on Linux keeps every test case and its run in a reference cycle, so everything a test
/// holds would be reported.
func daemonEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    if let options = environment["WATCHLINK_DAEMON_LSAN_OPTIONS"] {
        environment["LSAN_OPTIONS"] = options
    }
    return environment
}

/// The sanitizer the suite runs under (`scripts/test.sh --sanitize`), empty without one.
let sanitizer = ProcessInfo.processInfo.environment["WATCHLINK_SANITIZER"] ?? ""

/// Whether a daemon's resident memory means anything: not under a sanitizer, whose shadow
/// memory and quarantine count as the daemon's.
var memoryIsMeasurable: Bool { sanitizer.isEmpty }

/// Polls `condition` until it holds or the deadline passes.
func eventually(
    _ what: String, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () throws -> Bool
) {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if (try? condition()) == true { return }
        usleep(10_000)
    }
    XCTFail("timed out after \(timeout) s waiting for \(what)", file: file, line: line)
}

/// Something with a control socket that tests connect to.
protocol ControlEndpoint {
    func client(timeout: Double) throws -> ControlClient
}

/// The lines of a daemon's log where a sanitizer reported an error, a leak or a race.
func sanitizerReports(in log: String) -> [Substring] {
    log.split(separator: "\n").filter {
        $0.contains("ERROR: AddressSanitizer") || $0.contains("ERROR: LeakSanitizer")
            || $0.contains("WARNING: ThreadSanitizer") || $0.contains("runtime error:")
    }
}

/// Fails the current test when a daemon stopped at its end did not exit 0, or when its log has
/// a sanitizer's report: a daemon's leak, memory error or race fails the test that ran it.
func checkDaemonEnded(_ name: String, status: Int32?, log: String, file: StaticString = #filePath, line: UInt = #line) {
    let reports = sanitizerReports(in: log)
    if !reports.isEmpty {
        XCTFail("\(name) had \(reports.count) sanitizer report(s): \(reports.prefix(3).joined(separator: " | "))", file: file, line: line)
    }
    if let status, status != 0 {
        XCTFail("\(name) exited with \(status) when stopped with SIGTERM at the end of the test", file: file, line: line)
    }
}

/// A test case that owns a temporary home and the daemons it starts, and cleans both up.
class DaemonTestCase: XCTestCase {
    private(set) var directories: [TemporaryDirectory] = []
    private(set) var daemons: [DaemonProcess] = []
    private(set) var clients: [ControlClient] = []
    /// Short-lived programs (linkctl, daemons refusing their flags): killed at the end if still running.
    let children = ChildProcesses()
    var home: String = ""

    override func setUp() {
        super.setUp()
        home = makeDirectory()
    }

    /// Whether the test recorded a failure (its daemons' logs are printed at the end).
    private(set) var recordedIssue = false

    /// Added to every failure message of the test: a randomised test puts its seed here.
    var failureNote: String?

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        recordedIssue = true
        let text = failureNote.map { "\(description) [\($0)]" } ?? description
        super.recordFailure(withDescription: text, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// The seed of a randomised test: the environment variable `name`, else WATCHLINK_SEED, else
    /// a random one. Printed, and named in every failure message of the test.
    func randomSeed(_ name: String, test: String = #function) -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        let seed =
            environment[name].flatMap { UInt64($0) } ?? environment["WATCHLINK_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64.max)
        print("\(test): seed \(seed) (\(name)=\(seed) replays it)")
        failureNote = "seed \(seed): \(name)=\(seed) replays it"
        return seed
    }

    override func tearDown() {
        for client in clients { client.close() }
        children.killAll()
        for daemon in daemons {
            checkDaemonEnded(daemon.name, status: daemon.stop(), log: daemon.log)
        }
        if recordedIssue {
            for daemon in daemons { print("---- \(daemon.name) log (\(daemon.logPath)):\n\(daemon.log)") }
        }
        for directory in directories { directory.remove() }
        clients.removeAll()
        daemons.removeAll()
        directories.removeAll()
        super.tearDown()
    }

    func makeDirectory() -> String {
        let directory = TemporaryDirectory()
        directories.append(directory)
        return directory.path
    }

    func daemon(_ name: String, home: String? = nil, _ extra: [String] = [], logPath: String? = nil) -> DaemonProcess {
        let daemon = DaemonProcess(
            name, home: home ?? self.home, extraArguments: extra, logPath: logPath,
            environment: daemonEnvironment())
        daemons.append(daemon)
        return daemon
    }

    /// A client of `daemon`'s control socket, closed at the end of the test.
    func client(_ daemon: some ControlEndpoint, timeout: Double = 10) throws -> ControlClient {
        let client = try daemon.client(timeout: timeout)
        clients.append(client)
        return client
    }

    func subscribed(_ daemon: some ControlEndpoint) throws -> ControlClient {
        let client = try client(daemon)
        try client.subscribe()
        return client
    }

    /// Starts phoned and watchd in the test's home and waits until the link is up.
    func startPair(phoneArgs: [String] = [], watchArgs: [String] = []) throws -> (DaemonProcess, DaemonProcess) {
        let phone = try daemon("phoned", phoneArgs).startAndWait()
        let watch = try daemon("watchd", watchArgs).startAndWait()
        let phoneClient = try client(phone)
        eventually("the link to come up") {
            try phoneClient.call("status")["link"]?["connected"]?.boolValue == true
        }
        return (phone, watch)
    }

    /// Starts both daemons, activates both sessions and waits until each side is reachable.
    func startActivatedPair(phoneArgs: [String] = [], watchArgs: [String] = []) throws
        -> (phone: DaemonProcess, watch: DaemonProcess, p: ControlClient, w: ControlClient)
    {
        let (phone, watch) = try startPair(phoneArgs: phoneArgs, watchArgs: watchArgs)
        let p = try client(phone)
        let w = try client(watch)
        _ = try p.call("session.activate")
        _ = try w.call("session.activate")
        eventually("both sides reachable") {
            try p.call("status")["isReachable"]?.boolValue == true && w.call("status")["isReachable"]?.boolValue == true
        }
        return (phone, watch, p, w)
    }
}

extension DaemonTestCase {
    /// Starts phoned on a manual clock at `start` (ISO 8601) and watchd, both activated, and
    /// waits until the watch follows the phone's clock (docs/control-protocol.md, "The device clock").
    func startManualClockPair(start: String = "2026-12-31T23:59:00Z", phoneArgs: [String] = [], watchArgs: [String] = []) throws
        -> (phone: DaemonProcess, watch: DaemonProcess, p: ControlClient, w: ControlClient)
    {
        let pair = try startActivatedPair(phoneArgs: ["--clock", "manual", "--clock-start", start] + phoneArgs, watchArgs: watchArgs)
        eventually("the watch to follow the phone's clock") {
            try pair.w.call("status")["clock"]?["followsPhone"]?.boolValue == true
        }
        return pair
    }

    /// Moves the pair's manual clock `milliseconds` ahead; the clock as the phone answers it.
    @discardableResult
    func advance(_ p: ControlClient, _ milliseconds: Int64) throws -> JSONObject {
        try p.call("clock.advance", ["ms": .int(milliseconds)], timeoutSeconds: 60)
    }

    /// A daemon's device clock, as `status.clock` shows it.
    func clock(_ client: ControlClient) throws -> JSONObject {
        try XCTUnwrap(try client.call("status")["clock"]?.objectValue)
    }

    /// A daemon's wall clock, in milliseconds since 1970.
    func wallMilliseconds(_ client: ControlClient) throws -> Int64 {
        try XCTUnwrap(try clock(client)["wallMs"]?.intValue)
    }
}

extension JSONObject {
    subscript(path first: String, _ rest: String...) -> JSONValue? {
        var value = self[first]
        for key in rest { value = value?[key] }
        return value
    }
}

/// Asserts that `body` throws a ControlError with this domain and code.
func assertControlError(
    _ domain: String, _ code: Int, containing fragment: String? = nil, file: StaticString = #filePath, line: UInt = #line,
    _ body: () throws -> Any
) {
    do {
        let value = try body()
        XCTFail("expected \(domain) \(code), got \(value)", file: file, line: line)
    } catch let error as ControlError {
        XCTAssertEqual(error.domain, domain, "\(error)", file: file, line: line)
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, file: file, line: line)
        if let fragment { XCTAssertTrue(error.message.contains(fragment), error.message, file: file, line: line) }
    } catch {
        XCTFail("expected \(domain) \(code), got \(error)", file: file, line: line)
    }
}
