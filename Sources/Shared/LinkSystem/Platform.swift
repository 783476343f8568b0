// swift-format-ignore-file: AlwaysUseLowerCamelCase
// The platform, chosen once. The other files of LinkSystem reach the C library through the
// `system_*` functions below (named as in swift-system), so `Syscall` never repeats a
// `#if Glibc … #else Darwin` block and a new platform is one more branch in this file.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#else
#error("LinkSystem supports Glibc (Linux) and Darwin (macOS)")
#endif
import CSystem

/// `struct stat`, named apart from the `stat` functions.
public typealias FileInfo = stat

// MARK: Descriptors

@inline(__always) func system_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
@inline(__always) func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }
@inline(__always) func system_pread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: off_t) -> Int { pread(fd, buffer, count, offset) }
@inline(__always) func system_pwrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int { pwrite(fd, buffer, count, offset) }
@inline(__always) func system_fcntl(_ fd: Int32, _ command: Int32) -> Int32 { fcntl(fd, command) }
@inline(__always) func system_fcntl(_ fd: Int32, _ command: Int32, _ value: Int32) -> Int32 { fcntl(fd, command, value) }
@inline(__always) func system_pipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 {
    #if os(Linux)
    pipe2(fds, O_NONBLOCK | O_CLOEXEC)
    #else
    pipe(fds)
    #endif
}

// MARK: Files

@inline(__always) func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
@inline(__always) func system_lstat(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<FileInfo>) -> Int32 { lstat(path, info) }
@inline(__always) func system_stat(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<FileInfo>) -> Int32 { wl_stat(path, info) }
@inline(__always) func system_fstat(_ fd: Int32, _ info: UnsafeMutablePointer<FileInfo>) -> Int32 { fstat(fd, info) }
@inline(__always) func system_mkdir(_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 { mkdir(path, mode) }
@inline(__always) func system_chmod(_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 { chmod(path, mode) }
@inline(__always) func system_fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 { fchmod(fd, mode) }
@inline(__always) func system_unlink(_ path: UnsafePointer<CChar>) -> Int32 { unlink(path) }
@inline(__always) func system_rmdir(_ path: UnsafePointer<CChar>) -> Int32 { rmdir(path) }
@inline(__always) func system_rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 { rename(from, to) }
@inline(__always) func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
#if os(Linux)
@inline(__always) func system_fdatasync(_ fd: Int32) -> Int32 { fdatasync(fd) }
#endif
#if canImport(Glibc)
/// An open directory: `DIR *`, opaque to Swift on Glibc.
typealias DirectoryStream = OpaquePointer
#else
typealias DirectoryStream = UnsafeMutablePointer<DIR>
#endif
@inline(__always) func system_opendir(_ path: UnsafePointer<CChar>) -> DirectoryStream? { opendir(path) }
@inline(__always) func system_closedir(_ directory: DirectoryStream) { _ = closedir(directory) }
/// The name of the next entry of `directory`, `nil` at its end.
@inline(__always) func system_readdir_name(_ directory: DirectoryStream) -> String? {
    guard let entry = readdir(directory) else { return nil }
    return withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
}
#if !os(Linux)
@inline(__always) func system_getpeereid(_ fd: Int32, _ uid: UnsafeMutablePointer<uid_t>, _ gid: UnsafeMutablePointer<gid_t>) -> Int32 {
    getpeereid(fd, uid, gid)
}
#endif
@inline(__always) func system_ftruncate(_ fd: Int32, _ length: off_t) -> Int32 { ftruncate(fd, length) }

// MARK: Sockets

#if os(Linux)
/// `SOCK_NONBLOCK | SOCK_CLOEXEC`, which Linux takes in `socket`, `socketpair` and `accept4`.
let socketFlags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
#endif

@inline(__always) func system_socket(_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Int32 { socket(domain, type, `protocol`) }
@inline(__always) func system_socketpair(_ domain: Int32, _ type: Int32, _ protocol: Int32, _ fds: UnsafeMutablePointer<Int32>) -> Int32 {
    socketpair(domain, type, `protocol`, fds)
}
@inline(__always) func system_bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { bind(fd, address, length) }
@inline(__always) func system_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
@inline(__always) func system_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
@inline(__always) func system_accept(_ fd: Int32) -> Int32 {
    #if os(Linux)
    accept4(fd, nil, nil, socketFlags)
    #else
    accept(fd, nil, nil)
    #endif
}
@inline(__always) func system_send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if os(Linux)
    send(fd, buffer, count, Int32(MSG_NOSIGNAL))
    #else
    send(fd, buffer, count, 0)
    #endif
}
@inline(__always) func system_recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { recv(fd, buffer, count, 0) }
@inline(__always) func system_recvmsg(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32) -> Int {
    var message = msghdr()
    message.msg_iov = UnsafeMutablePointer(mutating: vectors)
    message.msg_iovlen = .init(count)
    return recvmsg(fd, &message, 0)
}
@inline(__always) func system_sendmsg(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32) -> Int {
    var message = msghdr()
    message.msg_iov = UnsafeMutablePointer(mutating: vectors)
    message.msg_iovlen = .init(count)
    #if os(Linux)
    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
    #else
    return sendmsg(fd, &message, 0)
    #endif
}
@inline(__always) func system_kill(_ pid: Int32, _ signo: Int32) -> Int32 { kill(pid, signo) }
@inline(__always) func system_shutdown(_ fd: Int32, _ how: Int32) -> Int32 { shutdown(fd, how) }
@inline(__always) func system_setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer, _ length: socklen_t) -> Int32 {
    setsockopt(fd, level, name, value, length)
}
@inline(__always) func system_getsockopt(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer, _ length: UnsafeMutablePointer<socklen_t>
) -> Int32 {
    getsockopt(fd, level, name, value, length)
}

// MARK: Process

@inline(__always) func system_getuid() -> uid_t { getuid() }
@inline(__always) func system_getrandom(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if os(Linux)
    getrandom(buffer, count, 0)
    #else
    getentropy(buffer, min(count, 256)) == 0 ? min(count, 256) : -1
    #endif
}
@inline(__always) func system_geteuid() -> uid_t { geteuid() }
@inline(__always) func system_getpid() -> pid_t { getpid() }
@inline(__always) func system_getsockname(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    getsockname(fd, address, length)
}
@inline(__always) func system_inet_pton(_ family: Int32, _ text: UnsafePointer<CChar>, _ address: UnsafeMutableRawPointer) -> Int32 {
    inet_pton(family, text, address)
}
#if canImport(Glibc)
let socketStream = Int32(SOCK_STREAM.rawValue)
#else
let socketStream = SOCK_STREAM
#endif
