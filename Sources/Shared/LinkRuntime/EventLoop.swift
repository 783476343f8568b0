#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkCollections
import LinkSystem

/// A single-threaded event loop: readiness of file descriptors, timers, signals and queued
/// work, all dispatched on the thread that calls ``run()``.
///
/// The loop owns the state its handlers touch, so that state needs no locks. Every method
/// must be called on the loop's thread; other threads reach the loop through a ``Remote``.
///
/// One turn of the loop waits for readiness (no longer than the nearest timer: on Linux a
/// timerfd wakes it then), calls the handlers of the ready descriptors
/// (``Priority/interactive`` ones first), fires the expired timers, runs the work queued with
/// ``execute(_:)``, and finally calls the ``afterTurn(_:)`` hooks.
public final class EventLoop {
    /// Identifies a timer scheduled with ``schedule(afterMilliseconds:_:)``.
    public struct TimerID: Hashable, Sendable {
        let sequence: UInt64
    }

    /// In which order the handlers of descriptors ready in the same turn run.
    public enum Priority: Sendable {
        /// In the order the poller reports them.
        case normal
        /// Before every `normal` one: for descriptors of someone waiting on an answer (the
        /// control socket), so that a request there does not wait behind a turn's bulk traffic.
        case interactive
    }

    /// Identifies a hook added with ``afterTurn(_:)``.
    public struct AfterTurnID: Hashable, Sendable {
        let value: UInt64
    }

    /// The poller implementation in use.
    public let backend: PollerBackend
    /// How signals passed to ``onSignals(_:_:)`` reach the loop.
    public let signalDelivery: SignalDelivery
    /// Turns completed or in progress since the loop was created.
    public private(set) var turnCount: UInt64 = 0
    /// Whether ``run()`` is executing.
    public private(set) var isRunning = false

    private let poller: any Poller
    private var registrations: [Registration?] = []
    private var watchedCount = 0
    private var dispatchEpoch: UInt64 = 0
    /// The `normal` events of the current turn, dispatched after the `interactive` ones.
    private var normalEvents: [(fd: Int32, events: PollEvents)] = []
    /// The timers the loop's wait waits for: all of them under the system clock; under a
    /// manual clock the real-time ones only.
    private var timers = TimerHeap()
    private var tasks: [() -> Void] = []
    private var runningTasks: [() -> Void] = []
    /// The hooks of ``afterTurn(_:)`` in the order they were added, each holding a reference
    /// of its own (given back by ``removeAfterTurn(_:)`` or the loop's `deinit`): running them,
    /// which every turn does, takes no reference, where a copy of the list and of each hook and
    /// its closure took five atomic increments and decrements a turn for two hooks.
    private var hooks: [Unmanaged<AfterTurnHook>] = []
    private var runningHooks = false
    /// A hook was removed while the hooks ran: it leaves the list once they are done.
    private var hookRemovedWhileRunning = false
    private var nextHookID: UInt64 = 1
    private var stopRequested = false
    private var signalSource: SignalSource?
    private var wakeup: WakeupChannel?
    #if os(Linux)
    /// Wakes the loop at its nearest timer's deadline, so that it waits without a timeout
    /// (made with the first timer that waits; ``pollTimeout()``).
    private var timerDescriptor: TimerDescriptor?
    /// The deadline `timerDescriptor` is set to; nil once it has passed (or before it is set).
    private var timerDescriptorDeadline: UInt64?
    #endif

    /// Scratch space for ``Connection`` reads; its contents are only valid during a callback.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let readStorage: UnsafeMutableRawBufferPointer
    /// Scratch space for ``Connection`` writes.
    let ioVectors: UnsafeMutablePointer<iovec>
    static let readBufferSize = 64 * 1024
    /// Where the read buffer starts in its page. The kernel copies received bytes into it with
    /// `rep movsb`, which on AMD Zen cores is several times slower when the destination lies
    /// a few bytes after the source modulo 4 KiB, and a socket's data starts near the
    /// beginning of a page. Large payloads are read straight into their own arrays (several a
    /// read in a stream); small frames are read here, and, with the copies in pieces
    /// (``PieceCopy``), when a stream's payloads were read here too this was worth 3-5% of
    /// one-way 16 KiB messages (docs/performance.md, "What each speed trick buys").
    static let readBufferPageOffset = 1024
    static let ioVectorCapacity = 64

    /// Creates a loop. `SIGPIPE` is ignored from then on: writes to a closed peer fail with
    /// `EPIPE` instead of ending the process.
    public init(backend: PollerBackend = .default, signalDelivery: SignalDelivery = .default) throws {
        SystemCalls.ignoreSignal(SIGPIPE)
        self.backend = backend
        self.signalDelivery = signalDelivery
        poller = try backend.makePoller()
        readStorage = .allocate(byteCount: Self.readBufferSize + 4096, alignment: 4096)
        readBuffer = UnsafeMutableRawBufferPointer(
            rebasing: readStorage[Self.readBufferPageOffset..<(Self.readBufferPageOffset + Self.readBufferSize)])
        ioVectors = .allocate(capacity: Self.ioVectorCapacity)
        ioVectors.initialize(repeating: iovec(), count: Self.ioVectorCapacity)
    }

    deinit {
        for hook in hooks { hook.release() }
        wakeup?.close()
        signalSource = nil
        readStorage.deallocate()
        ioVectors.deallocate()
    }

    // MARK: Clock

    /// The device's clock: the system's (the default), or a manual one that moves only when
    /// told (``useManualClock(_:)``, ``advanceClock(toMilliseconds:)``). Device time
    /// (``nowMilliseconds``, ``turnMilliseconds``, ``wallMilliseconds``) and the timers of
    /// ``schedule(afterMilliseconds:_:)`` follow it; ``nowNanoseconds``, ``realMilliseconds``
    /// and timers on ``TimeBase/realTime`` do not.
    public private(set) var clock = DeviceClock.system

    /// Under a manual clock: the device timers, by device deadline, fired only when the clock
    /// moves (their sequence numbers come from `timers`, so an id stays valid when a timer
    /// moves between the two). After the fields every turn uses, which it leaves where they were.
    private var deviceTimers = TimerHeap()

    /// `CLOCK_MONOTONIC`, in nanoseconds: real time, whatever the device's clock says (for
    /// measuring, and for what ``TimeBase/realTime`` timers wait on).
    public var nowNanoseconds: UInt64 {
        Syscall.monotonicNanoseconds()
    }

    /// `CLOCK_MONOTONIC`, in milliseconds: real time, as ``nowNanoseconds``.
    public var realMilliseconds: Int64 {
        Int64(nowNanoseconds / 1_000_000)
    }

    /// The device's monotonic time, in milliseconds: `CLOCK_MONOTONIC` under the system clock.
    public var nowMilliseconds: Int64 {
        Int64(clock.monotonicNanoseconds / 1_000_000)
    }

    private var turnTime: Int64?

    /// The device's monotonic time in milliseconds, read once per loop turn (and again after
    /// the manual clock moved): cheap enough to pass to every event handler of the turn.
    public var turnMilliseconds: Int64 {
        if let turnTime { return turnTime }
        let now = nowMilliseconds
        turnTime = now
        return now
    }

    /// The device's wall-clock time, in milliseconds since 1970: `CLOCK_REALTIME` under the
    /// system clock.
    public var wallMilliseconds: Int64 { clock.wallMilliseconds }

    /// The device's wall-clock time, in microseconds since 1970.
    public var wallMicroseconds: Int64 { clock.wallMicroseconds }

    /// Puts the loop on `clock`, a manual clock (``DeviceClock/manual(monotonicNanoseconds:wallNanoseconds:)``),
    /// or sets the manual clock it is on to `clock`'s readings; its monotonic time never goes
    /// back (a reading behind the loop's keeps the loop's). Device timers keep the time they
    /// had left: from then on they fire only when the clock is moved
    /// (``advanceClock(toMilliseconds:)``) or when they are due at the clock's time (no delay),
    /// and the loop's wait never waits for them.
    public func useManualClock(_ manual: DeviceClock) {
        precondition(manual.isManual, "useManualClock takes a manual clock")
        if clock.isManual {
            let wall = manual.wallNanoseconds
            clock.move(toMonotonicNanoseconds: manual.monotonicNanoseconds)
            clock.setWall(nanoseconds: wall)
            turnTime = nil
            return
        }
        let realNow = nowNanoseconds
        clock = manual
        turnTime = nil
        let deviceNow = clock.monotonicNanoseconds
        for timer in timers.removeAll(where: { $0 & TimerHeap.flag == 0 }) {
            let left = timer.deadline > realNow ? timer.deadline - realNow : 0
            deviceTimers.insert(deadline: Self.adding(left, to: deviceNow), sequence: timer.sequence, timer.body)
        }
    }

    /// Puts the loop back on the system's clocks: device timers keep the time they had left.
    public func useSystemClock() {
        guard clock.isManual else { return }
        let deviceNow = clock.monotonicNanoseconds
        clock = .system
        turnTime = nil
        let realNow = nowNanoseconds
        for timer in deviceTimers.removeAll(where: { _ in true }) {
            let left = timer.deadline > deviceNow ? timer.deadline - deviceNow : 0
            timers.insert(deadline: Self.adding(left, to: realNow), sequence: timer.sequence, timer.body)
        }
    }

    /// Manual clock: sets the wall clock to `milliseconds` since 1970; monotonic time and the
    /// timers stay where they are (as setting a device's date leaves its timers).
    public func setWallClock(milliseconds: Int64) {
        clock.setWall(nanoseconds: milliseconds.multipliedReportingOverflow(by: 1_000_000).partialValue)
    }

    /// Manual clock: the deadline of the nearest device timer, in device milliseconds
    /// (rounded up: the clock reaches it there); nil when none waits, or under the system clock.
    public var nextDeviceTimerMilliseconds: Int64? {
        guard clock.isManual, let deadline = deviceTimers.nearestDeadline() else { return nil }
        return Int64(clamping: deadline / 1_000_000 + (deadline % 1_000_000 == 0 ? 0 : 1))
    }

    /// Manual clock: moves the clock to `milliseconds` (device time; never back) and fires
    /// every device timer due by then in the order of their deadlines, each with the clock at
    /// its own deadline, timers that they schedule within the span included.
    public func advanceClock(toMilliseconds milliseconds: Int64) {
        precondition(clock.isManual, "only a manual clock is advanced")
        let target = UInt64(max(0, milliseconds)).multipliedReportingOverflow(by: 1_000_000)
        let end = target.overflow ? UInt64.max / 2 : target.partialValue
        while let deadline = deviceTimers.nearestDeadline(), deadline <= end {
            moveClock(toNanoseconds: deadline)
            runDueDeviceTimers()
        }
        moveClock(toNanoseconds: end)
    }

    /// Manual clock: moves the clock to `milliseconds` (device time; never back) without
    /// firing anything; ``runDueDeviceTimers()`` fires what is due then.
    public func moveClock(toMilliseconds milliseconds: Int64) {
        let target = UInt64(max(0, milliseconds)).multipliedReportingOverflow(by: 1_000_000)
        moveClock(toNanoseconds: target.overflow ? UInt64.max / 2 : target.partialValue)
    }

    private func moveClock(toNanoseconds nanoseconds: UInt64) {
        clock.move(toMonotonicNanoseconds: nanoseconds)
        turnTime = nil
    }

    /// Manual clock: fires the device timers due now, in the order of their deadlines (those
    /// they schedule wait for the next call). Returns how many fired.
    @discardableResult
    public func runDueDeviceTimers() -> Int {
        guard clock.isManual else { return 0 }
        let now = clock.monotonicNanoseconds
        let limit = timers.nextSequence
        var fired = 0
        while let body = deviceTimers.popExpired(now: now, sequenceLimit: limit) {
            body()
            fired += 1
        }
        return fired
    }

    private static func adding(_ nanoseconds: UInt64, to base: UInt64) -> UInt64 {
        let sum = base.addingReportingOverflow(nanoseconds)
        return sum.overflow ? .max : sum.partialValue
    }

    // MARK: Descriptors

    /// Calls `handler` on the loop's thread whenever `fd` is ready for `events`; ``PollEvents/hangup``
    /// and ``PollEvents/error`` are reported while any interest is set. A descriptor with an
    /// empty interest set is kept but not polled. Returns `fd`.
    ///
    /// Call ``unwatch(_:)`` before closing `fd`.
    @discardableResult
    public func watch(
        _ fd: Int32, events: PollEvents, priority: Priority = .normal,
        _ handler: @escaping (PollEvents) -> Void
    ) throws -> Int32 {
        guard fd >= 0 else { throw SystemError(operation: "watch(\(fd))", errno: .badFileDescriptor) }
        if registration(fd) != nil { throw SystemError(operation: "watch(\(fd))", errno: .fileExists) }
        let interest = events.intersection([.readable, .writable])
        if !interest.isEmpty {
            try poller.add(fd, interest)
        }
        if Int(fd) >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - registrations.count))
        }
        registrations[Int(fd)] = Registration(
            interest: interest, armed: !interest.isEmpty, epoch: dispatchEpoch, priority: priority, handler: handler
        )
        watchedCount += 1
        return fd
    }

    /// Changes the events `fd` is watched for.
    public func updateInterest(_ fd: Int32, events: PollEvents) throws {
        guard let registration = registration(fd) else {
            throw SystemError(operation: "updateInterest(\(fd))", errno: .badFileDescriptor)
        }
        let interest = events.intersection([.readable, .writable])
        if interest == registration.interest { return }
        if interest.isEmpty {
            if registration.armed {
                try poller.remove(fd)
                registration.armed = false
            }
        } else if registration.armed {
            try poller.modify(fd, interest)
        } else {
            try poller.add(fd, interest)
            registration.armed = true
        }
        registration.interest = interest
    }

    /// The events `fd` is watched for, or `nil` if it is not watched.
    public func interest(_ fd: Int32) -> PollEvents? {
        registration(fd)?.interest
    }

    /// Stops watching `fd`. Safe from any handler, including `fd`'s own: an event already
    /// collected for `fd` in the current turn is not delivered.
    public func unwatch(_ fd: Int32) {
        guard let registration = registration(fd) else { return }
        registrations[Int(fd)] = nil
        watchedCount -= 1
        if registration.armed {
            registration.armed = false
            try? poller.remove(fd)
        }
    }

    /// The number of descriptors being watched, the loop's own included.
    public var watchedDescriptorCount: Int { watchedCount }

    @inline(__always)
    private func registration(_ fd: Int32) -> Registration? {
        guard fd >= 0, Int(fd) < registrations.count else { return nil }
        return registrations[Int(fd)]
    }

    @inline(__always)
    private func dispatch(_ fd: Int32, _ events: PollEvents) {
        guard let registration = registration(fd),
            registration.armed,
            registration.epoch != dispatchEpoch
        else { return }
        let delivered = events.intersection(registration.interest.union([.hangup, .error]))
        if delivered.isEmpty { return }
        registration.handler(delivered)
    }

    // MARK: Timers

    /// Which time a timer waits on.
    public enum TimeBase: Sendable {
        /// The device's clock (``clock``): under a manual clock the timer fires only when the
        /// clock is moved past its deadline. For what the emulated devices do in time.
        case device
        /// `CLOCK_MONOTONIC`, whatever the device's clock: for the plumbing that must go on
        /// while a manual clock stands still (reconnecting, the emulated link's latency).
        case realTime
    }

    /// Calls `body` on the loop's thread once `milliseconds` of device time have passed (at
    /// the earliest in the next turn, even for 0). Timers with the same deadline fire in the
    /// order scheduled.
    @discardableResult
    public func schedule(afterMilliseconds milliseconds: Int64, _ body: @escaping () -> Void) -> TimerID {
        let delay = UInt64(max(0, milliseconds)).multipliedReportingOverflow(by: 1_000_000)
        return schedule(afterNanoseconds: delay.overflow ? UInt64.max / 2 : delay.partialValue, body)
    }

    /// Calls `body` on the loop's thread once `milliseconds` of `base`'s time have passed.
    @discardableResult
    public func schedule(afterMilliseconds milliseconds: Int64, on base: TimeBase, _ body: @escaping () -> Void) -> TimerID {
        guard base == .realTime else { return schedule(afterMilliseconds: milliseconds, body) }
        let delay = UInt64(max(0, milliseconds)).multipliedReportingOverflow(by: 1_000_000)
        let deadline = nowNanoseconds.addingReportingOverflow(delay.overflow ? UInt64.max / 2 : delay.partialValue)
        let sequence = timers.reserveSequence(flags: TimerHeap.flag)
        timers.insert(deadline: deadline.overflow ? .max : deadline.partialValue, sequence: sequence, body)
        return TimerID(sequence: sequence)
    }

    /// Calls `body` on the loop's thread once `nanoseconds` of device time have passed.
    @discardableResult
    public func schedule(afterNanoseconds nanoseconds: UInt64, _ body: @escaping () -> Void) -> TimerID {
        if clock.isManual {
            let sequence = timers.reserveSequence()
            deviceTimers.insert(deadline: Self.adding(nanoseconds, to: clock.monotonicNanoseconds), sequence: sequence, body)
            return TimerID(sequence: sequence)
        }
        let deadline = nowNanoseconds.addingReportingOverflow(nanoseconds)
        return TimerID(sequence: timers.schedule(deadline: deadline.overflow ? .max : deadline.partialValue, body))
    }

    /// Cancels a timer that has not fired yet; does nothing otherwise.
    public func cancel(_ timer: TimerID) {
        if !timers.cancel(timer.sequence), clock.isManual {
            deviceTimers.cancel(timer.sequence)
        }
    }

    /// The number of timers that are neither fired nor cancelled.
    public var pendingTimerCount: Int { timers.count + deviceTimers.count }

    // MARK: Signals

    /// Calls `handler` on the loop's thread with the signal number whenever one of `signals`
    /// arrives. A later call for the same signal replaces its handler.
    ///
    /// With ``SignalDelivery/signalDescriptor`` the signals are blocked in the calling thread
    /// (call this on the loop's thread) and read from a signalfd; a signal that the kernel hands
    /// to another thread reaches the loop through the self-pipe handler instead. Handlers
    /// registered here are not restored until the loop is deallocated.
    public func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        let source: SignalSource
        if let existing = signalSource {
            source = existing
        } else {
            source = try SignalSource(delivery: signalDelivery)
            signalSource = source
        }
        try source.register(signals, handler)
        for fd in source.descriptors where registration(fd) == nil {
            try watch(fd, events: .readable) { [unowned self] _ in
                self.signalSource?.drain(fd)
            }
        }
    }

    // MARK: Work

    /// Runs `body` on the loop's thread at the end of the current turn, or of the next one when
    /// called outside of a turn or from queued work.
    public func execute(_ body: @escaping () -> Void) {
        tasks.append(body)
    }

    /// Calls `body` once every turn, after the handlers, timers and queued work of that turn.
    @discardableResult
    public func afterTurn(_ body: @escaping () -> Void) -> AfterTurnID {
        let id = AfterTurnID(value: nextHookID)
        nextHookID += 1
        hooks.append(.passRetained(AfterTurnHook(id: id, body: body)))
        return id
    }

    /// Removes a hook added with ``afterTurn(_:)``. Called from a hook, it takes effect at once
    /// (the hook is not called again) and the hook is released after the turn's hooks ran.
    public func removeAfterTurn(_ id: AfterTurnID) {
        guard let index = hooks.firstIndex(where: { $0.takeUnretainedValue().id == id }) else { return }
        let hook = hooks[index]
        hook.takeUnretainedValue().isActive = false
        if runningHooks {
            hookRemovedWhileRunning = true
        } else {
            hooks.remove(at: index)
            hook.release()
        }
    }

    // MARK: Running

    /// Runs turns until ``stop()``. Errors of the poller end the loop and are rethrown.
    public func run() throws {
        precondition(!isRunning, "EventLoop.run() called while already running")
        isRunning = true
        defer {
            isRunning = false
            stopRequested = false
        }
        while !stopRequested {
            try runTurn()
        }
    }

    /// Makes ``run()`` return once the current turn is complete.
    public func stop() {
        stopRequested = true
    }

    private func runTurn() throws {
        turnCount &+= 1
        let timeout = pollTimeout()
        turnTime = nil
        dispatchEpoch &+= 1
        normalEvents.removeAllKeepingStorage()
        try poller.wait(timeoutMs: timeout) { fd, events in
            if self.registration(fd)?.priority == .interactive {
                self.dispatch(fd, events)
            } else {
                self.normalEvents.append((fd, events))
            }
        }
        for index in normalEvents.indices {
            dispatch(normalEvents[index].fd, normalEvents[index].events)
        }
        runExpiredTimers()
        runTasks()
        runHooks()
    }

    private func pollTimeout() -> Int32 {
        if stopRequested || !tasks.isEmpty || deviceTimerIsDue { return 0 }
        guard let deadline = timers.nearestDeadline() else { return -1 }
        if timerDescriptorIsSet(by: deadline) { return -1 }
        let now = nowNanoseconds
        if deadline <= now { return 0 }
        if setTimerDescriptor(to: deadline) { return -1 }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    /// Whether the timer descriptor is set for `deadline` or an earlier one: it then wakes the
    /// loop by `deadline` (at once if that has passed), and until it does no timer is due, so
    /// neither the wait nor the timers need the clock: two reads a turn fewer (20-30 ns each
    /// on a VM) for a loop with timers pending, as a daemon with messages in flight has (each
    /// with its reply's timeout).
    @inline(__always)
    private func timerDescriptorIsSet(by deadline: UInt64) -> Bool {
        #if os(Linux)
        if let set = timerDescriptorDeadline { return set <= deadline }
        #endif
        return false
    }

    /// Sets the timer descriptor to wake the loop at `deadline`, for which it is not set yet
    /// (``timerDescriptorIsSet(by:)``): true when the wait then needs no timeout. It is set
    /// again only when a nearer deadline comes; when the timer it was set for is cancelled, it
    /// wakes the loop for nothing once and is set to the next deadline then. (A wait's timeout
    /// would set and cancel a timer in the kernel at each sleep.) False where there is none:
    /// the wait then has the timeout.
    private func setTimerDescriptor(to deadline: UInt64) -> Bool {
        #if os(Linux)
        do {
            let descriptor = try timerDescriptor ?? makeTimerDescriptor()
            try descriptor.set(deadline: deadline)
            timerDescriptorDeadline = deadline
            return true
        } catch {
            return false
        }
        #else
        return false
        #endif
    }

    #if os(Linux)
    private func makeTimerDescriptor() throws -> TimerDescriptor {
        let descriptor = try TimerDescriptor()
        try watch(descriptor.fd, events: .readable) { [unowned self] _ in
            self.timerDescriptor?.clear()
            self.timerDescriptorDeadline = nil
        }
        timerDescriptor = descriptor
        return descriptor
    }
    #endif

    /// Manual clock: a device timer is due at the clock's time (scheduled with no delay, or
    /// reached by a move): it fires in the next turn, as under the system clock.
    @inline(__always)
    private var deviceTimerIsDue: Bool {
        clock.isManual && manualDeviceTimerIsDue()
    }

    private func manualDeviceTimerIsDue() -> Bool {
        guard let deadline = deviceTimers.nearestDeadline() else { return false }
        return deadline <= clock.monotonicNanoseconds
    }

    private func runExpiredTimers() {
        if clock.isManual { runDueDeviceTimers() }
        guard let nearest = timers.nearestDeadline(), !timerDescriptorIsSet(by: nearest) else { return }
        let now = nowNanoseconds
        let limit = timers.nextSequence
        while let body = timers.popExpired(now: now, sequenceLimit: limit) {
            body()
        }
    }

    private func runTasks() {
        if tasks.isEmpty { return }
        swap(&tasks, &runningTasks)
        for index in runningTasks.indices {
            runningTasks[index]()
        }
        runningTasks.removeAll(keepingCapacity: true)
    }

    private func runHooks() {
        // A hook added by a hook runs from the next turn on.
        let count = hooks.count
        if count == 0 { return }
        runningHooks = true
        for index in 0..<count {
            // The list holds a reference to each hook, and a hook leaves it only below.
            hooks[index]._withUnsafeGuaranteedRef { hook in
                if hook.isActive { hook.body() }
            }
        }
        runningHooks = false
        if hookRemovedWhileRunning {
            hookRemovedWhileRunning = false
            var kept: [Unmanaged<AfterTurnHook>] = []
            for hook in hooks {
                if hook.takeUnretainedValue().isActive { kept.append(hook) } else { hook.release() }
            }
            hooks = kept
        }
    }

    // MARK: Other threads

    /// A handle through which other threads queue work on this loop or stop it.
    public final class Remote: Sendable {
        private let channel: WakeupChannel

        init(channel: WakeupChannel) {
            self.channel = channel
        }

        /// Runs `body` on the loop's thread in one of its next turns. Returns `false`, without
        /// running `body`, once the loop is gone.
        @discardableResult
        public func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
            channel.enqueue(body)
        }

        /// Makes the loop's ``EventLoop/run()`` return, as ``EventLoop/stop()`` does.
        public func stop() {
            channel.requestStop()
        }
    }

    /// A ``Remote`` for this loop. All remotes of a loop share one wake-up descriptor.
    #if WATCHLINK_ONE_THREAD
    @available(*, unavailable, message: "the daemons' release build counts references for one thread (scripts/build-release.sh)")
    #endif
    public func makeRemote() throws -> Remote {
        if let wakeup {
            return Remote(channel: wakeup)
        }
        let channel = try WakeupChannel()
        do {
            try watch(channel.readFD, events: .readable) { [unowned self] _ in
                self.drainWakeup()
            }
        } catch {
            channel.close()
            throw error
        }
        wakeup = channel
        return Remote(channel: channel)
    }

    private func drainWakeup() {
        guard let wakeup else { return }
        let (work, stop) = wakeup.take()
        for body in work {
            body()
        }
        if stop {
            stopRequested = true
        }
    }
}

/// What the loop knows about one watched descriptor.
final class Registration {
    var interest: PollEvents
    var armed: Bool
    let epoch: UInt64
    let priority: EventLoop.Priority
    let handler: (PollEvents) -> Void

    init(interest: PollEvents, armed: Bool, epoch: UInt64, priority: EventLoop.Priority, handler: @escaping (PollEvents) -> Void) {
        self.interest = interest
        self.armed = armed
        self.epoch = epoch
        self.priority = priority
        self.handler = handler
    }
}

final class AfterTurnHook {
    let id: EventLoop.AfterTurnID
    let body: () -> Void
    var isActive = true

    init(id: EventLoop.AfterTurnID, body: @escaping () -> Void) {
        self.id = id
        self.body = body
    }
}
