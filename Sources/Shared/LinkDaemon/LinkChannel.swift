#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import LinkCollections
import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol

/// One connection on the link socket: framing, the handshake, then session frames.
///
/// Outgoing frames are encoded into one buffer and written once per loop turn (the daemon
/// flushes dirty channels after each turn), or held back by the emulated link latency.
final class LinkChannel: ConnectionReader {
    enum Event {
        case established(peer: Hello, version: UInt16)
        case frame(Frame)
        /// CLOCK_SET or CLOCK_ACK: the daemon's clock, not the session, takes them.
        case clock(Frame)
        case closed(reason: String)
    }

    let connection: Connection
    let serial: UInt64
    let loop: EventLoop
    private let logger: Logger
    let tracer: Tracer
    private let role: Role
    /// Who ended the link: this side's role name, the peer's, or "error".
    private(set) var closedBy = ""
    private var decoder = FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength)
    private var handshake: LinkHandshake
    private(set) var peer: Hello?
    /// The peer's index in the trace (``Tracer/peerIndex(_:)``), once the handshake named it.
    private(set) var tracePeer: UInt16 = 0
    /// The counterpart whose session this link carries, once the handshake is done. Neither
    /// weak nor counted: a peer, once the directory lists it, lives as long as the daemon
    /// (peers are never removed); a weakly referenced object keeps a side table that makes
    /// every retain and release of it take the slow path, a dozen times a message, and an
    /// unowned one is retained and released at each read. The frame path reads it with
    /// ``withOwner(_:)``, which takes no reference.
    var owner: PeerSession? {
        get { ownerReference?.takeUnretainedValue() }
        set { ownerReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    private var ownerReference: Unmanaged<PeerSession>?
    /// Runs `body` with the ``owner`` (nil when there is none), no reference taken.
    @inline(__always)
    func withOwner<T>(_ body: (PeerSession) -> T) -> T? {
        ownerReference?._withUnsafeGuaranteedRef(body)
    }
    private(set) var isEstablished = false
    private(set) var isClosing = false
    private var handshakeTimer: EventLoop.TimerID?
    var output: [UInt8] = []
    /// Large payloads of this turn's frames, written (`sendmsg`) after `output[..<offset]`
    /// instead of being copied into `output`.
    var detached: [(offset: Int, bytes: [UInt8])] = []
    /// Payloads from this size on are not copied into `output`.
    static let detachedPayloadThreshold = 4096
    /// Payloads pinned for one `sendmsg` (two vectors each, and the bytes between).
    static let detachedPayloadsPerWrite = 16
    var delayed = FIFOQueue<(due: Int64, bytes: [UInt8])>()
    var delayTimer: EventLoop.TimerID?
    var latencyMilliseconds: Int64 = 0
    var onEvent: ((LinkChannel, Event) -> Void)?
    /// Called when the channel has bytes to write at the end of this loop turn.
    var onDirty: ((LinkChannel) -> Void)?
    private var closeReported = false
    /// The protocol version of the link, once the handshake is done.
    private(set) var version: UInt16 = 0
    /// Frames sent (queued) and received on the link, clock frames left out: the pair's clock
    /// sees by them whether anything crossed the link during a round (``PairClock``).
    var framesSent: UInt64 = 0
    private(set) var framesReceived: UInt64 = 0
    /// The pair's clock's state on this link (``PairClock``).
    var clockLink = PairClock.LinkState()

    init(
        loop: EventLoop, connection: Connection, serial: UInt64, handshake: LinkHandshake, role: Role,
        logger: Logger, tracer: Tracer, handshakeTimeoutMilliseconds: Int64 = Int64(LinkProtocol.handshakeTimeoutSeconds) * 1_000
    ) {
        self.loop = loop
        self.role = role
        self.tracer = tracer
        self.connection = connection
        self.serial = serial
        self.handshake = handshake
        self.logger = logger
        // The channel reads for the connection (`read(_:buffer:)`). The connection may outlive
        // the channel while a GOAWAY is flushed (it then reads and drops). Neither the
        // connection nor the timers reference the channel weakly: a weakly referenced object
        // keeps a side table that sends every retain and release of it down a slow path, and
        // a channel is retained and released many times a message. Its `deinit` takes itself
        // out of the connection and cancels its timers instead.
        super.init()
        connection.reader = self
        connection.onClose = { [unowned(unsafe) self] reason in self.connectionClosed(reason) }
        handshakeTimer = loop.schedule(afterMilliseconds: handshakeTimeoutMilliseconds) { [unowned(unsafe) self] in
            guard !self.isEstablished else { return }
            self.refuse(.handshakeTimeout, "the handshake did not complete within \(handshakeTimeoutMilliseconds) ms")
        }
    }

    #if DEBUG
    /// Reads of this channel running now. Nothing takes a reference to a channel for a call
    /// (`Connection.reader`), so one freed while a read runs would be freed under its own
    /// feet; debug builds, which run the tests, stop there (`LinkEndpoint.closedChannels`).
    private var readsRunning = 0
    #endif

    deinit {
        #if DEBUG
        precondition(readsRunning == 0, "a LinkChannel was freed while its own read ran")
        #endif
        connection.reader = nil
        connection.onClose = nil
        cancelTimers()
    }

    /// Sends HELLO.
    func start() {
        send(handshake.start())
    }

    var peerDescription: String {
        guard let peer else { return "link connection #\(serial)" }
        return "\(peer.role.name) '\(peer.deviceId)'"
    }

    /// Ends the link with a GOAWAY naming the reason, then closes once it is written.
    func refuse(_ code: GoAwayCode, _ reason: String) {
        guard !isClosing else { return }
        logger.warning("link: refusing \(peerDescription) (\(code.name)): \(reason)")
        tracer.record(
            .fault,
            [
                "name": "linkRefused", "code": .string(code.name), "reason": .string(TracePreview.clip(reason)),
                "peer": peer.map { .string($0.deviceId) } ?? .null,
            ])
        goAway(code, reason)
    }

    func goAway(_ code: GoAwayCode, _ reason: String) {
        guard !isClosing else { return }
        // A GOAWAY skips the emulated latency: the link is ending now.
        flushDelayed(all: true)
        let frame = Frame.goAway(code: code.rawValue, reason: reason)
        if tracer.isOn { tracer.frame(frame, outgoing: true, peerIndex: tracePeer) }
        if closedBy.isEmpty { closedBy = role.name }
        FrameEncoder.encode(frame, into: &output)
        flush()
        isClosing = true
        cancelTimers()
        // Reported before the connection's own close, which would only say "closed".
        reportClosed("\(code): \(reason)")
        connection.closeAfterFlush()
    }

    func close(reason: String) {
        if closedBy.isEmpty { closedBy = role.name }
        guard connection.isOpen else { reportClosed(reason); return }
        closeNow(reason)
    }

    /// Closes at once, without flushing, and reports why.
    private func closeNow(_ reason: String) {
        isClosing = true
        cancelTimers()
        // Reported before the connection's own close, which would only say "closed".
        reportClosed(reason)
        connection.close()
    }

    // MARK: - Private

    /// Reads the next frames' payloads straight into the arrays the frames will own when the
    /// decoder expects frames like the last large one (in a round trip every frame is the same
    /// size, and in a stream of one-way messages): one `recvmsg` into their heads and payloads,
    /// then into `buffer` (a little of it after more than one frame: what follows a stream's
    /// frames is mostly the next of them, which the next read takes in place).
    override func read(_ fd: Int32, buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        #if DEBUG
        readsRunning += 1
        defer { readsRunning -= 1 }
        #endif
        guard isEstablished, !isClosing, decoder.expectsFrame else {
            guard let count = try Syscall.receive(fd, buffer.baseAddress!, buffer.count) else { return nil }
            if count > 0 { received(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
            return count
        }
        var restCount = buffer.count
        let read = try decoder.readExpectedFrames { parts in
            if parts.count > 2 { restCount = min(restCount, Self.restAfterExpectedFrames) }
            return try withUnsafeTemporaryAllocation(of: iovec.self, capacity: parts.count + 1) { vectors in
                for (index, part) in parts.enumerated() {
                    vectors[index] = iovec(iov_base: part.baseAddress, iov_len: part.count)
                }
                vectors[parts.count] = iovec(iov_base: buffer.baseAddress, iov_len: restCount)
                return try Syscall.receive(fd, vectors: vectors.baseAddress!, Int32(parts.count + 1))
            }
        }
        guard let count = read, count > 0 else { return read }
        tracer.bytesArrived()
        do {
            try decoder.decode(expectedFramesRead: count, rest: UnsafeRawBufferPointer(rebasing: buffer[..<restCount])) { frame in
                self.handle(frame)
            }
        } catch let error as FrameDecodingError {
            refuse(error.goAwayCode, error.description)
        } catch {
            refuse(.protocolError, "\(error)")
        }
        return count
    }

    /// How much of the read buffer a read of more than one expected frame takes after them.
    static let restAfterExpectedFrames = 4096

    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosing else { return }
        tracer.bytesArrived()
        do {
            if isEstablished {
                // The common case: frames straight from the read buffer, no copy.
                try decoder.decode(bytes) { frame in self.handle(frame) }
                return
            }
            decoder.append(bytes)
            // During the handshake the frame limit changes between frames: one at a time.
            while !isClosing, let frame = try decoder.next() {
                guard handle(frame) else { return }
            }
        } catch let error as FrameDecodingError {
            refuse(error.goAwayCode, error.description)
        } catch {
            refuse(.protocolError, "\(error)")
        }
    }

    /// Handles one frame; false once the channel is closing.
    private func handle(_ frame: Frame) -> Bool {
        guard !isClosing else { return false }
        let entry = tracer.isOn ? tracer.frame(frame, outgoing: false, peerIndex: tracePeer) : nil
        return tracer.withCause(entry) { dispatch(frame) }
    }

    private func dispatch(_ frame: Frame) -> Bool {
        guard isEstablished else {
            if case .goAway = frame { closedBy = peer?.role.name ?? "peer" }
            handshakeStep(handshake.receive(frame))
            return !isClosing
        }
        switch frame {
        case .goAway(let code, let reason):
            closedBy = peer?.role.name ?? "peer"
            let name = GoAwayCode(rawValue: code).map { "\($0)" } ?? "code \(code)"
            logger.info("link: \(peerDescription) went away (\(name)): \(reason)")
            closeNow("the \(peer?.role.name ?? "peer") went away (\(name)): \(reason)")
            return false
        case .hello, .auth, .ready:
            refuse(.protocolError, "unexpected \(frame.typeName) frame after the handshake")
            return false
        case .clockSet, .clockAck:
            onEvent?(self, .clock(frame))
            return !isClosing
        default:
            framesReceived &+= 1
            onEvent?(self, .frame(frame))
            return !isClosing
        }
    }

    private func handshakeStep(_ step: LinkHandshake.Step) {
        switch step {
        case .send(let frames):
            for frame in frames { send(frame) }
        case .established(let peer, let version):
            self.peer = peer
            self.version = version
            tracePeer = tracer.peerIndex(peer.deviceId)
            isEstablished = true
            decoder.maximumFrameLength = FrameDecoder.defaultMaximumFrameLength
            if let handshakeTimer { loop.cancel(handshakeTimer) }
            handshakeTimer = nil
            onEvent?(self, .established(peer: peer, version: version))
        case .refuse(let code, let reason):
            refuse(code, reason)
        case .peerRefused(let code, let reason):
            let name = GoAwayCode(rawValue: code).map { "\($0)" } ?? "code \(code)"
            logger.warning("link: refused by the peer (\(name)): \(reason)")
            closeNow("refused by the peer (\(name)): \(reason)")
        }
    }

    private func connectionClosed(_ reason: CloseReason) {
        isClosing = true
        cancelTimers()
        switch reason {
        case .eof:
            if closedBy.isEmpty { closedBy = peer?.role.name ?? "peer" }
            reportClosed("the \(peer?.role.name ?? "peer") closed the connection")
        case .error(let error):
            if closedBy.isEmpty { closedBy = "error" }
            reportClosed("connection error: \(error)")
        case .local:
            if closedBy.isEmpty { closedBy = role.name }
            reportClosed("closed")
        }
    }

    private func reportClosed(_ reason: String) {
        guard !closeReported else { return }
        closeReported = true
        onEvent?(self, .closed(reason: reason))
    }

    private func cancelTimers() {
        if let handshakeTimer { loop.cancel(handshakeTimer) }
        handshakeTimer = nil
        if let delayTimer { loop.cancel(delayTimer) }
        delayTimer = nil
    }
}
