import WireProtocol

/// How reachability behaves: ideal (`calm`, the default: every change reported at once), or as
/// devices make it (`device`), from one seed so that a run replays.
///
/// The device profile's rules and their sources (docs/app-side.md, "Device weather"):
/// - What the app reads lags the fact. `isReachable` and `sessionReachabilityDidChange` report a
///   change a moment after it happened, a draw from ``reportLagMilliseconds``: lowering and raising
///   the watch "within a 1-2 second time span" comes before "the delegate ... get[s] a chance to
///   call" (openradar 23337218). Meanwhile sends follow the fact: "even if it's false, the
///   messages between the phone and the watch still work" (TortugaPower/BookPlayer issue 703).
/// - Quick flips are coalesced: a change that comes while the previous one is still to be
///   reported is never reported; "The delegate gets called just once, reflecting the NOT
///   reachable state and fails to call again to reflect the correct active state of the watch
///   app" (openradar 23337218). The app's snapshot stays stale until the next change.
/// - Watch: wrist-down and screen-off spells while the watch app stays frontmost: "a watch's
///   Reachability will change very often, even if the screen is off but your watch app is still
///   in the foreground" (KaneCheshire/Communicator issue 34); with both apps in the foreground
///   "the reachability status ... eventually turns false at some point. However, if I touch the
///   watch app ... turns true again" (react-native-watch-connectivity issue 130). A spell comes
///   a draw from ``spellGapMilliseconds`` after the app entered the foreground or the last spell
///   ended, and lasts a draw from ``glanceMilliseconds`` (one in three: a lowered-and-raised
///   wrist) or ``spellMilliseconds``. No source measures these spans: they are chosen to be of
///   a wrist's order, and the seed makes any run of them replayable.
public struct ReachabilityWeather: Sendable, Hashable {
    public enum Profile: String, Sendable, Hashable, CaseIterable {
        /// Every change reported at once, no spells: the ideal link.
        case calm
        /// Lags, coalesced flips and (watch) wrist-down spells, as devices show them.
        case device
    }

    /// What makes a spell: the wrist went down, or the screen went off on its own.
    public enum SpellKind: String, Sendable, Hashable, CaseIterable {
        case wristDown
        case screenOff
    }

    /// A spell the watch goes through: it comes `gapMilliseconds` after the previous one (or the
    /// app's entering the foreground) and lasts `durationMilliseconds`.
    public struct Spell: Sendable, Hashable {
        public var kind: SpellKind
        public var gapMilliseconds: Int64
        public var durationMilliseconds: Int64
    }

    public static let reportLagMilliseconds: ClosedRange<Int64> = 200...2_000
    public static let spellGapMilliseconds: ClosedRange<Int64> = 5_000...45_000
    public static let glanceMilliseconds: ClosedRange<Int64> = 500...2_000
    public static let spellMilliseconds: ClosedRange<Int64> = 2_000...15_000

    public let profile: Profile
    /// The seed of every draw; printed when drawn, `--weather-seed` replays it.
    public let seed: UInt64
    private var reports: SplitMix64
    private var spells: SplitMix64

    /// The streams of the two sides differ for one seed (each daemon takes the same
    /// `--weather-seed`), and a spell's draws never shift a lag's.
    public init(profile: Profile = .calm, seed: UInt64 = 0, role: Role) {
        self.profile = profile
        self.seed = seed
        let side: UInt64 = role == .phone ? 0x7068_6F6E_6564_0000 : 0x7761_7463_6864_0000
        reports = SplitMix64(seed: seed ^ side ^ 0x0000_0000_0000_7265)
        spells = SplitMix64(seed: seed ^ side ^ 0x0000_0000_0000_7370)
    }

    public var isCalm: Bool { profile == .calm }

    /// How long the app's view of a change lags it.
    public mutating func reportLag() -> Int64 {
        reports.next(in: Self.reportLagMilliseconds)
    }

    /// The next wrist-down or screen-off spell.
    public mutating func nextSpell() -> Spell {
        let gap = spells.next(in: Self.spellGapMilliseconds)
        let kind: SpellKind = spells.next() % 2 == 0 ? .wristDown : .screenOff
        let isGlance = spells.next() % 3 == 0
        let duration = spells.next(in: isGlance ? Self.glanceMilliseconds : Self.spellMilliseconds)
        return Spell(kind: kind, gapMilliseconds: gap, durationMilliseconds: duration)
    }
}

/// What the weather did, for the trace and the event stream; each names the seed that replays it.
public enum WeatherNotification: Hashable, Sendable {
    /// Watch: the screen went off (`kind`) while the app stays frontmost; the watch is not
    /// reachable for `durationMilliseconds`.
    case spellBegan(ReachabilityWeather.SpellKind, durationMilliseconds: Int64, seed: UInt64)
    /// Watch: the spell is over (the wrist came up) or was cut short (the app left the foreground).
    case spellEnded(ReachabilityWeather.SpellKind, seed: UInt64)
    /// Reachability changed in fact; the app is told `lagMilliseconds` later.
    case reportDelayed(isReachable: Bool, lagMilliseconds: Int64, seed: UInt64)
    /// Reachability changed in fact while the previous change was still to be reported: the app
    /// is never told of this one.
    case reportMissed(isReachable: Bool, seed: UInt64)
}

/// The weather for `status` and `weather.set`.
public struct WeatherStatus: Hashable, Sendable {
    public var profile: ReachabilityWeather.Profile
    public var seed: UInt64
    /// Reachability in fact, which sends follow (`isReachable` is what the app reads).
    public var isReachableInFact: Bool
    /// Watch: the spell under way.
    public var spell: ReachabilityWeather.SpellKind?
    /// The change the app is still to be told of, and in how long.
    public var pendingReport: PendingReport?

    public struct PendingReport: Hashable, Sendable {
        public var isReachable: Bool
        public var inMilliseconds: Int64
    }

    public init(profile: ReachabilityWeather.Profile, seed: UInt64, isReachableInFact: Bool) {
        self.profile = profile
        self.seed = seed
        self.isReachableInFact = isReachableInFact
    }
}
