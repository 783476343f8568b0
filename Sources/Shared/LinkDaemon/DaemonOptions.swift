#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol

/// The command line of `phoned` and `watchd`.
public struct DaemonOptions: Sendable {
    public static let version = WatchLinkVersion.current

    public var role: Role
    public var home: String
    public var linkPath: String
    public var controlPath: String
    public var stateDirectory: String
    public var logLevel: LogLevel = .info
    public var deviceId: String?
    public var poller: PollerBackend = .default
    public var replyTimeoutMilliseconds: Int64 = LinkSession.Configuration.standardReplyTimeoutMilliseconds
    /// Phone: how long a session made inactive by a watch switch keeps delivering what it
    /// received before it deactivates anyway.
    public var inactiveDeliveryMilliseconds: Int64 = LinkSession.Configuration.standardInactiveDeliveryMilliseconds
    /// How many payload bytes of received immediate messages `received.list` keeps.
    public var receivedListBytes: Int = LinkSession.Configuration.defaultReceivedListByteCapacity
    public var activateOnStart = false
    /// How many entries the trace ring keeps (`--trace-entries`; 0: none).
    public var traceEntries: Int = 10_000
    /// Where the trace is appended, if anywhere (`--trace-file`; relative to the home).
    public var traceFile: String?
    /// `--apns-*` and other feature options, by name without the dashes.
    public var featureOptions: [String: String] = [:]
    /// `--app-command PATH` with its `--app-arg`s: the app this side's OS launches.
    public var appCommand: InstalledProgram?
    /// `--app-background-ms`: how long an app launched into the background may run there.
    public var appBackgroundMilliseconds: Int64 = AppLauncher.standardBackgroundBudgetMilliseconds
    /// Watch: when the OS runs the installed app in the background (`--launch-policy`).
    public var launchPolicy: BackgroundLaunchPolicy.Mode = .watch
    /// Watch: the seed of the launch policy's delays (`--launch-seed`); drawn at start when nil.
    public var launchSeed: UInt64?
    /// Watch: the longest a background run for data is deferred (`--launch-window-ms`).
    public var launchWindowMilliseconds: Int64 = BackgroundLaunchPolicy.standardWindowMilliseconds
    /// Watch: a background run's budget before the watchdog ends the app (`--background-task-ms`).
    public var backgroundTaskMilliseconds: Int64 = LinkSession.Configuration.standardBackgroundTaskBudgetMilliseconds
    /// How reachability behaves (`--weather`): calm, or as devices make it.
    public var weather: ReachabilityWeather.Profile = .calm
    /// The seed of the device weather (`--weather-seed`); drawn at start when nil.
    public var weatherSeed: UInt64?
    /// Phone: the device clock (`--clock`): the system's, or a manual one that a test moves
    /// (`clock.advance`, `clock.set`) and every linked watch follows.
    public var clock: DeviceClock.Mode = .system
    /// Phone: the manual clock's wall-clock time at start, in milliseconds since 1970
    /// (`--clock-start`); the real time at start when nil.
    public var clockStartMilliseconds: Int64?

    public var pairingKeyPath: String
    public var programName: String { role == .phone ? "phoned" : "watchd" }

    public init(role: Role, home: String) {
        self.role = role
        self.home = home
        linkPath = home + "/link.sock"
        controlPath = home + (role == .phone ? "/phone.ctl" : "/watch.ctl")
        stateDirectory = home + (role == .phone ? "/phone" : "/watch")
        pairingKeyPath = home + "/pairing.key"
    }

    private static let watchFlags: Set<String> = ["--launch-policy", "--launch-seed", "--launch-window-ms", "--background-task-ms"]
    private static let phoneFlags: Set<String> = ["--clock", "--clock-start"]

    public enum ParseOutcome {
        case run(DaemonOptions)
        case exit(code: Int32, output: String)
    }

    public static func usage(role: Role, featureOptions: [FeatureOption] = []) -> String {
        let name = role == .phone ? "phoned" : "watchd"
        let what = role == .phone ? "the emulated iPhone: listens on the link socket" : "the emulated Apple Watch: connects to the link socket"
        return """
                usage: \(name) [options]

                \(name) runs \(what) and serves its control socket (JSON lines).

            options:
              --home DIR              WatchLink home (default: $WATCHLINK_HOME, $XDG_RUNTIME_DIR/watchlink or /tmp/watchlink-$UID)
              --link PATH             link socket (default: HOME/link.sock)
              --control PATH          control socket (default: HOME/\(role == .phone ? "phone" : "watch").ctl)
              --state-dir DIR         state directory (default: HOME/\(role == .phone ? "phone" : "watch"))
              --pairing-key PATH      the pairing key (default: HOME/pairing.key)\(role == .phone ? "; created when missing" : "; waited for until it exists")
              --device-id ID          this device's id (default: generated once and kept in the state directory)
              --log-level LEVEL       error, warning, info (default), debug or trace
              --reply-timeout-ms N    default reply timeout of message.send (default: \(LinkSession.Configuration.standardReplyTimeoutMilliseconds))
              --inactive-delivery-ms N
                                      phone: how long a session stays inactive after device.switchWatch at most (default: \(LinkSession.Configuration.standardInactiveDeliveryMilliseconds))
              --received-list-bytes N payload bytes of immediate messages received.list keeps, newest first (default: \(LinkSession.Configuration.defaultReceivedListByteCapacity))
              --activate              activate the session at start, as an app that calls activate() at launch
              --trace-entries N       entries the trace keeps in memory, newest (default: 10000; 0: none)
              --trace-file PATH       also append the trace to this file, one JSON line an entry (relative: in the home)
              --poller epoll|poll     event-loop backend (default: epoll on Linux)
              --app-command PATH      the app this side's OS launches (app.install; repeat --app-arg ARG for its arguments)
              --app-background-ms N   phone: how long an app launched into the background runs before the OS ends it (default: \(AppLauncher.standardBackgroundBudgetMilliseconds))
              --weather calm|device   how reachability behaves: every change at once (default), or as devices make it (lags, coalesced flips\(role == .watch ? ", wrist-down spells" : ""))
              --weather-seed N        the seed of the device weather, 0 to \(Int64.max) (default: drawn at start and logged)\(role == .watch ? watchUsage : phoneUsage)
            \(featureOptions.map(featureOptionLine).joined())  --help                  show this help
              --version               print the version
            """
    }

    /// The watch's background-life flags.
    private static let watchUsage = """

          --launch-policy watch|immediate
                                  when the OS runs the app in the background for data and scheduled tasks: as a watch does (default) or at once
          --launch-seed N         the seed of the watch policy's delays, 0 to \(Int64.max) (default: drawn at start and logged)
          --launch-window-ms N    the longest the watch policy defers a background run for data (default: \(BackgroundLaunchPolicy.standardWindowMilliseconds))
          --background-task-ms N  a background run's budget before the watchdog ends an app whose tasks are open (default: \(LinkSession.Configuration.standardBackgroundTaskBudgetMilliseconds))
        """

    /// The phone's clock flags.
    private static let phoneUsage = """

          --clock system|manual   the device clock of the pair: the system's (default), or one that moves only by clock.advance and clock.set; linked watches follow it
          --clock-start TIME      the manual clock's time at start, ISO 8601 (e.g. 2026-12-31T23:59:00Z; default: the real time at start)
        """

    /// `  --name VALUE   summary`, the summary on a line of its own after a long flag.
    /// The values of an option that names a case of `T`, for its error: "a or b", "a, b or c".
    static func oneOf<T: CaseIterable & RawRepresentable>(_ type: T.Type) -> String where T.RawValue == String {
        let names = T.allCases.map(\.rawValue)
        guard let last = names.last, names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }

    private static func featureOptionLine(_ option: FeatureOption) -> String {
        let flag = "--\(option.name) \(option.valueName)"
        let column = 24
        let gap = flag.count < column - 1 ? String(repeating: " ", count: column - flag.count) : "\n" + String(repeating: " ", count: column + 2)
        return "  " + flag + gap + option.summary + "\n"
    }

    public static func parse(
        _ arguments: [String], role: Role, featureOptions: [FeatureOption] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ParseOutcome {
        let name = role == .phone ? "phoned" : "watchd"
        var home: String?
        var link: String?, control: String?, state: String?, key: String?
        var appCommand: String?, appArguments: [String] = []
        var options = DaemonOptions(role: role, home: "")
        var index = 0
        func fail(_ message: String) -> ParseOutcome {
            .exit(code: 2, output: "\(name): \(message)\nTry '\(name) --help'.")
        }
        while index < arguments.count {
            let argument = arguments[index]
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                flag = String(argument[..<eq])
                inlineValue = String(argument[argument.index(after: eq)...])
            }
            func value() -> String? {
                if let inlineValue { return inlineValue }
                index += 1
                return index < arguments.count ? arguments[index] : nil
            }
            switch flag {
            case "--help", "-h":
                return .exit(code: 0, output: usage(role: role, featureOptions: featureOptions))
            case "--version":
                return .exit(code: 0, output: "\(name) \(version)")
            case "--activate":
                options.activateOnStart = true
            case let name where featureOptions.contains { "--" + $0.name == name }:
                guard let v = value(), !v.isEmpty else { return fail("\(flag) needs a value") }
                options.featureOptions[String(name.dropFirst(2))] = v
            case "--app-arg":
                guard let v = value() else { return fail("--app-arg needs a value") }
                appArguments.append(v)
            case "--home", "--link", "--control", "--state-dir", "--pairing-key", "--device-id", "--log-level", "--reply-timeout-ms",
                "--inactive-delivery-ms", "--received-list-bytes", "--poller", "--trace-entries", "--trace-file", "--app-command",
                "--app-background-ms", "--launch-policy", "--launch-seed", "--launch-window-ms", "--background-task-ms", "--weather",
                "--weather-seed", "--clock", "--clock-start":
                guard let v = value(), !v.isEmpty else { return fail("\(flag) needs a value") }
                if Self.watchFlags.contains(flag), role != .watch {
                    return fail("\(flag) is watchd's: the watch app's background life is watchOS's")
                }
                if Self.phoneFlags.contains(flag), role != .phone {
                    return fail("\(flag) is phoned's: a watch follows the clock of the phone it is linked with")
                }
                switch flag {
                case "--home": home = v
                case "--link": link = v
                case "--control": control = v
                case "--state-dir": state = v
                case "--pairing-key": key = v
                case "--device-id":
                    guard v.utf8.count <= 255, !v.contains(where: { $0.isNewline }) else {
                        return fail("--device-id must be 1 to 255 bytes of text without newlines")
                    }
                    options.deviceId = v
                case "--log-level":
                    guard let level = LogLevel(name: v) else {
                        return fail("unknown log level '\(v)' (expected error, warning, info, debug or trace)")
                    }
                    options.logLevel = level
                case "--reply-timeout-ms":
                    guard let ms = Int64(v), ms > 0, ms <= 3_600_000 else {
                        return fail("--reply-timeout-ms must be an integer from 1 to 3600000, got '\(v)'")
                    }
                    options.replyTimeoutMilliseconds = ms
                case "--inactive-delivery-ms":
                    guard let ms = Int64(v), ms >= 0, ms <= 600_000 else {
                        return fail("--inactive-delivery-ms must be an integer from 0 to 600000, got '\(v)'")
                    }
                    options.inactiveDeliveryMilliseconds = ms
                case "--trace-entries":
                    guard let count = Int(v), count >= 0, count <= 10_000_000 else {
                        return fail("--trace-entries must be an integer from 0 to 10000000, got '\(v)'")
                    }
                    options.traceEntries = count
                case "--trace-file":
                    options.traceFile = v
                case "--app-command":
                    appCommand = v
                case "--app-background-ms":
                    guard let ms = Int64(v), ms > 0, ms <= 86_400_000 else {
                        return fail("--app-background-ms must be an integer from 1 to 86400000, got '\(v)'")
                    }
                    options.appBackgroundMilliseconds = ms
                case "--launch-policy":
                    guard let mode = BackgroundLaunchPolicy.Mode(rawValue: v) else {
                        return fail("--launch-policy is \(Self.oneOf(BackgroundLaunchPolicy.Mode.self)), got '\(v)'")
                    }
                    options.launchPolicy = mode
                case "--launch-seed":
                    guard let seed = Int64(v), seed >= 0 else {
                        return fail("--launch-seed must be an integer from 0 to \(Int64.max), got '\(v)'")
                    }
                    options.launchSeed = UInt64(seed)
                case "--weather":
                    guard let profile = ReachabilityWeather.Profile(rawValue: v) else {
                        return fail("--weather is \(Self.oneOf(ReachabilityWeather.Profile.self)), got '\(v)'")
                    }
                    options.weather = profile
                case "--weather-seed":
                    guard let seed = Int64(v), seed >= 0 else {
                        return fail("--weather-seed must be an integer from 0 to \(Int64.max), got '\(v)'")
                    }
                    options.weatherSeed = UInt64(seed)
                case "--launch-window-ms":
                    guard let ms = Int64(v), ms >= 0, ms <= 86_400_000 else {
                        return fail("--launch-window-ms must be an integer from 0 to 86400000, got '\(v)'")
                    }
                    options.launchWindowMilliseconds = ms
                case "--background-task-ms":
                    guard let ms = Int64(v), ms >= 100, ms <= 3_600_000 else {
                        return fail("--background-task-ms must be an integer from 100 to 3600000, got '\(v)'")
                    }
                    options.backgroundTaskMilliseconds = ms
                case "--clock":
                    guard let mode = DeviceClock.Mode(rawValue: v) else {
                        return fail("--clock is \(Self.oneOf(DeviceClock.Mode.self)), got '\(v)'")
                    }
                    options.clock = mode
                case "--clock-start":
                    guard let date = ISO8601Timestamp.date(from: v) else {
                        return fail("--clock-start must be an ISO 8601 date and time with a zone (2026-12-31T23:59:00Z), got '\(v)'")
                    }
                    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
                    guard milliseconds >= 0, milliseconds <= Double(ClockSetting.maximumWallMilliseconds) else {
                        return fail("--clock-start must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, got '\(v)'")
                    }
                    options.clockStartMilliseconds = Int64(milliseconds)
                case "--received-list-bytes":
                    guard let bytes = Int(v), bytes >= 0, bytes <= 1 << 30 else {
                        return fail("--received-list-bytes must be an integer from 0 to 1073741824, got '\(v)'")
                    }
                    options.receivedListBytes = bytes
                default:
                    guard let backend = PollerBackend(rawValue: v) else {
                        return fail("unknown poller '\(v)' (expected \(Self.oneOf(PollerBackend.self)))")
                    }
                    options.poller = backend
                }
            default:
                return fail("unknown option '\(argument)'")
            }
            index += 1
        }
        let resolvedHome = home ?? WatchLinkHome.defaultPath(environment: environment)
        var resolved = DaemonOptions(role: role, home: resolvedHome)
        resolved.logLevel = options.logLevel
        resolved.deviceId = options.deviceId
        resolved.poller = options.poller
        resolved.replyTimeoutMilliseconds = options.replyTimeoutMilliseconds
        resolved.inactiveDeliveryMilliseconds = options.inactiveDeliveryMilliseconds
        resolved.receivedListBytes = options.receivedListBytes
        resolved.activateOnStart = options.activateOnStart
        resolved.traceEntries = options.traceEntries
        resolved.traceFile = options.traceFile.map { $0.hasPrefix("/") ? $0 : resolvedHome + "/" + $0 }
        resolved.featureOptions = options.featureOptions
        resolved.appBackgroundMilliseconds = options.appBackgroundMilliseconds
        resolved.launchPolicy = options.launchPolicy
        resolved.launchSeed = options.launchSeed
        resolved.launchWindowMilliseconds = options.launchWindowMilliseconds
        resolved.backgroundTaskMilliseconds = options.backgroundTaskMilliseconds
        if options.weatherSeed != nil, options.weather == .calm {
            return fail("--weather-seed seeds the device weather: give --weather device with it")
        }
        resolved.weather = options.weather
        resolved.weatherSeed = options.weatherSeed
        if options.clockStartMilliseconds != nil, options.clock != .manual {
            return fail("--clock-start is the manual clock's time at start: give --clock manual with it")
        }
        resolved.clock = options.clock
        resolved.clockStartMilliseconds = options.clockStartMilliseconds
        if let appCommand {
            do { resolved.appCommand = try InstalledProgram(command: [appCommand] + appArguments) } catch {
                return fail("--app-command: \(error)")
            }
        } else if !appArguments.isEmpty {
            return fail("--app-arg is an argument of --app-command, which is missing")
        }
        if let link { resolved.linkPath = link }
        if let control { resolved.controlPath = control }
        if let state { resolved.stateDirectory = state }
        if let key { resolved.pairingKeyPath = key }
        return .run(resolved)
    }
}
