#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// How a child process ended (`waitpid(2)`).
public enum ChildExit: Equatable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let status): return "exited with status \(status)"
        case .signaled(let signo): return "ended by signal \(signo)"
        }
    }
}

/// Processes the daemon starts (the apps its emulated OS launches): spawned, reaped and
/// signalled by pid, never looked up by name.
public enum ChildProcesses {
    /// Whether `path` names a regular file this process may execute.
    public static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        guard wl_stat(path, &info) == 0, wl_s_isreg(info.st_mode) != 0 else { return false }
        return access(path, X_OK) == 0
    }

    /// Starts `executable` (an absolute path) with `arguments` and exactly `environment`, in
    /// `workingDirectory` when given, its standard output and error appended to `outputPath`
    /// (created 0600 if missing) and standard input from `/dev/null`, in a process group of its
    /// own, with no signal blocked or ignored. Returns its pid.
    ///
    /// - Throws: ``SystemError`` of `open` for the output file, or of `posix_spawn` (for an
    ///   executable that does not exist or cannot be run: `ENOENT`, `EACCES`, `ENOEXEC`).
    public static func spawn(
        executable: String, arguments: [String], environment: [String: String],
        workingDirectory: String?, outputPath: String
    ) throws(SystemError) -> Int32 {
        let output = try Syscall.open(outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        defer { Syscall.close(output) }
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argumentPointers in
            (envp + [nil]).withUnsafeBufferPointer { environmentPointers in
                withDirectory(workingDirectory) { directory in
                    wl_spawn(executable, argumentPointers.baseAddress!, environmentPointers.baseAddress!, directory, output, &pid)
                }
            }
        }
        guard result == 0 else { throw SystemError(operation: "posix_spawn", errno: Errno(rawValue: result), path: executable) }
        return pid
    }

    private static func withDirectory<T>(_ directory: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard let directory else { return body(nil) }
        return directory.withCString { body($0) }
    }

    /// How `pid` ended, if it has: reaps it without waiting (`waitpid` with `WNOHANG`);
    /// `nil` while it runs, or when it is not a child of this process (any more).
    public static func reap(_ pid: Int32) -> ChildExit? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result == -1, wl_errno() == EINTR { continue }
            return nil
        }
        if wl_wifexited(status) != 0 { return .exited(wl_wexitstatus(status)) }
        if wl_wifsignaled(status) != 0 { return .signaled(wl_wtermsig(status)) }
        return nil
    }
}
