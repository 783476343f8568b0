@testable import LinkDaemon
import WireProtocol
import XCTest

final class DaemonOptionsTests: XCTestCase {
    private let declared = [FeatureOption("apns-port", "N", "the port"), FeatureOption("apns-host", "ADDR", "the address")]

    func testDeclaredFeatureOptionsReachTheFeature() {
        guard
            case .run(let options) = DaemonOptions.parse(
                ["--home", "/tmp/x", "--apns-port", "0", "--apns-host=::1"], role: .phone,
                featureOptions: declared, environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(options.featureOptions, ["apns-port": "0", "apns-host": "::1"])
    }

    func testAnOptionNoFeatureDeclaresIsUnknown() {
        guard
            case .exit(let code, let output) = DaemonOptions.parse(
                ["--apns-ports", "0"], role: .phone, featureOptions: declared,
                environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(code, 2)
        XCTAssertEqual(output, "phoned: unknown option '--apns-ports'\nTry 'phoned --help'.")
        guard
            case .exit(let missing, let text) = DaemonOptions.parse(
                ["--apns-port"], role: .phone, featureOptions: declared,
                environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(missing, 2)
        XCTAssertTrue(text.hasPrefix("phoned: --apns-port needs a value"), text)
    }

    func testTheInactiveDeliveryTimeIsReadAndChecked() {
        guard
            case .run(let options) = DaemonOptions.parse(
                ["--inactive-delivery-ms", "5000"], role: .phone, featureOptions: [],
                environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(options.inactiveDeliveryMilliseconds, 5_000)
        guard case .run(let defaults) = DaemonOptions.parse([], role: .phone, featureOptions: [], environment: [:]) else { return XCTFail() }
        XCTAssertEqual(defaults.inactiveDeliveryMilliseconds, 2_000)
        guard
            case .exit(2, let output) = DaemonOptions.parse(
                ["--inactive-delivery-ms", "-1"], role: .phone, featureOptions: [],
                environment: [:])
        else { return XCTFail() }
        XCTAssertTrue(output.hasPrefix("phoned: --inactive-delivery-ms must be an integer from 0 to 600000, got '-1'"), output)
    }

    /// The defaults a daemon started without options has, as docs/control-protocol.md states
    /// them, and `--help` with them.
    func testTheShippedDefaults() {
        guard case .run(let defaults) = DaemonOptions.parse([], role: .phone, featureOptions: [], environment: [:]) else { return XCTFail() }
        XCTAssertEqual(defaults.replyTimeoutMilliseconds, 10_000)
        XCTAssertEqual(defaults.inactiveDeliveryMilliseconds, 2_000)
        XCTAssertEqual(defaults.receivedListBytes, 262_144)
        XCTAssertEqual(defaults.traceEntries, 10_000)
        // Apple: an app woken in the background for a notification "has up to 30 seconds of
        // wall-clock time" (`application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`).
        XCTAssertEqual(defaults.appBackgroundMilliseconds, 30_000)
        guard case .exit(0, let help) = DaemonOptions.parse(["--help"], role: .phone, featureOptions: [], environment: [:]) else { return XCTFail() }
        for line in [
            "default reply timeout of message.send (default: 10000)", "after device.switchWatch at most (default: 2000)",
            "keeps, newest first (default: 262144)", "newest (default: 10000; 0: none)", "before the OS ends it (default: 30000)",
        ] {
            XCTAssertTrue(help.contains(line), "--help says \(line)")
        }
    }

    /// The watch app's background life: the shipped defaults (the watch policy, a 15-minute
    /// window, a 15 s budget: docs/app-side.md gives their sources), the flags, and their errors.
    func testTheWatchsBackgroundLifeFlags() {
        guard case .run(let defaults) = DaemonOptions.parse([], role: .watch, environment: [:]) else { return XCTFail() }
        XCTAssertEqual(defaults.launchPolicy, .watch)
        XCTAssertNil(defaults.launchSeed, "drawn at start")
        XCTAssertEqual(defaults.launchWindowMilliseconds, 900_000)
        XCTAssertEqual(defaults.backgroundTaskMilliseconds, 15_000)
        guard case .exit(0, let help) = DaemonOptions.parse(["--help"], role: .watch, environment: [:]) else { return XCTFail() }
        for line in ["as a watch does (default) or at once", "(default: 900000)", "whose tasks are open (default: 15000)"] {
            XCTAssertTrue(help.contains(line), "--help says \(line)")
        }
        guard
            case .run(let options) = DaemonOptions.parse(
                [
                    "--launch-policy", "immediate", "--launch-seed", "9223372036854775807",
                    "--launch-window-ms", "0", "--background-task-ms=100",
                ],
                role: .watch, environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(options.launchPolicy, .immediate)
        XCTAssertEqual(options.launchSeed, UInt64(Int64.max))
        XCTAssertEqual(options.launchWindowMilliseconds, 0)
        XCTAssertEqual(options.backgroundTaskMilliseconds, 100)
        let refusals: [([String], Role, String)] = [
            (["--launch-policy", "never"], .watch, "watchd: --launch-policy is watch or immediate, got 'never'"),
            (["--launch-seed", "-1"], .watch, "watchd: --launch-seed must be an integer from 0 to 9223372036854775807, got '-1'"),
            (["--launch-window-ms", "86400001"], .watch, "watchd: --launch-window-ms must be an integer from 0 to 86400000, got '86400001'"),
            (["--background-task-ms", "99"], .watch, "watchd: --background-task-ms must be an integer from 100 to 3600000, got '99'"),
            (["--launch-policy", "watch"], .phone, "phoned: --launch-policy is watchd's: the watch app's background life is watchOS's"),
        ]
        for (arguments, role, message) in refusals {
            guard case .exit(2, let output) = DaemonOptions.parse(arguments, role: role, environment: [:]) else {
                XCTFail("\(arguments) is refused")
                continue
            }
            XCTAssertTrue(output.hasPrefix(message), output)
        }
    }

    /// The clock flags: phoned's, the system clock by default, a start time only for the manual one.
    func testTheClockFlags() {
        guard case .run(let defaults) = DaemonOptions.parse([], role: .phone, environment: [:]) else { return XCTFail() }
        XCTAssertEqual(defaults.clock, .system)
        XCTAssertNil(defaults.clockStartMilliseconds)
        guard case .exit(0, let help) = DaemonOptions.parse(["--help"], role: .phone, environment: [:]) else { return XCTFail() }
        XCTAssertTrue(help.contains("--clock system|manual"), help)
        XCTAssertTrue(help.contains("--clock-start TIME"), help)
        guard case .exit(0, let watchHelp) = DaemonOptions.parse(["--help"], role: .watch, environment: [:]) else { return XCTFail() }
        XCTAssertFalse(watchHelp.contains("--clock"), "a watch follows its phone's clock")
        guard
            case .run(let manual) = DaemonOptions.parse(
                ["--clock", "manual", "--clock-start=2026-12-31T23:59:00+01:00"], role: .phone, environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(manual.clock, .manual)
        XCTAssertEqual(manual.clockStartMilliseconds, 1_798_757_940_000)
        guard case .run(let epoch) = DaemonOptions.parse(["--clock", "manual", "--clock-start", "1970-01-01T00:00:00Z"], role: .phone, environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(epoch.clockStartMilliseconds, 0)
        let refusals: [([String], Role, String)] = [
            (["--clock", "fake"], .phone, "phoned: --clock is system or manual, got 'fake'"),
            (["--clock"], .phone, "phoned: --clock needs a value"),
            (["--clock", "manual"], .watch, "watchd: --clock is phoned's: a watch follows the clock of the phone it is linked with"),
            (["--clock-start", "2026-12-31T23:59:00Z"], .phone, "phoned: --clock-start is the manual clock's time at start: give --clock manual with it"),
            (
                ["--clock", "manual", "--clock-start", "midnight"], .phone,
                "phoned: --clock-start must be an ISO 8601 date and time with a zone (2026-12-31T23:59:00Z), got 'midnight'"
            ),
            (
                ["--clock", "manual", "--clock-start", "1969-12-31T23:59:59Z"], .phone,
                "phoned: --clock-start must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, got '1969-12-31T23:59:59Z'"
            ),
        ]
        for (arguments, role, message) in refusals {
            guard case .exit(2, let output) = DaemonOptions.parse(arguments, role: role, environment: [:]) else {
                XCTFail("\(arguments) is refused")
                continue
            }
            XCTAssertTrue(output.hasPrefix(message), output)
        }
    }

    /// The weather flags: both daemons, calm by default, a seed only for the device weather.
    func testTheWeatherFlags() {
        for role in Role.allCases {
            guard case .run(let defaults) = DaemonOptions.parse([], role: role, environment: [:]) else { return XCTFail() }
            XCTAssertEqual(defaults.weather, .calm)
            XCTAssertNil(defaults.weatherSeed)
            guard case .run(let options) = DaemonOptions.parse(["--weather", "device", "--weather-seed=2217"], role: role, environment: [:])
            else { return XCTFail() }
            XCTAssertEqual(options.weather, .device)
            XCTAssertEqual(options.weatherSeed, 2_217)
            guard case .exit(0, let help) = DaemonOptions.parse(["--help"], role: role, environment: [:]) else { return XCTFail() }
            XCTAssertTrue(help.contains("--weather calm|device"), help)
            let refusals: [([String], String)] = [
                (["--weather", "stormy"], "--weather is calm or device, got 'stormy'"),
                (["--weather", "device", "--weather-seed", "x"], "--weather-seed must be an integer from 0 to 9223372036854775807, got 'x'"),
                (["--weather-seed", "5"], "--weather-seed seeds the device weather: give --weather device with it"),
            ]
            for (arguments, message) in refusals {
                guard case .exit(2, let output) = DaemonOptions.parse(arguments, role: role, environment: [:]) else {
                    XCTFail("\(arguments) is refused")
                    continue
                }
                XCTAssertTrue(output.hasPrefix("\(role == .phone ? "phoned" : "watchd"): \(message)"), output)
            }
        }
    }

    func testTheTraceOptions() {
        guard case .run(let defaults) = DaemonOptions.parse(["--home", "/h"], role: .watch, environment: [:]) else { return XCTFail() }
        XCTAssertEqual(defaults.traceEntries, 10_000)
        XCTAssertNil(defaults.traceFile)
        guard
            case .run(let options) = DaemonOptions.parse(
                ["--home", "/h", "--trace-entries", "0", "--trace-file", "watch.trace"], role: .watch,
                environment: [:])
        else { return XCTFail() }
        XCTAssertEqual(options.traceEntries, 0)
        XCTAssertEqual(options.traceFile, "/h/watch.trace", "a relative trace file is in the home")
        guard case .run(let absolute) = DaemonOptions.parse(["--trace-file=/tmp/t"], role: .watch, environment: [:]) else { return XCTFail() }
        XCTAssertEqual(absolute.traceFile, "/tmp/t")
        guard case .exit(2, let output) = DaemonOptions.parse(["--trace-entries", "-5"], role: .watch, environment: [:]) else { return XCTFail() }
        XCTAssertTrue(output.hasPrefix("watchd: --trace-entries must be an integer from 0 to 10000000, got '-5'"), output)
    }

    func testHelpListsTheFeaturesOptions() {
        guard case .exit(0, let usage) = DaemonOptions.parse(["--help"], role: .phone, featureOptions: declared, environment: [:]) else {
            return XCTFail()
        }
        XCTAssertTrue(usage.contains("\n  --apns-port N           the port\n"), usage)
        XCTAssertTrue(usage.contains("\n  --apns-host ADDR        the address\n"), usage)
    }
}
