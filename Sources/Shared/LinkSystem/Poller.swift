#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits for readiness on a set of file descriptors: the portable face of epoll and poll(2).
///
/// A poller is level-triggered: a descriptor that stays ready is reported on every
/// ``wait(timeoutMs:_:)`` until its interest changes or it is removed. It is used from one
/// thread only.
public protocol Poller: AnyObject {
    /// Starts watching `fd` for `events`. Throws if `fd` is already watched.
    func add(_ fd: Int32, _ events: PollEvents) throws
    /// Replaces the events asked for on a watched `fd`.
    func modify(_ fd: Int32, _ events: PollEvents) throws
    /// Stops watching `fd`.
    func remove(_ fd: Int32) throws
    /// Waits up to `timeoutMs` milliseconds (`-1`: without limit, `0`: not at all) and calls
    /// `body` once for each ready descriptor. Returns early, with no events, when interrupted
    /// by a signal. `body` may add, modify and remove descriptors; an event collected before
    /// such a change is still reported (the event loop filters those out).
    func wait(timeoutMs: Int32, _ body: (Int32, PollEvents) -> Void) throws
}

/// Which ``Poller`` an event loop uses.
public enum PollerBackend: String, CaseIterable, Sendable {
    /// epoll(7), Linux only.
    case epoll
    /// poll(2), available everywhere.
    case poll

    /// The environment variable that overrides ``default``: `WATCHLINK_POLLER=poll`.
    public static let environmentVariable = "WATCHLINK_POLLER"

    /// epoll on Linux and poll(2) elsewhere, unless `WATCHLINK_POLLER` names a backend
    /// available on this platform.
    public static var `default`: PollerBackend {
        if let value = getenv(environmentVariable),
            let chosen = PollerBackend(rawValue: String(cString: value).lowercased()),
            chosen.isAvailable
        {
            return chosen
        }
        #if os(Linux)
        return .epoll
        #else
        return .poll
        #endif
    }

    /// Whether this backend exists on the running platform.
    public var isAvailable: Bool {
        switch self {
        case .epoll:
            #if os(Linux)
            return true
            #else
            return false
            #endif
        case .poll:
            return true
        }
    }

    /// A new poller of this kind.
    public func makePoller() throws -> any Poller {
        switch self {
        case .epoll:
            #if os(Linux)
            return try EpollPoller()
            #else
            throw SystemError(operation: "epoll_create1", errno: Errno(rawValue: ENOSYS))
            #endif
        case .poll:
            return PollPoller()
        }
    }
}
