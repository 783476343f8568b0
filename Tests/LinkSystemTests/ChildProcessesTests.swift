#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem
import TestSupport
import XCTest

final class ChildProcessesTests: XCTestCase {
    /// Waits (at most 10 s) until `pid` has ended, and reaps it.
    private func exit(of pid: Int32) -> ChildExit? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let exit = ChildProcesses.reap(pid) { return exit }
            usleep(2_000)
        }
        return nil
    }

    func testAChildGetsItsArgumentsEnvironmentDirectoryAndOutputFile() throws {
        try withTemporaryDirectory { directory in
            let log = directory + "/app.log"
            try FileSystem.writeFileAtomically(log, Array("before\n".utf8), mode: 0o600)
            let pid = try ChildProcesses.spawn(
                executable: "/bin/sh", arguments: ["-c", "echo \"$1 $GREETING\"; pwd; echo oops >&2; read x || echo eof; exit 3", "sh", "hello"],
                environment: ["GREETING": "world", "PATH": "/usr/bin:/bin"],
                workingDirectory: directory, outputPath: log)
            XCTAssertEqual(exit(of: pid), .exited(3))
            let output = String(decoding: try FileSystem.readFile(log), as: UTF8.self)
            XCTAssertEqual(output, "before\nhello world\n\(directory)\noops\neof\n", "appended: stdout and stderr, stdin empty")
            XCTAssertNil(ChildProcesses.reap(pid), "reaped once")
        }
    }

    /// The daemon blocks signals for signalfd and ignores SIGPIPE; its apps start with neither.
    func testAChildStartsWithNoSignalBlockedOrIgnored() throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            var blocked = sigset_t(), previous = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGCHLD)
            XCTAssertEqual(pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0)
            let previousPipe = signal(SIGPIPE, SIG_IGN)
            defer {
                pthread_sigmask(SIG_SETMASK, &previous, nil)
                signal(SIGPIPE, previousPipe)
            }
            let log = directory + "/signals.log"
            let pid = try ChildProcesses.spawn(
                executable: "/bin/sh", arguments: ["-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"],
                environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, outputPath: log)
            XCTAssertEqual(exit(of: pid), .exited(0))
            let masks = String(decoding: try FileSystem.readFile(log), as: UTF8.self).split(separator: "\n").compactMap {
                UInt64($0.split(separator: "\t").last ?? "", radix: 16)
            }
            // Signals 1 to 31; glibc keeps 32 and 33 for itself (its sigfillset leaves them out).
            XCTAssertEqual(masks.map { $0 & 0x7FFF_FFFF }, [0, 0], "nothing blocked, nothing ignored")
        }
        #endif
    }

    func testAChildEndedByASignalAndAnExecutableThatCannotRun() throws {
        try withTemporaryDirectory { directory in
            let pid = try ChildProcesses.spawn(
                executable: "/bin/sleep", arguments: ["30"], environment: [:], workingDirectory: nil,
                outputPath: directory + "/sleep.log")
            XCTAssertNil(ChildProcesses.reap(pid), "still running")
            XCTAssertTrue(SystemCalls.signal(pid, SIGTERM))
            XCTAssertEqual(exit(of: pid), .signaled(SIGTERM))

            XCTAssertThrowsError(
                try ChildProcesses.spawn(
                    executable: directory + "/missing", arguments: [], environment: [:],
                    workingDirectory: nil, outputPath: directory + "/missing.log")
            ) {
                XCTAssertEqual(($0 as? SystemError)?.errno, .noSuchFileOrDirectory, "\($0)")
            }
            try FileSystem.writeFileAtomically(directory + "/plain", Array("text".utf8), mode: 0o600)
            XCTAssertFalse(ChildProcesses.isExecutable(directory + "/plain"))
            XCTAssertFalse(ChildProcesses.isExecutable(directory), "a directory is not a program")
            XCTAssertTrue(ChildProcesses.isExecutable("/bin/sh"))
        }
    }
}
