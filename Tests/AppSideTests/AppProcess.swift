import Foundation
import WatchLinkTesting
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One app process (the `WatchLinkAppProbe` program, written against the WatchConnectivity
/// API only), attached to one side of a pair: commands go to its standard input, and what its
/// delegate saw comes back from its standard output, one JSON object a line.
final class AppProcess {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let outputPath: String
    private let program: String
    private let arguments: [String]
    private let environment: [String: String]

    init(
        _ name: String, program: String = "WatchLinkAppProbe", environment: [String: String], directory: String,
        arguments: [String] = []
    ) {
        self.name = name
        self.program = program
        self.environment = environment
        self.arguments = arguments
        outputPath = directory + "/\(name)-\(UUID().uuidString.prefix(6)).out"
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func start() throws {
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        process.executableURL = URL(fileURLWithPath: DaemonBinaries.path(program))
        process.arguments = arguments
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// Sends one command (see Tests/AppProbe/main.swift).
    func send(_ command: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: command) else { return XCTFail("unencodable \(command)") }
        input.fileHandleForWriting.write(data + Data("\n".utf8))
    }

    /// Every callback line so far, in order.
    var callbacks: [[String: Any]] {
        guard let text = try? String(contentsOfFile: outputPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let data = line.data(using: .utf8) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
    }

    /// The names of the callbacks so far, in order.
    var names: [String] { callbacks.compactMap { $0["cb"] as? String } }

    /// Waits until `count` callbacks named `name` have come; returns them.
    @discardableResult
    func waitFor(_ name: String, count: Int = 1, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line)
        throws -> [[String: Any]]
    {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let matching = callbacks.filter { $0["cb"] as? String == name }
            if matching.count >= count { return matching }
            if Date() > deadline {
                throw AppProcessError("\(self.name): \(matching.count) of \(count) '\(name)' callbacks within \(timeout) s; saw \(names.suffix(20))")
            }
            if !process.isRunning {
                throw AppProcessError("\(self.name) exited (\(process.terminationStatus)) waiting for '\(name)'; saw \(names.suffix(20))")
            }
            usleep(5_000)
        }
    }

    /// SIGKILL by pid, reaped.
    func kill9() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends the process (SIGTERM, then SIGKILL), by pid.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        kill9()
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits until the output has a line for which `condition` holds.
    func waitForLine(timeout: Double = 20, _ what: String, _ condition: (Substring) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !output.split(separator: "\n").contains(where: condition) {
            if Date() > deadline { throw AppProcessError("\(name): no line \(what) within \(timeout) s; output:\n\(output)") }
            usleep(5_000)
        }
    }

    /// Waits for the process to exit by itself; its status.
    func waitForExit(timeout: Double) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { throw AppProcessError("\(name) still running after \(timeout) s; output:\n\(output)") }
            usleep(5_000)
        }
        return process.terminationStatus
    }
}

struct AppProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
