import LinkSession
import LinkSimulation
import LinkStore
import WireProtocol

/// Two sessions with in-memory stores, an in-memory link and the runtime's group commit:
/// one event a turn, then the turn's acknowledgements, the commit, and what waited for it.
final class DurablePair {
    final class Side {
        let role: Role
        var session: LinkSession
        /// The simulator's model store and files; no fault is ever set, so their calls do not throw.
        let store = ModelStore()
        var files = ModelFiles()
        var deferred: [SessionAction] = []
        /// What the store holds committed, in DeliveryStore's order.
        var storedState: DurableState { try! store.load() }
        var responses: [RequestToken: Result<CommandResult, SessionError>] = [:]
        var notifications: [SessionNotification] = []
        var inbound: [Frame] = []
        var day: Double
        /// The launches this side asked its emulated OS for, in order.
        var launches: [LaunchReason] = []

        let configure: (inout LinkSession.Configuration) -> Void

        init(role: Role, day: Double, configure: @escaping (inout LinkSession.Configuration) -> Void) {
            self.role = role
            self.day = day
            self.configure = configure
            session = DurablePair.makeSession(role: role, clock: { day }, configure: configure)
        }
    }

    let phone: Side
    let watch: Side
    private(set) var linkUp = false
    /// Sees every frame a side puts on the link; may change it, or drop it by returning nil.
    var onSend: ((Role, Frame) -> Frame?)?
    private var nextToken: UInt64 = 1
    var wallClock: Double = 1_800_000_000

    init(configure: @escaping (inout LinkSession.Configuration) -> Void = { _ in }) {
        phone = Side(role: .phone, day: 1_800_000_000, configure: configure)
        watch = Side(role: .watch, day: 1_800_000_000, configure: configure)
        for side in [phone, watch] {
            var state = try! side.store.load()
            side.files.recover(&state, paths: side.session.filePaths)
            side.session.restore(state)
        }
    }

    static func makeSession(
        role: Role, clock: @escaping @Sendable () -> Double,
        configure: (inout LinkSession.Configuration) -> Void = { _ in }
    ) -> LinkSession {
        var configuration = LinkSession.Configuration(role: role)
        configuration.wallClock = clock
        configure(&configuration)
        return LinkSession(configuration: configuration)
    }

    func side(_ role: Role) -> Side { role == .phone ? phone : watch }
    func peer(of role: Role) -> Side { role == .phone ? watch : phone }

    private func perform(_ side: Side, _ actions: [SessionAction]) {
        for action in actions {
            if case .persist(let operation) = action {
                try! side.store.apply(operation)
            } else if case .file(let fileAction) = action, fileAction.precedesCommit {
                _ = side.files.perform(fileAction)
            } else if side.store.inTransaction {
                side.deferred.append(action)
            } else {
                execute(side, action)
            }
        }
    }

    private func execute(_ side: Side, _ action: SessionAction) {
        switch action {
        case .send(let frame):
            send(frame, from: side)
        case .file(let fileAction):
            if let frame = side.files.perform(fileAction) { send(frame, from: side) }
        case .respond(let token, let result):
            side.responses[token] = result
        case .notify(let notification):
            side.notifications.append(notification)
        case .armTimer, .cancelTimer, .persist, .appProcess:
            break
        case .launchApp(let reason):
            side.launches.append(reason)
        }
    }

    private func send(_ frame: Frame, from side: Side) {
        guard linkUp else { return }
        guard let frame = onSend.map({ $0(side.role, frame) }) ?? frame else { return }
        peer(of: side.role).inbound.append(frame)
    }

    private func endTurn(_ side: Side) {
        perform(side, side.session.flushAcknowledgements())
        try! side.store.commit()
        let waiting = side.deferred
        side.deferred.removeAll()
        for action in waiting { execute(side, action) }
    }

    /// Where a SIGKILL lands within a turn.
    enum CrashPoint {
        /// The turn's writes are lost and nothing that waited for them went out.
        case beforeCommit
        /// The writes are committed, but nothing that waited for them went out.
        case afterCommit
    }

    private func turn(_ side: Side, crash: CrashPoint? = nil, _ body: () -> [SessionAction]) {
        perform(side, body())
        guard let crash else { return endTurn(side) }
        perform(side, side.session.flushAcknowledgements())
        if crash == .afterCommit { try! side.store.commit() }
        side.store.crash()
        side.files.crash()
        side.deferred.removeAll()
        restart(side)
    }

    func setLink(up: Bool) {
        guard up != linkUp else { return }
        if up {
            linkUp = true
            turn(phone) { phone.session.linkUp(now: 0) }
            turn(watch) { watch.session.linkUp(now: 0) }
        } else {
            linkUp = false
            phone.inbound.removeAll()
            watch.inbound.removeAll()
            turn(phone) { phone.session.linkDown(now: 0) }
            turn(watch) { watch.session.linkDown(now: 0) }
        }
    }

    @discardableResult
    func command(_ role: Role, _ command: SessionCommand, crash: CrashPoint? = nil) -> RequestToken {
        let token = RequestToken(nextToken)
        nextToken += 1
        let side = side(role)
        turn(side, crash: crash) { side.session.handle(command, token: token, now: 0) }
        return token
    }

    /// Runs one loop turn on `role` for an event other than a command or a frame.
    func event(_ role: Role, _ body: (LinkSession) -> [SessionAction]) {
        let side = side(role)
        turn(side) { body(side.session) }
    }

    /// Delivers one frame to `role`, as one loop turn; false when none is waiting.
    @discardableResult
    func deliverOne(to role: Role, crash: CrashPoint? = nil) -> Bool {
        let side = side(role)
        guard !side.inbound.isEmpty else { return false }
        let frame = side.inbound.removeFirst()
        turn(side, crash: crash) { side.session.receive(frame, now: 0) }
        return true
    }

    /// Hands one result of `role`'s file work back to its session, as one loop turn.
    @discardableResult
    func deliverFileEvent(to role: Role, crash: CrashPoint? = nil) -> Bool {
        let side = side(role)
        guard let event = side.files.takeEvent() else { return false }
        turn(side, crash: crash) {
            switch event {
            case .copied(let token, let result):
                return side.session.fileCopied(token: token, result: result, now: 0)
            case .verified(let seq, let matched, let path):
                return side.session.fileVerified(seq: seq, matched: matched, path: path, now: 0)
            case .unreadable(let seq, let error):
                return side.session.outboxFileFailed(seq: seq, error: error, now: 0)
            }
        }
        return true
    }

    func pump() {
        var progressed = true
        while progressed {
            progressed = false
            while deliverOne(to: .watch) { progressed = true }
            while deliverOne(to: .phone) { progressed = true }
            while deliverFileEvent(to: .watch) { progressed = true }
            while deliverFileEvent(to: .phone) { progressed = true }
        }
    }

    /// SIGKILL between turns: everything in memory is gone; the daemon restarts, reloads its
    /// store and is activated again (`--activate`).
    func crash(_ role: Role) {
        let side = side(role)
        side.store.crash()
        side.files.crash()
        side.deferred.removeAll()
        restart(side)
    }

    private func restart(_ side: Side) {
        let wasUp = linkUp
        if wasUp {
            // The peer sees the link drop; frames in flight are gone.
            linkUp = false
            phone.inbound.removeAll()
            watch.inbound.removeAll()
            let survivor = peer(of: side.role)
            turn(survivor) { survivor.session.linkDown(now: 0) }
        }
        side.session = DurablePair.makeSession(role: side.role, clock: { [day = side.day] in day }, configure: side.configure)
        var state = try! side.store.load()
        side.files.recover(&state, paths: side.session.filePaths)
        side.session.restore(state)
        let token = RequestToken(nextToken)
        nextToken += 1
        turn(side) { side.session.handle(.activate, token: token, now: 0) }
        if wasUp { setLink(up: true) }
    }

    /// userInfo items the app on `role` received, in order, from its committed store.
    func deliveredUserInfo(_ role: Role) -> [[String: PropertyListValue]] {
        side(role).store.delivered.filter { $0.channel == .userInfo }.map {
            (try? PropertyListCodec.decodeDictionary($0.payload)) ?? [:]
        }
    }
}
