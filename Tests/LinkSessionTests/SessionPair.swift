import LinkSession
import WireProtocol

/// Two sessions joined by an in-memory link and a fake clock.
final class SessionPair {
    let phone: LinkSession
    let watch: LinkSession

    init(configure: (inout LinkSession.Configuration) -> Void = { _ in }) {
        var phoneConfiguration = LinkSession.Configuration(role: .phone, defaultReplyTimeoutMilliseconds: 1_000)
        var watchConfiguration = LinkSession.Configuration(role: .watch, defaultReplyTimeoutMilliseconds: 1_000)
        configure(&phoneConfiguration)
        configure(&watchConfiguration)
        phone = LinkSession(configuration: phoneConfiguration)
        watch = LinkSession(configuration: watchConfiguration)
    }
    var now: Int64 = 0
    private var nextToken: UInt64 = 1
    /// Frames in flight, in order, by receiver.
    private var toPhone: [Frame] = []
    private var toWatch: [Frame] = []
    private(set) var responses: [RequestToken: Result<CommandResult, SessionError>] = [:]
    private(set) var phoneNotifications: [SessionNotification] = []
    private(set) var watchNotifications: [SessionNotification] = []
    private var timers: [(role: Role, timer: SessionTimer, deadline: Int64)] = []
    /// Frames the wire should drop, e.g. to emulate a missing reply.
    var dropFramesToPhone = false
    /// The launches each side asked its emulated OS for, in order.
    private(set) var launches: [(role: Role, reason: LaunchReason)] = []
    /// What each side's OS was asked to do to its app's process, in order.
    private(set) var processActions: [(role: Role, action: AppProcessAction)] = []

    func session(_ role: Role) -> LinkSession { role == .phone ? phone : watch }

    func apply(_ actions: [SessionAction], from role: Role) {
        for action in actions {
            switch action {
            case .send(let frame):
                if role == .phone { toWatch.append(frame) } else if !dropFramesToPhone { toPhone.append(frame) }
            case .respond(let token, let result):
                responses[token] = result
            case .notify(let notification):
                if role == .phone { phoneNotifications.append(notification) } else { watchNotifications.append(notification) }
            case .armTimer(let timer, let deadline):
                timers.removeAll { $0.role == role && $0.timer == timer }
                timers.append((role, timer, deadline))
            case .cancelTimer(let timer):
                timers.removeAll { $0.role == role && $0.timer == timer }
            case .launchApp(let reason):
                launches.append((role, reason))
            case .appProcess(let action):
                processActions.append((role, action))
            case .persist, .file:
                break
            }
        }
    }

    /// Delivers frames until both directions are quiet.
    func pump() {
        while !toPhone.isEmpty || !toWatch.isEmpty {
            if !toWatch.isEmpty {
                let frame = toWatch.removeFirst()
                apply(watch.receive(frame, now: now), from: .watch)
            }
            if !toPhone.isEmpty {
                let frame = toPhone.removeFirst()
                apply(phone.receive(frame, now: now), from: .phone)
            }
        }
    }

    func linkUp() {
        apply(phone.linkUp(now: now), from: .phone)
        apply(watch.linkUp(now: now), from: .watch)
        pump()
    }

    func linkDown() {
        toPhone.removeAll()
        toWatch.removeAll()
        apply(phone.linkDown(now: now), from: .phone)
        apply(watch.linkDown(now: now), from: .watch)
    }

    @discardableResult
    func command(_ role: Role, _ command: SessionCommand, pump shouldPump: Bool = true) -> RequestToken {
        let token = RequestToken(nextToken)
        nextToken += 1
        apply(session(role).handle(command, token: token, now: now), from: role)
        if shouldPump { pump() }
        return token
    }

    func result(_ token: RequestToken) -> Result<CommandResult, SessionError>? { responses[token] }

    /// Moves the fake clock forward, firing due timers in deadline order.
    func advance(by milliseconds: Int64) {
        let target = now + milliseconds
        while let next = timers.filter({ $0.deadline <= target }).min(by: { $0.deadline < $1.deadline }) {
            timers.removeAll { $0.role == next.role && $0.timer == next.timer }
            now = max(now, next.deadline)
            apply(session(next.role).timerFired(next.timer, now: now), from: next.role)
            pump()
        }
        now = target
    }

    func activateBoth() {
        command(.phone, .activate)
        command(.watch, .activate)
    }

    func clearNotifications() {
        phoneNotifications.removeAll()
        watchNotifications.removeAll()
    }
}

func encodedDictionary(_ dictionary: [String: PropertyListValue]) -> MessagePayload {
    .dictionary(try! PropertyListCodec.encode(dictionary))
}
