#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// Unix domain stream sockets: listening, connecting, accepting, peer credentials.
///
/// Every descriptor returned is non-blocking and close-on-exec.
public enum UnixSocket {
    /// The longest path, in bytes, that fits in `sockaddr_un` with its terminating NUL:
    /// 107 on Linux, 103 on macOS.
    public static let maximumPathLength: Int = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    #if os(Linux)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif

    /// Binds a listening socket at `path` and sets its mode to `mode`.
    ///
    /// If something exists at `path`: a socket nobody listens on any more is replaced; a
    /// socket with a live listener is an error (``SocketPathError/Reason/alreadyListening``),
    /// as is anything that is not a socket. Bind into a directory only you can write to: the
    /// mode is set after `bind`.
    public static func listen(path: String, backlog: Int32 = 128, mode: mode_t = 0o600) throws -> Int32 {
        try validate(path)
        if let info = try Syscall.lstat(path) {
            guard wl_s_issock(info.st_mode) != 0 else {
                throw SocketPathError(path: path, reason: .notASocket(kind: FileSystem.kindName(info.st_mode)))
            }
            let probe = try Syscall.socket(AF_UNIX, streamType)
            let error = withAddress(path) { Syscall.connect(probe, $0, $1) }
            Syscall.close(probe)
            switch error?.rawValue {
            case nil, EAGAIN?, EINPROGRESS?:
                throw SocketPathError(path: path, reason: .alreadyListening)
            case ECONNREFUSED?, ENOENT?:
                try removeStaleSocket(path)
            case let code?:
                throw SystemError(operation: "connect", errno: Errno(rawValue: code), path: path)
            }
        }
        let fd = try Syscall.socket(AF_UNIX, streamType)
        do {
            try withAddress(path) { address, length throws(SystemError) in
                try Syscall.bind(fd, address, length, path: path)
            }
            try Syscall.chmod(path, mode)
            try Syscall.listen(fd, backlog, path: path)
        } catch {
            Syscall.close(fd)
            throw error
        }
        return fd
    }

    /// Connects to the socket at `path`. Fails with ``SystemError`` (`ENOENT`: nothing there,
    /// `ECONNREFUSED`: nobody listening, `EAGAIN`: the listener's backlog is full).
    public static func connect(path: String) throws -> Int32 {
        try validate(path)
        let fd = try Syscall.socket(AF_UNIX, streamType)
        if let error = withAddress(path, { Syscall.connect(fd, $0, $1) }) {
            Syscall.close(fd)
            throw SystemError(operation: "connect", errno: error, path: path)
        }
        return fd
    }

    /// Connects a *blocking*, close-on-exec socket to `path`, for a client that waits on a
    /// thread of its own (the control client). Fails like ``connect(path:)``.
    public static func connectBlocking(path: String) throws -> Int32 {
        try validate(path)
        let fd = try Syscall.blockingSocket(AF_UNIX, streamType)
        if let error = withAddress(path, { Syscall.connect(fd, $0, $1) }), error.rawValue != EISCONN {
            Syscall.close(fd)
            throw SystemError(operation: "connect", errno: error, path: path)
        }
        return fd
    }

    /// Accepts a pending connection; `nil` when none is pending. Out of descriptors
    /// (`EMFILE`, `ENFILE`) throws while the connection stays pending, so a caller watching the
    /// listener should stop watching it for a moment rather than retry at once.
    public static func accept(_ listener: Int32) throws -> Int32? {
        try Syscall.accept(listener)
    }

    /// A connection taken from a listener, and whether it comes from this process's user.
    public enum AcceptedConnection {
        case sameUser(Int32)
        /// The caller may write a refusal to `fd`; it must close it.
        case otherUser(fd: Int32, uid: uid_t)
    }

    /// Accepts a pending connection and checks its peer's user (the daemons serve their own
    /// user only); `nil` when none is pending. A connection whose peer cannot be read is
    /// closed, and the error thrown.
    public static func acceptCheckingUser(_ listener: Int32) throws -> AcceptedConnection? {
        guard let fd = try accept(listener) else { return nil }
        let uid: uid_t
        do { uid = try peerCredentials(fd).uid } catch {
            _ = SystemCalls.close(fd)
            throw error
        }
        return uid == SystemCalls.userID() ? .sameUser(fd) : .otherUser(fd: fd, uid: uid)
    }

    /// Accepts every pending connection: `serve` gets each one of this process's user;
    /// `refuse` may write a last word to another user's connection before it is closed here.
    /// Returns when none is pending; throws (after serving the earlier ones) when accept fails.
    public static func acceptPending(
        _ listener: Int32, refuse: (_ fd: Int32, _ uid: uid_t) -> Void,
        serve: (_ fd: Int32) -> Void
    ) throws {
        while let accepted = try acceptCheckingUser(listener) {
            switch accepted {
            case .sameUser(let fd):
                serve(fd)
            case .otherUser(let fd, let uid):
                refuse(fd, uid)
                _ = SystemCalls.close(fd)
            }
        }
    }

    /// The process, user and group on the other end of a connected Unix socket. The process
    /// id is `nil` where the platform does not report it.
    public static func peerCredentials(_ fd: Int32) throws -> (pid: Int32?, uid: uid_t, gid: gid_t) {
        #if os(Linux)
        var credentials = wl_ucred()
        var length = socklen_t(MemoryLayout<wl_ucred>.size)
        _ = try Syscall.retrying("getsockopt(SO_PEERCRED)") {
            system_getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
        }
        return (credentials.pid, credentials.uid, credentials.gid)
        #else
        var uid: uid_t = 0
        var gid: gid_t = 0
        _ = try Syscall.retrying("getpeereid") { system_getpeereid(fd, &uid, &gid) }
        var pid: pid_t = 0
        var length = socklen_t(MemoryLayout<pid_t>.size)
        let result = system_getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &length)
        return (result == 0 ? pid : nil, uid, gid)
        #endif
    }

    /// A connected pair of stream sockets.
    public static func socketPair() throws -> (Int32, Int32) {
        try Syscall.socketPair(AF_UNIX, streamType)
    }

    /// Sets `SO_SNDBUF` (the kernel may round or double it).
    public static func setSendBufferSize(_ fd: Int32, _ bytes: Int32) throws {
        try Syscall.setSocketOption(fd, SOL_SOCKET, SO_SNDBUF, bytes, "setsockopt(SO_SNDBUF)")
    }

    /// Sets `SO_RCVBUF` (the kernel may round or double it).
    public static func setReceiveBufferSize(_ fd: Int32, _ bytes: Int32) throws {
        try Syscall.setSocketOption(fd, SOL_SOCKET, SO_RCVBUF, bytes, "setsockopt(SO_RCVBUF)")
    }

    /// Closes a descriptor returned by this type that is not owned by a ``Connection``.
    public static func close(_ fd: Int32) {
        Syscall.close(fd)
    }

    /// Removes the socket file at `path` if there is one, for a clean shutdown.
    public static func removeSocketFile(_ path: String) {
        if let info = try? Syscall.lstat(path), wl_s_issock(info.st_mode) != 0 {
            try? Syscall.unlink(path)
        }
    }

    private static func removeStaleSocket(_ path: String) throws {
        do {
            try Syscall.unlink(path)
        } catch {
            if error.errno != .noSuchFileOrDirectory { throw error }
        }
    }

    private static func validate(_ path: String) throws {
        let length = path.utf8.count
        if length == 0 || path.utf8.contains(0) {
            throw SocketPathError(path: path, reason: .invalid)
        }
        if length > maximumPathLength {
            throw SocketPathError(path: path, reason: .tooLong(length: length, limit: maximumPathLength))
        }
    }

    /// Calls `body` with a `sockaddr_un` for `path`, which ``validate(_:)`` has accepted.
    private static func withAddress<R, E: Error>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R
    ) throws(E) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        #if !os(Linux)
        address.sun_len = UInt8(truncatingIfNeeded: MemoryLayout<sockaddr_un>.size)
        #endif
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() {
                raw[index] = byte
            }
        }
        return try withUnsafePointer(to: &address) { pointer throws(E) -> R in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(E) -> R in
                try body(address, length)
            }
        }
    }
}
