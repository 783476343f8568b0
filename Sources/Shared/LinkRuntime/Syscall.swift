#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// `struct stat`, named apart from the `stat` functions.
typealias FileInfo = stat

/// The one place where system calls are made: each wrapper retries on `EINTR` and turns
/// failures into ``SystemError``. Calls that can legitimately find nothing to do on a
/// non-blocking descriptor return `nil` on `EAGAIN` instead of throwing.
enum Syscall {
    @inline(__always)
    static func retrying<T: FixedWidthInteger>(
        _ operation: String, path: String? = nil, _ call: () -> T
    ) throws(SystemError) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = wl_errno()
            if code == EINTR { continue }
            throw SystemError(operation: operation, errno: Errno(rawValue: code), path: path)
        }
    }

    @inline(__always)
    static func retryingUnlessWouldBlock<T: FixedWidthInteger>(
        _ operation: String, path: String? = nil, _ call: () -> T
    ) throws(SystemError) -> T? {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = wl_errno()
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw SystemError(operation: operation, errno: Errno(rawValue: code), path: path)
        }
    }

    // MARK: Descriptors

    /// Closes `fd`. `EINTR` is not retried: the descriptor is released either way.
    static func close(_ fd: Int32) {
        _ = closeChecked(fd)
    }

    static func closeChecked(_ fd: Int32) -> Errno? {
        #if canImport(Glibc)
        let result = Glibc.close(fd)
        #else
        let result = Darwin.close(fd)
        #endif
        if result == 0 { return nil }
        let code = wl_errno()
        return code == EINTR ? nil : Errno(rawValue: code)
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("read") {
            #if canImport(Glibc)
            Glibc.read(fd, buffer, count)
            #else
            Darwin.read(fd, buffer, count)
            #endif
        }
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("write") {
            #if canImport(Glibc)
            Glibc.write(fd, buffer, count)
            #else
            Darwin.write(fd, buffer, count)
            #endif
        }
    }

    static func writev(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32) throws(SystemError) -> Int? {
        try retryingUnlessWouldBlock("writev") {
            #if canImport(Glibc)
            Glibc.writev(fd, vectors, count)
            #else
            Darwin.writev(fd, vectors, count)
            #endif
        }
    }

    static func setNonBlockingAndCloseOnExec(_ fd: Int32) throws(SystemError) {
        let flags = try retrying("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        if flags & O_NONBLOCK == 0 {
            _ = try retrying("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        }
        let fdFlags = try retrying("fcntl(F_GETFD)") { fcntl(fd, F_GETFD) }
        if fdFlags & FD_CLOEXEC == 0 {
            _ = try retrying("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) }
        }
    }

    /// A non-blocking, close-on-exec pipe: `(read end, write end)`.
    static func pipe() throws(SystemError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        #if os(Linux)
        _ = try retrying("pipe2") { pipe2(&fds, O_NONBLOCK | O_CLOEXEC) }
        #else
        _ = try retrying("pipe") { Darwin.pipe(&fds) }
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

    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(SystemError) -> Int32 {
        try retrying("open", path: path) {
            #if canImport(Glibc)
            Glibc.open(path, flags | O_CLOEXEC, mode)
            #else
            Darwin.open(path, flags | O_CLOEXEC, mode)
            #endif
        }
    }

    /// `lstat(2)`; `nil` when nothing exists at `path`.
    static func lstat(_ path: String) throws(SystemError) -> FileInfo? {
        var info = FileInfo()
        while true {
            #if canImport(Glibc)
            let result = Glibc.lstat(path, &info)
            #else
            let result = Darwin.lstat(path, &info)
            #endif
            if result == 0 { return info }
            let code = wl_errno()
            if code == EINTR { continue }
            if code == ENOENT { return nil }
            throw SystemError(operation: "lstat", errno: Errno(rawValue: code), path: path)
        }
    }

    /// `stat(2)`, following symbolic links; `nil` when nothing exists at `path`.
    static func stat(_ path: String) throws(SystemError) -> FileInfo? {
        var info = FileInfo()
        while true {
            #if canImport(Glibc)
            let result = wl_stat(path, &info)
            #else
            let result = wl_stat(path, &info)
            #endif
            if result == 0 { return info }
            let code = wl_errno()
            if code == EINTR { continue }
            if code == ENOENT { return nil }
            throw SystemError(operation: "stat", errno: Errno(rawValue: code), path: path)
        }
    }

    static func fstat(_ fd: Int32, path: String? = nil) throws(SystemError) -> FileInfo {
        var info = FileInfo()
        _ = try retrying("fstat", path: path) {
            #if canImport(Glibc)
            Glibc.fstat(fd, &info)
            #else
            Darwin.fstat(fd, &info)
            #endif
        }
        return info
    }

    static func mkdir(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try retrying("mkdir", path: path) {
            #if canImport(Glibc)
            Glibc.mkdir(path, mode)
            #else
            Darwin.mkdir(path, mode)
            #endif
        }
    }

    /// `mkdir(2)` where an existing entry is not an error; returns the failure otherwise.
    static func mkdirIfMissing(_ path: String, _ mode: mode_t) -> SystemError? {
        do {
            try mkdir(path, mode)
            return nil
        } catch {
            return error.errno == .fileExists ? nil : error
        }
    }

    static func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try retrying("chmod", path: path) {
            #if canImport(Glibc)
            Glibc.chmod(path, mode)
            #else
            Darwin.chmod(path, mode)
            #endif
        }
    }

    static func fchmod(_ fd: Int32, _ mode: mode_t, path: String? = nil) throws(SystemError) {
        _ = try retrying("fchmod", path: path) {
            #if canImport(Glibc)
            Glibc.fchmod(fd, mode)
            #else
            Darwin.fchmod(fd, mode)
            #endif
        }
    }

    static func unlink(_ path: String) throws(SystemError) {
        _ = try retrying("unlink", path: path) {
            #if canImport(Glibc)
            Glibc.unlink(path)
            #else
            Darwin.unlink(path)
            #endif
        }
    }

    static func rmdir(_ path: String) throws(SystemError) {
        _ = try retrying("rmdir", path: path) {
            #if canImport(Glibc)
            Glibc.rmdir(path)
            #else
            Darwin.rmdir(path)
            #endif
        }
    }

    static func rename(_ from: String, _ to: String) throws(SystemError) {
        _ = try retrying("rename", path: to) {
            #if canImport(Glibc)
            Glibc.rename(from, to)
            #else
            Darwin.rename(from, to)
            #endif
        }
    }

    static func fsync(_ fd: Int32, path: String? = nil) throws(SystemError) {
        _ = try retrying("fsync", path: path) {
            #if canImport(Glibc)
            Glibc.fsync(fd)
            #else
            Darwin.fsync(fd)
            #endif
        }
    }

    /// `read(2)` on a blocking descriptor.
    static func readBlocking(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, path: String? = nil) throws(SystemError) -> Int {
        try retrying("read", path: path) {
            #if canImport(Glibc)
            Glibc.read(fd, buffer, count)
            #else
            Darwin.read(fd, buffer, count)
            #endif
        }
    }

    /// Writes all of `bytes`, looping over short writes, for blocking descriptors.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(SystemError) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = try retrying("write", path: path) {
                #if canImport(Glibc)
                Glibc.write(fd, base, remaining)
                #else
                Darwin.write(fd, base, remaining)
                #endif
            }
            base += written
            remaining -= written
        }
    }

    // MARK: Sockets

    static func socket(_ domain: Int32, _ type: Int32) throws(SystemError) -> Int32 {
        #if os(Linux)
        return try retrying("socket") {
            Glibc.socket(domain, type | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        #else
        let fd = try retrying("socket") { Darwin.socket(domain, type, 0) }
        do {
            try setNonBlockingAndCloseOnExec(fd)
            var one: Int32 = 1
            _ = try retrying("setsockopt(SO_NOSIGPIPE)") {
                setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
        #endif
    }

    static func socketPair(_ domain: Int32, _ type: Int32) throws(SystemError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        #if os(Linux)
        _ = try retrying("socketpair") {
            Glibc.socketpair(domain, type | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        }
        #else
        _ = try retrying("socketpair") { Darwin.socketpair(domain, type, 0, &fds) }
        do {
            for fd in fds {
                try setNonBlockingAndCloseOnExec(fd)
                var one: Int32 = 1
                _ = try retrying("setsockopt(SO_NOSIGPIPE)") {
                    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
                }
            }
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        #endif
        return (fds[0], fds[1])
    }

    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, path: String) throws(SystemError) {
        _ = try retrying("bind", path: path) {
            #if canImport(Glibc)
            Glibc.bind(fd, address, length)
            #else
            Darwin.bind(fd, address, length)
            #endif
        }
    }

    static func listen(_ fd: Int32, _ backlog: Int32, path: String? = nil) throws(SystemError) {
        _ = try retrying("listen", path: path) {
            #if canImport(Glibc)
            Glibc.listen(fd, backlog)
            #else
            Darwin.listen(fd, backlog)
            #endif
        }
    }

    /// `connect(2)` on a non-blocking socket. Returns `nil` on success and the error number
    /// otherwise, so callers can tell a refused connection from a live one.
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Errno? {
        var interrupted = false
        while true {
            #if canImport(Glibc)
            let result = Glibc.connect(fd, address, length)
            #else
            let result = Darwin.connect(fd, address, length)
            #endif
            if result == 0 { return nil }
            let code = wl_errno()
            if code == EINTR { interrupted = true; continue }
            if interrupted && code == EISCONN { return nil }
            return Errno(rawValue: code)
        }
    }

    /// `accept(2)` yielding a non-blocking, close-on-exec descriptor; `nil` when none is pending.
    static func accept(_ listener: Int32) throws(SystemError) -> Int32? {
        while true {
            #if os(Linux)
            let fd = accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            #else
            let fd = Darwin.accept(listener, nil, nil)
            #endif
            if fd >= 0 {
                #if !os(Linux)
                do {
                    try setNonBlockingAndCloseOnExec(fd)
                    var one: Int32 = 1
                    _ = try retrying("setsockopt(SO_NOSIGPIPE)") {
                        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
                    }
                } catch {
                    close(fd)
                    throw error
                }
                #endif
                return fd
            }
            let code = wl_errno()
            if code == EINTR || code == ECONNABORTED { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw SystemError(operation: "accept", errno: Errno(rawValue: code))
        }
    }

    static func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ operation: String) throws(SystemError) {
        var value = value
        _ = try retrying(operation) {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    static func getSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ operation: String) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retrying(operation) {
            getsockopt(fd, level, name, &value, &length)
        }
        return value
    }

    // MARK: Time

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    static func realtime() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
