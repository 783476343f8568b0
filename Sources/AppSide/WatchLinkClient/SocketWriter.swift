import LinkSystem

/// Writes whole request lines to a non-blocking stream socket, waiting for room with poll(2).
/// `Syscall.send` never raises SIGPIPE when the daemon has gone (an app cannot ignore it for
/// the whole process, as the daemons do).
enum SocketWriter {
    /// Writes all of `bytes`; the failure, if any (`EPIPE` once the daemon has closed the
    /// connection or the client has shut it down).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> SystemError? {
        bytes.withUnsafeBytes { buffer -> SystemError? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            var poller: PollPoller?
            while offset < buffer.count {
                switch sendSome(fd, base + offset, buffer.count - offset) {
                case .success(let count?):
                    offset += count
                case .success(nil):
                    do {
                        let waiter = poller ?? PollPoller()
                        if poller == nil {
                            try waiter.add(fd, .writable)
                            poller = waiter
                        }
                        try waiter.wait(timeoutMs: -1) { _, _ in }
                    } catch let error as SystemError {
                        return error
                    } catch {
                        return SystemError(operation: "poll", errno: .ioError)
                    }
                case .failure(let error):
                    return error
                }
            }
            return nil
        }
    }

    /// One send: the bytes taken, `nil` when the socket has no room now.
    private static func sendSome(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Result<Int?, SystemError> {
        do {
            return .success(try Syscall.send(fd, pointer, count))
        } catch {
            return .failure(error)
        }
    }
}
