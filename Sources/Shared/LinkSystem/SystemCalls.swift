import CSystem

/// Direct, best-effort descriptor calls for code outside a connection, for instance a
/// short reply written to a client that is being turned away. Each retries on `EINTR`.
public enum SystemCalls {
    /// Closes `fd`. An interrupted close counts as done: the descriptor is released either way.
    @discardableResult
    public static func close(_ fd: Int32) -> Result<Void, SystemError> {
        if let errno = Syscall.closeChecked(fd) {
            return .failure(SystemError(operation: "close", errno: errno))
        }
        return .success(())
    }

    /// One `write(2)` of `bytes`: the number of bytes written, which may be short, and 0 when
    /// a non-blocking descriptor cannot take any.
    @discardableResult
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemError> {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .success(0) }
        do {
            return .success(try Syscall.write(fd, base, bytes.count) ?? 0)
        } catch {
            return .failure(error)
        }
    }

    /// One `read(2)` into `buffer`: the number of bytes read (0 at end of file), or `nil` when
    /// a non-blocking descriptor has nothing to read.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int?, SystemError> {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .success(0) }
        do {
            return .success(try Syscall.read(fd, base, buffer.count))
        } catch {
            return .failure(error)
        }
    }
}

extension SystemCalls {
    /// Removes the file or socket at `path`; a missing one counts as removed.
    @discardableResult
    public static func unlink(_ path: String) -> Result<Void, SystemError> {
        do {
            try Syscall.unlink(path)
            return .success(())
        } catch  where error.errno == .noSuchFileOrDirectory {
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Writes all of `bytes` to a blocking descriptor such as standard error, looping over
    /// short writes.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Void, SystemError> {
        do {
            try Syscall.writeAll(fd, bytes)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Fills `buffer` from the kernel's random source (`getrandom(2)`: no descriptor to open,
    /// and it blocks only until the source is first seeded), retrying short reads and `EINTR`.
    /// A failure stops the process: nothing that needs random bytes can continue without them.
    public static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        var filled = 0
        while filled < buffer.count {
            let n = system_getrandom(base + filled, buffer.count - filled)
            if n < 0 {
                let code = wl_errno()
                if code == EINTR { continue }
                fatalError("getrandom failed: \(Errno(rawValue: code))")
            }
            filled += n
        }
    }

    /// The real user id of the process.
    public static func userID() -> UInt32 {
        UInt32(system_getuid())
    }

    /// Sends `signo` to process `pid` (`kill(2)`); false when there is no such process.
    @discardableResult
    public static func signal(_ pid: Int32, _ signo: Int32) -> Bool {
        system_kill(pid, signo) == 0
    }

    /// Ignores `signo` from now on (`SIG_IGN`), for instance `SIGXFSZ`, so that the failure
    /// shows up as an error of the call that caused it.
    public static func ignoreSignal(_ signo: Int32) {
        _ = wl_sigaction_ignore(signo)
    }
}
