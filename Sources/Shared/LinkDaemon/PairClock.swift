import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import WireProtocol

/// One clock for the pair: the phone's device clock, which every linked watch follows.
///
/// phoned owns the clock (`--clock system|manual`). On each link of protocol version 2 it sends
/// CLOCK_SET when the link comes up and in every round of a move; the watch sets its own
/// clock to it (switching to a manual clock, or back to the system's), fires its device timers
/// that fall due, and answers CLOCK_ACK with its nearest timer once it has handled everything
/// that arrived before the CLOCK_SET and nothing of its own waits for a commit.
///
/// `clock.advance` on the phone moves the pair's clock in steps, one for each timer that falls
/// due across the pair, in the order of their deadlines: the phone moves its clock to the
/// deadline and fires its own due timers, then rounds of CLOCK_SET and CLOCK_ACK go over each
/// link until one crosses no other frame in either direction (a barrier over the ordered link:
/// what either side caused has been handled by the other), and only then the next step. The
/// last step moves the clock to the advance's end. `clock.set` sets the wall clock and ends
/// with such a round, so every daemon of the pair shows the same time when either answers.
final class PairClock {
    /// What the clock keeps on one link (``LinkChannel/clockLink``).
    struct LinkState {
        /// Watch: how far this watch's monotonic time is ahead of the phone's on this link
        /// (set by the link's first CLOCK_SET: a watch's monotonic time never goes back).
        var offset: Int64?
        /// Phone: the round sent on this link and not acknowledged yet, with the link's frame
        /// counts after it was sent and the phone's monotonic time of the round.
        var awaiting: (round: UInt64, sent: UInt64, received: UInt64, monotonic: Int64)?
        /// Phone: the watch's nearest device timer, in the phone's monotonic time.
        var nextTimer: Int64?
    }

    /// A move of the clock under way: an advance to `target` (monotonic, ms), or a set.
    private struct Move {
        var target: Int64
        var answer: (Result<JSONObject, ControlError>) -> Void
        var steps = 0
    }

    /// The most steps an advance takes before it gives up: a timer that re-arms itself at the
    /// same time for ever would hold the advance for ever.
    static let maximumSteps = 1_000_000

    /// 366 days, in milliseconds: the longest single advance.
    static let maximumAdvanceMilliseconds: Int64 = 366 * 86_400_000

    private let role: Role
    private let loop: EventLoop
    private let logger: Logger
    private let committer: TurnCommitter
    private let directory: PeerDirectory
    private let tracer: Tracer
    private var round: UInt64 = 0
    private var roundQuiet = true
    private var move: Move?

    init(role: Role, loop: EventLoop, logger: Logger, committer: TurnCommitter, directory: PeerDirectory, tracer: Tracer) {
        self.role = role
        self.loop = loop
        self.logger = logger
        self.committer = committer
        self.directory = directory
        self.tracer = tracer
    }

    /// Whether a `clock.advance` or `clock.set` is under way.
    var isMoving: Bool { move != nil }

    /// The clock as `status` and the clock ops show it.
    var json: JSONObject {
        let clock = loop.clock
        let wall = clock.wallMilliseconds
        var object: JSONObject = [
            "mode": .string(clock.mode.rawValue), "time": .string(ISO8601Timestamp.string(fromMilliseconds: wall)),
            "wallMs": .int(wall),
        ]
        if let next = loop.nextDeviceTimerMilliseconds { object["nextTimerInMs"] = .int(max(0, next - loop.nowMilliseconds)) }
        if role == .watch {
            let phone = directory.appPeer.channel
            object["followsPhone"] = .bool(phone.map { $0.version >= LinkProtocol.clockVersion && $0.clockLink.offset != nil } ?? false)
        }
        return object
    }

    // MARK: - The phone's ops

    /// `clock.advance`: moves the pair's clock `milliseconds` ahead, firing the timers that fall
    /// due on the way; answers once every daemon of the pair shows the new time.
    func advance(by milliseconds: Int64, answer: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        try checkMovable("clock.advance")
        move = Move(target: loop.nowMilliseconds + milliseconds, answer: answer)
        logger.debug("clock: advancing \(milliseconds) ms")
        startRound()
    }

    /// `clock.set`: the pair's wall clock reads `wallMilliseconds` from now on; timers stay.
    func set(wallMilliseconds: Int64, answer: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        try checkMovable("clock.set")
        loop.setWallClock(milliseconds: wallMilliseconds)
        tracer.clockMoved()
        move = Move(target: loop.nowMilliseconds, answer: answer)
        logger.info("clock: set to \(ISO8601Timestamp.string(fromMilliseconds: wallMilliseconds))")
        startRound()
    }

    private func checkMovable(_ op: String) throws {
        guard role == .phone else {
            let phone = directory.appPeer.channel?.peer.map { " ('\($0.deviceId)')" } ?? ""
            throw ControlError.control(
                .unknownOp,
                "\(op): a watch follows its phone's clock; move it on the phone\(phone) (phone.ctl, linkctl clock), and every linked watch follows")
        }
        guard loop.clock.isManual else {
            throw ControlError.control(.invalidArgument, "\(op): the phone's clock is the system's; start phoned with --clock manual to move it")
        }
        guard move == nil else {
            throw ControlError.control(.busy, "\(op): the clock is being moved already; one move at a time")
        }
    }

    // MARK: - Links

    /// A link came up: the phone tells the watch its clock (on links that know CLOCK_SET).
    func linkUp(_ channel: LinkChannel) {
        guard role == .phone, channel.version >= LinkProtocol.clockVersion else { return }
        send(round: round, on: channel)
    }

    /// A link went down: a round waits for it no longer.
    func linkDown(_ channel: LinkChannel) {
        guard role == .phone, channel.clockLink.awaiting?.round == round, move != nil else { return }
        channel.clockLink.awaiting = nil
        roundAnswered()
    }

    /// A CLOCK_SET or CLOCK_ACK arrived.
    func received(_ frame: Frame, on channel: LinkChannel, peer: PeerSession) {
        guard channel.version >= LinkProtocol.clockVersion else {
            return channel.refuse(
                .protocolError, "\(frame.typeName) on a link of protocol version \(channel.version) (clock frames are version \(LinkProtocol.clockVersion))")
        }
        switch (role, frame) {
        case (.watch, .clockSet(let setting)):
            follow(setting, on: channel, peer: peer)
        case (.phone, .clockAck(let round, let next)):
            acknowledged(round: round, nextTimer: next, on: channel)
        default:
            channel.refuse(
                .protocolError,
                "\(frame.typeName) from a \(role == .phone ? "watch" : "phone"): the watch follows the phone's clock, never the other way")
        }
    }

    // MARK: - Phone: rounds and steps

    /// Sends a round's CLOCK_SET to every linked watch once nothing of the phone's waits for a
    /// commit: the CLOCK_SET then follows everything the phone sent before it.
    private func startRound() {
        guard committer.isIdle else { return nextTurn { self.startRound() } }
        round += 1
        roundQuiet = true
        var waiting = false
        for peer in directory.peers {
            guard let channel = peer.channel, channel.version >= LinkProtocol.clockVersion else { continue }
            send(round: round, on: channel)
            waiting = true
        }
        if !waiting { nextTurn { self.roundEnded() } }
    }

    private func send(round: UInt64, on channel: LinkChannel) {
        let clock = loop.clock
        let monotonic = loop.nowMilliseconds
        let setting = ClockSetting(
            round: round, isManual: clock.isManual, monotonicMilliseconds: UInt64(max(0, monotonic)),
            wallMilliseconds: UInt64(min(max(0, clock.wallMilliseconds), Int64(ClockSetting.maximumWallMilliseconds))))
        channel.sendClockFrame(.clockSet(setting))
        channel.clockLink.awaiting = (round, channel.framesSent, channel.framesReceived, monotonic)
    }

    private func acknowledged(round: UInt64, nextTimer: UInt64?, on channel: LinkChannel) {
        guard let awaiting = channel.clockLink.awaiting, awaiting.round == round else {
            return logger.debug("clock: CLOCK_ACK of round \(round) from \(channel.peerDescription), which no round awaits")
        }
        // Quiet: nothing crossed the link in either direction since the CLOCK_SET.
        let quiet = channel.framesSent == awaiting.sent && channel.framesReceived == awaiting.received
        channel.clockLink.awaiting = nil
        channel.clockLink.nextTimer = nextTimer.map { awaiting.monotonic + Int64(clamping: $0) }
        guard move != nil, round == self.round else { return }
        roundQuiet = roundQuiet && quiet
        roundAnswered()
    }

    private func roundAnswered() {
        let open = directory.peers.contains { $0.channel?.clockLink.awaiting?.round == round }
        if !open { nextTurn { self.roundEnded() } }
    }

    /// Every watch answered the round: another round while anything crossed a link or waits for
    /// a commit, else the next step.
    private func roundEnded() {
        guard move != nil else { return }
        guard roundQuiet, committer.isIdle else { return startRound() }
        step()
    }

    /// Fires the next timer due across the pair by the move's target, or ends the move there.
    private func step() {
        guard var current = move else { return }
        let now = loop.nowMilliseconds
        var next = loop.nextDeviceTimerMilliseconds
        for peer in directory.peers {
            guard let channel = peer.channel, let timer = channel.clockLink.nextTimer else { continue }
            next = min(next ?? timer, timer)
        }
        current.steps += 1
        if current.steps > Self.maximumSteps {
            move = nil
            return current.answer(
                .failure(
                    .control(
                        .internalError,
                        "the advance stopped after \(Self.maximumSteps) steps at \(ISO8601Timestamp.string(fromMilliseconds: loop.wallMilliseconds)): a timer keeps falling due at the same time"
                    )))
        }
        move = current
        if let next, next <= current.target {
            loop.moveClock(toMilliseconds: max(next, now))
            tracer.clockMoved()
            loop.runDueDeviceTimers()
            startRound()
        } else if now < current.target {
            loop.moveClock(toMilliseconds: current.target)
            tracer.clockMoved()
            startRound()
        } else {
            move = nil
            logger.debug("clock: at \(ISO8601Timestamp.string(fromMilliseconds: loop.wallMilliseconds)) after \(current.steps) steps")
            current.answer(.success(json))
        }
    }

    // MARK: - Watch: following

    private func follow(_ setting: ClockSetting, on channel: LinkChannel, peer: PeerSession) {
        if !setting.isManual {
            if loop.clock.isManual {
                loop.useSystemClock()
                tracer.clockMoved()
                logger.info("clock: the phone's clock is the system's; so is the watch's again")
            }
            channel.clockLink.offset = nil
        } else {
            let phoneMonotonic = Int64(setting.monotonicMilliseconds)
            if !loop.clock.isManual {
                let mine = loop.nowMilliseconds
                loop.useManualClock(
                    .manual(monotonicNanoseconds: UInt64(max(0, mine)) * 1_000_000, wallNanoseconds: Int64(setting.wallMilliseconds) * 1_000_000))
                logger.info("clock: following the phone's manual clock")
            }
            let offset = channel.clockLink.offset ?? max(0, loop.nowMilliseconds - phoneMonotonic)
            channel.clockLink.offset = offset
            loop.advanceClock(toMilliseconds: phoneMonotonic + offset)
            loop.setWallClock(milliseconds: Int64(setting.wallMilliseconds))
            tracer.clockMoved()
        }
        acknowledge(round: setting.round, peer: peer, serial: channel.serial)
    }

    /// Answers round `round` once the watch has handled what arrived before it and nothing of
    /// its own waits for a commit (checked from the next turn on, after this one's commit).
    private func acknowledge(round: UInt64, peer: PeerSession, serial: UInt64) {
        nextTurn {
            guard let channel = peer.channel, channel.serial == serial else { return }
            guard self.committer.isIdle else { return self.acknowledge(round: round, peer: peer, serial: serial) }
            let next = self.loop.nextDeviceTimerMilliseconds.map { UInt64(max(0, $0 - self.loop.nowMilliseconds)) }
            channel.sendClockFrame(.clockAck(round: round, nextTimerInMilliseconds: next))
        }
    }

    /// Runs `body` in the next loop turn, after this one's commit and flush.
    private func nextTurn(_ body: @escaping () -> Void) {
        loop.schedule(afterMilliseconds: 0, on: .realTime, body)
    }
}
