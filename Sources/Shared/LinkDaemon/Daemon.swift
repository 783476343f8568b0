#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkRuntime
import LinkSession
import LinkStore
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
    let session: LinkSession
    let control: ControlServer
    private(set) var deviceId = ""
    private var pairingKey: [UInt8] = []

    // The link.
    private var linkListener: Int32 = -1
    private var channels: [UInt64: LinkChannel] = [:]
    private var nextChannelSerial: UInt64 = 1
    private(set) var activeChannel: LinkChannel?
    private var dirtyChannels: [LinkChannel] = []
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
    private var sessionTimers: [SessionTimer: EventLoop.TimerID] = [:]
    private var stopping = false

    // The durable store and group commit.
    private(set) var store: DeliveryStore?
    /// Actions that wait for the commit of this turn's transaction.
    private var deferred: [SessionAction] = []
    /// The first write of this turn that failed; the whole turn is rolled back.
    private var turnFailure: Error?
    private var deliveriesSincePrune = 0
    /// After a failed write the link stays down this long, so a full disk does not make the
    /// link flap as fast as the peer can reconnect.
    private var linkHeldUntil: Int64 = 0
    static let linkHoldAfterStoreFailure: Int64 = 1_000
    static let keptReceivedItems = 10_000

    let features: [DaemonFeature]
    /// Performs the file work of transfers (`file.*`); see Daemon+Files.swift.
    private(set) lazy var files = FileTransferEngine(loop: loop, logger: logger,
                                                     paths: FilePaths(root: session.configuration.fileDirectory))
    private(set) lazy var bench = BenchDriver(daemon: self)
    private var featureByOperation: [String: DaemonFeature] = [:]

    public init(options: DaemonOptions, features: [DaemonFeature] = []) throws {
        self.options = options
        self.features = features
        logger = Logger(label: options.programName, level: options.logLevel)
        loop = try EventLoop(backend: options.poller)
        var configuration = LinkSession.Configuration(role: options.role,
                                                      defaultReplyTimeoutMilliseconds: options.replyTimeoutMilliseconds)
        configuration.fileDirectory = options.stateDirectory + "/files"
        for feature in features { feature.configureSession(&configuration) }
        session = LinkSession(configuration: configuration)
        control = ControlServer(loop: loop, path: options.controlPath, logger: logger)
    }

    public var role: Role { options.role }
    var peerName: String { role == .phone ? "watch" : "phone" }

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
            perform(session.handle(.activate, token: RequestToken(0), now: loop.turnMilliseconds))
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
            unlink(options.linkPath)
        }
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        for (_, pending) in pendingRequests {
            pending.client.respond(id: pending.id, error: .control(.shuttingDown, "the daemon is shutting down"))
        }
        pendingRequests.removeAll()
        control.stop()
        for feature in features { feature.stop() }
        if let store {
            if store.inTransaction {
                do { try store.commit() } catch { store.rollback() }
            }
            store.close()
            self.store = nil
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
        try openStore()
    }

    private func openStore() throws {
        // A file-size limit must surface as a failed write (7015), not kill the daemon.
        signal(SIGXFSZ, SIG_IGN)
        let path = options.stateDirectory + (role == .phone ? "/phone.db" : "/watch.db")
        do {
            let store = try DeliveryStore(path: path)
            var state = try store.load()
            try startFileTransfers(&state)
            session.restore(state)
            try store.pruneDelivered(keeping: Daemon.keptReceivedItems)
            self.store = store
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
                guard credentials.uid == getuid() else {
                    logger.warning("link: refused a connection from uid \(credentials.uid) (only uid \(getuid()) may connect)")
                    _ = SystemCalls.close(fd)
                    continue
                }
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
            if let active = self.activeChannel, let current = active.peer {
                return (.alreadyConnected,
                        "the phone is linked with watch '\(current.deviceId)' already; refused watch '\(peer.deviceId)'")
            }
            return nil
        }
        let channel = LinkChannel(loop: loop, connection: connection, serial: serial, handshake: handshake, logger: logger)
        channel.latencyMilliseconds = linkLatencyMilliseconds
        channel.onDirty = { [unowned self] channel in self.dirtyChannels.append(channel) }
        channel.onEvent = { [unowned self] channel, event in self.channelEvent(channel, event) }
        channels[serial] = channel
        return channel
    }

    private func channelEvent(_ channel: LinkChannel, _ event: LinkChannel.Event) {
        switch event {
        case .established(let peer, let version):
            if activeChannel != nil {
                channel.refuse(.alreadyConnected, "a \(peerName) is linked already")
                return
            }
            activeChannel = channel
            reconnectDelay = Daemon.initialReconnectDelay
            logger.info("link: up with \(peer.role.name) '\(peer.deviceId)' (protocol version \(version))")
            publish("link.stateDidChange", ["connected": true, "peerDeviceId": .string(peer.deviceId)])
            perform(session.linkUp(now: loop.turnMilliseconds))
        case .frame(let frame):
            guard channel === activeChannel else { return }
            perform(session.receive(frame, now: loop.turnMilliseconds))
        case .closed(let reason):
            channels[channel.serial] = nil
            if channel === activeChannel {
                activeChannel = nil
                logger.info("link: down: \(reason)")
                publish("link.stateDidChange", ["connected": false, "reason": .string(reason)])
                perform(session.linkDown(now: loop.turnMilliseconds))
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
        let dirty = dirtyChannels
        dirtyChannels.removeAll(keepingCapacity: true)
        for channel in dirty { channel.flush() }
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

    /// Performs the session's actions. A `.persist` joins this turn's transaction; every
    /// action after it waits for that commit (`endOfTurn`), so nothing that depends on a
    /// write (an answer, an acknowledgement, an item on the link) goes out before it is durable.
    func perform(_ actions: [SessionAction]) {
        for action in actions {
            if case .persist(let operation) = action {
                guard turnFailure == nil, let store else { continue }
                do { try store.apply(operation) } catch { turnFailure = error }
                continue
            }
            if case .file(let fileAction) = action, fileAction.precedesCommit {
                performFileActionBeforeCommit(fileAction, turnFailed: turnFailure != nil)
                continue
            }
            if turnFailure != nil || store?.inTransaction == true {
                deferred.append(action)
            } else {
                execute(action)
            }
        }
    }

    /// Group commit: one transaction a loop turn, then what waited for it, then the writes.
    private func endOfTurn() {
        perform(session.flushAcknowledgements())
        if let store, store.inTransaction || turnFailure != nil {
            var failure = turnFailure
            if failure == nil {
                do { try store.commit() } catch { failure = error }
            }
            let waiting = deferred
            deferred.removeAll(keepingCapacity: true)
            turnFailure = nil
            if let failure {
                store.rollback()
                storeFailed(failure, waiting: waiting)
            } else {
                for action in waiting { execute(action) }
            }
        }
        flushChannels()
    }

    /// Fails the current turn: its writes are rolled back at its end (see `storeFailed`).
    func failTurn(_ error: Error) {
        if turnFailure == nil { turnFailure = error }
    }

    /// A write or commit failed: nothing of the turn was kept. Answers that promised
    /// durability fail (7015 when the disk is full), the session reloads what is committed,
    /// and the link restarts so that both sides resume from committed state.
    private func storeFailed(_ error: Error, waiting: [SessionAction]) {
        let diskFull = (error as? SQLiteError)?.isDiskFull ?? (error as? SystemError)?.errno.isNoSpace ?? false
        logger.error("store: a write failed and this turn was rolled back: \(error)")
        let failure: SessionError = diskFull
            ? .wc(.insufficientSpace, "not enough space to store it (\(error)); nothing of this request was kept")
            : .wc(.genericError, "the database write failed (\(error)); nothing of this request was kept")
        for action in waiting {
            switch action {
            case .respond(let token, .success(let result)) where result.isDurable:
                execute(.respond(token, .failure(failure)))
            case .notify(let notification) where notification.isDurable:
                continue
            case .send(.item), .send(.ack), .send(.fileChunkAck), .send(.fileCancel), .file:
                continue
            default:
                execute(action)
            }
        }
        do {
            if let store {
                var state = try store.load()
                files.reset()
                try files.recover(&state, removingOrphans: false)
                session.restore(state)
            }
        } catch {
            logger.error("store: cannot reload the committed state: \(error); stopping")
            stop()
            return
        }
        linkHeldUntil = loop.nowMilliseconds + Daemon.linkHoldAfterStoreFailure
        activeChannel?.goAway(.linkDisabled, "the \(role.name) is resynchronising its queues after a failed write")
    }

    private func execute(_ action: SessionAction) {
        switch action {
        case .send(let frame):
            activeChannel?.send(frame)
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
            if case .userInfoReceived = notification { noteDelivery() }
            notificationObserver?(notification)
            for feature in features { feature.observe(notification) }
            // Rendering costs (base64, property lists): only for someone listening.
            guard control.hasSubscribers else { return }
            let (name, data) = ControlOps.render(notification)
            publish(name, data)
        case .armTimer(let timer, let deadline):
            if let existing = sessionTimers[timer] { loop.cancel(existing) }
            let wait = max(0, deadline - loop.turnMilliseconds)
            sessionTimers[timer] = loop.schedule(afterMilliseconds: wait) { [unowned self] in
                self.sessionTimers[timer] = nil
                self.perform(self.session.timerFired(timer, now: self.loop.turnMilliseconds))
            }
        case .cancelTimer(let timer):
            if let existing = sessionTimers.removeValue(forKey: timer) { loop.cancel(existing) }
        case .persist:
            break
        case .file(let fileAction):
            executeFileAction(fileAction)
        }
    }

    /// Keeps the newest received items in the database and forgets older ones now and then.
    private func noteDelivery() {
        deliveriesSincePrune += 1
        guard deliveriesSincePrune >= 1_000, let store else { return }
        deliveriesSincePrune = 0
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

    /// Hands a command to the session; the response goes out when the session answers.
    func submit(_ command: SessionCommand, client: ControlClientConnection, request: ControlRequest) {
        let token = RequestToken(nextToken)
        nextToken += 1
        pendingRequests[token] = PendingRequest(client: client, id: request.id, op: request.op)
        perform(session.handle(command, token: token, now: loop.turnMilliseconds))
    }

    /// Submits a command on the daemon's own behalf; `completion` gets the session's answer.
    func submit(_ command: SessionCommand, completion: @escaping (Result<CommandResult, SessionError>) -> Void) {
        let token = RequestToken(nextToken)
        nextToken += 1
        internalRequests[token] = completion
        perform(session.handle(command, token: token, now: loop.turnMilliseconds))
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
    func receivedList(after: UInt64, limit: Int) throws -> JSONObject {
        let messages = session.receivedMessages(after: after)
        let stored = try store?.deliveredItems(after: after, limit: limit + 1).filter { !$0.flags.contains(.system) } ?? []
        var items: [(UInt64, JSONObject)] = messages.map { ($0.seq, ControlOps.render($0)) }
        items += stored.map { ($0.seq, ControlOps.render($0)) }
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
        for feature in features { feature.addStatus(to: &result) }
        return result
    }
}
