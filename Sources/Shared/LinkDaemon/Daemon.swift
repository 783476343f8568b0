import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkTrace
import LinkSystem
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One daemon, `phoned` or `watchd`: the composition root. It builds the parts, wires them
/// and orders their start and stop; each part does one job in its own file:
/// - ``DaemonHome``: directories, device id, pairing key;
/// - ``PeerDirectory``: the peers (the phone, or each paired watch), their sessions, stores
///   and files, the app's session, watch switching;
/// - ``LinkEndpoint``: the link socket, connecting with backoff, admission, channels;
/// - ``TurnCommitter``: group commit, releasing what waited for it; ``ActionPerformer``
///   carries the released actions out; ``StoreFailureRecovery`` takes a rolled-back turn
///   and a state file not written;
/// - ``SessionGateway``: commands into the app's session and their answers;
/// - ``AppLauncher``: the installed programs the emulated OS launches and ends;
/// - ``ControlServer`` and the ``OperationTable``: every control op, core and feature
///   (registered in `Daemon+Operations.swift`, traced in `OperationTable+Trace.swift`).
/// Everything runs on the loop's thread.
public final class Daemon {
    let options: DaemonOptions
    let logger: Logger
    let loop: EventLoop
    let home: DaemonHome
    let directory: PeerDirectory
    let committer: TurnCommitter
    let gateway: SessionGateway
    let link: LinkEndpoint
    let control: ControlServer
    let table: OperationTable
    let features: [DaemonFeature]
    let app = AppAttachment()
    let launcher: AppLauncher
    let tracer: Tracer
    let clock: PairClock
    private(set) var stateWriteFailed: (String, Error) -> Void = { _, _ in }
    /// The hook that ends each loop turn (``start()``).
    private var turnEnd: EventLoop.AfterTurnID?
    private var stopping = false

    public init(options: DaemonOptions, features: [DaemonFeature] = []) throws {
        self.options = options
        self.features = [BenchFeature()] + features
        logger = Logger(label: options.programName, level: options.logLevel)
        tracer = Tracer(capacity: options.traceEntries, filePath: options.traceFile)
        tracer.side = options.role.name
        tracer.logger = logger
        loop = try EventLoop(backend: options.poller)
        if options.clock == .manual {
            loop.useManualClock(.manualFromSystem(wallMilliseconds: options.clockStartMilliseconds))
        }
        tracer.loop = loop
        var configuration = LinkSession.Configuration(
            role: options.role,
            defaultReplyTimeoutMilliseconds: options.replyTimeoutMilliseconds)
        configuration.inactiveDeliveryMilliseconds = options.inactiveDeliveryMilliseconds
        configuration.receivedListByteCapacity = options.receivedListBytes
        configuration.launchPolicy = BackgroundLaunchPolicy(
            mode: options.launchPolicy,
            seed: options.launchSeed ?? UInt64.random(in: 0...UInt64(Int64.max)),
            windowMilliseconds: options.launchWindowMilliseconds)
        configuration.backgroundTaskBudgetMilliseconds = options.backgroundTaskMilliseconds
        configuration.weather = ReachabilityWeather(
            profile: options.weather, seed: options.weatherSeed ?? UInt64.random(in: 0...UInt64(Int64.max)), role: options.role)
        // The session's dates come from the device clock. It is read on the loop's thread only.
        nonisolated(unsafe) let clockLoop = loop
        configuration.wallClock = { Double(clockLoop.clock.wallNanoseconds) / 1e9 }
        for feature in self.features { feature.configureSession(&configuration) }
        home = DaemonHome(options: options, logger: logger)
        directory = PeerDirectory(options: options, logger: logger, loop: loop, configuration: configuration)
        let directory = directory
        committer = TurnCommitter(peers: { directory.peers }, tracer: tracer)
        directory.committer = committer
        let loop = loop
        gateway = SessionGateway(directory: directory, committer: committer, now: { loop.turnMilliseconds })
        control = ControlServer(loop: loop, path: options.controlPath, logger: logger)
        let control = control
        link = LinkEndpoint(
            options: options, logger: logger, loop: loop, home: home, directory: directory,
            committer: committer, tracer: tracer, publish: { control.publish($0, $1) })
        table = OperationTable(role: options.role)
        launcher = AppLauncher(options: options, loop: loop, logger: logger, tracer: tracer)
        clock = PairClock(role: options.role, loop: loop, logger: logger, committer: committer, directory: directory, tracer: tracer)
        link.clock = clock
        wire()
    }

    public var role: Role { options.role }

    /// The committer's actions go to the performer; a failed turn reloads the peer and restarts its link.
    private func wire() {
        let performer = ActionPerformer(
            role: role, loop: loop, logger: logger, directory: directory, committer: committer,
            gateway: gateway, control: control, tracer: tracer, features: features, launcher: launcher)
        launcher.publish = { [unowned self] in self.control.publish($0, $1) }
        launcher.tellSession = { [unowned self] in self.gateway.submit($0) { _ in } }
        committer.execute = { performer.execute($0, from: $1) }
        committer.performBeforeCommit = { [unowned self] in self.directory.performFileActionBeforeCommit($0, of: $1) }
        if role == .phone {
            // Only the phone's sessions follow the active watch (and most turns change nothing).
            let directory = directory
            committer.afterPerform = { directory.followActiveWatchIfDeactivated($0) }
        }
        let recovery = StoreFailureRecovery(
            role: role, logger: logger, tracer: tracer, committer: committer, directory: directory,
            link: link, publish: { [unowned self] in self.control.publish($0, $1) },
            stop: { [unowned self] (reason: DaemonStopped) in
                self.failure = reason
                self.stop()
            })
        committer.storeFailed = { recovery.turnRolledBack($0, $1) }
        stateWriteFailed = { recovery.stateWriteFailed($0, $1) }
        (launcher.stateWriteFailed, directory.stateWriteFailed) = (stateWriteFailed, stateWriteFailed)
        registerOperations()
    }

    /// Prepares the files and sockets; throws a `StartupError` naming what was wrong.
    public func start() throws {
        try home.prepare()
        tracer.device = home.deviceId
        try tracer.open()
        control.onTraceFollowersChanged = { [unowned self] in
            self.tracer.follow = self.control.traceFollowerCount > 0 ? { [unowned self] in self.control.publishTraceEntry($0.object) } : nil
        }
        var startEntry: JSONObject = ["name": "start", "version": .string(DaemonOptions.version), "program": .string(options.programName)]
        let policy = directory.session.configuration.launchPolicy
        if role == .watch {
            startEntry["launchPolicy"] = .string(policy.mode.rawValue)
            startEntry["launchSeed"] = .int(Int64(clamping: policy.seed))
        }
        let weather = directory.session.configuration.weather
        startEntry["weather"] = .string(weather.profile.rawValue)
        if !weather.isCalm { startEntry["weatherSeed"] = .int(Int64(clamping: weather.seed)) }
        let started = tracer.record(.daemon, startEntry)
        // A file-size limit must surface as a failed write (7015), not kill the daemon.
        SystemCalls.ignoreSignal(SIGXFSZ)
        try directory.openStores()
        try launcher.start()
        do { try control.start() } catch {
            throw StartupError("cannot serve the control socket: \(error)")
        }
        control.onRequest = { [unowned self] client, request in self.handle(request, from: client) }
        control.onClientClosed = { [unowned self] client in
            // Answers to its requests have nowhere to go; the session still completes them.
            self.logger.debug("control: client #\(client.serial) disconnected")
            if self.app.detach(client) {
                self.logger.info("app: the attached app (control connection #\(client.serial)) is gone: not running")
                self.gateway.submit(.detachApp) { _ in }
            }
            if self.app.detachWatchKit(client) {
                self.logger.info("app: the app's WatchKit (control connection #\(client.serial)) is gone")
                self.gateway.submit(.detachWatchKit) { _ in }
            }
            for feature in self.features { feature.clientClosed(client.serial) }
        }
        // Runs after every turn, so the parts it uses are captured, not reached through an
        // unowned daemon (a checked retain and a release each). They hold the loop that holds
        // this: the hook goes once the loop has stopped, or when the start fails.
        let (committer, directory, link, tracer) = (committer, directory, link, tracer)
        turnEnd = loop.afterTurn {
            committer.endOfTurn()
            directory.formerAppPeer = nil
            link.flush()
            tracer.flush()
        }
        var startedFully = false
        defer { if !startedFully { removeTurnEnd() } }
        try loop.onSignals([SIGTERM, SIGINT]) { [unowned self] signal in
            self.logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
            self.stop()
        }
        do { try link.start() } catch {
            control.stop()
            throw error
        }
        let context = featureContext
        for feature in features {
            do { try feature.start(context) } catch { throw StartupError("\(error)") }
        }
        if options.activateOnStart { tracer.withCause(started) { gateway.submit(.activate) { _ in } } }
        startedFully = true
        if role == .watch {
            logger.info(
                "background launches: \(policy.mode.rawValue) policy, seed \(policy.seed) (replay with --launch-seed \(policy.seed)), window \(policy.windowMilliseconds) ms, budget \(directory.session.configuration.backgroundTaskBudgetMilliseconds) ms"
            )
        }
        if !weather.isCalm {
            logger.info("weather: device, seed \(weather.seed) (replay with --weather device --weather-seed \(weather.seed))")
        }
        logger.info(
            "\(options.programName) \(DaemonOptions.version) ready: device \(home.deviceId), home \(options.home), control \(options.controlPath), link \(options.linkPath)"
        )
    }

    /// Runs until `stop()` (SIGTERM, SIGINT or the `shutdown` op); throws what made the daemon
    /// stop itself, if anything did.
    public func run() throws {
        defer { removeTurnEnd() }
        try loop.run()
        if let failure { throw failure }
    }

    /// Why the daemon stopped itself (it exits non-zero then).
    private var failure: Error?

    private func removeTurnEnd() {
        if let turnEnd { loop.removeAfterTurn(turnEnd) }
        turnEnd = nil
    }

    public func stop() {
        guard !stopping else { return }
        stopping = true
        link.stop()
        table.failOutstanding(.control(.shuttingDown, "the daemon is shutting down"))
        control.stop()
        for feature in features { feature.stop() }
        launcher.stop()
        directory.closeStores()
        loop.stop()
        tracer.record(.daemon, ["name": "stop"])
        tracer.close()
        logger.info("stopped")
    }

    private func handle(_ request: ControlRequest, from client: ControlClientConnection) {
        logger.trace("control #\(client.serial): \(request.op)")
        guard !stopping else {
            return client.respond(id: request.id, error: .control(.shuttingDown, "the daemon is shutting down"))
        }
        table.dispatch(request, from: client, tracer: tracer)
    }
}
