/// When watchOS runs a watch app that is not in the foreground: at once (`immediate`), or as a
/// watch does (`watch`, the default), from one seed so that a run replays.
///
/// The watch policy's rules and their sources (docs/app-side.md, "The watch app's background
/// life"):
/// - Data WatchConnectivity brings wakes the app "at an opportune time" (`WCSession.h`,
///   background transfers): a delay drawn uniformly from zero to the window (15 minutes by
///   default, the cadence of "four refresh tasks an hour"; `--launch-window-ms`).
/// - Background runs are budgeted: an app with its complication on the watch face gets four an
///   hour, another one ("If your complication is active, your app can be woken up at least four
///   times an hour. If your complication is not active, your app is guaranteed to be woken at
///   least once an hour", WWDC 2016 session 218 as quoted on Stack Overflow; Apple's "Updating
///   your complication": "you can safely schedule four refresh tasks an hour"). A run that would
///   exceed the allowance waits until the oldest run of the hour is an hour old.
/// - Complication userInfo wakes the app at once, outside that allowance: "Once a current
///   complication user info is received the system will launch the Watch App Extension in the
///   background" (`WCSession.h`); its own budget (50 a day) is kept by the phone.
public struct BackgroundLaunchPolicy: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case watch
        case immediate
    }

    public static let standardWindowMilliseconds: Int64 = 15 * 60 * 1_000
    public static let hourMilliseconds: Int64 = 60 * 60 * 1_000
    public static let launchesPerHourWithComplication = 4
    public static let launchesPerHourWithoutComplication = 1

    public var mode: Mode
    /// The seed of the delays; printed at start, `--launch-seed` replays it.
    public let seed: UInt64
    /// The longest a background run for data is deferred.
    public var windowMilliseconds: Int64
    private var random: SplitMix64
    /// The background runs of the last hour that count against the allowance, oldest first.
    private(set) var recentLaunches: [Int64] = []

    public init(mode: Mode = .watch, seed: UInt64, windowMilliseconds: Int64 = standardWindowMilliseconds) {
        self.mode = mode
        self.seed = seed
        self.windowMilliseconds = windowMilliseconds
        random = SplitMix64(seed: seed)
    }

    /// How long a background run for data waits from now: a draw from the window.
    mutating func dataDeferral() -> Int64 {
        guard mode == .watch, windowMilliseconds > 0 else { return 0 }
        return Int64(random.next() % UInt64(windowMilliseconds + 1))
    }

    /// The allowance of background runs an hour.
    func launchesPerHour(complicationEnabled: Bool) -> Int {
        complicationEnabled ? Self.launchesPerHourWithComplication : Self.launchesPerHourWithoutComplication
    }

    /// The earliest time at or after `now` that one more counted background run fits the
    /// hourly allowance.
    mutating func earliestRun(now: Int64, complicationEnabled: Bool) -> Int64 {
        guard mode == .watch else { return now }
        forget(before: now)
        let allowed = launchesPerHour(complicationEnabled: complicationEnabled)
        guard recentLaunches.count >= allowed else { return now }
        return max(now, recentLaunches[recentLaunches.count - allowed] + Self.hourMilliseconds)
    }

    /// A counted background run started at `now`.
    mutating func recordRun(at now: Int64) {
        forget(before: now)
        recentLaunches.append(now)
    }

    func runs(inHourBefore now: Int64) -> Int {
        recentLaunches.filter { $0 > now - Self.hourMilliseconds }.count
    }

    private mutating func forget(before now: Int64) {
        recentLaunches.removeAll { $0 <= now - Self.hourMilliseconds }
    }
}
