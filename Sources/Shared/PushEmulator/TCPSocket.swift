import LinkRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP calls the endpoint makes, each wrapped once: retried on `EINTR`, failures thrown
/// as `SystemError`, `nil` where a non-blocking socket has nothing to do.
enum TCPSocket {
    private static func retrying(_ operation: String, _ call: () -> Int32) throws -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno == EINTR { continue }
            throw SystemError(operation: operation, errno: Errno(rawValue: errno))
        }
    }

    private static func invalidHost(_ host: String) -> SystemError {
        SystemError(operation: "inet_pton(\(host))", errno: .invalidArgument)
    }

    /// Copies a `sockaddr_in` or `sockaddr_in6` into `storage`; returns its length.
    private static func store<Address>(_ address: Address, in storage: inout sockaddr_storage) -> socklen_t {
        withUnsafeBytes(of: address) { bytes in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
        }
        return socklen_t(MemoryLayout<Address>.size)
    }

    /// A non-blocking, close-on-exec socket listening on `host` (an IPv4 or IPv6 literal) and
    /// `port` (0: any free port); returns it with the port it got.
    static func listen(host: String, port: UInt16, backlog: Int32 = 128) throws -> (fd: Int32, port: UInt16) {
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        if host.contains(":") {
            family = AF_INET6
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw invalidHost(host) }
            length = store(address, in: &storage)
        } else {
            family = AF_INET
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw invalidHost(host) }
            length = store(address, in: &storage)
        }
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        let fd = try retrying("socket") { socket(family, type, 0) }
        do {
            try configure(fd)
            var one: Int32 = 1
            _ = try retrying("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            _ = try withUnsafePointer(to: &storage) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    try retrying("bind(\(host):\(port))") { bind(fd, address, length) }
                }
            }
            _ = try retrying("listen") { Glibc_listen(fd, backlog) }
            var bound = sockaddr_storage()
            var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = try withUnsafeMutablePointer(to: &bound) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    try retrying("getsockname") { getsockname(fd, address, &boundLength) }
                }
            }
            let boundPort: UInt16 = withUnsafeBytes(of: bound) { bytes in
                family == AF_INET6
                    ? UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
                    : UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
            }
            return (fd, boundPort)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The next pending connection, non-blocking and close-on-exec; `nil` when none is waiting.
    static func accept(_ listener: Int32) throws -> Int32? {
        while true {
            let fd = Glibc_accept(listener)
            if fd >= 0 {
                do {
                    try configure(fd)
                    var one: Int32 = 1
                    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                } catch {
                    close(fd)
                    throw error
                }
                return fd
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SystemError(operation: "accept", errno: Errno(rawValue: errno))
            }
        }
    }

    private static func configure(_ fd: Int32) throws {
        let flags = try retrying("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        _ = try retrying("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        _ = try retrying("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }
}

@inline(__always) private func Glibc_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
@inline(__always) private func Glibc_accept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }
