#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkJSON
import LinkRuntime
import LinkSession
import LinkStore
import LinkSystem
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A startup failure, printed as one line naming what was wrong.
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One daemon, `phoned` or `watchd`: the event loop, the link, the control socket and the
/// session, wired together. Everything here runs on the loop's thread.
public final class Daemon {
    let options: DaemonOptions
    let logger: Logger
    let loop: EventLoop
    let control: ControlServer
    private let sessionConfiguration: LinkSession.Configuration
    private let receivedSequence: ReceivedSequence
    /// Every counterpart: the phone on watchd; on phoned each paired watch (and, until the
    /// first watch links, the app's queue that it will take over).
    var peers: [PeerSession] = []
    /// The peer whose session the app works with (control ops, features): the active
    /// watch's, or during a switch the previous watch's until that session deactivates.
    var appPeer: PeerSession
    /// The app's previous session during the turn it moved to the active watch: what it
    /// reported before it deactivated still reaches the app.
    var formerAppPeer: PeerSession?
    /// phoned: the paired watches and the active one.
    var pairedWatches = PairedWatches()
    /// The app's session.
    var session: LinkSession { appPeer.session }
    private(set) var deviceId = ""
    private var pairingKey: [UInt8] = []

    // The link.
    private var linkListener: Int32 = -1
    private var channels: [UInt64: LinkChannel] = [:]
    private var nextChannelSerial: UInt64 = 1
    /// The link of the app's session.
    var activeChannel: LinkChannel? { appPeer.channel }
    private var dirtyChannels: [LinkChannel] = []
    static let linkSendBufferSize: Int32 = 1 << 20
    var linkEnabled = true
    var linkLatencyMilliseconds: Int64 = 0
    private var reconnectTimer: EventLoop.TimerID?
    private var reconnectDelay: Int64 = Daemon.initialReconnectDelay
    private var waitingForKeyLogged = false
    static let initialReconnectDelay: Int64 = 25
    static let maximumReconnectDelay: Int64 = 500

    // Control requests waiting for the session.
    private struct PendingRequest {
        let client: ControlClientConnection
        let id: JSONValue
        let op: String
    }
    private var pendingRequests: [RequestToken: PendingRequest] = [:]
    /// Commands the daemon itself submitted (benchmarks), answered by callback.
    private var internalRequests: [RequestToken: (Result<CommandResult, SessionError>) -> Void] = [:]
    /// Sees every notification the session emits (benchmarks watch `userInfo.didFinish`).
    var notificationObserver: ((SessionNotification) -> Void)?
    private var nextToken: UInt64 = 1
    private var stopping = false

    // The durable stores and group commit.
    /// Actions that wait for the commit of this turn's transactions, with their peer.
    private var deferred: [(PeerSession, SessionAction)] = []
    /// Whether this turn wrote (or failed to write) a store: what follows waits for the commit.
    private var turnWrites = false
    /// After a failed write the link stays down this long, so a full disk does not make the
    /// link flap as fast as the peer can reconnect.
    private var linkHeldUntil: Int64 = 0
    static let linkHoldAfterStoreFailure: Int64 = 1_000
    static let keptReceivedItems = 10_000

    let features: [DaemonFeature]
    private(set) lazy var bench = BenchDriver(daemon: self)
    private var featureByOperation: [String: DaemonFeature] = [:]

    public init(options: DaemonOptions, features: [DaemonFeature] = []) throws {
        self.options = options
        self.features = features
        logger = Logger(label: options.programName, level: options.logLevel)
        loop = try EventLoop(backend: options.poller)
        var configuration = LinkSession.Configuration(role: options.role,
                                                      defaultReplyTimeoutMilliseconds: options.replyTimeoutMilliseconds)
        configuration.receivedListByteCapacity = options.receivedListBytes
        for feature in features { feature.configureSession(&configuration) }
        sessionConfiguration = configuration
        let sequence = ReceivedSequence()
        receivedSequence = sequence
        appPeer = PeerSession(deviceId: nil, session: LinkSession(configuration: configuration, receivedSequence: sequence))
        control = ControlServer(loop: loop, path: options.controlPath, logger: logger)
    }

    public var role: Role { options.role }

    /// Prepares the files and sockets; throws a `StartupError` naming what was wrong.
    public func start() throws {
        try prepareFiles()
        do {
            try control.start()
        } catch {
            throw StartupError("cannot serve the control socket: \(error)")
        }
        control.onRequest = { [unowned self] client, request in self.handleRequest(client, request) }
        control.onClientClosed = { [unowned self] client in self.clientClosed(client) }
        loop.afterTurn { [unowned self] in self.endOfTurn() }
        try loop.onSignals([SIGTERM, SIGINT]) { [unowned self] signal in
            self.logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
            self.stop()
        }
        switch role {
        case .phone:
            do {
                linkListener = try UnixSocket.listen(path: options.linkPath)
            } catch {
                control.stop()
                throw StartupError("cannot listen on the link socket: \(error)")
            }
            try loop.watch(linkListener, events: .readable) { [unowned self] _ in self.acceptLinks() }
        case .watch:
            loop.execute { [unowned self] in self.connectLink() }
        }
        try startFeatures()
        if options.activateOnStart {
            perform(session.handle(.activate, token: RequestToken(0), now: loop.turnMilliseconds), from: appPeer)
        }
        logger.info("\(options.programName) \(DaemonOptions.version) ready: device \(deviceId), home \(options.home), control \(options.controlPath), link \(options.linkPath)")
    }

    private func startFeatures() throws {
        let context = FeatureContext(role: role, loop: loop, logger: logger, home: options.home,
                                     stateDirectory: options.stateDirectory, options: options.featureOptions,
                                     publish: { [unowned self] name, data in self.publish(name, data) },
                                     submit: { [unowned self] command, completion in self.submit(command, completion: completion) },
                                     status: { [unowned self] in self.session.status() })
        for feature in features {
            for operation in feature.operations { featureByOperation[operation] = feature }
            do { try feature.start(context) } catch {
                throw StartupError("\(error)")
            }
        }
    }

    func feature(serving operation: String) -> DaemonFeature? { featureByOperation[operation] }

    /// Runs until `stop()` (SIGTERM, SIGINT or the `shutdown` op).
    public func run() throws {
        try loop.run()
    }

    public func stop() {
        guard !stopping else { return }
        stopping = true
        for channel in channels.values {
            channel.goAway(.shuttingDown, "the \(role.name) is shutting down")
        }
        if linkListener >= 0 {
            loop.unwatch(linkListener)
            _ = SystemCalls.close(linkListener)
            linkListener = -1
            SystemCalls.unlink(options.linkPath)
        }
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        for (_, pending) in pendingRequests {
            pending.client.respond(id: pending.id, error: .control(.shuttingDown, "the daemon is shutting down"))
        }
        pendingRequests.removeAll()
        control.stop()
        for feature in features { feature.stop() }
        for peer in peers {
            guard let store = peer.store else { continue }
            if store.inTransaction {
                do { try store.commit() } catch { store.rollback() }
            }
            store.close()
            peer.store = nil
        }
        loop.stop()
        logger.info("stopped")
    }

    // MARK: - Files

    private func prepareFiles() throws {
        do {
            if try FileSystem.ensurePrivateDirectory(options.home) {
                logger.warning("tightened \(options.home) to mode 0700")
            }
            if try FileSystem.ensurePrivateDirectory(options.stateDirectory) {
                logger.warning("tightened \(options.stateDirectory) to mode 0700")
            }
        } catch {
            throw StartupError("cannot use the WatchLink home: \(error)")
        }
        for (what, path) in [("link socket", options.linkPath), ("control socket", options.controlPath)]
        where path.utf8.count > UnixSocket.maximumPathLength {
            throw StartupError("the \(what) path \(path) is \(path.utf8.count) bytes; Unix socket paths are limited to \(UnixSocket.maximumPathLength) bytes here (use a shorter --home)")
        }
        deviceId = try options.deviceId ?? loadDeviceId()
        if role == .phone {
            pairingKey = try loadOrCreatePairingKey()
        }
        try openStores()
    }

    private func openStores() throws {
        // A file-size limit must surface as a failed write (7015), not kill the daemon.
        SystemCalls.ignoreSignal(SIGXFSZ)
        guard role == .phone else {
            try openStore(of: appPeer, in: options.stateDirectory)
            peers = [appPeer]
            return
        }
        pairedWatches = try loadPairedWatches()
        guard !pairedWatches.watches.isEmpty else {
            try openStore(of: appPeer, in: peerDirectory(""))
            peers = [appPeer]
            return
        }
        for watch in pairedWatches.watches {
            let peer = watch.deviceId == pairedWatches.activeDeviceId ? appPeer : makePeer()
            peer.deviceId = watch.deviceId
            try openStore(of: peer, in: peerDirectory(watch.directory))
            peers.append(peer)
        }
    }

    func makePeer() -> PeerSession {
        PeerSession(deviceId: nil, session: LinkSession(configuration: sessionConfiguration, receivedSequence: receivedSequence))
    }

    /// Opens the store of `peer` in `directory` (`phone.db` or `watch.db`) and its files below
    /// `directory/files`.
    func openStore(of peer: PeerSession, in directory: String) throws {
        do {
            let store = try DeliveryStore(path: directory + (role == .phone ? "/phone.db" : "/watch.db"))
            var state = try store.load()
            try startFileTransfers(&state, of: peer, directory: directory + "/files")
            peer.session.restore(state)
            try store.pruneDelivered(keeping: Daemon.keptReceivedItems)
            peer.store = store
        } catch {
            throw StartupError("cannot use the database: \(error)")
        }
    }

    private func loadDeviceId() throws -> String {
        let path = options.stateDirectory + "/device-id"
        if FileSystem.fileExists(path) {
            let bytes = try FileSystem.readFile(path)
            let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
            if !text.isEmpty, text.utf8.count <= 255, Hello.isValid(deviceId: text) {
                return text
            }
            throw StartupError("\(path) does not hold a device id (1 to 255 bytes of text); remove it to generate a new one")
        }
        let id = "\(role.name)-" + SecureRandom.bytes(4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try FileSystem.writeFileAtomically(path, Array((id + "\n").utf8), mode: 0o600)
        return id
    }

    private func loadOrCreatePairingKey() throws -> [UInt8] {
        let path = options.pairingKeyPath
        if FileSystem.fileExists(path) {
            return try readPairingKey(path)
        }
        let key = SecureRandom.bytes(32)
        do {
            try FileSystem.writeFileAtomically(path, key, mode: 0o600)
        } catch {
            throw StartupError("cannot create the pairing key: \(error)")
        }
        logger.info("created a new pairing key at \(path)")
        return key
    }

    private func readPairingKey(_ path: String) throws -> [UInt8] {
        let key: [UInt8]
        do { key = try FileSystem.readFile(path) } catch {
            throw StartupError("cannot read the pairing key: \(error)")
        }
        guard key.count == 32 else {
            throw StartupError("\(path) is \(key.count) bytes; a pairing key is 32 bytes (remove it to let phoned create a new one)")
        }
        return key
    }

    // MARK: - Link: accepting (phone) and connecting (watch)

    private func acceptLinks() {
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(linkListener) else { return }
                fd = accepted
            } catch {
                logger.warning("link: accept failed: \(error)")
                return
            }
            do {
                let credentials = try UnixSocket.peerCredentials(fd)
                guard credentials.uid == SystemCalls.userID() else {
                    logger.warning("link: refused a connection from uid \(credentials.uid) (only uid \(SystemCalls.userID()) may connect)")
                    _ = SystemCalls.close(fd)
                    continue
                }
                requestLinkSendBuffer(fd)
                let connection = try Connection(loop: loop, fd: fd)
                let channel = makeChannel(connection)
                if !linkEnabled {
                    channel.goAway(.linkDisabled, "the link is down (link.set up=false on the phone)")
                    continue
                }
                if loop.nowMilliseconds < linkHeldUntil {
                    channel.goAway(.linkDisabled, "the phone is resynchronising after a failed write; try again shortly")
                    continue
                }
                channel.start()
            } catch {
                logger.warning("link: could not serve a new connection: \(error)")
                _ = SystemCalls.close(fd)
            }
        }
    }

    /// Asks for a 1 MiB kernel send buffer on a link socket, so that a burst of large frames
    /// goes to the kernel in one `writev` instead of being copied into the connection's queue.
    /// The kernel caps it at `net.core.wmem_max`; a refusal only costs speed.
    private func requestLinkSendBuffer(_ fd: Int32) {
        do {
            try UnixSocket.setSendBufferSize(fd, Daemon.linkSendBufferSize)
        } catch {
            logger.debug("link: could not enlarge the send buffer: \(error)")
        }
    }

    private func connectLink() {
        reconnectTimer = nil
        guard !stopping, linkEnabled, activeChannel == nil, channels.isEmpty else { return }
        let now = loop.nowMilliseconds
        if now < linkHeldUntil {
            scheduleReconnect(after: linkHeldUntil - now)
            return
        }
        if pairingKey.isEmpty {
            guard FileSystem.fileExists(options.pairingKeyPath) else {
                if !waitingForKeyLogged {
                    logger.info("waiting for \(options.pairingKeyPath) (start phoned with the same --home)")
                    waitingForKeyLogged = true
                }
                scheduleReconnect(after: 100)
                return
            }
            do {
                pairingKey = try readPairingKey(options.pairingKeyPath)
            } catch {
                logger.error("\(error)")
                scheduleReconnect(after: 1_000)
                return
            }
        }
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: options.linkPath)
        } catch {
            logger.debug("link: cannot connect to \(options.linkPath): \(error); retrying in \(reconnectDelay) ms")
            scheduleReconnect(after: nextBackoff())
            return
        }
        do {
            requestLinkSendBuffer(fd)
            let connection = try Connection(loop: loop, fd: fd)
            makeChannel(connection).start()
        } catch {
            _ = SystemCalls.close(fd)
            logger.warning("link: \(error)")
            scheduleReconnect(after: nextBackoff())
        }
    }

    private func nextBackoff() -> Int64 {
        let delay = reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, Daemon.maximumReconnectDelay)
        return delay
    }

    private func scheduleReconnect(after milliseconds: Int64) {
        guard role == .watch, !stopping, reconnectTimer == nil else { return }
        reconnectTimer = loop.schedule(afterMilliseconds: milliseconds) { [unowned self] in self.connectLink() }
    }

    @discardableResult
    private func makeChannel(_ connection: Connection) -> LinkChannel {
        let serial = nextChannelSerial
        nextChannelSerial += 1
        let handshake = LinkHandshake(role: role, deviceId: deviceId, key: pairingKey) { [unowned self] peer in
            self.admissionRefusal(peer)
        }
        let channel = LinkChannel(loop: loop, connection: connection, serial: serial, handshake: handshake, logger: logger)
        channel.latencyMilliseconds = linkLatencyMilliseconds
        channel.onDirty = { [unowned self] channel in self.dirtyChannels.append(channel) }
        channel.onEvent = { [unowned self] channel, event in self.channelEvent(channel, event) }
        channels[serial] = channel
        return channel
    }

    /// Whether a peer that proved the pairing key may link: watchd links with one phone;
    /// phoned with each paired watch once, and pairs new ones while there is room.
    private func admissionRefusal(_ hello: Hello) -> (GoAwayCode, String)? {
        guard role == .phone else {
            if let current = appPeer.channel?.peer {
                return (.alreadyConnected, "the watch is linked with phone '\(current.deviceId)' already; refused phone '\(hello.deviceId)'")
            }
            return nil
        }
        if let current = peers.first(where: { $0.deviceId == hello.deviceId }), current.channel != nil {
            return (.alreadyConnected,
                    "the phone is linked with watch '\(hello.deviceId)' already; refused a second link from it")
        }
        if pairedWatches.watch(hello.deviceId) == nil, pairedWatches.watches.count >= PairedWatches.maximumCount {
            return (.alreadyConnected,
                    "the phone has \(PairedWatches.maximumCount) watches paired, as many as it keeps; refused watch '\(hello.deviceId)'")
        }
        return nil
    }

    private func channelEvent(_ channel: LinkChannel, _ event: LinkChannel.Event) {
        switch event {
        case .established(let hello, let version):
            let peer: PeerSession
            do {
                peer = try self.peer(for: hello)
            } catch {
                channel.refuse(.alreadyConnected, "\(error)")
                return
            }
            guard peer.channel == nil else {
                channel.refuse(.alreadyConnected, role == .phone ? "watch \(peer.name) is linked already" : "a phone is linked already")
                return
            }
            peer.channel = channel
            channel.owner = peer
            reconnectDelay = Daemon.initialReconnectDelay
            var note = ""
            if role == .phone {
                note = hello.deviceId == pairedWatches.activeDeviceId ? ", the active watch" : ", a paired watch that is not the active one"
            }
            logger.info("link: up with \(hello.role.name) '\(hello.deviceId)' (protocol version \(version)\(note))")
            publish("link.stateDidChange", ["connected": true, "peerDeviceId": .string(hello.deviceId)])
            perform(peer.session.linkUp(now: loop.turnMilliseconds), from: peer)
        case .frame(let frame):
            guard let peer = channel.owner, peer.channel === channel else { return }
            perform(peer.session.receive(frame, now: loop.turnMilliseconds), from: peer)
        case .closed(let reason):
            channels[channel.serial] = nil
            if let peer = channel.owner, peer.channel === channel {
                peer.channel = nil
                logger.info("link: down\(role == .phone ? " with watch \(peer.name)" : ""): \(reason)")
                var data: JSONObject = ["connected": false, "reason": .string(reason)]
                if let id = channel.peer?.deviceId { data["peerDeviceId"] = .string(id) }
                publish("link.stateDidChange", data)
                perform(peer.session.linkDown(now: loop.turnMilliseconds), from: peer)
            } else {
                logger.debug("link: connection #\(channel.serial) closed: \(reason)")
            }
            if role == .watch, channels.isEmpty, !stopping {
                scheduleReconnect(after: nextBackoff())
            }
        }
    }

    private func flushChannels() {
        guard !dirtyChannels.isEmpty else { return }
        // A flush never marks a channel dirty, so the list can be walked and then emptied in place.
        for channel in dirtyChannels { channel.flush() }
        dirtyChannels.removeAll(keepingCapacity: true)
    }

    /// `link.set`: take the emulated link down (and keep it down) or up, and set its latency.
    func setLink(up: Bool?, latency: Int64?) {
        if let latency {
            linkLatencyMilliseconds = latency
            for channel in channels.values { channel.latencyMilliseconds = latency }
        }
        guard let up, up != linkEnabled else { return }
        linkEnabled = up
        if up {
            logger.info("link: enabled by link.set")
            if role == .watch {
                if let reconnectTimer { loop.cancel(reconnectTimer) }
                reconnectTimer = nil
                reconnectDelay = Daemon.initialReconnectDelay
                connectLink()
            }
        } else {
            logger.info("link: disabled by link.set")
            for channel in channels.values {
                channel.goAway(.linkDisabled, "the link was taken down by link.set on the \(role.name)")
            }
            if let reconnectTimer { loop.cancel(reconnectTimer) }
            reconnectTimer = nil
        }
    }

    // MARK: - Session actions

    /// Performs the actions of `peer`'s session. A `.persist` joins this turn's transaction
    /// on the peer's store; every action after it (of any peer) waits for the turn's commits
    /// (`endOfTurn`), so nothing that depends on a write (an answer, an acknowledgement, an
    /// item on the link) goes out before it is durable.
    func perform(_ actions: [SessionAction], from peer: PeerSession) {
        for action in actions {
            if case .persist(let operation) = action {
                turnWrites = true
                guard peer.turnFailure == nil, let store = peer.store else { continue }
                do { try store.apply(operation) } catch { peer.turnFailure = error }
                continue
            }
            if case .file(let fileAction) = action, fileAction.precedesCommit {
                performFileActionBeforeCommit(fileAction, of: peer)
                continue
            }
            if turnWrites {
                deferred.append((peer, action))
            } else {
                execute(action, from: peer)
            }
        }
        if peer === appPeer, role == .phone, peer.session.activationState == .notActivated,
           peer.deviceId != pairedWatches.activeDeviceId {
            followActiveWatch()
        }
    }

    /// Group commit: one transaction a loop turn on each store written, then what waited
    /// for the commits, then the writes to the sockets.
    private func endOfTurn() {
        for peer in peers {
            perform(peer.session.flushAcknowledgements(), from: peer)
        }
        if turnWrites {
            var failures: [ObjectIdentifier: (SessionError, Error)] = [:]
            for peer in peers {
                guard let store = peer.store, store.inTransaction || peer.turnFailure != nil else { continue }
                var failure = peer.turnFailure
                peer.turnFailure = nil
                if failure == nil {
                    do { try store.commit() } catch { failure = error }
                }
                if let failure {
                    store.rollback()
                    failures[ObjectIdentifier(peer)] = (Self.writeFailure(failure), failure)
                }
            }
            let waiting = deferred
            deferred.removeAll(keepingCapacity: true)
            turnWrites = false
            for (peer, action) in waiting {
                if let (failure, _) = failures[ObjectIdentifier(peer)] {
                    executeAfterFailedWrite(action, failure, from: peer)
                } else {
                    execute(action, from: peer)
                }
            }
            for peer in peers {
                if let (_, error) = failures[ObjectIdentifier(peer)] { storeFailed(peer, error) }
            }
        }
        formerAppPeer = nil
        flushChannels()
    }

    private static func writeFailure(_ error: Error) -> SessionError {
        let diskFull = (error as? SQLiteError)?.isDiskFull ?? (error as? SystemError)?.errno.isNoSpace ?? false
        return diskFull
            ? .wc(.insufficientSpace, "not enough space to store it (\(error)); nothing of this request was kept")
            : .wc(.genericError, "the database write failed (\(error)); nothing of this request was kept")
    }

    /// Fails `peer`'s turn: its writes are rolled back at the turn's end (see `storeFailed`).
    func failTurn(_ error: Error, of peer: PeerSession) {
        turnWrites = true
        if peer.turnFailure == nil { peer.turnFailure = error }
    }

    /// An action of a turn whose writes were rolled back: answers that promised durability
    /// fail (7015 when the disk is full), and what reported an uncommitted write is dropped.
    private func executeAfterFailedWrite(_ action: SessionAction, _ failure: SessionError, from peer: PeerSession) {
        switch action {
        case .respond(let token, .success(let result)) where result.isDurable:
            execute(.respond(token, .failure(failure)), from: peer)
        case .notify(let notification) where notification.isDurable:
            return
        case .send(.item), .send(.ack), .send(.fileChunkAck), .send(.fileCancel), .file:
            return
        default:
            execute(action, from: peer)
        }
    }

    /// A write or commit of `peer`'s store failed: nothing of its turn was kept. Its session
    /// reloads what is committed, and its link restarts so that both sides resume from
    /// committed state.
    private func storeFailed(_ peer: PeerSession, _ error: Error) {
        logger.error("store: a write failed and this turn was rolled back: \(error)")
        do {
            if let store = peer.store {
                var state = try store.load()
                if let files = peer.files {
                    files.reset()
                    try files.recover(&state, removingOrphans: false)
                }
                peer.session.restore(state)
            }
        } catch {
            logger.error("store: cannot reload the committed state: \(error); stopping")
            stop()
            return
        }
        linkHeldUntil = loop.nowMilliseconds + Daemon.linkHoldAfterStoreFailure
        peer.channel?.goAway(.linkDisabled, "the \(role.name) is resynchronising its queues after a failed write")
    }

    private func execute(_ action: SessionAction, from peer: PeerSession) {
        switch action {
        case .send(let frame):
            peer.channel?.send(frame)
        case .respond(let token, let result):
            if let completion = internalRequests.removeValue(forKey: token) {
                completion(result)
                return
            }
            guard let pending = pendingRequests.removeValue(forKey: token) else { return }
            switch result {
            case .success(let value):
                pending.client.respond(id: pending.id, result: ControlOps.render(value, role: role))
            case .failure(let error):
                pending.client.respond(id: pending.id, error: ControlOps.controlError(error))
            }
        case .notify(let notification):
            if case .file(.problem(let text)) = notification { logger.warning("file: \(text)"); return }
            if case .userInfoReceived = notification { noteDelivery(peer) }
            // The app hears from its own session only (a delegate belongs to one session).
            guard peer === appPeer || peer === formerAppPeer else { return }
            notificationObserver?(notification)
            for feature in features { feature.observe(notification) }
            // Rendering costs (base64, property lists): only for someone listening.
            if control.hasSubscribers {
                var (name, data) = ControlOps.render(notification)
                if role == .phone, let watch = peer.deviceId { data["watchDeviceId"] = .string(watch) }
                publish(name, data)
            }
        case .armTimer(let timer, let deadline):
            if let existing = peer.timers[timer] { loop.cancel(existing) }
            let wait = max(0, deadline - loop.turnMilliseconds)
            peer.timers[timer] = loop.schedule(afterMilliseconds: wait) { [unowned self, weak peer] in
                guard let peer else { return }
                peer.timers[timer] = nil
                self.perform(peer.session.timerFired(timer, now: self.loop.turnMilliseconds), from: peer)
            }
        case .cancelTimer(let timer):
            if let existing = peer.timers.removeValue(forKey: timer) { loop.cancel(existing) }
        case .persist:
            break
        case .file(let fileAction):
            executeFileAction(fileAction, of: peer)
        }
    }

    /// Keeps the newest received items in the database and forgets older ones now and then.
    private func noteDelivery(_ peer: PeerSession) {
        peer.deliveriesSincePrune += 1
        guard peer.deliveriesSincePrune >= 1_000, let store = peer.store else { return }
        peer.deliveriesSincePrune = 0
        do { try store.pruneDelivered(keeping: Daemon.keptReceivedItems) } catch {
            logger.warning("store: could not prune old received items: \(error)")
        }
    }

    func publish(_ name: String, _ data: JSONObject) {
        logger.debug("event \(name)")
        guard control.hasSubscribers else { return }
        control.broadcast(ControlCodec.event(name: name, at: Date(), data: data))
    }

    // MARK: - Control requests

    /// Hands a command to the app's session; the response goes out when the session answers.
    func submit(_ command: SessionCommand, client: ControlClientConnection, request: ControlRequest) {
        let token = RequestToken(nextToken)
        nextToken += 1
        pendingRequests[token] = PendingRequest(client: client, id: request.id, op: request.op)
        handle(command, token: token)
    }

    /// Submits a command on the daemon's own behalf; `completion` gets the session's answer.
    func submit(_ command: SessionCommand, completion: @escaping (Result<CommandResult, SessionError>) -> Void) {
        let token = RequestToken(nextToken)
        nextToken += 1
        internalRequests[token] = completion
        handle(command, token: token)
    }

    private func handle(_ command: SessionCommand, token: RequestToken) {
        let app = appPeer
        if case .reply(let replyId, _) = command, !app.session.awaitsReply(replyId),
           let sender = peers.first(where: { $0.session.awaitsReply(replyId) }) {
            // A message of the previous watch, answered after a switch.
            perform(sender.session.handle(command, token: token, now: loop.turnMilliseconds), from: sender)
            return
        }
        perform(app.session.handle(command, token: token, now: loop.turnMilliseconds), from: app)
        switch command {
        case .setAppState, .setDeviceFlags, .setReplies:
            // The app's state, the device flags and the reply behaviour belong to the phone,
            // not to one watch: every watch's session takes them.
            for peer in peers where peer !== app {
                perform(peer.session.adoptSettings(from: app.session), from: peer)
            }
        default:
            break
        }
    }

    private func handleRequest(_ client: ControlClientConnection, _ request: ControlRequest) {
        logger.trace("control #\(client.serial): \(request.op)")
        guard !stopping else {
            client.respond(id: request.id, error: .control(.shuttingDown, "the daemon is shutting down"))
            return
        }
        do {
            try ControlOps.dispatch(request, client: client, daemon: self)
        } catch let error as ControlError {
            client.respond(id: request.id, error: error)
        } catch let error as SessionError {
            client.respond(id: request.id, error: ControlOps.controlError(error))
        } catch {
            client.respond(id: request.id, error: .control(.internalError, "\(request.op): \(error)"))
        }
    }

    private func clientClosed(_ client: ControlClientConnection) {
        logger.debug("control: client #\(client.serial) disconnected")
        // Answers to its requests have nowhere to go; the session still completes them.
    }

    /// `received.list`: immediate messages from memory and queued items from the database,
    /// merged by `seq`, oldest first.
    /// On phoned the items of every watch are merged (they share one `seq` counter), each
    /// naming its watch.
    func receivedList(after: UInt64, limit: Int) throws -> JSONObject {
        var items: [(UInt64, JSONObject)] = []
        for peer in peers {
            let messages = peer.session.receivedMessages(after: after)
            let stored = try peer.store?.deliveredItems(after: after, limit: limit + 1).filter { !$0.flags.contains(.system) } ?? []
            var rendered = messages.map { ($0.seq, ControlOps.render($0)) } + stored.map { ($0.seq, ControlOps.render($0)) }
            if role == .phone, let watch = peer.deviceId {
                for index in rendered.indices { rendered[index].1["watchDeviceId"] = .string(watch) }
            }
            items += rendered
        }
        items.sort { $0.0 < $1.0 }
        var result: JSONObject = ["items": .array(items.prefix(limit).map { .object($0.1) })]
        if items.count > limit { result["more"] = true }
        return result
    }

    // MARK: - Status

    func statusResult() -> JSONObject {
        let status = session.status()
        var link: JSONObject = ["connected": .bool(status.linkConnected), "up": .bool(linkEnabled),
                                "latencyMs": .int(linkLatencyMilliseconds)]
        if let peer = activeChannel?.peer { link["peerDeviceId"] = .string(peer.deviceId) }
        var result: JSONObject = [
            "role": .string(role.name),
            "version": .string(DaemonOptions.version),
            "deviceId": .string(deviceId),
            "activationState": .string(status.activationState.name),
            "isReachable": .bool(status.isReachable),
            "appState": .string(status.appState.name),
            "link": .object(link),
            "hasContentPending": .bool(status.hasContentPending),
        ]
        for flag in DeviceFlagName.owned(by: role) {
            result[flag.rawValue] = .bool(status.flags.contains(flag.flag))
        }
        result["outstandingUserInfoTransfers"] = .int(Int64(status.outstandingUserInfoTransfers))
        result["outstandingFileTransfers"] = .int(Int64(status.outstandingFileTransfers))
        if let remaining = status.remainingComplicationUserInfoTransfers {
            result["remainingComplicationUserInfoTransfers"] = .int(Int64(remaining))
        }
        if !status.isReachable { result["unreachableReason"] = .string(session.unreachableReason) }
        result["replyMode"] = .string(session.replies.mode.rawValue)
        if role == .phone { addWatchStatus(to: &result) }
        for feature in features { feature.addStatus(to: &result) }
        return result
    }
}
