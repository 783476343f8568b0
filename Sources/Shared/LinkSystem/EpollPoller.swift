#if os(Linux)
import Glibc
import CSystem

/// A level-triggered ``Poller`` on epoll(7), reusing one events array across waits.
public final class EpollPoller: Poller {
    /// The epoll instance's descriptor.
    public let fd: Int32
    private let events: UnsafeMutablePointer<epoll_event>
    private let capacity: Int32

    /// Creates an epoll instance that reports up to `maximumEventsPerWait` ready descriptors
    /// per wait; the rest are reported by the next wait.
    public init(maximumEventsPerWait: Int = 256) throws {
        precondition(maximumEventsPerWait > 0, "maximumEventsPerWait must be positive")
        fd = try Syscall.retrying("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        capacity = Int32(clamping: maximumEventsPerWait)
        events = .allocate(capacity: Int(capacity))
        events.initialize(repeating: epoll_event(), count: Int(capacity))
    }

    deinit {
        events.deallocate()
        Syscall.close(fd)
    }

    public func add(_ fd: Int32, _ interest: PollEvents) throws {
        try control(EPOLL_CTL_ADD, fd, interest, "epoll_ctl(ADD)")
    }

    public func modify(_ fd: Int32, _ interest: PollEvents) throws {
        try control(EPOLL_CTL_MOD, fd, interest, "epoll_ctl(MOD)")
    }

    public func remove(_ fd: Int32) throws {
        var event = epoll_event()
        _ = try Syscall.retrying("epoll_ctl(DEL)") { epoll_ctl(self.fd, EPOLL_CTL_DEL, fd, &event) }
    }

    public func wait(timeoutMs: Int32, _ body: (Int32, PollEvents) -> Void) throws {
        let count = epoll_wait(fd, events, capacity, timeoutMs)
        if count < 0 {
            let code = wl_errno()
            if code == EINTR { return }
            throw SystemError(operation: "epoll_wait", errno: Errno(rawValue: code))
        }
        for index in 0..<Int(count) {
            let event = events[index]
            body(event.data.fd, Self.pollEvents(event.events))
        }
    }

    private func control(_ operation: Int32, _ fd: Int32, _ interest: PollEvents, _ name: String) throws {
        var event = epoll_event()
        event.events = Self.epollMask(interest)
        event.data.fd = fd
        _ = try Syscall.retrying(name) { epoll_ctl(self.fd, operation, fd, &event) }
    }

    private static let epollIn = UInt32(EPOLLIN.rawValue)
    private static let epollOut = UInt32(EPOLLOUT.rawValue)
    private static let epollHup = UInt32(EPOLLHUP.rawValue)
    private static let epollErr = UInt32(EPOLLERR.rawValue)

    @inline(__always)
    static func epollMask(_ interest: PollEvents) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.readable) { mask |= epollIn }
        if interest.contains(.writable) { mask |= epollOut }
        return mask
    }

    @inline(__always)
    static func pollEvents(_ mask: UInt32) -> PollEvents {
        var result: PollEvents = []
        if mask & epollIn != 0 { result.insert(.readable) }
        if mask & epollOut != 0 { result.insert(.writable) }
        if mask & epollHup != 0 { result.insert(.hangup) }
        if mask & epollErr != 0 { result.insert(.error) }
        return result
    }
}
#endif
