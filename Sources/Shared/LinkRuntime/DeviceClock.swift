import LinkSystem

/// The time a daemon's device lives by: the system's clocks, or a manual clock that moves
/// only when a test moves it.
///
/// A clock has two readings, as a device has: monotonic time, which timers and durations
/// use and which never goes back, and wall-clock time (dates: a day's budget, a push's
/// expiration, a token's age, the trace's timestamps), which can be set. The system clock reads
/// `CLOCK_MONOTONIC` and `CLOCK_REALTIME`; a manual clock holds its monotonic time and the
/// distance from it to its wall-clock time, so that an advance moves both and a set moves
/// only the wall clock, as setting a device's date does.
///
/// The ``EventLoop`` owns its daemon's clock (``EventLoop/clock``) and reads device time
/// through it; the readings of the system clock are the plain system calls, so the loop's
/// cost under it is what it was without a clock.
public struct DeviceClock: Sendable, Equatable {
    /// Whose time the clock tells.
    public enum Mode: String, Sendable, CaseIterable {
        /// The system's clocks.
        case system
        /// A clock that moves only when told (``EventLoop/advanceClock(toMilliseconds:)``).
        case manual
    }

    public private(set) var mode: Mode
    /// The manual clock's monotonic time, in nanoseconds.
    private var manualMonotonic: UInt64 = 0
    /// The manual clock's wall-clock time minus its monotonic time, in nanoseconds.
    private var wallOffset: Int64 = 0

    /// The system's clocks.
    public static let system = DeviceClock(mode: .system)

    private init(mode: Mode) {
        self.mode = mode
    }

    /// A manual clock that reads `monotonicNanoseconds` and `wallNanoseconds` (since 1970)
    /// until it is moved.
    public static func manual(monotonicNanoseconds: UInt64, wallNanoseconds: Int64) -> DeviceClock {
        var clock = DeviceClock(mode: .manual)
        clock.manualMonotonic = monotonicNanoseconds
        clock.wallOffset = wallNanoseconds &- Int64(clamping: monotonicNanoseconds)
        return clock
    }

    /// A manual clock that reads what the system's clocks read now, to the millisecond (timers
    /// of whole milliseconds are then due at whole milliseconds, where moves in milliseconds
    /// land), or `wallMilliseconds` on its wall clock when given.
    public static func manualFromSystem(wallMilliseconds: Int64? = nil) -> DeviceClock {
        let monotonic = Syscall.monotonicNanoseconds() / 1_000_000 * 1_000_000
        let wall = wallMilliseconds.map { $0 &* 1_000_000 } ?? Self.systemWallNanoseconds() / 1_000_000 * 1_000_000
        return manual(monotonicNanoseconds: monotonic, wallNanoseconds: wall)
    }

    @inline(__always)
    public var isManual: Bool { mode == .manual }

    /// Monotonic time in nanoseconds: `CLOCK_MONOTONIC`, or the manual clock's.
    @inline(__always)
    public var monotonicNanoseconds: UInt64 {
        mode == .manual ? manualMonotonic : Syscall.monotonicNanoseconds()
    }

    /// Wall-clock time in nanoseconds since 1970: `CLOCK_REALTIME`, or the manual clock's.
    public var wallNanoseconds: Int64 {
        mode == .manual ? Int64(clamping: manualMonotonic) &+ wallOffset : Self.systemWallNanoseconds()
    }

    /// Wall-clock time in microseconds since 1970.
    public var wallMicroseconds: Int64 { wallNanoseconds / 1_000 }

    /// Wall-clock time in milliseconds since 1970 (rounded down).
    public var wallMilliseconds: Int64 {
        let nanoseconds = wallNanoseconds
        return nanoseconds >= 0 ? nanoseconds / 1_000_000 : (nanoseconds - 999_999) / 1_000_000
    }

    /// Manual: moves monotonic time to `nanoseconds` (never back) and the wall clock with it.
    mutating func move(toMonotonicNanoseconds nanoseconds: UInt64) {
        precondition(mode == .manual, "only a manual clock is moved")
        manualMonotonic = max(manualMonotonic, nanoseconds)
    }

    /// Manual: sets the wall clock to `nanoseconds` since 1970; monotonic time stays.
    mutating func setWall(nanoseconds: Int64) {
        precondition(mode == .manual, "only a manual clock is set")
        wallOffset = nanoseconds &- Int64(clamping: manualMonotonic)
    }

    private static func systemWallNanoseconds() -> Int64 {
        let now = Syscall.realtime()
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }
}
