import Foundation
import LinkClient
import LinkSystem

/// One spawned daemon (`phoned` or `watchd`) of the package's build, in a home of its own or
/// shared: started, waited for, signalled and stopped by its pid, its output kept in a log file.
public final class WatchLinkDaemon: @unchecked Sendable {
    /// The program: `phoned` or `watchd`.
    public let name: String
    /// Its WatchLink home (`--home`).
    public let home: String
    /// Its command line after the program's path.
    public let arguments: [String]
    /// The file its standard output and standard error go to; each start appends.
    public let logPath: String
    /// The environment it runs with (the caller's by default).
    public var environment: [String: String]
    /// The process of the last start, running or not; nil before the first.
    public private(set) var process: Process?

    /// A daemon to start, with `--home home --log-level logLevel` and `extraArguments`, its
    /// output in `logPath` (else `HOME/NAME.log`). Nothing runs before ``start()``.
    public init(
        _ name: String, home: String, extraArguments: [String] = [], logPath: String? = nil,
        logLevel: String = "debug", environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.name = name
        self.home = home
        arguments = ["--home", home, "--log-level", logLevel] + extraArguments
        self.logPath = logPath ?? home + "/" + name + ".log"
        self.environment = environment
    }

    /// The pid of the last start; 0 before the first.
    public var pid: Int32 { process?.processIdentifier ?? 0 }
    /// Whether the process of the last start is running.
    public var isRunning: Bool { process?.isRunning ?? false }
    /// Its control socket: `HOME/phone.ctl` or `HOME/watch.ctl`.
    public var controlPath: String { home + (name == "phoned" ? "/phone.ctl" : "/watch.ctl") }

    /// Spawns the daemon from ``DaemonBinaries`` and returns at once; ``waitUntilReady(timeout:)``
    /// waits for its control socket.
    @discardableResult
    public func start() throws -> WatchLinkDaemon {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonBinaries.path(name))
        process.arguments = arguments
        process.environment = environment
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? log.close()
        self.process = process
        return self
    }

    /// Starts the daemon and waits until its control socket answers `status`.
    @discardableResult
    public func startAndWait(timeout: Double = 10) throws -> WatchLinkDaemon {
        try start()
        try waitUntilReady(timeout: timeout)
        return self
    }

    /// Waits until the control socket answers `status`; throws with the log when the daemon
    /// exits first or the deadline passes.
    public func waitUntilReady(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let process, !process.isRunning {
                throw WatchLinkTestingError("\(name) exited with \(process.terminationStatus) before it was ready:\n\(log)")
            }
            if let client = try? ControlClient(socketPath: controlPath, timeoutSeconds: 2) {
                defer { client.close() }
                if (try? client.call("status")) != nil { return }
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        throw WatchLinkTestingError("\(name) not ready after \(timeout) s:\n\(log)")
    }

    /// A blocking client of its control socket.
    public func client(timeout: Double = 10) throws -> ControlClient {
        try ControlClient(socketPath: controlPath, timeoutSeconds: timeout)
    }

    /// What it has logged so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Sends `signal` (`SIGSTOP`, `SIGTERM`, ...) to the process, if it is running.
    public func signal(_ signal: Int32) {
        guard let process, process.isRunning else { return }
        SystemCalls.signal(process.processIdentifier, signal)
    }

    /// Waits for the process to exit; its status, or nil on timeout.
    @discardableResult
    public func waitForExit(timeout: Double = 5) -> Int32? {
        guard let process else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// SIGKILL by pid, and reaped.
    public func kill9() {
        signal(SIGKILL)
        waitForExit(timeout: 5)
    }

    /// SIGTERM, then SIGKILL if it has not stopped within 30 s (a sanitizer's exit checks take
    /// time). The exit status of a daemon it stopped (negative: the signal), nil if it was not
    /// running.
    @discardableResult
    public func stop() -> Int32? {
        guard let process, process.isRunning else { return nil }
        signal(SIGTERM)
        if waitForExit(timeout: 30) == nil { kill9() }
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }
}

/// What went wrong starting or stopping daemons, in words.
public struct WatchLinkTestingError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in words (with the daemon's log when one failed to start or link).
    public let description: String
    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}
