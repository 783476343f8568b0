import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A short-lived program that a test runs, such as `linkctl` or a daemon refusing its flags.
///
/// Its standard output and error go to files (a full pipe can never block it), and every wait
/// has a deadline: a program still running then is killed by its pid and reaped, and the wait
/// throws. Create it through a ``ChildProcesses`` registry, which kills whatever is left at the
/// end of the test, so a failing test leaves no process behind.
public final class ChildProcess: @unchecked Sendable {
    public struct Outcome: Sendable {
        public var status: Int32
        public var reason: Process.TerminationReason
        public var standardOutput: String
        public var standardError: String
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public let description: String
    }

    public let process = Process()
    private let outputPath: String
    private let errorPath: String

    fileprivate init(executable: String, arguments: [String], environment: [String: String]?) {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let base = NSTemporaryDirectory() + "/wl-child-\(getpid())-\(UUID().uuidString.prefix(8))"
        outputPath = base + ".out"
        errorPath = base + ".err"
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Starts the program with its output going to files.
    public func start() throws {
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let error = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        defer {
            try? output.close()
            try? error.close()
        }
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// What the program has written to its standard output so far.
    public var standardOutput: String {
        readTextFile(outputPath) ?? ""
    }

    /// What the program has written to its standard error so far.
    public var standardError: String {
        readTextFile(errorPath) ?? ""
    }

    /// Waits up to `timeout` seconds for the program to exit and returns how it ended; kills it
    /// (SIGKILL by pid) and throws ``TimedOut`` when it is still running then.
    public func finish(timeout: Double = 30) throws -> Outcome {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            let output = standardOutput
            kill()
            throw TimedOut(
                description:
                    "\(process.executableURL?.lastPathComponent ?? "program") \(process.arguments ?? []) was still running after \(timeout) s; output so far: \(output)"
            )
        }
        process.waitUntilExit()
        let outcome = Outcome(
            status: process.terminationStatus, reason: process.terminationReason,
            standardOutput: standardOutput,
            standardError: readTextFile(errorPath) ?? "")
        removeFiles()
        return outcome
    }

    /// SIGKILL by pid when running, then reaps it (at most 10 s) and removes the output files.
    public func kill() {
        if process.isRunning {
            sigkill(process.processIdentifier)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(2_000) }
        }
        removeFiles()
    }

    private func removeFiles() {
        unlink(outputPath)
        unlink(errorPath)
    }
}

/// The programs a test has started; ``killAll()`` (from `tearDown`) kills those still running.
public final class ChildProcesses: @unchecked Sendable {
    private let lock = NSLock()
    private var children: [ChildProcess] = []

    public init() {}

    /// A program registered for cleanup before it is started.
    public func make(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) -> ChildProcess {
        let child = ChildProcess(executable: executable, arguments: arguments, environment: environment)
        lock.withLock { children.append(child) }
        return child
    }

    /// Starts a registered program and waits for it to exit (see ``ChildProcess/finish(timeout:)``).
    public func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Double = 30
    ) throws -> ChildProcess.Outcome {
        let child = make(executable, arguments, environment: environment)
        try child.start()
        return try child.finish(timeout: timeout)
    }

    public func killAll() {
        let all = lock.withLock { () -> [ChildProcess] in
            defer { children.removeAll() }
            return children
        }
        for child in all { child.kill() }
    }
}

/// SIGKILL to one process, by its pid (a free function: `ChildProcess.kill()` hides `kill(2)`).
private func sigkill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

/// The text of a file (read to its end, so `/proc` files work too), nil when it cannot be read.
///
/// Not `String(contentsOfFile:)`: on Linux that leaks its read buffer, which LeakSanitizer
/// reports in `scripts/test.sh --sanitize address`.
public func readTextFile(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    guard let data = try? handle.readToEnd() else { return nil }
    return String(decoding: data, as: UTF8.self)
}
