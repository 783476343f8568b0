#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// A blocking `AF_UNIX` stream socket, over LinkSystem's wrappers, with failures named as
/// ``ControlClientError``s.
struct ClientSocket: Sendable {
    let descriptor: Int32

    /// The longest socket path `sockaddr_un` holds, not counting the terminating NUL.
    static var maximumPathLength: Int {
        UnixSocket.maximumPathLength
    }

    /// Connects to the listening socket at `path`.
    static func connect(path: String) throws -> ClientSocket {
        let pathBytes = Array(path.utf8)
        guard pathBytes.count <= maximumPathLength, !pathBytes.contains(0) else {
            throw ControlClientError.socketPathTooLong(path: path, limit: maximumPathLength)
        }
        do {
            return ClientSocket(descriptor: try UnixSocket.connectBlocking(path: path))
        } catch let error as SystemError where error.operation == "connect" {
            throw ControlClientError.cannotConnect(path: path, errno: error.errno.rawValue)
        } catch let error as SystemError {
            throw ControlClientError.systemCallFailed(call: error.operation, errno: error.errno.rawValue)
        } catch {
            // An empty path: nothing to connect to.
            throw ControlClientError.cannotConnect(path: path, errno: Errno.noSuchFileOrDirectory.rawValue)
        }
    }

    /// Reads what is available, blocking until something is; `0` means end of stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        do {
            return try Syscall.readBlocking(descriptor, base, buffer.count)
        } catch  where error.errno == .connectionReset {
            return 0
        } catch {
            throw ControlClientError.systemCallFailed(call: "read", errno: error.errno.rawValue)
        }
    }

    /// Writes all of `bytes`, blocking as needed.
    func writeAll(_ bytes: [UInt8]) throws {
        let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
            do throws(SystemError) {
                try Syscall.sendAll(descriptor, buffer)
                return nil
            } catch {
                return error
            }
        }
        guard let failure else { return }
        switch failure.errno {
        case .brokenPipe, .connectionReset:
            throw ControlClientError.connectionClosed("the daemon closed the connection")
        default:
            throw ControlClientError.systemCallFailed(call: "send", errno: failure.errno.rawValue)
        }
    }

    /// Shuts down both directions, waking a blocked reader.
    func shutdown() {
        Syscall.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor. `EINTR` is not retried: the descriptor is gone either way.
    func close() {
        Syscall.close(descriptor)
    }
}
