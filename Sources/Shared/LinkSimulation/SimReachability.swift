import LinkSession
import WireProtocol

/// What a seed's world is like for reachability: the weather both daemons run with, and how
/// often the apps change state (foreground, background, not running) and the watch's workout
/// starts or ends.
package struct SimReachabilityOptions: CustomStringConvertible {
    /// The device weather's seed, which both daemons take (`--weather device --weather-seed N`);
    /// nil: the session's default weather, constructed without naming a profile (calm).
    package var weatherSeed: UInt64?
    /// Workload weight of app-state changes and workouts.
    package var weight: Int
    /// Virtual milliseconds between workload steps, at most, in a world with the device weather:
    /// spells come 5 to 45 s apart, so such a world runs for minutes of virtual time.
    package var stepGapMilliseconds: Int64

    /// Draws from a generator of its own, so that its draws shift no other part of the world's.
    package init(drawingFrom random: inout SimRandom) {
        var own = random.fork()
        // 0...Int64.max, as the daemon draws a seed it is not given.
        weatherSeed = own.chance(0.2) ? own.next() >> 1 : nil
        weight = own.int(0...2)
        if weatherSeed != nil { weight = max(weight, 1) }
        stepGapMilliseconds = [1_000, 3_000, 8_000][own.int(0...2)]
    }

    package var description: String {
        "weather \(weatherSeed.map { "device (seed \($0))" } ?? "calm"), app states and workouts \(weight)"
    }
}

/// The reachability checks of a world: each side's reachability in fact by the WatchConnectivity
/// rules, what its app is told of it and when, the watch's spells, and that sends follow the fact.
///
/// The fact is computed here from the inputs the rules name (the link, activation, the pair's
/// flags, the watch app's state, its workout, a spell), not read from the session, and every
/// figure is stated here (docs/app-side.md, "Reachability as devices make it"):
/// - `WCSession.h`, `isReachable`, WatchKit extension side: "The iOS device is reachable if the
///   WatchKit extension is running in the foreground, or is running with a high priority in the
///   background (for example, during a workout session ...)"; `sendMessage`: "Calling this method
///   from your WatchKit extension while it is active and running wakes up the corresponding iOS
///   app in the background and makes it reachable": the phone app's state does not matter.
/// - iOS side: "The paired Apple Watch is reachable if the WatchKit extension is running in the
///   foreground" (or in a workout, as the watch tells the phone); a background watch app without
///   a workout is not reachable.
/// - Device weather: a report comes 200 ms to 2 s after the change it reports, a change while the
///   previous one is still to be reported is never reported (openradar 23337218), sends follow the
///   fact (TortugaPower/BookPlayer issue 703), and the watch app in the foreground has wrist-down
///   and screen-off spells 5 to 45 s apart, of 0.5 to 15 s, in which it cannot converse unless a
///   workout runs (KaneCheshire/Communicator issue 34, react-native-watch-connectivity issue 130).
final class SimReachability {
    /// What the checks know of one side's current session.
    struct Side {
        /// The session runs the device weather (else the calm default).
        var device = false
        /// Reachability in fact at the last evaluation.
        var fact = false
        /// What the app reads, as the rules have it.
        var reported = false
        /// The change still to be reported, and when it happened.
        var pending: (value: Bool, since: Int64)?
        /// Watch: the spell under way (from its `weather.spellBegan`).
        var spell: (kind: ReachabilityWeather.SpellKind, duration: Int64, began: Int64)?
        /// Watch: when the next spell's gap began (entering the foreground, the last spell's end).
        var anchor: Int64 = 0
        var wasForeground = false
        /// Watch: the session's start, and whether its app stayed in the foreground from then to
        /// its first spell (that spell is then the seed's first draw).
        var started: Int64 = 0
        var firstDrawIntact = true
        var sawSpell = false
        /// Watch: a workout kept the app reachable through the spell under way (counted once).
        var workoutThroughTheSpell = false
    }

    /// A `sendMessage` being submitted: the fact and the app's view when it was asked for.
    private struct Submission {
        let token: UInt64
        let role: Role
        let fact: Bool
        let reported: Bool
        /// An earlier precondition (activation, the pair's flags) may refuse it first.
        let otherPrecondition: Bool
        let peerAppNotRunning: Bool
        /// The sending daemon's incarnation: one that died in the turn answered nothing.
        let incarnation: Int
        var result: Result<CommandResult, SessionError>?
    }

    /// The figures of the rules, stated here rather than read from `ReachabilityWeather`, so that
    /// a changed figure fails. The lag: openradar 23337218, lowering and raising the watch "within
    /// 1-2 seconds" comes before "the delegate ... get[s] a chance to call"; docs/app-side.md: a
    /// change is told 200 ms to 2 s late.
    static let reportLagMilliseconds: ClosedRange<Int64> = 200...2_000
    /// The spells (KaneCheshire/Communicator issue 34: "a watch's Reachability will change very
    /// often, even if the screen is off but your watch app is still in the foreground"): every 5
    /// to 45 s in the foreground, of 0.5 to 2 s (a glance) or 2 to 15 s (docs/app-side.md; no
    /// source measures the spans, they are of a wrist's order).
    static let spellGapMilliseconds: ClosedRange<Int64> = 5_000...45_000
    static let spellDurationMilliseconds: ClosedRange<Int64> = 500...15_000

    unowned let world: SimWorld
    let options: SimReachabilityOptions
    private var sides = [Side(), Side()]
    private var submission: Submission?
    /// Set while the final phase sets the calm weather (`weather.set`): the spell it ends is told.
    private var settingWeather = false

    init(world: SimWorld, options: SimReachabilityOptions) {
        self.world = world
        self.options = options
    }

    private func index(_ role: Role) -> Int { role == .phone ? 0 : 1 }

    private func fail(_ message: String) { world.history.fail(message) }

    // MARK: - The weather

    /// The weather of a session the node makes: nil for the session's default (calm) weather.
    /// The final phase runs calm, as a test that ends with `weather.set {"profile": "calm"}`.
    func weather(for role: Role) -> ReachabilityWeather? {
        guard let seed = options.weatherSeed, !world.isFinalPhase else { return nil }
        return ReachabilityWeather(profile: .device, seed: seed, role: role)
    }

    /// A node made its session (a daemon's start): the session starts unlinked, unreachable,
    /// its app told nothing, in the foreground.
    func sessionMade(_ node: SimNode) {
        var side = Side()
        side.device = options.weatherSeed != nil && !world.isFinalPhase
        side.anchor = world.now
        side.started = world.now
        side.wasForeground = node.peer.session.appState == .foreground
        sides[index(node.role)] = side
    }

    /// Faults are over: the device weather ends on each running side (`weather.set` calm).
    func finalPhase() {
        guard options.weatherSeed != nil else { return }
        for role in [Role.phone, .watch] {
            let node = world.node(role)
            guard node.isUp else { continue }
            let i = index(role)
            sides[i].device = false
            sides[i].pending = nil
            settingWeather = true
            node.turn { node.peer.session.setWeather(ReachabilityWeather(role: role), now: world.now) }
            settingWeather = false
            sides[i].spell = nil
        }
    }

    // MARK: - The fact

    /// Whether the watch app can converse: in the foreground outside a spell, or in a workout.
    /// `isReachable`, WatchKit extension side: "running in the foreground, or ... with a high
    /// priority in the background (for example, during a workout session ...)"; a spell leaves
    /// the app frontmost and idle (react-native-watch-connectivity issue 130: "the reachability
    /// status ... eventually turns false at some point. However, if I touch the watch app ...
    /// turns true again"), and a workout keeps it reachable through one.
    static func watchAppConverses(_ appState: AppState, workout: Bool, spell: Bool) -> Bool {
        switch appState {
        case .foreground: return !spell || workout
        case .background: return workout
        case .notRunning: return false
        }
    }

    /// Reachability in fact of `role`'s session by the rules (the type's comment).
    private func fact(of role: Role, _ session: LinkSession) -> Bool {
        guard session.isLinkUp, session.activationState == .activated, let peer = session.peerState,
            peer.activationState == .activated
        else { return false }
        // `WCSession.h`: unreachable unless paired with the watch app and companion app installed.
        let phone = role == .phone ? session.flags : peer.flags
        let watch = role == .watch ? session.flags : peer.flags
        guard phone.contains(.isPaired), phone.contains(.isWatchAppInstalled), watch.contains(.isCompanionAppInstalled),
            !watch.contains(.isWatchOnlyApp)
        else { return false }
        switch role {
        // The watch tells the phone its app's state as conversing sees it (checked as it is sent).
        case .phone: return peer.appState == .foreground
        // The phone app's state does not matter: a message of the watch app wakes it.
        case .watch:
            return Self.watchAppConverses(session.appState, workout: session.workoutRunning, spell: sides[1].spell != nil)
        }
    }

    /// After each call into a node's session: its reachability in fact, what its app reads, and
    /// (device weather) when it was told.
    func evaluate(_ node: SimNode) {
        guard node.isUp, !node.dying else { return }
        let role = node.role
        let session = node.peer.session
        let now = world.now
        var side = sides[index(role)]
        defer { sides[index(role)] = side }
        let reported = session.reportedReachability
        if side.device {
            if reported != side.reported {
                if let pending = side.pending, pending.value == reported {
                    // openradar 23337218: the delegate is called 1-2 s after the change; 200 ms
                    // at the least.
                    let lag = now - pending.since
                    if !Self.reportLagMilliseconds.contains(lag) {
                        fail("\(role.name): the app was told isReachable \(reported) \(lag) ms after the change, not 200...2000 ms (openradar 23337218)")
                    }
                    world.coverage.count(.reportLagged)
                } else {
                    fail("\(role.name): the app was told isReachable \(reported) with no change of the fact to tell (it reads \(side.reported) as told)")
                }
                side.reported = reported
                side.pending = nil
            }
            if let pending = side.pending, now - pending.since > Self.reportLagMilliseconds.upperBound {
                fail("\(role.name): reachability became \(pending.value) at \(pending.since) and the app was not told within 2 s (openradar 23337218)")
                side.pending = nil
            }
        }
        // The session's `isReachable` (which sends follow) is the fact by the rules.
        let fact = fact(of: role, session)
        if session.isReachable != fact {
            fail("\(role.name): reachable in fact is \(session.isReachable), the rules say \(fact) (\(describe(node)))")
        }
        if fact != side.fact {
            if side.device {
                if let pending = side.pending {
                    // A flip while the previous change is to be reported is never reported: "The
                    // delegate gets called just once, reflecting the NOT reachable state and fails
                    // to call again" (openradar 23337218); the app's view stays stale until the
                    // next change.
                    if fact != pending.value { world.coverage.count(.flipInsideTheLag) }
                } else if fact != side.reported {
                    side.pending = (fact, now)
                }
            }
            side.fact = fact
        }
        // docs/app-side.md: "the default `calm` weather keeps every change instant".
        if !side.device, reported != fact {
            fail("\(role.name): under calm weather the app reads isReachable \(reported) while the fact is \(fact): every change is told at once")
        }
        guard role == .watch else { return }
        let foreground = session.appState == .foreground
        if foreground, !side.wasForeground { side.anchor = now }
        if !foreground, side.wasForeground, !side.sawSpell { side.firstDrawIntact = false }
        side.wasForeground = foreground
        // Spells come while the app is in the foreground: one within 45 s.
        if side.device, foreground, side.spell == nil, now - side.anchor > Self.spellGapMilliseconds.upperBound {
            fail("watch: no spell in the foreground for \(now - side.anchor) ms under device weather (spells come 5-45 s apart)")
            side.anchor = now
        }
        if foreground, side.spell != nil, session.workoutRunning, fact, !side.workoutThroughTheSpell {
            side.workoutThroughTheSpell = true
            world.coverage.count(.workoutThroughASpell)
        }
    }

    private func describe(_ node: SimNode) -> String {
        let session = node.peer.session
        var parts = [
            "link \(session.isLinkUp ? "up" : "down")", "app \(session.appState.name)",
            "peer \(session.peerState.map { "\($0.activationState.name) \($0.appState.name) flags \($0.flags.rawValue)" } ?? "unknown")",
            "flags \(session.flags.rawValue)",
        ]
        if node.role == .watch {
            parts.append("workout \(session.workoutRunning)")
            parts.append("spell \(sides[1].spell != nil)")
        }
        return parts.joined(separator: ", ")
    }

    /// The watch tells the phone its app's state: foreground while it converses (in the
    /// foreground outside a spell, or in a workout), which is what the phone's fact reads.
    /// `isReachable`, iOS side: "The paired Apple Watch is reachable if the WatchKit extension is
    /// running in the foreground"; a background watch app without a workout is not reachable.
    func stateSent(_ state: SessionState, by node: SimNode) {
        guard node.role == .watch else { return }
        let session = node.peer.session
        let expected: AppState =
            session.appState == .notRunning
            ? .notRunning
            : Self.watchAppConverses(session.appState, workout: session.workoutRunning, spell: sides[1].spell != nil)
                ? .foreground : .background
        if state.appState != expected {
            fail("watch: told the phone its app is \(state.appState.name), \(expected.name) expected (\(describe(node)))")
        }
    }

    // MARK: - The weather's events

    /// What the weather did, told to the app's side: only under the device weather (calm has
    /// none), naming the world's weather seed; spells on the watch in the foreground, as far
    /// apart and as long as the figures say.
    func notified(_ notification: SessionNotification, by node: SimNode) {
        guard case .weather(let event) = notification else { return }
        let role = node.role
        var side = sides[index(role)]
        defer { sides[index(role)] = side }
        let now = world.now
        guard side.device || settingWeather else {
            return fail("\(role.name): a weather event under calm weather (the default): \(event)")
        }
        switch event {
        case .spellBegan(let kind, let duration, let seed):
            checkSeed(seed, role)
            guard role == .watch else { return fail("phone: a spell began; spells are the watch's") }
            guard node.peer.session.appState == .foreground else {
                return fail("watch: a spell began with the app \(node.peer.session.appState.name); spells come in the foreground")
            }
            if side.spell != nil { fail("watch: a spell began during a spell") }
            let gap = now - side.anchor
            if !Self.spellGapMilliseconds.contains(gap) {
                fail("watch: a spell began \(gap) ms after the app entered the foreground or the last spell ended, not 5-45 s")
            }
            if !Self.spellDurationMilliseconds.contains(duration) { fail("watch: a spell of \(duration) ms, not 0.5-15 s") }
            side.spell = (kind, duration, now)
            side.workoutThroughTheSpell = false
            world.coverage.count(.spell)
            if !side.sawSpell, side.firstDrawIntact, let seed = options.weatherSeed {
                let first = SimSpellSeeds.FirstSpell(gap: gap, kind: kind.rawValue, duration: duration)
                if let failure = world.coverage.spellSeeds.record(weatherSeed: seed, world: world.seed, spell: first) {
                    fail(failure)
                }
            }
            side.sawSpell = true
            let phone = world.node(.phone)
            if node.peer.session.status().pendingMessages > 0 || (phone.isUp && phone.peer.session.status().pendingMessages > 0) {
                world.coverage.count(.spellDuringAMessage)
            }
        case .spellEnded(_, let seed):
            checkSeed(seed, role)
            guard let spell = side.spell else { return fail("\(role.name): a spell ended that never began") }
            let lasted = now - spell.began
            if node.peer.session.appState == .foreground, !settingWeather {
                if lasted != spell.duration { fail("watch: a spell announced for \(spell.duration) ms lasted \(lasted) ms") }
                side.anchor = now
            } else if lasted > spell.duration {
                fail("watch: a spell announced for \(spell.duration) ms lasted \(lasted) ms")
            }
            side.spell = nil
        case .reportDelayed(_, let lag, let seed):
            checkSeed(seed, role)
            if !Self.reportLagMilliseconds.contains(lag) {
                fail("\(role.name): a report lag of \(lag) ms, not 200...2000 ms (openradar 23337218)")
            }
        case .reportMissed(_, let seed):
            checkSeed(seed, role)
        }
    }

    private func checkSeed(_ seed: UInt64, _ role: Role) {
        if seed != options.weatherSeed {
            fail("\(role.name): a weather event names seed \(seed), the daemons run \(options.weatherSeed.map(String.init) ?? "calm")")
        }
    }

    // MARK: - Sends follow the fact

    /// An app's `sendMessage` is about to be handled.
    func willSubmit(_ token: RequestToken, _ command: SessionCommand, on node: SimNode) {
        guard case .sendMessage = command else { return }
        let session = node.peer.session
        let own = session.flags
        let pairing =
            node.role == .phone
            ? !own.contains(.isPaired) || !own.contains(.isWatchAppInstalled)
            : own.contains(.isWatchOnlyApp) || !own.contains(.isCompanionAppInstalled)
        let phone = world.node(.phone)
        submission = Submission(
            token: token.rawValue, role: node.role, fact: fact(of: node.role, session), reported: session.reportedReachability,
            otherPrecondition: pairing || session.activationState != .activated,
            peerAppNotRunning: phone.isUp && phone.peer.session.appState == .notRunning, incarnation: node.incarnation)
    }

    /// A request was answered.
    func responded(_ token: RequestToken, _ result: Result<CommandResult, SessionError>) {
        if submission?.token == token.rawValue { submission?.result = result }
    }

    /// The `sendMessage` was handled: refused at once with 7007 exactly when unreachable in fact,
    /// whatever the app was last told (BookPlayer 703: "even if it's false, the messages between
    /// the phone and the watch still work").
    func didSubmit(_ token: RequestToken) {
        guard let submitted = submission, submitted.token == token.rawValue else { return }
        submission = nil
        let node = world.node(submitted.role)
        // The daemon died in the turn (a power cut at its commit): the app heard nothing.
        guard node.isUp, node.incarnation == submitted.incarnation else { return }
        var refusedAsUnreachable = false
        if case .failure(.wc(.notReachable, _))? = submitted.result { refusedAsUnreachable = true }
        let name = submitted.role.name
        if !submitted.fact {
            if submitted.otherPrecondition, submitted.result != nil { return }
            if !refusedAsUnreachable {
                fail(
                    "\(name): sendMessage while unreachable in fact (the app read \(submitted.reported)) was \(submitted.result.map { "answered \($0)" } ?? "sent"), not refused with 7007"
                )
            } else if submitted.reported {
                world.coverage.count(.refusedWhileTheAppReadReachable)
            }
        } else if refusedAsUnreachable {
            fail("\(name): sendMessage while reachable in fact (the app read \(submitted.reported)) was refused with 7007")
        } else if submitted.result == nil {
            if !submitted.reported { world.coverage.count(.sentWhileTheAppReadUnreachable) }
            if submitted.role == .watch, submitted.peerAppNotRunning { world.coverage.count(.watchMessageToAPhoneAppNotRunning) }
        }
    }

    // MARK: - The workload

    /// An app changes state (foreground, background, not running), or the watch's workout
    /// starts or ends.
    func randomCommand(on node: SimNode) -> (SessionCommand, workout: Bool?) {
        if node.role == .watch, world.random.chance(0.35) {
            let start = !node.peer.session.workoutRunning
            return (.setWorkout(start), start)
        }
        let pick = world.random.int(0...99)
        let state: AppState = pick < 45 ? .foreground : pick < 80 ? .background : .notRunning
        return (.setAppState(state), nil)
    }

    // MARK: - At the end

    func checkEnd() {
        for role in [Role.phone, .watch] where world.node(role).isUp {
            if let pending = sides[index(role)].pending, world.now - pending.since > Self.reportLagMilliseconds.upperBound {
                fail("\(role.name): reachability became \(pending.value) at \(pending.since) and the app was never told (openradar 23337218)")
            }
        }
    }
}

/// The first spell of each weather seed, across the worlds of a run: spells come from the
/// seed, so worlds of different seeds have different first spells. A world whose watch app
/// stayed in the foreground from the session's start to its first spell records that spell
/// (its gap from the start, kind and duration: one draw in about 10^9 matches another seed's);
/// once one differs from the first recorded the check is over, and three more seeds that all
/// give the first seed's spell fail it.
package final class SimSpellSeeds {
    struct FirstSpell: Equatable {
        let gap: Int64
        let kind: String
        let duration: Int64
    }

    private var first: (weatherSeed: UInt64, world: UInt64, spell: FirstSpell)?
    private var agreeing: [(weatherSeed: UInt64, world: UInt64)] = []
    private var differed = false

    package init() {}

    /// Records a world's first spell; a failure when different seeds all give the same.
    func record(weatherSeed: UInt64, world: UInt64, spell: FirstSpell) -> String? {
        guard !differed else { return nil }
        guard let first else {
            first = (weatherSeed, world, spell)
            return nil
        }
        guard spell == first.spell else {
            differed = true
            return nil
        }
        guard weatherSeed != first.weatherSeed, !agreeing.contains(where: { $0.weatherSeed == weatherSeed }) else { return nil }
        agreeing.append((weatherSeed, world))
        guard agreeing.count >= 3 else { return nil }
        let worlds = ([first.world] + agreeing.map(\.world)).map(String.init).joined(separator: ", ")
        return "the worlds \(worlds) (weather seeds \(([first.weatherSeed] + agreeing.map(\.weatherSeed)).map(String.init).joined(separator: ", "))) "
            + "all have the same first spell (\(spell.kind), \(spell.gap) ms after the start, \(spell.duration) ms): spells do not come from the weather seed "
            + "(a check across the worlds of a run: one seed alone replays without it)"
    }
}
