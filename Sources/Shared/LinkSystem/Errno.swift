#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// A POSIX error number, as set by a failed system call.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    public static var current: Errno {
        Errno(rawValue: wl_errno())
    }

    /// The C name of the error (`"EADDRINUSE"`), where known.
    public var name: String? {
        Errno.names[rawValue]
    }

    /// The `strerror` text followed by the C name: `Address already in use (EADDRINUSE)`.
    public var description: String {
        let text = String(cString: strerror(rawValue))
        if let name {
            return "\(text) (\(name))"
        }
        return "\(text) (errno \(rawValue))"
    }

    public static let operationNotPermitted = Errno(rawValue: EPERM)
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let ioError = Errno(rawValue: EIO)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noMemory = Errno(rawValue: ENOMEM)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let notConnected = Errno(rawValue: ENOTCONN)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", ESRCH: "ESRCH", EINTR: "EINTR", EIO: "EIO",
        ENXIO: "ENXIO", E2BIG: "E2BIG", ENOEXEC: "ENOEXEC", EBADF: "EBADF", ECHILD: "ECHILD",
        EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT", EBUSY: "EBUSY",
        EEXIST: "EEXIST", EXDEV: "EXDEV", ENODEV: "ENODEV", ENOTDIR: "ENOTDIR",
        EISDIR: "EISDIR", EINVAL: "EINVAL", ENFILE: "ENFILE", EMFILE: "EMFILE",
        ENOTTY: "ENOTTY", ETXTBSY: "ETXTBSY", EFBIG: "EFBIG", ENOSPC: "ENOSPC",
        ESPIPE: "ESPIPE", EROFS: "EROFS", EMLINK: "EMLINK", EPIPE: "EPIPE",
        EDOM: "EDOM", ERANGE: "ERANGE", EDEADLK: "EDEADLK", ENAMETOOLONG: "ENAMETOOLONG",
        ENOLCK: "ENOLCK", ENOSYS: "ENOSYS", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP",
        ENOTSOCK: "ENOTSOCK", EDESTADDRREQ: "EDESTADDRREQ", EMSGSIZE: "EMSGSIZE",
        EPROTOTYPE: "EPROTOTYPE", ENOPROTOOPT: "ENOPROTOOPT",
        EPROTONOSUPPORT: "EPROTONOSUPPORT", EOPNOTSUPP: "EOPNOTSUPP",
        EAFNOSUPPORT: "EAFNOSUPPORT", EADDRINUSE: "EADDRINUSE",
        EADDRNOTAVAIL: "EADDRNOTAVAIL", ENETDOWN: "ENETDOWN", ENETUNREACH: "ENETUNREACH",
        ECONNABORTED: "ECONNABORTED", ECONNRESET: "ECONNRESET", ENOBUFS: "ENOBUFS",
        EISCONN: "EISCONN", ENOTCONN: "ENOTCONN", ETIMEDOUT: "ETIMEDOUT",
        ECONNREFUSED: "ECONNREFUSED", EHOSTUNREACH: "EHOSTUNREACH", EALREADY: "EALREADY",
        EINPROGRESS: "EINPROGRESS", EDQUOT: "EDQUOT", ECANCELED: "ECANCELED",
    ]
}
