import LinkCrypto
import LinkSession
import LinkStore
import WireProtocol

/// One seeded world of the pair: a phone and a watch on a simulated link, on virtual time,
/// driven by a workload and faults drawn from the seed, then a final phase without faults in
/// which everything outstanding must drain. Single-threaded and deterministic: the same seed
/// gives the same events, which ``hash`` sums up.
package final class SimWorld {
    enum Event {
        case workload
        case wake(Role)
        case fileWake(Role)
        case timer(Role, Int, SessionTimer, Int64)
        case restart(Role)
        case connect
        case appAcknowledges(Role, Int)
        case appReplies(Role, Int, UInt64)
        case phoneActivates
        case watchApp(SimWatchApp.Event)
    }

    /// The virtual clock, readable by the sessions' wall clock.
    final class ClockBox: @unchecked Sendable { var now: Int64 = 0 }

    package let seed: UInt64
    package let options: SimOptions
    var random: SimRandom
    let clockBox = ClockBox()
    /// Wall-clock seconds at virtual time 0 (some seeds start near a UTC midnight).
    let wallClockBase: Double
    var now: Int64 { clockBox.now }
    /// Whether faults are over (the final phase).
    var isFinalPhase: Bool { !faultsOn }
    private var queue = SimEventQueue<Event>()
    private var nodes: [SimNode] = []
    let history: SimHistory
    /// The shipped limits, checked on the link and on what the apps are told.
    private(set) var limits: SimLimits!
    /// The phone's paired watches and switches between them.
    private(set) var switching: SimSwitching!
    /// The reachability checks (SimReachability.swift).
    lazy var reachability = SimReachability(world: self, options: options.reachability)
    package let coverage: SimCoverage
    private var step = 0
    /// A world on SQLite may cut a node's power at an early workload step.
    var earlyPowerCut: (step: Int, role: Role)?
    private var faultsOn = true
    private var partitionedUntil: Int64 = 0
    private var reconnectNotBefore: Int64 = 0
    private var connectScheduled = false
    private var connections = 0
    private var scheduledWake: [Role: Int64] = [:]
    private let pairingKey = [UInt8](repeating: 7, count: 32)
    /// A running sum of every event: two runs of one seed must end with the same.
    package private(set) var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    /// Events the world handled, and frames that crossed the link.
    package private(set) var steps = 0
    package private(set) var frames = 0
    /// Every event as a line, when asked for (a replay).
    package var traceLine: ((String) -> Void)?
    /// Nodes' context items sent and not yet acknowledged.
    private var contextInFlight: [Role: Bool] = [:]

    /// - Parameter recorder: sees every call on each node's store (a differential test
    ///   replays them on ``DeliveryStore``).
    package init(seed: UInt64, coverage: SimCoverage = SimCoverage(), recorder: ((Role, ModelStore.Call) -> Void)? = nil) {
        self.seed = seed
        var random = SimRandom(seed: seed)
        var options = SimOptions(drawingFrom: &random)
        // A draw of its own, so that the other worlds stay as they were; not with a recorder
        // (it records calls on ModelStore).
        var storeRandom = SimRandom(seed: seed ^ 0x5351_4C69_7465_4442)
        if recorder == nil { options.drawStore(from: &storeRandom) }
        self.options = options
        wallClockBase = random.chance(0.2) ? 1_800_057_600 - Double(random.int(0...600)) : 1_800_000_000
        self.random = random
        self.coverage = coverage
        history = SimHistory()
        history.world = self
        limits = SimLimits(world: self)
        switching = SimSwitching(world: self)
        nodes = [SimNode(role: .phone, world: self, recorder: recorder), SimNode(role: .watch, world: self, recorder: recorder)]
        for node in nodes { node.storeFaultRate = options.storeFaultRate }
        if options.onSQLite { startOnSQLite() }
    }

    func node(_ role: Role) -> SimNode { role == .phone ? nodes[0] : nodes[1] }

    /// The node, once the world has made both (a node's first start runs before).
    func madeNode(_ role: Role) -> SimNode? { nodes.count == 2 ? node(role) : nil }

    // MARK: - Running

    /// Runs the world to its end and checks it; the failures found (none when it passed).
    package func run() -> [String] {
        schedule(.connect, at: 0)
        connectScheduled = true
        schedule(.workload, at: 0)
        let finalPhaseLimit: Int64 = 600_000
        var finalPhaseStart: Int64?
        while let (time, event) = queue.pop() {
            if let start = finalPhaseStart, time > start + finalPhaseLimit { break }
            clockBox.now = max(clockBox.now, time)
            steps += 1
            handle(event)
            if finalPhaseStart == nil, !faultsOn { finalPhaseStart = now }
            if history.failures.count > 20 { break }
        }
        if faultsOn { enterFinalPhase() }
        history.checkEnd(phone: node(.phone), watch: node(.watch))
        reachability.checkEnd()
        if history.failures.isEmpty, options.appWeight > 0 { coverage.count(.appsAttached) }
        if history.failures.isEmpty, options.watchAppInstalled, now > SimWatchApp.hourMilliseconds { coverage.count(.watchWorldsOverAnHour) }
        return history.failures
    }

    private func handle(_ event: Event) {
        switch event {
        case .workload:
            mix(1)
            workloadStep()
        case .wake(let role):
            mix(2, role)
            if scheduledWake[role] == now { scheduledWake[role] = nil }
            node(role).readTurn()
        case .fileWake(let role):
            mix(3, role)
            node(role).fileTurn()
        case .timer(let role, let incarnation, let timer, let deadline):
            let node = node(role)
            guard node.incarnation == incarnation else { return }
            mix(4, role, UInt64(bitPattern: deadline))
            trace("\(role.name) timer \(timer)")
            node.timerTurn(timer, deadline: deadline)
        case .restart(let role):
            mix(5, role)
            trace("\(role.name) starts")
            guard node(role).start() else { return }
            history.nodeStarted(role)
            scheduleConnect(after: 0)
        case .connect:
            connectScheduled = false
            connect()
        case .appAcknowledges(let role, let attachment):
            mix(12, role, UInt64(attachment))
            node(role).appAcknowledges(attachment: attachment)
        case .appReplies(let role, let attachment, let replyId):
            mix(13, role, replyId)
            node(role).appReplies(attachment: attachment, replyId: replyId)
        case .phoneActivates:
            mix(15)
            if !switching.isAway, node(.phone).peer.session.activationState == .notActivated { node(.phone).activate() }
        case .watchApp(let event):
            mix(14, .watch)
            node(.watch).watchApp?.handle(event)
        }
    }

    func schedule(_ event: Event, at time: Int64) { queue.push(event, at: time) }

    func wake(_ node: SimNode, at time: Int64) {
        if let scheduled = scheduledWake[node.role], scheduled <= time, scheduled >= now { return }
        scheduledWake[node.role] = time
        schedule(.wake(node.role), at: time)
    }

    /// Wakes `node` for what just became due on `connection`.
    func wake(_ node: SimNode, after connection: SimConnection) {
        guard node.connection === connection, let first = connection.end(node.role).inbound.first else { return }
        wake(node, at: max(first.time, now))
    }

    func wakeForFiles(_ node: SimNode) {
        schedule(.fileWake(node.role), at: now + random.int64(0...3))
    }

    // MARK: - The link

    private func scheduleConnect(after delay: Int64) {
        guard !connectScheduled else { return }
        connectScheduled = true
        schedule(.connect, at: max(now + delay, reconnectNotBefore, partitionedUntil))
    }

    private func connect() {
        let phone = node(.phone)
        let watch = node(.watch)
        guard phone.isUp, watch.isUp, phone.connection == nil, watch.connection == nil else { return }
        guard now >= partitionedUntil, now >= reconnectNotBefore else { return scheduleConnect(after: 0) }
        connections += 1
        mix(6, .phone, UInt64(connections))
        trace("connection \(connections) opens")
        let connection = SimConnection(
            number: connections,
            phone: LinkHandshake(role: .phone, deviceId: "phone", key: pairingKey, nonce: random.bytes(LinkProtocol.nonceLength)),
            watch: LinkHandshake(role: .watch, deviceId: "watch", key: pairingKey, nonce: random.bytes(LinkProtocol.nonceLength)))
        phone.connected(connection)
        watch.connected(connection)
    }

    /// One end let `connection` go; once both have, the watch connects again (with backoff).
    func connectionEndReleased(_ connection: SimConnection) {
        if connection.phone.released && connection.watch.released {
            scheduleConnect(after: random.int64(1...300))
        }
    }

    /// Cuts `connection`; no new one before `holdMilliseconds`.
    func cut(_ connection: SimConnection, holdMilliseconds: Int64 = 0) {
        guard connection.isOpen else { return }
        mix(7, .phone, UInt64(connection.number))
        trace("connection \(connection.number) cut")
        if connection.cut(now: now, random: &random) { coverage.count(.cutMidFile) }
        reconnectNotBefore = max(reconnectNotBefore, now + holdMilliseconds)
        for node in nodes where node.connection === connection {
            wake(node, at: max(connection.end(node.role).endOfStream ?? now, now))
        }
    }

    /// `node` closes `connection` (GOAWAY): it reads nothing more of it; the peer reads what
    /// was sent, then the end.
    func close(_ connection: SimConnection, by node: SimNode, holdMilliseconds: Int64) {
        cut(connection, holdMilliseconds: holdMilliseconds)
        let end = connection.end(node.role)
        end.inbound.removeAll()
        end.endOfStream = min(end.endOfStream ?? now, now)
        reconnectNotBefore = max(reconnectNotBefore, now + holdMilliseconds)
        wake(node, at: now)
    }

    // MARK: - Faults

    func nodeDied(_ node: SimNode, powerCut: Bool) {
        mix(8, node.role)
        trace("\(node.role.name) dies (\(powerCut ? "power cut" : "SIGKILL"))")
        coverage.count(powerCut ? .powerCut : .kill)
        node.crash(powerCut: powerCut)
        // The peer reads what the dead side sent, then the end of the stream.
        let peer = self.node(node.role == .phone ? .watch : .phone)
        if let connection = peer.connection { wake(peer, at: max(connection.end(peer.role).endOfStream ?? now, now)) }
        schedule(.restart(node.role), at: now + random.int64(1...500))
    }

    private func injectFault() {
        let o = options
        let total = o.killWeight + o.powerCutWeight + o.cutWeight + o.partitionWeight
        guard total > 0 else { return }
        var pick = random.int(0...(total - 1))
        let role: Role = random.chance(0.5) ? .phone : .watch
        let target = node(role)
        if pick < o.killWeight + o.powerCutWeight {
            let powerCut = pick >= o.killWeight
            guard target.isUp else { return }
            switch random.int(0...2) {
            case 0: nodeDied(target, powerCut: powerCut)
            case 1: target.crashAtNextCommit = .crashBefore
            default: target.crashAtNextCommit = .crashAfter
            }
            return
        }
        pick -= o.killWeight + o.powerCutWeight
        if pick < o.cutWeight {
            if let connection = target.connection { cut(connection) }
        } else {
            coverage.count(.partition)
            partitionedUntil = now + random.int64(100...3_000)
            trace("partition until \(partitionedUntil)")
            if let connection = target.connection { cut(connection) }
        }
    }

    // MARK: - Workload

    private func workloadStep() {
        step += 1
        guard step <= options.steps else { return enterFinalPhase() }
        if random.chance(options.faultRate) { injectFault() }
        if let cut = earlyPowerCut, cut.step == step, node(cut.role).isUp { nodeDied(node(cut.role), powerCut: true) }
        history.submitRandomOperation()
        schedule(.workload, at: now + random.int64(0...options.stepGapMilliseconds))
    }

    private func enterFinalPhase() {
        guard faultsOn else { return }
        faultsOn = false
        trace("final phase")
        partitionedUntil = 0
        for node in nodes {
            node.storeFaultRate = 0
            node.crashAtNextCommit = .proceed
        }
        reachability.finalPhase()
        history.finalPhase()
        scheduleConnect(after: 0)
    }

    // MARK: - Observation

    func observe(_ frame: Frame, sentBy node: SimNode) {
        frames += 1
        if let connection = node.connection { limits.sent(frame, by: node.role, on: connection.number) }
        mix(9, node.role, UInt64(frame.type.rawValue))
        if let traceLine { traceLine("\(now) \(node.role.name) -> \(frame.typeName)\(Self.detail(frame))") }
        if case .item(let channel, _, _, _) = frame, channel == QueueChannel.applicationContext.rawValue {
            contextInFlight[node.role] = true
        }
        if case .state(let state) = frame { reachability.stateSent(state, by: node) }
        if case .itemError(_, _, let code, _) = frame, code == UInt16(WCErrorCode.insufficientSpace.rawValue) {
            coverage.count(.refusedForFullDisk)
        }
    }

    func observe(_ frame: Frame, receivedBy node: SimNode) {
        mix(10, node.role, UInt64(frame.type.rawValue))
        if let connection = node.connection { limits.received(frame, by: node.role, on: connection.number) }
        if let traceLine { traceLine("\(now) \(node.role.name) <- \(frame.typeName)\(Self.detail(frame))") }
        switch frame {
        case .item(let channel, let seq, _, _):
            // A sender resumes above the acknowledgement the receiver sent on this link, which
            // is its committed cursor: an item at or below it is never sent again (files
            // aside: an unfinished one is offered again to resume it).
            if let queue = QueueChannel(rawValue: channel), queue != .file,
                let committed = node.store.committed.cursors[queue]?.lastReceived, seq <= committed
            {
                history.fail("the \(node.role.name) received \(queue) seq \(seq) again, at or below its committed \(committed)")
            }
        case .ack(let channel, _) where channel == QueueChannel.applicationContext.rawValue:
            contextInFlight[node.role] = false
        case .itemError:
            coverage.count(.itemErrorReceived)
        case .fileChunk(_, let offset, _) where offset > 0:
            if node.store.committed.incomingFiles.contains(where: { $0.committedOffset > 0 }) { coverage.count(.fileResumed) }
        default:
            break
        }
    }

    func contextUpdateSubmitted(by role: Role) {
        if contextInFlight[role] == true { coverage.count(.contextReplacedInFlight) }
    }

    private static func detail(_ frame: Frame) -> String {
        switch frame {
        case .item(let channel, let seq, let flags, let payload):
            let number = SimHistory.number(payload).map { " (item \($0))" } ?? ""
            return " channel \(channel) seq \(seq) flags \(flags) \(payload.count) bytes\(number)"
        case .ack(let channel, let seq): return " channel \(channel) up to \(seq)"
        case .itemError(let channel, let seq, let code, _): return " channel \(channel) seq \(seq) code \(code)"
        case .fileChunk(let seq, let offset, let data): return " seq \(seq) offset \(offset) \(data.count) bytes"
        case .fileChunkAck(let seq, _, let received, let committed): return " seq \(seq) received \(received) committed \(committed)"
        case .message(let id, let wantsReply, _): return " id \(id)\(wantsReply ? " wants a reply" : "")"
        case .reply(let id, _), .messageAck(let id): return " id \(id)"
        case .messageError(let id, let code, _): return " id \(id) code \(code)"
        default: return ""
        }
    }

    func trace(_ line: @autoclosure () -> String) {
        if let traceLine { traceLine("\(now) " + line()) }
    }

    /// Mixes an event into ``hash`` (FNV-1a over its words).
    func mix(_ kind: UInt64, _ role: Role = .phone, _ value: UInt64 = 0) {
        for word in [kind, UInt64(role == .phone ? 1 : 2), value, UInt64(bitPattern: now)] {
            hash = (hash ^ word) &* 0x100_0000_01b3
        }
    }
}
