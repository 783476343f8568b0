import LinkDaemon
import LinkSession
import LinkStore
import WireProtocol

/// One device of the simulated pair: its session, the daemon's real group commit
/// (``TurnCommitter``) over a ``ModelStore``, its files and timers. The store and the files
/// outlive a crash; everything else is made again at each start, as a restarted daemon does.
final class SimNode {
    let role: Role
    unowned let world: SimWorld
    let store: ModelStore
    var files = ModelFiles()
    private(set) var peer: PeerSession
    private(set) var committer: TurnCommitter
    /// Counts the node's starts; events of an earlier incarnation are ignored.
    private(set) var incarnation = 0
    var isUp = true
    /// Set inside a turn when the process dies at its commit: nothing more of the turn happens.
    private(set) var dying = false
    /// Whether this turn's commit succeeded before the process died (its deferred actions are
    /// then true facts nobody heard of).
    private(set) var diedAfterCommit = false
    var connection: SimConnection?
    var timers: [SessionTimer: Int64] = [:]
    /// The frames this turn sends, written to the link together at its end.
    private var outgoing: [UInt8] = []
    private var outgoingCarriesFileChunk = false
    /// Transfer ids continue across starts (they name files).
    private let transferIds: TransferIdSource
    /// Set by the fault injector: the process dies at the next commit.
    var crashAtNextCommit: ModelStore.CommitOutcome = .proceed
    /// Set by the world: store calls may fail.
    var storeFaultRate = 0.0
    /// Frames this node's turn handled (for the coverage of multi-frame turns).
    private(set) var framesThisTurn = 0
    /// The app process attached to this side (`app.attach`), as the world knows it: it is
    /// handed received items and acknowledges them, answers messages, and may quit. It goes
    /// with the daemon's process.
    var app: AttachedApp?
    private var attachments = 0
    /// Set when this turn's writes failed and were rolled back.
    private var turnRolledBack = false
    /// The watch's OS and its installed app, in worlds where the watch app is a program.
    private(set) var watchApp: SimWatchApp?
    /// In a world on SQLite: the daemon's store on the node's disk (``store`` then holds what
    /// it committed, for the checks).
    var sqlite: SimSQLiteStore?
    /// The store the session uses.
    var durableStore: any DurableStore { sqlite ?? store }
    /// Set when a commit decided how its process dies.
    var dyingByPowerCut: Bool?

    struct AttachedApp {
        let number: Int
        /// The highest `seq` handed to this app process (items and finished transfers).
        var handedUpTo: UInt64 = 0
        /// Messages waiting for this app's reply: reply id to the message's number.
        var awaiting: [UInt64: Int] = [:]
    }

    final class TransferIdSource: @unchecked Sendable {
        let prefix: String
        var next = 1
        init(prefix: String) { self.prefix = prefix }
        func make() -> String {
            defer { next += 1 }
            return "\(prefix)-\(next)"
        }
    }

    init(role: Role, world: SimWorld, recorder: ((Role, ModelStore.Call) -> Void)?) {
        self.role = role
        self.world = world
        store = ModelStore(path: role == .phone ? "phone.db" : "watch.db")
        if let recorder { store.recorder = { recorder(role, $0) } }
        transferIds = TransferIdSource(prefix: role == .phone ? "P" : "W")
        peer = PeerSession(deviceId: nil, session: LinkSession(configuration: LinkSession.Configuration(role: role)))
        committer = TurnCommitter(peers: { [] })
        store.fault = { [unowned self] call in
            guard self.storeFaultRate > 0, self.world.random.chance(self.storeFaultRate) else { return nil }
            let full = self.world.random.chance(0.5)
            self.world.coverage.count(full ? .storeFull : .storeIOError)
            self.world.trace("\(self.role.name) store \(call) fails (\(full ? "ENOSPC" : "EIO"))")
            return full ? ModelStore.diskFull(call, path: self.store.path) : ModelStore.ioError(call, path: self.store.path)
        }
        store.commitHook = { [unowned self] in
            let outcome = self.crashAtNextCommit
            self.crashAtNextCommit = .proceed
            switch outcome {
            case .proceed: break
            case .crashBefore: self.dying = true
            case .crashAfter:
                self.dying = true
                self.diedAfterCommit = true
            }
            return outcome
        }
        if role == .watch, world.options.watchAppInstalled { watchApp = SimWatchApp(node: self) }
        if world.options.onSQLite {
            // The first start, which creates the database, is an event of the world's (traced).
            sqlite = makeSQLiteStore()
            isUp = false
            world.schedule(.restart(role), at: 0)
        } else {
            start()
        }
    }

    private func makeSession() -> LinkSession {
        var configuration = LinkSession.Configuration(role: role)
        let world = self.world
        let base = world.wallClockBase
        let clock = world.clockBox
        configuration.wallClock = { base + Double(clock.now) / 1000 }
        let ids = transferIds
        configuration.makeTransferId = { ids.make() }
        let options = world.options
        if !options.shippedLimits {
            // Small limits reach edge states; worlds on the shipped limits keep the session's
            // own, so that a changed default shows in their checks.
            configuration.maximumItemsInFlight = options.maximumItemsInFlight
            configuration.fileChunkLength = options.fileChunkLength
            configuration.fileWindowBytes = options.fileWindowBytes
            configuration.fileCommitInterval = options.fileCommitInterval
        }
        configuration.launchPolicy = BackgroundLaunchPolicy(mode: .watch, seed: options.launchSeed)
        if let weather = world.reachability.weather(for: role) { configuration.weather = weather }
        return LinkSession(configuration: configuration)
    }

    /// Starts the daemon: store loaded, files recovered, the session restored and activated.
    /// False when the store did not open (the process exited).
    @discardableResult
    func start() -> Bool {
        incarnation += 1
        app = nil
        isUp = true
        dying = false
        diedAfterCommit = false
        timers.removeAll()
        outgoing.removeAll()
        connection = nil
        store.crash()
        if let sqlite, !open(sqlite) { return false }
        peer = PeerSession(deviceId: nil, session: makeSession())
        peer.store = durableStore
        world.reachability.sessionMade(self)
        let peer = self.peer
        committer = TurnCommitter(peers: { [peer] })
        committer.execute = { [unowned self] action, _ in self.execute(action) }
        committer.performBeforeCommit = { [unowned self] action, _ in
            guard !self.dying else { return }
            self.performFile(action)
        }
        committer.storeFailed = { [unowned self] _, error in self.storeFailed(error) }
        var state = (try? durableStore.load()) ?? DurableState()
        files.recover(&state, paths: peer.session.filePaths)
        peer.session.restore(state)
        watchApp?.started()
        if role == .phone { world.switching.phoneStarted() }
        if role == .phone, world.switching.isAway {
            // Another watch is the active one (phoned's watches.json): this watch's session
            // is not the app's, and its queue waits.
            turn { self.peer.session.setActiveWatch(false, now: self.world.now) }
        } else {
            activate()
        }
        let mode: ReplyMode = [.echo, .empty, .none][world.options.replyMode]
        turn { self.peer.session.handle(.setReplies(ReplyConfiguration(mode: mode)), token: self.world.history.internalToken(), now: self.world.now) }
        let changedFlags = world.history.flagsDifferingFromTheDefault(of: role)
        if !changedFlags.isEmpty {
            // The daemon keeps its device's flags in its state files.
            turn { self.peer.session.handle(.setDeviceFlags(changedFlags), token: self.world.history.internalToken(), now: self.world.now) }
        }
        if role == .phone, world.options.complicationEnabled {
            turn { self.peer.session.handle(.setDeviceFlags([.isComplicationEnabled: true]), token: self.world.history.internalToken(), now: self.world.now) }
        }
        return true
    }

    /// The process dies (SIGKILL, or a power cut when `powerCut`).
    func crash(powerCut: Bool) {
        isUp = false
        app = nil
        watchApp?.daemonDied()
        store.crash()
        sqliteProcessDied(powerCut: powerCut)
        files.crash(powerCut: powerCut)
        timers.removeAll()
        outgoing.removeAll()
        if let connection {
            connection.sideDied(role, now: world.now)
            world.connectionEndReleased(connection)
        }
        connection = nil
        world.history.nodeCrashed(role)
    }

    // MARK: - Turns

    /// One loop turn: `body`'s actions, the turn's commit, what waited for it, then the
    /// turn's frames onto the link.
    func turn(_ body: () -> [SessionAction]) {
        guard isUp else { return }
        framesThisTurn = 0
        watchApp?.turnStarts()
        committer.perform(body(), from: peer)
        finishTurn()
    }

    private func finishTurn() {
        committer.endOfTurn()
        watchApp?.turnEnded(rolledBack: turnRolledBack, dying: dying)
        world.history.turnEnded(role, rolledBack: turnRolledBack)
        turnRolledBack = false
        world.reachability.evaluate(self)
        if dying {
            world.coverage.count(diedAfterCommit ? .crashAfterCommitBeforeRelease : .crashBeforeCommit)
            dying = false
            let powerCut = dyingByPowerCut ?? world.random.chance(0.5)
            dyingByPowerCut = nil
            world.nodeDied(self, powerCut: powerCut)
            return
        }
        flush()
    }

    /// A turn that reads what arrived on the link: frames, then the end of the stream.
    func readTurn() {
        guard isUp, let connection else { return }
        let end = connection.end(role)
        let now = world.now
        framesThisTurn = 0
        watchApp?.turnStarts()
        var reads = world.random.int(1...3)
        var failed = false
        while reads > 0, let first = end.inbound.first, first.time <= now {
            end.inbound.removeFirst()
            end.decoder.append(first.bytes)
            reads -= 1
            while !failed {
                let frame: Frame?
                do { frame = try end.decoder.next() } catch {
                    world.history.fail("the \(role.name) could not decode a frame on an honest link: \(error)")
                    failed = true
                    break
                }
                guard let frame else { break }
                handle(frame, on: connection)
                world.reachability.evaluate(self)
                if dying || !isUp { break }
            }
            if dying || !isUp { break }
        }
        if framesThisTurn > 1 && committer.isIdle == false { world.coverage.count(.severalFramesInOneCommit) }
        if !dying, isUp, end.inbound.isEmpty, let endOfStream = end.endOfStream, endOfStream <= now, !end.released {
            end.released = true
            self.connection = nil
            if end.established { committer.perform(peer.session.linkDown(now: now), from: peer) }
            world.connectionEndReleased(connection)
        }
        finishTurn()
        if isUp, self.connection === connection, let next = end.inbound.first {
            world.wake(self, at: max(next.time, now))
        } else if isUp, self.connection === connection, let endOfStream = end.endOfStream {
            world.wake(self, at: max(endOfStream, now))
        }
    }

    private func handle(_ frame: Frame, on connection: SimConnection) {
        let end = connection.end(role)
        let now = world.now
        guard end.established else {
            switch end.handshake.receive(frame) {
            case .send(let frames):
                for frame in frames { append(frame) }
            case .established:
                end.established = true
                world.trace("\(role.name) link up (connection \(connection.number))")
                committer.perform(peer.session.linkUp(now: now), from: peer)
            case .refuse(_, let reason), .peerRefused(_, let reason):
                world.history.fail("the \(role.name) refused an honest handshake: \(reason)")
            }
            return
        }
        framesThisTurn += 1
        world.observe(frame, receivedBy: self)
        watchApp?.received(frame, on: connection)
        committer.perform(peer.session.receive(frame, now: now), from: peer)
    }

    /// A session timer came due.
    func timerTurn(_ timer: SessionTimer, deadline: Int64) {
        guard isUp, timers[timer] == deadline else { return }
        timers[timer] = nil
        turn { peer.session.timerFired(timer, now: world.now) }
    }

    /// Hands one result of the file work back to the session.
    func fileTurn() {
        guard isUp, let event = files.takeEvent() else { return }
        let now = world.now
        turn {
            switch event {
            case .copied(let token, let result):
                return peer.session.fileCopied(token: token, result: result, now: now)
            case .verified(let seq, let matched, let path):
                let actions = peer.session.fileVerified(seq: seq, matched: matched, path: path, now: now)
                // A mismatch counts for a file being checked (a stale result is ignored): the
                // session says so (`file.problem`).
                let counted = actions.contains { if case .notify(.file(.problem)) = $0 { true } else { false } }
                if !matched, counted { world.limits.mismatchHanded(seq: seq, by: role) }
                return actions
            case .unreadable(let seq, let error):
                return peer.session.outboxFileFailed(seq: seq, error: error, now: now)
            }
        }
        if isUp, !files.events.isEmpty { world.wakeForFiles(self) }
    }

    /// The app activates its session.
    func activate() {
        turn { peer.session.handle(.activate, token: world.history.internalToken(), now: world.now) }
    }

    /// Submits an app's command, as one turn.
    func command(_ command: SessionCommand, token: RequestToken) {
        turn { peer.session.handle(command, token: token, now: world.now) }
    }

    // MARK: - The attached app

    /// An app process attaches, in `state`, with every delegate method or a few.
    func attachApp(_ state: AppState, handles: AppHandles, token: RequestToken, launchedByTheOS: Bool = false) {
        attachments += 1
        app = AttachedApp(number: attachments)
        command(.attachApp(state, handles, launchedByTheOS: launchedByTheOS), token: token)
    }

    /// The app process quits: what it was handed and did not acknowledge it never saw.
    func appQuits(token: RequestToken) {
        guard let app else { return }
        world.history.appQuit(app, by: role)
        self.app = nil
        command(.detachApp, token: token)
    }

    /// The attached app is busy until then: its acknowledgements wait.
    var acknowledgesNotBefore: Int64 = 0

    /// The attached app acknowledges everything handed to it (its delegate methods returned).
    func appAcknowledges(attachment: Int) {
        guard isUp, let app, app.number == attachment, app.handedUpTo > 0 else { return }
        guard world.now >= acknowledgesNotBefore else {
            return world.schedule(.appAcknowledges(role, attachment), at: acknowledgesNotBefore)
        }
        if let watchApp, watchApp.holds(.appAcknowledges(role, attachment)) { return }
        let token = world.history.acknowledgement(upTo: app.handedUpTo, by: role)
        command(.acknowledgeDelivery(upTo: app.handedUpTo), token: token)
    }

    /// The attached app answers a message that waits for its reply.
    func appReplies(attachment: Int, replyId: UInt64) {
        if let watchApp, isUp, app?.number == attachment, watchApp.holds(.appReplies(role, attachment, replyId)) { return }
        guard isUp, var app, app.number == attachment, let n = app.awaiting.removeValue(forKey: replyId) else { return }
        self.app = app
        command(.reply(replyId: replyId, payload: .dictionary(SimHistory.payload(n))), token: world.history.internalToken())
    }

    /// The link handshake starts on a new connection.
    func connected(_ connection: SimConnection) {
        self.connection = connection
        append(connection.end(role).handshake.start())
        flush()
    }

    // MARK: - Actions

    private func execute(_ action: SessionAction) {
        if dying {
            // The process is gone: nothing of this is done; what a committed turn would have
            // told is a fact nobody heard of.
            if diedAfterCommit { world.history.lostAfterCommit(action, by: role) }
            return
        }
        switch action {
        case .send(let frame):
            // The session counts an ITEM as possibly sent once it asks for it to go, whether
            // or not the link still takes it.
            if case .item(let rawChannel, _, _, let payload) = frame, let channel = QueueChannel(rawValue: rawChannel) {
                world.history.itemSent(channel: channel, payload: payload, by: role)
            }
            if let connection, connection.end(role).established { append(frame) }
        case .respond(let token, let result):
            world.history.response(token, result, by: role)
        case .notify(let notification):
            watchApp?.notified(notification)
            world.history.notification(notification, by: role)
            world.reachability.notified(notification, by: self)
        case .armTimer(let timer, let deadline):
            timers[timer] = deadline
            world.schedule(.timer(role, incarnation, timer, deadline), at: max(deadline, world.now))
        case .cancelTimer(let timer):
            timers[timer] = nil
        case .launchApp(let reason):
            watchApp?.launch(reason)
        case .appProcess(let processAction):
            watchApp?.perform(processAction)
        case .persist:
            break
        case .file(let fileAction):
            performFile(fileAction)
        }
    }

    private func performFile(_ action: FileAction) {
        if let frame = files.perform(action) {
            if let connection, connection.end(role).established { append(frame) }
        }
        if !files.events.isEmpty { world.wakeForFiles(self) }
    }

    private func append(_ frame: Frame) {
        if case .fileChunk = frame { outgoingCarriesFileChunk = true }
        world.observe(frame, sentBy: self)
        FrameEncoder.encode(frame, into: &outgoing)
    }

    private func flush() {
        guard !outgoing.isEmpty else { return }
        if let connection {
            connection.write(
                outgoing, from: role, now: world.now, latency: world.options.latencyMilliseconds,
                carriesFileChunk: outgoingCarriesFileChunk, random: &world.random)
            world.wake(world.node(role == .phone ? .watch : .phone), after: connection)
        }
        outgoing.removeAll(keepingCapacity: true)
        outgoingCarriesFileChunk = false
    }

    // MARK: - A failed turn

    /// The daemon's own recovery (``StoreFailureRecovery``), on this node's store and link.
    private func storeFailed(_ error: Error) {
        guard !dying else { return }
        turnRolledBack = true
        try? StoreFailureRecovery.recoverTurn(
            of: peer, after: error, committer: committer,
            reload: {
                var state = (try? durableStore.load()) ?? DurableState()
                files.recover(&state, paths: peer.session.filePaths, removingOrphans: false)
                peer.session.restore(state)
                world.history.storeRestored(role)
            },
            restartLink: {
                // GOAWAY goes after what the turn had queued (refusals included): that is
                // flushed first, then the link holds 1 s.
                flush()
                if let connection { world.close(connection, by: self, holdMilliseconds: 1_000) }
            })
    }
}
