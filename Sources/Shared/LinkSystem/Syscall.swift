#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// The one place where system calls are made: each wrapper retries on `EINTR` (in
/// ``retrying(_:path:_:)``, the one loop that does) and turns failures into ``SystemError``.
/// Calls that can legitimately find nothing to do on a non-blocking descriptor return `nil`
/// on `EAGAIN` instead of throwing.
public enum Syscall {
    /// Calls `call` until it is not interrupted by a signal: its result, or the `errno` of
    /// its failure (`-1`).
    @inline(__always)
    static func valueOrErrno<T: FixedWidthInteger>(_ call: () -> T) -> Result<T, Errno> {
        while true {
            let result = call()
            if result != -1 { return .success(result) }
            let code = wl_errno()
            if code != EINTR { return .failure(Errno(rawValue: code)) }
        }
    }

    @inline(__always)
    static func retrying<T: FixedWidthInteger>(
        _ operation: String, path: String? = nil, _ call: () -> T
    ) throws(SystemError) -> T {
        switch valueOrErrno(call) {
        case .success(let value): return value
        case .failure(let errno): throw SystemError(operation: operation, errno: errno, path: path)
        }
    }

    @inline(__always)
    static func retryingUnlessWouldBlock<T: FixedWidthInteger>(
        _ operation: String, path: String? = nil, _ call: () -> T
    ) throws(SystemError) -> T? {
        switch valueOrErrno(call) {
        case .success(let value): return value
        case .failure(let errno) where errno == .wouldBlock || errno.rawValue == EWOULDBLOCK: return nil
        case .failure(let errno): throw SystemError(operation: operation, errno: errno, path: path)
        }
    }

    /// Like ``retrying(_:path:_:)``, where `ENOENT` means "nothing there": `nil`.
    @inline(__always)
    static func retryingUnlessMissing<T: FixedWidthInteger>(
        _ operation: String, path: String, _ call: () -> T
    ) throws(SystemError) -> T? {
        switch valueOrErrno(call) {
        case .success(let value): return value
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw SystemError(operation: operation, errno: errno, path: path)
        }
    }

    // MARK: Descriptors

    /// Closes `fd`. `EINTR` is not retried: the descriptor is released either way.
    public static func close(_ fd: Int32) {
        _ = closeChecked(fd)
    }

    public static func closeChecked(_ fd: Int32) -> Errno? {
        if system_close(fd) == 0 { return nil }
        let code = wl_errno()
        return code == EINTR ? nil : Errno(rawValue: code)
    }

    /// `read(2)` on a non-blocking descriptor: `nil` when there is nothing to read.
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("read") { system_read(fd, buffer, count) }
    }

    /// `write(2)` on a non-blocking descriptor: `nil` when it cannot take anything.
    public static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("write") { system_write(fd, buffer, count) }
    }

    /// `send(2)` on a non-blocking socket: `nil` when it cannot take anything; a closed peer
    /// is `EPIPE`, never SIGPIPE (for processes that cannot ignore SIGPIPE, such as an app).
    public static func send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("send") { system_send(fd, buffer, count) }
    }

    /// `recv(2)` on a non-blocking socket: `nil` when there is nothing to read.
    public static func receive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("recv") { system_recv(fd, buffer, count) }
    }

    /// `recvmsg(2)` into `vectors` on a non-blocking socket: `nil` when there is nothing to read.
    public static func receive(_ fd: Int32, vectors: UnsafePointer<iovec>, _ count: Int32) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("recvmsg") { system_recvmsg(fd, vectors, count) }
    }

    /// `sendmsg(2)` of `vectors` on a non-blocking socket: `nil` when it cannot take anything;
    /// a closed peer is `EPIPE`, never SIGPIPE.
    public static func send(_ fd: Int32, vectors: UnsafePointer<iovec>, _ count: Int32) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("sendmsg") { system_sendmsg(fd, vectors, count) }
    }

    public static func setNonBlockingAndCloseOnExec(_ fd: Int32) throws(SystemError) {
        let flags = try retrying("fcntl(F_GETFL)") { system_fcntl(fd, F_GETFL) }
        if flags & O_NONBLOCK == 0 {
            _ = try retrying("fcntl(F_SETFL)") { system_fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        }
        try setCloseOnExec(fd)
    }

    public static func setCloseOnExec(_ fd: Int32) throws(SystemError) {
        let fdFlags = try retrying("fcntl(F_GETFD)") { system_fcntl(fd, F_GETFD) }
        if fdFlags & FD_CLOEXEC == 0 {
            _ = try retrying("fcntl(F_SETFD)") { system_fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) }
        }
    }

    /// A non-blocking, close-on-exec pipe: `(read end, write end)`.
    public static func pipe() throws(SystemError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying("pipe") { system_pipe(&fds) }
        #if !os(Linux)
        do {
            try setNonBlockingAndCloseOnExec(fds[0])
            try setNonBlockingAndCloseOnExec(fds[1])
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        #endif
        return (fds[0], fds[1])
    }

    // MARK: Files

    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(SystemError) -> Int32 {
        try retrying("open", path: path) { system_open(path, flags | O_CLOEXEC, mode) }
    }

    /// `lstat(2)`; `nil` when nothing exists at `path`.
    public static func lstat(_ path: String) throws(SystemError) -> FileInfo? {
        var info = FileInfo()
        guard try retryingUnlessMissing("lstat", path: path, { system_lstat(path, &info) }) != nil else { return nil }
        return info
    }

    /// `stat(2)`, following symbolic links; `nil` when nothing exists at `path`.
    public static func stat(_ path: String) throws(SystemError) -> FileInfo? {
        var info = FileInfo()
        guard try retryingUnlessMissing("stat", path: path, { system_stat(path, &info) }) != nil else { return nil }
        return info
    }

    public static func fstat(_ fd: Int32, path: String? = nil) throws(SystemError) -> FileInfo {
        var info = FileInfo()
        _ = try retrying("fstat", path: path) { system_fstat(fd, &info) }
        return info
    }

    public static func mkdir(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try retrying("mkdir", path: path) { system_mkdir(path, mode) }
    }

    /// `mkdir(2)` where an existing entry is not an error; returns the failure otherwise.
    public static func mkdirIfMissing(_ path: String, _ mode: mode_t) -> SystemError? {
        do {
            try mkdir(path, mode)
            return nil
        } catch {
            return error.errno == .fileExists ? nil : error
        }
    }

    public static func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try retrying("chmod", path: path) { system_chmod(path, mode) }
    }

    public static func fchmod(_ fd: Int32, _ mode: mode_t, path: String? = nil) throws(SystemError) {
        _ = try retrying("fchmod", path: path) { system_fchmod(fd, mode) }
    }

    public static func unlink(_ path: String) throws(SystemError) {
        _ = try retrying("unlink", path: path) { system_unlink(path) }
    }

    public static func rmdir(_ path: String) throws(SystemError) {
        _ = try retrying("rmdir", path: path) { system_rmdir(path) }
    }

    public static func rename(_ from: String, _ to: String) throws(SystemError) {
        _ = try retrying("rename", path: to) { system_rename(from, to) }
    }

    public static func fsync(_ fd: Int32, path: String? = nil) throws(SystemError) {
        _ = try retrying("fsync", path: path) { system_fsync(fd) }
    }

    public static func ftruncate(_ fd: Int32, _ length: Int64, path: String? = nil) throws(SystemError) {
        _ = try retrying("ftruncate", path: path) { system_ftruncate(fd, off_t(length)) }
    }

    /// `pread(2)`: bytes read, 0 at the end of the file.
    public static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: Int64, path: String? = nil) throws(SystemError) -> Int {
        try retrying("pread", path: path) { system_pread(fd, buffer, count, off_t(offset)) }
    }

    /// `pwrite(2)`: bytes written, which may be fewer than `count`.
    public static func pwrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: Int64, path: String? = nil) throws(SystemError) -> Int {
        try retrying("pwrite", path: path) { system_pwrite(fd, buffer, count, off_t(offset)) }
    }

    /// `read(2)` on a blocking descriptor.
    public static func readBlocking(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, path: String? = nil) throws(SystemError) -> Int {
        try retrying("read", path: path) { system_read(fd, buffer, count) }
    }

    /// Writes all of `bytes`, looping over short writes, for blocking descriptors.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(SystemError) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = try retrying("write", path: path) { system_write(fd, base, remaining) }
            base += written
            remaining -= written
        }
    }

    // MARK: Sockets

    /// A non-blocking, close-on-exec socket (and, on Darwin, one that never raises SIGPIPE).
    public static func socket(_ domain: Int32, _ type: Int32, _ protocol: Int32 = 0) throws(SystemError) -> Int32 {
        #if os(Linux)
        return try retrying("socket") { system_socket(domain, type | socketFlags, `protocol`) }
        #else
        let fd = try retrying("socket") { system_socket(domain, type, `protocol`) }
        do {
            try prepareAccepted(fd)
        } catch {
            close(fd)
            throw error
        }
        return fd
        #endif
    }

    /// A blocking, close-on-exec socket (and, on Darwin, one that never raises SIGPIPE), for
    /// a client that waits on a thread of its own.
    public static func blockingSocket(_ domain: Int32, _ type: Int32) throws(SystemError) -> Int32 {
        #if os(Linux)
        return try retrying("socket") { system_socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), 0) }
        #else
        let fd = try retrying("socket") { system_socket(domain, type, 0) }
        do {
            try setCloseOnExec(fd)
            try setSocketOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1, "setsockopt(SO_NOSIGPIPE)")
        } catch {
            close(fd)
            throw error
        }
        return fd
        #endif
    }

    /// Sends all of `bytes` on a blocking socket, looping over short sends; a closed peer is
    /// `EPIPE`, never SIGPIPE.
    public static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let sent = try retrying("send") { system_send(fd, base, remaining) }
            base += sent
            remaining -= sent
        }
    }

    public static func socketPair(_ domain: Int32, _ type: Int32) throws(SystemError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        #if os(Linux)
        _ = try retrying("socketpair") { system_socketpair(domain, type | socketFlags, 0, &fds) }
        #else
        _ = try retrying("socketpair") { system_socketpair(domain, type, 0, &fds) }
        do {
            for fd in fds { try prepareAccepted(fd) }
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        #endif
        return (fds[0], fds[1])
    }

    public static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, path: String) throws(SystemError) {
        _ = try retrying("bind", path: path) { system_bind(fd, address, length) }
    }

    public static func listen(_ fd: Int32, _ backlog: Int32, path: String? = nil) throws(SystemError) {
        _ = try retrying("listen", path: path) { system_listen(fd, backlog) }
    }

    /// `connect(2)`. Returns `nil` on success and the error number otherwise, so callers can
    /// tell a refused connection from a live one. An interrupted connect goes on in the
    /// background and its retry may report `EISCONN`, which then means success: the one
    /// EINTR loop that cannot use ``valueOrErrno(_:)``.
    public static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Errno? {
        var interrupted = false
        while true {
            if system_connect(fd, address, length) == 0 { return nil }
            let code = wl_errno()
            if code == EINTR { interrupted = true; continue }
            if interrupted && code == EISCONN { return nil }
            return Errno(rawValue: code)
        }
    }

    /// `accept(2)` yielding a non-blocking, close-on-exec descriptor; `nil` when none is pending.
    public static func accept(_ listener: Int32) throws(SystemError) -> Int32? {
        while true {
            switch valueOrErrno({ system_accept(listener) }) {
            case .success(let fd):
                #if !os(Linux)
                do {
                    try prepareAccepted(fd)
                } catch {
                    close(fd)
                    throw error
                }
                #endif
                return fd
            case .failure(.connectionAborted):
                continue
            case .failure(let errno) where errno == .wouldBlock || errno.rawValue == EWOULDBLOCK:
                return nil
            case .failure(let errno):
                throw SystemError(operation: "accept", errno: errno)
            }
        }
    }

    #if !os(Linux)
    /// What Linux does with flags at creation: non-blocking, close-on-exec, no SIGPIPE.
    private static func prepareAccepted(_ fd: Int32) throws(SystemError) {
        try setNonBlockingAndCloseOnExec(fd)
        try setSocketOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1, "setsockopt(SO_NOSIGPIPE)")
    }
    #endif

    /// `shutdown(2)`; the failure, if any.
    @discardableResult
    public static func shutdown(_ fd: Int32, _ how: Int32) -> Errno? {
        switch valueOrErrno({ system_shutdown(fd, how) }) {
        case .success: return nil
        case .failure(let errno): return errno
        }
    }

    public static func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ operation: String) throws(SystemError) {
        var value = value
        _ = try retrying(operation) {
            system_setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    public static func getSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ operation: String) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retrying(operation) {
            system_getsockopt(fd, level, name, &value, &length)
        }
        return value
    }

    // MARK: Time

    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    public static func realtime() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
