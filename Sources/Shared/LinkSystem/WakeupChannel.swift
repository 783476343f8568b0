#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// A mutex-protected queue of work for an event loop from other threads, and the
/// descriptor (an eventfd on Linux, a pipe elsewhere) that wakes the loop when work arrives.
public final class WakeupChannel: @unchecked Sendable {
    public let readFD: Int32
    private let writeFD: Int32
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var pending: [@Sendable () -> Void] = []
    private var stopRequested = false
    private var signalled = false
    private var closed = false

    public init() throws {
        #if os(Linux)
        readFD = try Syscall.retrying("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
        writeFD = readFD
        #else
        (readFD, writeFD) = try Syscall.pipe()
        #endif
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Queues `body`; returns `false` once the loop is gone.
    public func enqueue(_ body: @escaping @Sendable () -> Void) -> Bool {
        pthread_mutex_lock(mutex)
        if closed {
            pthread_mutex_unlock(mutex)
            return false
        }
        pending.append(body)
        let mustSignal = !signalled
        signalled = true
        if mustSignal { signal() }
        pthread_mutex_unlock(mutex)
        return true
    }

    public func requestStop() {
        pthread_mutex_lock(mutex)
        if !closed {
            stopRequested = true
            let mustSignal = !signalled
            signalled = true
            if mustSignal { signal() }
        }
        pthread_mutex_unlock(mutex)
    }

    /// On the loop's thread: clears the descriptor, then takes the queued work.
    public func take() -> (work: [@Sendable () -> Void], stop: Bool) {
        var sink: UInt64 = 0
        while let count = (try? Syscall.read(readFD, &sink, MemoryLayout<UInt64>.size)) ?? nil, count > 0 {}
        pthread_mutex_lock(mutex)
        var work: [@Sendable () -> Void] = []
        swap(&work, &pending)
        let stop = stopRequested
        stopRequested = false
        signalled = false
        pthread_mutex_unlock(mutex)
        return (work, stop)
    }

    public func close() {
        pthread_mutex_lock(mutex)
        if !closed {
            closed = true
            pending.removeAll()
            Syscall.close(readFD)
            if writeFD != readFD { Syscall.close(writeFD) }
        }
        pthread_mutex_unlock(mutex)
    }

    /// Called with the mutex held, so the descriptor cannot be closed underneath.
    private func signal() {
        var one: UInt64 = 1
        _ = try? Syscall.write(writeFD, &one, writeFD == readFD ? 8 : 1)
    }
}
