#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LinkStore
import XCTest

/// The payload CrashWriter commits as item `seq` (Tests/CrashWriter/main.swift).
private func expectedPayload(_ seq: UInt64) -> [UInt8] {
    (0..<Int(seq % 3000)).map { UInt8((Int(seq) * 7 + $0) % 256) }
}

/// SQLite's own crash tests, applied to WatchLink's durable path: a separate process writes
/// through DeliveryStore (one to three items a transaction, as a daemon's group commit does),
/// reporting each item once its commit has returned, and is killed with SIGKILL; reopened, the
/// store has every reported item, whole, and no gap.
final class CrashSafetyTests: XCTestCase {
    /// The CrashWriter executable, built next to the test bundle by `swift build --build-tests`.
    private func writerPath() throws -> String {
        var candidates: [URL] = []
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        if let dir = ProcessInfo.processInfo.environment["WATCHLINK_BIN_DIR"], !dir.isEmpty {
            candidates.append(URL(fileURLWithPath: dir))
        }
        let found = candidates.map { $0.appendingPathComponent("CrashWriter").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        return try XCTUnwrap(found, "CrashWriter is not built next to the tests (swift build --build-tests builds it)")
    }

    /// Reads decimal lines from `fd` until `count` have arrived, the writer stops, or the
    /// deadline passes; returns the last number read.
    private func readAcknowledgements(from fd: Int32, count: Int, deadline: Date) throws -> UInt64? {
        var pending: [UInt8] = []
        var last: UInt64?
        var seen = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while seen < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { break }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining, 1) * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            pending += buffer[0..<got]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                last = UInt64(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
                seen += 1
            }
        }
        return last
    }

    func testItemsCommittedBeforeSIGKILLSurviveWithNoGaps() throws {
        let writer = try writerPath()
        let directory = try TemporaryDirectory()
        let path = directory.file("watch.db")

        var nextSeq: UInt64 = 1
        for acknowledgementsBeforeKill in [1, 150, 400, 1_000] {
            let process = Process()
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: writer)
            process.arguments = [path, String(nextSeq)]
            process.standardOutput = output
            try process.run()
            // Killed by pid whatever happens below, and reaped.
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
            let acknowledged = try readAcknowledgements(
                from: output.fileHandleForReading.fileDescriptor, count: acknowledgementsBeforeKill,
                deadline: Date().addingTimeInterval(120))
            XCTAssertTrue(process.isRunning, "the writer was still writing when it was killed")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal)
            XCTAssertEqual(process.terminationStatus, SIGKILL)
            guard let acknowledged else {
                return XCTFail("the writer acknowledged nothing")
            }
            XCTAssertGreaterThanOrEqual(acknowledged, nextSeq + UInt64(acknowledgementsBeforeKill) - 1)

            let store = try DeliveryStore(path: path)
            let items = try store.load().outbox.filter { $0.channel == .userInfo }
            store.close()
            var expected: UInt64 = 1
            for item in items {
                XCTAssertEqual(item.seq, expected, "a gap before \(expected)")
                XCTAssertEqual(item.transferId, "t\(item.seq)")
                XCTAssertTrue(item.payload == expectedPayload(item.seq), "item \(item.seq) differs")
                expected = item.seq + 1
            }
            let stored = expected - 1
            XCTAssertGreaterThanOrEqual(stored, acknowledged, "acknowledged items were lost")
            nextSeq = stored + 1
        }
    }
}
