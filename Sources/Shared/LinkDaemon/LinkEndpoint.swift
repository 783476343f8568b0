import LinkCollections
import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol

/// The emulated Bluetooth link: phoned listens on `link.sock` and admits paired watches,
/// watchd connects with capped backoff. Each connection is a `LinkChannel`; once its
/// handshake is done it belongs to a peer, whose session hears of it (link up, frames,
/// link down).
final class LinkEndpoint {
    private let options: DaemonOptions
    private let logger: Logger
    private let loop: EventLoop
    private let home: DaemonHome
    private let directory: PeerDirectory
    private let committer: TurnCommitter
    private let tracer: Tracer
    private let publish: (String, JSONObject) -> Void

    private var listener: Int32 = -1
    private var channels: [UInt64: LinkChannel] = [:]
    private var nextChannelSerial: UInt64 = 1
    private var dirtyChannels: [LinkChannel] = []
    /// The channels closed this turn, held until its end. A channel closes from inside its own
    /// calls (a read that finds garbage sends a GOAWAY and reports the link closed), and
    /// neither its connection (`Connection.reader`) nor its callbacks here take a reference
    /// to it for a call: dropped at once, it would be freed under its own feet.
    private var closedChannels: [LinkChannel] = []
    private var reconnectTimer: EventLoop.TimerID?
    private var backoff = ReconnectBackoff()
    private var stopping = false
    /// After a failed write the link stays down this long, so a full disk does not make the
    /// link flap as fast as the peer can reconnect.
    private var heldUntil: Int64 = 0

    /// The pair's clock: told of links up and down, given the clock frames.
    var clock: PairClock?

    private(set) var isEnabled = true
    private(set) var latencyMilliseconds: Int64 = 0

    static let sendBufferSize: Int32 = 1 << 20
    static let holdAfterStoreFailure: Int64 = 1_000

    init(
        options: DaemonOptions, logger: Logger, loop: EventLoop, home: DaemonHome, directory: PeerDirectory,
        committer: TurnCommitter, tracer: Tracer, publish: @escaping (String, JSONObject) -> Void
    ) {
        self.tracer = tracer
        self.options = options
        self.logger = logger
        self.loop = loop
        self.home = home
        self.directory = directory
        self.committer = committer
        self.publish = publish
    }

    private var role: Role { options.role }

    /// phoned listens; watchd starts connecting.
    func start() throws {
        switch role {
        case .phone:
            do { listener = try UnixSocket.listen(path: options.linkPath) } catch {
                throw StartupError("cannot listen on the link socket: \(error)")
            }
            try loop.watch(listener, events: .readable) { [unowned self] _ in self.acceptAll() }
        case .watch:
            loop.execute { [unowned self] in self.connect() }
        }
    }

    func stop() {
        stopping = true
        for channel in channels.values {
            channel.goAway(.shuttingDown, "the \(role.name) is shutting down")
        }
        if listener >= 0 {
            loop.unwatch(listener)
            _ = SystemCalls.close(listener)
            listener = -1
            SystemCalls.unlink(options.linkPath)
        }
        if let reconnectTimer { loop.cancel(reconnectTimer) }
    }

    /// Writes what the channels queued this turn.
    func flush() {
        if !dirtyChannels.isEmpty {
            // A flush never marks a channel dirty, so the list can be walked and then emptied in place.
            for channel in dirtyChannels { channel.flush() }
            dirtyChannels.removeAllKeepingStorage()
        }
        // The turn's calls have returned: the channels closed in it can go.
        if !closedChannels.isEmpty { closedChannels.removeAll() }
    }

    /// A peer's turn was rolled back: its link restarts, after a pause, from committed state.
    func resynchronize(_ peer: PeerSession) {
        heldUntil = loop.realMilliseconds + Self.holdAfterStoreFailure
        peer.channel?.goAway(.linkDisabled, "the \(role.name) is resynchronising its queues after a failed write")
    }

    /// `link.set`: take the emulated link down (and keep it down) or up, and set its latency.
    func set(up: Bool?, latency: Int64?) {
        if let latency {
            latencyMilliseconds = latency
            for channel in channels.values { channel.latencyMilliseconds = latency }
            tracer.record(.link, ["name": "latency", "latencyMs": .int(latency)])
        }
        guard let up, up != isEnabled else { return }
        isEnabled = up
        logger.info("link: \(up ? "enabled" : "disabled") by link.set")
        tracer.record(.link, ["name": .string(up ? "enabled" : "disabled")])
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = nil
        if up {
            guard role == .watch else { return }
            backoff.reset()
            connect()
        } else {
            for channel in channels.values {
                channel.goAway(.linkDisabled, "the link was taken down by link.set on the \(role.name)")
            }
        }
    }

    // MARK: - phoned: accepting

    private func acceptAll() {
        do {
            try UnixSocket.acceptPending(
                listener,
                refuse: { _, uid in
                    logger.warning("link: refused a connection from uid \(uid) (only uid \(SystemCalls.userID()) may connect)")
                }, serve: serve)
        } catch {
            logger.warning("link: accept failed: \(error)")
        }
    }

    private func serve(_ fd: Int32) {
        do {
            requestSendBuffer(fd)
            let channel = makeChannel(try Connection(loop: loop, fd: fd))
            if !isEnabled {
                channel.goAway(.linkDisabled, "the link is down (link.set up=false on the phone)")
            } else if loop.realMilliseconds < heldUntil {
                channel.goAway(.linkDisabled, "the phone is resynchronising after a failed write; try again shortly")
            } else {
                channel.start()
            }
        } catch {
            logger.warning("link: could not serve a new connection: \(error)")
            _ = SystemCalls.close(fd)
        }
    }

    // MARK: - watchd: connecting

    private func connect() {
        reconnectTimer = nil
        guard !stopping, isEnabled, directory.appPeer.channel == nil, channels.isEmpty else { return }
        let now = loop.realMilliseconds
        if now < heldUntil { return scheduleReconnect(after: heldUntil - now) }
        switch home.pairingKeyState() {
        case .ready: break
        case .waiting: return scheduleReconnect(after: 100)
        case .unreadable(let error):
            logger.error("\(error)")
            return scheduleReconnect(after: 1_000)
        }
        let fd: Int32
        do { fd = try UnixSocket.connect(path: options.linkPath) } catch {
            logger.debug("link: cannot connect to \(options.linkPath): \(error); retrying in \(backoff.upcoming) ms")
            return scheduleReconnect(after: backoff.nextDelay())
        }
        do {
            requestSendBuffer(fd)
            makeChannel(try Connection(loop: loop, fd: fd)).start()
        } catch {
            _ = SystemCalls.close(fd)
            logger.warning("link: \(error)")
            scheduleReconnect(after: backoff.nextDelay())
        }
    }

    private func scheduleReconnect(after milliseconds: Int64) {
        guard role == .watch, !stopping, reconnectTimer == nil else { return }
        // Plumbing, in real time: a watch reconnects while a manual clock stands still.
        reconnectTimer = loop.schedule(afterMilliseconds: milliseconds, on: .realTime) { [unowned self] in self.connect() }
    }

    /// Asks for a 1 MiB kernel send buffer on a link socket, so that a burst of large frames
    /// goes to the kernel in one `sendmsg` instead of being copied into the connection's queue.
    /// The kernel caps it at `net.core.wmem_max`; a refusal only costs speed.
    private func requestSendBuffer(_ fd: Int32) {
        do { try UnixSocket.setSendBufferSize(fd, Self.sendBufferSize) } catch {
            logger.debug("link: could not enlarge the send buffer: \(error)")
        }
    }

    // MARK: - Channels

    @discardableResult
    private func makeChannel(_ connection: Connection) -> LinkChannel {
        let serial = nextChannelSerial
        nextChannelSerial += 1
        let handshake = LinkHandshake(role: role, deviceId: home.deviceId, key: home.pairingKey) { [unowned self] hello in
            LinkAdmission.refusal(of: hello, in: self.admissionSituation)
        }
        let channel = LinkChannel(
            loop: loop, connection: connection, serial: serial, handshake: handshake, role: role,
            logger: logger, tracer: tracer)
        channel.latencyMilliseconds = latencyMilliseconds
        // No reference taken: the endpoint holds its channels and lives as long as the daemon,
        // and these run at every frame (an unowned self is a retain and a release each time).
        let endpoint = Unmanaged.passUnretained(self)
        channel.onDirty = { channel in endpoint._withUnsafeGuaranteedRef { $0.dirtyChannels.append(channel) } }
        channel.onEvent = { channel, event in endpoint._withUnsafeGuaranteedRef { $0.channelEvent(channel, event) } }
        channels[serial] = channel
        return channel
    }

    private var admissionSituation: LinkAdmission.Situation {
        LinkAdmission.Situation(
            role: role, linkedPhone: directory.appPeer.channel?.peer?.deviceId,
            linkedWatches: Set(directory.peers.compactMap { $0.channel == nil ? nil : $0.deviceId }),
            pairedWatches: Set(directory.pairedWatches.watches.map(\.deviceId)),
            clockIsManual: loop.clock.isManual)
    }

    private func channelEvent(_ channel: LinkChannel, _ event: LinkChannel.Event) {
        switch event {
        case .established(let hello, let version):
            established(channel, hello, version)
        case .frame(let frame):
            channel.withOwner { peer in
                guard peer.channel === channel else { return }
                committer.perform(peer.session.receive(frame, now: loop.turnMilliseconds), from: peer)
            }
        case .clock(let frame):
            guard let peer = channel.owner, peer.channel === channel else { return }
            clock?.received(frame, on: channel, peer: peer)
        case .closed(let reason):
            channels[channel.serial] = nil
            closedChannels.append(channel)
            if let peer = channel.owner, peer.channel === channel {
                peer.channel = nil
                clock?.linkDown(channel)
                logger.info("link: down\(role == .phone ? " with watch \(peer.name)" : ""): \(reason)")
                var data: JSONObject = ["connected": false, "reason": .string(reason)]
                if let id = channel.peer?.deviceId { data["peerDeviceId"] = .string(id) }
                publish("link.stateDidChange", data)
                let entry = tracer.record(
                    .link,
                    [
                        "name": "down", "peer": channel.peer.map { .string($0.deviceId) } ?? .null,
                        "by": .string(channel.closedBy), "reason": .string(TracePreview.clip(reason)),
                    ])
                tracer.withCause(entry) {
                    committer.perform(peer.session.linkDown(now: loop.turnMilliseconds), from: peer)
                }
            } else {
                logger.debug("link: connection #\(channel.serial) closed: \(reason)")
            }
            if role == .watch, channels.isEmpty, !stopping {
                scheduleReconnect(after: backoff.nextDelay())
            }
        }
    }

    private func established(_ channel: LinkChannel, _ hello: Hello, _ version: UInt16) {
        let peer: PeerSession
        do { peer = try directory.peer(for: hello) } catch {
            channel.refuse(.alreadyConnected, "\(error)")
            return
        }
        guard peer.channel == nil else {
            channel.refuse(.alreadyConnected, role == .phone ? "watch \(peer.name) is linked already" : "a phone is linked already")
            return
        }
        peer.channel = channel
        channel.owner = peer
        backoff.reset()
        var note = ""
        if role == .phone {
            note = hello.deviceId == directory.pairedWatches.activeDeviceId ? ", the active watch" : ", a paired watch that is not the active one"
        }
        logger.info("link: up with \(hello.role.name) '\(hello.deviceId)' (protocol version \(version)\(note))")
        publish("link.stateDidChange", ["connected": true, "peerDeviceId": .string(hello.deviceId)])
        let entry = tracer.record(.link, ["name": "up", "peer": .string(hello.deviceId), "version": .int(Int64(version))])
        tracer.withCause(entry) {
            // The clock first: a watch follows it before the session's frames arrive.
            clock?.linkUp(channel)
            committer.perform(peer.session.linkUp(now: loop.turnMilliseconds), from: peer)
        }
    }
}
