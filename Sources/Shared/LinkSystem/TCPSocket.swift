#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP calls of a server (the APNs endpoint): a listener on an IP literal and a port, and
/// non-blocking, close-on-exec accepted connections without Nagle's delay; and of a test's
/// blocking client.
public enum TCPSocket {
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

    /// `host` (an IPv4 or IPv6 literal) and `port` as a socket address in `storage`; its
    /// family and length.
    private static func address(host: String, port: UInt16, in storage: inout sockaddr_storage) throws -> (family: Int32, length: socklen_t) {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard system_inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw invalidHost(host) }
            return (AF_INET6, store(address, in: &storage))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard system_inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw invalidHost(host) }
        return (AF_INET, store(address, in: &storage))
    }

    /// A blocking, close-on-exec client socket connected to `host` (an IPv4 or IPv6 literal)
    /// and `port`, without Nagle's delay, whose reads and writes fail with `EAGAIN` once they
    /// have waited `timeoutMilliseconds`: for a client on a thread of its own (a test's).
    public static func connect(host: String, port: UInt16, timeoutMilliseconds: Int) throws -> Int32 {
        var storage = sockaddr_storage()
        let (family, length) = try address(host: host, port: port, in: &storage)
        let fd = try Syscall.blockingSocket(family, socketStream)
        do {
            var timeout = timeval(tv_sec: .init(timeoutMilliseconds / 1000), tv_usec: .init(timeoutMilliseconds % 1000 * 1000))
            for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
                _ = try Syscall.retrying("setsockopt(SO_RCVTIMEO/SO_SNDTIMEO)") {
                    system_setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
                }
            }
            let failure = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Syscall.connect(fd, $0, length) }
            }
            if let failure { throw SystemError(operation: "connect(\(host):\(port))", errno: failure) }
            try? Syscall.setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
            return fd
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// A non-blocking, close-on-exec socket listening on `host` (an IPv4 or IPv6 literal) and
    /// `port` (0: any free port); returns it with the port it got.
    public static func listen(host: String, port: UInt16, backlog: Int32 = 128) throws -> (fd: Int32, port: UInt16) {
        var storage = sockaddr_storage()
        let (family, length) = try address(host: host, port: port, in: &storage)
        let fd = try Syscall.socket(family, socketStream)
        do {
            try Syscall.setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
            try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try Syscall.bind(fd, address, length, path: "\(host):\(port)")
                }
            }
            try Syscall.listen(fd, backlog)
            var bound = sockaddr_storage()
            var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = try withUnsafeMutablePointer(to: &bound) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try Syscall.retrying("getsockname") { system_getsockname(fd, address, &boundLength) }
                }
            }
            let boundPort: UInt16 = withUnsafeBytes(of: bound) { bytes in
                family == AF_INET6
                    ? UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
                    : UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
            }
            return (fd, boundPort)
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// The next pending connection, non-blocking and close-on-exec; `nil` when none is waiting.
    public static func accept(_ listener: Int32) throws -> Int32? {
        guard let fd = try Syscall.accept(listener) else { return nil }
        try? Syscall.setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
        return fd
    }
}
