#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// A ``Poller`` on poll(2), available on every platform.
///
/// Descriptors live in one `pollfd` array, with a table from descriptor to slot; removal
/// moves the last slot into the hole, so every operation but ``wait(timeoutMs:_:)`` is O(1).
public final class PollPoller: Poller {
    private var descriptors: [pollfd] = []
    private var slotOfDescriptor: [Int32] = []
    private var ready: [(fd: Int32, events: PollEvents)] = []

    public init() {}

    /// The number of descriptors being watched.
    public var count: Int { descriptors.count }

    public func add(_ fd: Int32, _ interest: PollEvents) throws {
        guard fd >= 0 else { throw SystemError(operation: "poll(add)", errno: .badFileDescriptor) }
        if slot(of: fd) != nil { throw SystemError(operation: "poll(add)", errno: .fileExists) }
        if Int(fd) >= slotOfDescriptor.count {
            slotOfDescriptor.append(contentsOf: repeatElement(-1, count: Int(fd) + 1 - slotOfDescriptor.count))
        }
        slotOfDescriptor[Int(fd)] = Int32(descriptors.count)
        descriptors.append(pollfd(fd: fd, events: Self.pollMask(interest), revents: 0))
    }

    public func modify(_ fd: Int32, _ interest: PollEvents) throws {
        guard let slot = slot(of: fd) else { throw SystemError(operation: "poll(modify)", errno: .noSuchFileOrDirectory) }
        descriptors[slot].events = Self.pollMask(interest)
    }

    public func remove(_ fd: Int32) throws {
        guard let slot = slot(of: fd) else { throw SystemError(operation: "poll(remove)", errno: .noSuchFileOrDirectory) }
        let last = descriptors.count - 1
        if slot != last {
            descriptors[slot] = descriptors[last]
            slotOfDescriptor[Int(descriptors[slot].fd)] = Int32(slot)
        }
        descriptors.removeLast()
        slotOfDescriptor[Int(fd)] = -1
    }

    public func wait(timeoutMs: Int32, _ body: (Int32, PollEvents) -> Void) throws {
        let count = descriptors.withUnsafeMutableBufferPointer { buffer in
            poll(buffer.baseAddress, nfds_t(buffer.count), timeoutMs)
        }
        if count < 0 {
            let code = wl_errno()
            if code == EINTR { return }
            throw SystemError(operation: "poll", errno: Errno(rawValue: code))
        }
        if count == 0 { return }
        ready.removeAll(keepingCapacity: true)
        var remaining = Int(count)
        var index = 0
        while remaining > 0 && index < descriptors.count {
            let entry = descriptors[index]
            if entry.revents != 0 {
                ready.append((entry.fd, Self.pollEvents(entry.revents)))
                descriptors[index].revents = 0
                remaining -= 1
            }
            index += 1
        }
        for index in 0..<ready.count {
            let (fd, events) = ready[index]
            body(fd, events)
        }
    }

    @inline(__always)
    private func slot(of fd: Int32) -> Int? {
        guard fd >= 0, Int(fd) < slotOfDescriptor.count else { return nil }
        let slot = slotOfDescriptor[Int(fd)]
        return slot >= 0 ? Int(slot) : nil
    }

    private static let pollIn = Int16(truncatingIfNeeded: POLLIN)
    private static let pollOut = Int16(truncatingIfNeeded: POLLOUT)
    private static let pollHup = Int16(truncatingIfNeeded: POLLHUP)
    private static let pollErr = Int16(truncatingIfNeeded: POLLERR)
    private static let pollNval = Int16(truncatingIfNeeded: POLLNVAL)

    @inline(__always)
    static func pollMask(_ interest: PollEvents) -> Int16 {
        var mask: Int16 = 0
        if interest.contains(.readable) { mask |= pollIn }
        if interest.contains(.writable) { mask |= pollOut }
        return mask
    }

    @inline(__always)
    static func pollEvents(_ mask: Int16) -> PollEvents {
        var result: PollEvents = []
        if mask & pollIn != 0 { result.insert(.readable) }
        if mask & pollOut != 0 { result.insert(.writable) }
        if mask & pollHup != 0 { result.insert(.hangup) }
        if mask & (pollErr | pollNval) != 0 { result.insert(.error) }
        return result
    }
}
