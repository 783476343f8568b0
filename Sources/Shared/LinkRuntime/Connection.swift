#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// Why a ``Connection`` closed.
public typealias CloseReason = Connection.CloseReason

/// Reads a ``Connection``'s bytes into memory of its choosing: a frame's payload straight into
/// the array that will own it, say, with the loop's read buffer for what has no better place.
/// A subclass overrides ``read(_:buffer:)``.
///
/// A class, not a protocol: the connection calls its reader at every read through a reference
/// it does not count, and Swift calls a class instance held that way with no reference taken,
/// where an existential held `unowned(unsafe)` is retained for each call, with a locked
/// instruction even in code built to count references without one.
open class ConnectionReader {
    public init() {}

    /// Reads from `fd` once (non-blocking, as ``Syscall/receive(_:vectors:_:)``), with `buffer` as the
    /// last or only place for the bytes, and handles what arrived before returning: the byte
    /// count, 0 at end of file (nothing to handle), `nil` when nothing was there.
    open func read(_ fd: Int32, buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        preconditionFailure("\(type(of: self)) does not override ConnectionReader.read(_:buffer:)")
    }
}

/// A buffered, non-blocking stream connection served by an ``EventLoop``.
///
/// Reads are delivered to ``onRead`` as they arrive. Writes go straight to the socket while
/// nothing is queued; what the socket does not take is queued and written, with `sendmsg`, as
/// the socket becomes writable. The loop keeps an open connection alive; ``onClose`` is
/// called exactly once, after which the descriptor is closed and the callbacks are released.
///
/// All methods must be called on the loop's thread.
public final class Connection {
    /// Why a connection closed.
    public enum CloseReason: Equatable, Sendable, CustomStringConvertible {
        /// The peer closed its end.
        case eof
        /// A read or write failed.
        case error(SystemError)
        /// ``Connection/close()`` or ``Connection/closeAfterFlush()`` was called.
        case local

        public var description: String {
            switch self {
            case .eof: return "closed by peer"
            case .error(let error): return "failed: \(error)"
            case .local: return "closed locally"
            }
        }
    }

    /// The socket. It is closed when the connection closes.
    public let fd: Int32
    /// The loop that serves this connection.
    public let loop: EventLoop
    /// Called with the bytes just read; the buffer is only valid during the call.
    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// When set, reads go through it instead of into the loop's read buffer and ``onRead``:
    /// for a reader that knows where the next bytes belong (see ``ConnectionReader``).
    ///
    /// Neither retained nor weak (an object referenced weakly keeps a side table, through which
    /// every retain and release of it then goes, and a reader would be retained and released
    /// at each read): a reader that may go away before the connection sets this to nil first,
    /// in its `deinit` at the latest. Nor is a reference taken for a read: a reader that can
    /// be released from inside its own `read` (its owner dropping it when it reports the
    /// connection closed) is kept by its owner until the call has returned.
    public var reader: ConnectionReader? {
        get { readerReference?.takeUnretainedValue() }
        set { readerReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    private var readerReference: Unmanaged<ConnectionReader>?
    /// Called once when the connection closes, for whatever reason.
    public var onClose: ((CloseReason) -> Void)?
    /// Called when the socket has taken everything that was queued (the peer reads again).
    public var onDrained: (() -> Void)?
    /// Reads per readiness event before other descriptors get their turn.
    public var maximumReadsPerEvent = 4

    /// Whether the connection is open (``close()`` not yet called, no end of file or error).
    public private(set) var isOpen = true
    /// Whether ``pauseReading()`` is in effect.
    public private(set) var isReadingPaused = false
    /// Whether ``closeAfterFlush()`` was called.
    public private(set) var isClosing = false

    private var output = OutputBuffer()
    private var peerFinishedSending = false
    private var interest: PollEvents = .readable

    /// Takes ownership of `fd`, which must be a non-blocking stream socket, and starts reading.
    /// If this throws, `fd` is left open and still belongs to the caller.
    public init(loop: EventLoop, fd: Int32, priority: EventLoop.Priority = .normal) throws {
        self.loop = loop
        self.fd = fd
        try loop.watch(fd, events: .readable, priority: priority) { [self] events in
            self.handle(events)
        }
    }

    /// Reads what has arrived already, without waiting for the loop to report it: for a
    /// connection just accepted, whose client sent its request right after connecting.
    public func readArrived() {
        if wantsReadable { readAvailable() }
    }

    /// Bytes queued and not yet accepted by the socket.
    public var pendingWriteByteCount: Int { output.byteCount }

    // MARK: Writing

    /// Writes `bytes`, queuing what the socket does not take now. Ignored once closed or
    /// after ``closeAfterFlush()``.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes `bytes`, queuing what the socket does not take now. Ignored once closed or
    /// after ``closeAfterFlush()``.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard isOpen, !isClosing, let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard output.isEmpty else {
            output.append(bytes)
            return
        }
        var written = 0
        do {
            while written < bytes.count {
                guard let n = try Syscall.send(fd, base + written, bytes.count - written) else { break }
                written += n
            }
        } catch {
            fail(error, deferred: true)
            return
        }
        if written < bytes.count {
            output.append(UnsafeRawBufferPointer(rebasing: bytes[written...]))
            updateInterest()
        }
    }

    /// Writes the bytes the vectors point at, in order, with one `sendmsg` while nothing is
    /// queued; what the socket does not take is copied into the queue before this returns, so
    /// the vectors need only be valid during the call. Ignored once closed or after
    /// ``closeAfterFlush()``.
    public func write(vectors: UnsafeBufferPointer<iovec>) {
        precondition(vectors.count <= 1024, "at most 1,024 vectors (IOV_MAX) in one write")
        guard isOpen, !isClosing, !vectors.isEmpty else { return }
        var written = 0
        if output.isEmpty {
            let total = vectors.reduce(0) { $0 + $1.iov_len }
            do {
                while written < total {
                    guard let n = try writeVectors(vectors, skipping: written) else { break }
                    written += n
                }
            } catch {
                fail(error, deferred: true)
                return
            }
            if written == total { return }
        }
        var skip = written
        for vector in vectors {
            guard let base = vector.iov_base else { continue }
            if skip >= vector.iov_len {
                skip -= vector.iov_len
                continue
            }
            output.append(UnsafeRawBufferPointer(start: base + skip, count: vector.iov_len - skip))
            skip = 0
        }
        updateInterest()
    }

    /// One `sendmsg` of the vectors' bytes after the first `skip`.
    private func writeVectors(_ vectors: UnsafeBufferPointer<iovec>, skipping skip: Int) throws -> Int? {
        guard skip > 0 else {
            return try Syscall.send(fd, vectors: vectors.baseAddress!, Int32(vectors.count))
        }
        var remaining = skip
        var first = 0
        while remaining >= vectors[first].iov_len {
            remaining -= vectors[first].iov_len
            first += 1
        }
        let rest = vectors.count - first
        return try withUnsafeTemporaryAllocation(of: iovec.self, capacity: rest) { copy in
            for i in 0..<rest { copy[i] = vectors[first + i] }
            copy[0].iov_base = copy[0].iov_base.map { $0 + remaining }
            copy[0].iov_len -= remaining
            return try Syscall.send(fd, vectors: copy.baseAddress!, Int32(rest))
        }
    }

    // MARK: Reading

    /// Stops reading until ``resumeReading()``; the peer is then held back by the socket buffers.
    public func pauseReading() {
        guard isOpen, !isReadingPaused else { return }
        isReadingPaused = true
        updateInterest()
    }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() {
        guard isOpen, isReadingPaused else { return }
        isReadingPaused = false
        updateInterest()
    }

    // MARK: Closing

    /// Closes now, dropping queued output, and calls ``onClose`` with ``CloseReason/local``.
    public func close() {
        finish(.local)
    }

    /// Stops delivering input, writes everything queued, then closes with ``CloseReason/local``.
    /// Input that arrives meanwhile is read and dropped.
    public func closeAfterFlush() {
        guard isOpen, !isClosing else { return }
        isClosing = true
        if output.isEmpty {
            finishClosing()
        } else {
            updateInterest()
        }
    }

    // MARK: Events

    private func handle(_ events: PollEvents) {
        if !output.isEmpty && !events.isDisjoint(with: [.writable, .hangup, .error]) {
            flush()
            guard isOpen else { return }
        }
        if wantsReadable && !events.isDisjoint(with: [.readable, .hangup, .error]) {
            readAvailable()
        }
    }

    /// While closing, input is still read, and dropped, so that the peer is not blocked on a
    /// full buffer and does not see a reset for unread data when the socket closes.
    private var wantsReadable: Bool {
        isOpen && (isClosing ? !peerFinishedSending : !isReadingPaused)
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        var reads = 0
        while wantsReadable && reads < maximumReadsPerEvent {
            reads += 1
            let count: Int
            do {
                if !isClosing, let reader = readerReference {
                    guard let n = try reader._withUnsafeGuaranteedRef({ try $0.read(fd, buffer: buffer) }) else { return }
                    count = n
                } else {
                    guard let n = try Syscall.receive(fd, buffer.baseAddress!, buffer.count) else { return }
                    count = n
                }
            } catch {
                fail(error, deferred: false)
                return
            }
            if count == 0 {
                if isClosing {
                    peerFinishedSending = true
                    updateInterest()
                } else {
                    finish(.eof)
                }
                return
            }
            if !isClosing && readerReference == nil {
                onRead?(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            if count < buffer.count { return }
        }
    }

    private func flush() {
        let vectors = loop.ioVectors
        var rounds = 0
        while !output.isEmpty && rounds < 4 {
            rounds += 1
            let count = output.fill(vectors, capacity: EventLoop.ioVectorCapacity)
            let written: Int
            do {
                guard let n = try Syscall.send(fd, vectors: vectors, Int32(count)) else { break }
                written = n
            } catch {
                fail(error, deferred: false)
                return
            }
            output.consume(written)
        }
        if output.isEmpty && isClosing {
            finishClosing()
            return
        }
        updateInterest()
        if output.isEmpty { onDrained?() }
    }

    private func finishClosing() {
        // Not the loop's read buffer: this may run inside an `onRead` that still uses it.
        if !peerFinishedSending {
            withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { buffer in
                for _ in 0..<16 {
                    guard let count = (try? Syscall.receive(fd, buffer.baseAddress!, buffer.count)) ?? nil,
                        count == buffer.count
                    else { break }
                }
            }
        }
        finish(.local)
    }

    private func updateInterest() {
        guard isOpen else { return }
        var wanted: PollEvents = []
        if wantsReadable { wanted.insert(.readable) }
        if !output.isEmpty { wanted.insert(.writable) }
        guard wanted != interest else { return }
        do {
            try loop.updateInterest(fd, events: wanted)
            interest = wanted
        } catch {
            fail(error, deferred: true)
        }
    }

    private func fail(_ error: any Error, deferred: Bool) {
        let systemError =
            error as? SystemError
            ?? SystemError(operation: "connection", errno: .ioError)
        if deferred {
            guard isOpen else { return }
            release()
            loop.execute { [self] in
                self.deliverClose(.error(systemError))
            }
        } else {
            finish(.error(systemError))
        }
    }

    private func finish(_ reason: CloseReason) {
        guard isOpen else { return }
        release()
        deliverClose(reason)
    }

    private func release() {
        isOpen = false
        output.removeAll()
        loop.unwatch(fd)
        Syscall.close(fd)
    }

    private func deliverClose(_ reason: CloseReason) {
        let callback = onClose
        onClose = nil
        onRead = nil
        callback?(reason)
    }
}
