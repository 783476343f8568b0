#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LinkControl

/// A blocking `AF_UNIX` stream socket; each system call wrapped once, retrying on `EINTR`.
struct ClientSocket: Sendable {
    let descriptor: Int32

    /// The longest socket path `sockaddr_un` holds, not counting the terminating NUL.
    static var maximumPathLength: Int {
        MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
    }

    /// Connects to the listening socket at `path`.
    static func connect(path: String) throws -> ClientSocket {
        var address = sockaddr_un()
        let pathBytes = Array(path.utf8)
        guard pathBytes.count <= maximumPathLength, !pathBytes.contains(0) else {
            throw ControlClientError.socketPathTooLong(path: path, limit: maximumPathLength)
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
            buffer[pathBytes.count] = 0
        }
        #if canImport(Darwin)
        address.sun_len = UInt8(MemoryLayout<sockaddr_un>.size)
        #endif

        let socket = try makeSocket()
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while result == -1 && errno == EINTR
        if result == -1 && errno != EISCONN {
            let code = errno
            socket.close()
            throw ControlClientError.cannotConnect(path: path, errno: code)
        }
        return socket
    }

    private static func makeSocket() throws -> ClientSocket {
        #if os(Linux)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        var descriptor: Int32
        repeat {
            descriptor = systemSocket(AF_UNIX, type, 0)
        } while descriptor == -1 && errno == EINTR
        guard descriptor >= 0 else {
            throw ControlClientError.systemCallFailed(call: "socket", errno: errno)
        }
        #if canImport(Darwin)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return ClientSocket(descriptor: descriptor)
    }

    /// Reads what is available, blocking until something is; `0` means end of stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return 0 }
            throw ControlClientError.systemCallFailed(call: "read", errno: errno)
        }
    }

    /// Writes all of `bytes`, blocking as needed.
    func writeAll(_ bytes: [UInt8]) throws {
        #if os(Linux)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = systemSend(descriptor, buffer.baseAddress! + offset, buffer.count - offset, flags)
                if count >= 0 {
                    offset += count
                } else if errno != EINTR {
                    if errno == EPIPE || errno == ECONNRESET {
                        throw ControlClientError.connectionClosed("the daemon closed the connection")
                    }
                    throw ControlClientError.systemCallFailed(call: "send", errno: errno)
                }
            }
        }
    }

    /// Shuts down both directions, waking a blocked reader.
    func shutdown() {
        _ = systemShutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor. `EINTR` is not retried: the descriptor is gone either way.
    func close() {
        _ = systemClose(descriptor)
    }
}

#if canImport(Glibc)
private let systemSocket = Glibc.socket
private let systemConnect = Glibc.connect
private let systemRead = Glibc.read
private let systemSend = Glibc.send
private let systemShutdown = Glibc.shutdown
private let systemClose = Glibc.close
#elseif canImport(Musl)
private let systemSocket = Musl.socket
private let systemConnect = Musl.connect
private let systemRead = Musl.read
private let systemSend = Musl.send
private let systemShutdown = Musl.shutdown
private let systemClose = Musl.close
#elseif canImport(Darwin)
private let systemSocket = Darwin.socket
private let systemConnect = Darwin.connect
private let systemRead = Darwin.read
private let systemSend = Darwin.send
private let systemShutdown = Darwin.shutdown
private let systemClose = Darwin.close
#endif
