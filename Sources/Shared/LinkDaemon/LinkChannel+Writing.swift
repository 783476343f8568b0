#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import LinkCollections
import LinkControl
import LinkRuntime
import WireProtocol

/// The channel's outgoing frames: encoded into one buffer (large payloads detached, written
/// in place with `sendmsg`) and written once per loop turn, or held back by the emulated link
/// latency and written when due.
extension LinkChannel {
    func send(_ frame: Frame) {
        guard !isClosing else { return }
        framesSent &+= 1
        if tracer.isOn { tracer.frame(frame, outgoing: true, peerIndex: tracePeer) }
        if latencyMilliseconds > 0 || !delayed.isEmpty {
            var bytes: [UInt8] = []
            FrameEncoder.encode(frame, into: &bytes)
            // The emulated latency is the link's, in real time: a manual clock does not hold frames.
            let now = loop.realMilliseconds
            let lastDue = delayed.last?.due ?? 0
            delayed.append((max(now + latencyMilliseconds, lastDue), bytes))
            if delayTimer == nil { armDelayTimer() }
            return
        }
        let wasEmpty = output.isEmpty && detached.isEmpty
        if let payload = FrameEncoder.encode(
            frame, into: &output,
            detachingPayloadOfAtLeast: Self.detachedPayloadThreshold)
        {
            detached.append((output.count, payload))
        }
        if wasEmpty { onDirty?(self) }
    }

    /// Sends a CLOCK_SET or CLOCK_ACK, which ``framesSent`` leaves out.
    func sendClockFrame(_ frame: Frame) {
        send(frame)
        framesSent &-= 1
    }

    /// Writes what this turn produced.
    func flush() {
        defer {
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            detached.removeAllKeepingStorage()
        }
        guard !output.isEmpty || !detached.isEmpty, connection.isOpen else { return }
        if detached.isEmpty {
            connection.write(output)
        } else {
            writeWithDetachedPayloads()
        }
    }

    /// Writes `output` with the detached payloads in their places: each `sendmsg` pins up to
    /// ``detachedPayloadsPerWrite`` payloads (their buffers are valid only inside
    /// `withUnsafeBytes`, hence the recursion) and the bytes around them.
    private func writeWithDetachedPayloads() {
        output.withUnsafeBytes { head in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2 * Self.detachedPayloadsPerWrite + 1) { vectors in
                var start = 0
                var index = 0
                var count = 0
                func add(_ bytes: UnsafeRawBufferPointer) {
                    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
                    vectors[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: bytes.count)
                    count += 1
                }
                func pin(_ i: Int, through end: Int) {
                    guard i < end else {
                        if end == detached.count {
                            add(UnsafeRawBufferPointer(rebasing: head[start...]))
                            start = head.count
                        }
                        connection.write(vectors: UnsafeBufferPointer(rebasing: vectors[0..<count]))
                        return
                    }
                    let offset = detached[i].offset
                    add(UnsafeRawBufferPointer(rebasing: head[start..<offset]))
                    start = offset
                    detached[i].bytes.withUnsafeBytes { payload in
                        add(payload)
                        pin(i + 1, through: end)
                    }
                }
                while index < detached.count {
                    let end = min(index + Self.detachedPayloadsPerWrite, detached.count)
                    count = 0
                    pin(index, through: end)
                    index = end
                }
            }
        }
    }

    private func armDelayTimer() {
        guard let next = delayed.first else { return }
        let wait = max(0, next.due - loop.realMilliseconds)
        delayTimer = loop.schedule(afterMilliseconds: wait, on: .realTime) { [unowned(unsafe) self] in
            self.delayTimer = nil
            self.flushDelayed(all: false)
            self.armDelayTimer()
        }
    }

    func flushDelayed(all: Bool) {
        let now = loop.realMilliseconds
        var wrote = false
        while let next = delayed.first, all || next.due <= now {
            next.bytes.withUnsafeBytes { PieceCopy.append($0, to: &output) }
            _ = delayed.popFirst()
            wrote = true
        }
        if wrote { flush() }
    }
}
