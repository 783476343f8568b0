#if os(Linux)
import Glibc
import CSystem

/// A timerfd on `CLOCK_MONOTONIC`: a descriptor that becomes readable at a deadline.
///
/// An event loop that waits on it instead of giving `epoll_wait` a timeout sets the kernel's
/// timer only when its nearest deadline comes earlier, not at every wait: a wait with a
/// timeout arms and cancels a timer in the kernel each time it sleeps, which cost a relay of
/// small messages over a microsecond a round trip (docs/performance.md).
public final class TimerDescriptor {
    public let fd: Int32

    public init() throws {
        fd = try Syscall.retrying("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC))
        }
    }

    deinit {
        Syscall.close(fd)
    }

    /// Makes the descriptor readable at `deadline` (`CLOCK_MONOTONIC` nanoseconds; at once
    /// when it has passed), in place of any deadline set before.
    public func set(deadline: UInt64) throws {
        // Zero would disarm the timer, and the kernel refuses seconds past Int64.
        let nanoseconds = min(max(deadline, 1), UInt64(Int64.max))
        var setting = itimerspec()
        setting.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
        setting.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        _ = try Syscall.retrying("timerfd_settime") { timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &setting, nil) }
    }

    /// Makes the descriptor unreadable again after its deadline passed.
    public func clear() {
        var expirations: UInt64 = 0
        _ = try? Syscall.read(fd, &expirations, MemoryLayout<UInt64>.size)
    }
}
#endif
