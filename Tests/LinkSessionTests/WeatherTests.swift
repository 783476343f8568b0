import LinkSession
import WireProtocol
import XCTest

/// The device weather (ReachabilityWeather.swift) with a fake clock. What each test expects is
/// what devices were seen to do, quoted where the test stands: openradar 23337218 (a lowered and
/// raised wrist: "The delegate gets called just once, reflecting the NOT reachable state"),
/// TortugaPower/BookPlayer issue 703 ("even if it's false, the messages between the phone and
/// the watch still work"), KaneCheshire/Communicator issue 34 ("a watch's Reachability will
/// change very often, even if the screen is off but your watch app is still in the foreground").
final class WeatherTests: XCTestCase {
    /// A linked, activated pair; `weather` names the sides under the device weather.
    private func pair(seed: UInt64 = 7, device sides: Set<Role> = [.phone, .watch]) -> SessionPair {
        let pair = SessionPair { configuration in
            if sides.contains(configuration.role) {
                configuration.weather = ReachabilityWeather(profile: .device, seed: seed, role: configuration.role)
            }
        }
        pair.linkUp()
        pair.activateBoth()
        return pair
    }

    private func weather(_ notifications: [SessionNotification]) -> [WeatherNotification] {
        notifications.compactMap { if case .weather(let event) = $0 { return event } else { return nil } }
    }

    private func reachability(_ notifications: [SessionNotification]) -> [Bool] {
        notifications.compactMap { if case .reachabilityDidChange(let value) = $0 { return value } else { return nil } }
    }

    private func lastLag(_ notifications: [SessionNotification]) throws -> Int64 {
        let lags = weather(notifications).compactMap { event -> Int64? in
            if case .reportDelayed(_, let lag, _) = event { return lag } else { return nil }
        }
        return try XCTUnwrap(lags.last)
    }

    /// Advances the clock to the next spell of the watch and returns it.
    private func nextSpell(_ pair: SessionPair) throws -> (kind: ReachabilityWeather.SpellKind, duration: Int64) {
        for _ in 0..<600 {
            let before = weather(pair.watchNotifications).count
            pair.advance(by: 100)
            for event in weather(pair.watchNotifications).dropFirst(before) {
                if case .spellBegan(let kind, let duration, _) = event { return (kind, duration) }
            }
        }
        throw XCTSkip("no spell within a minute")
    }

    private func sendOneWay(_ pair: SessionPair, from role: Role) -> Result<CommandResult, SessionError>? {
        let token = pair.command(role, .sendMessage(encodedDictionary(["n": .integer(1)]), wantsReply: false, timeoutMilliseconds: nil))
        return pair.result(token)
    }

    // MARK: Calm

    func testCalmWeatherReportsEveryChangeAtOnce() {
        let pair = pair(device: [])
        XCTAssertEqual(reachability(pair.phoneNotifications), [true])
        pair.clearNotifications()
        pair.command(.watch, .setAppState(.background))
        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(reachability(pair.phoneNotifications), [false, true], "each change, at once")
        XCTAssertTrue(weather(pair.phoneNotifications + pair.watchNotifications).isEmpty)
        pair.advance(by: 600_000)
        XCTAssertTrue(weather(pair.watchNotifications).isEmpty, "no spells")
        XCTAssertEqual(pair.watch.weatherStatus(now: pair.now).profile, .calm)
    }

    // MARK: The app's view lags the fact

    /// Activation: the fact is reachable at once, the app is told a moment later, and a send
    /// in between goes through while `isReachable` still reads false (BookPlayer 703).
    func testTheAppIsToldAfterALagWhileSendsFollowTheFact() throws {
        let pair = pair()
        XCTAssertTrue(pair.phone.isReachable, "reachable in fact")
        XCTAssertFalse(pair.phone.status().isReachable, "the app's snapshot lags")
        XCTAssertTrue(reachability(pair.phoneNotifications).isEmpty)
        let lag = try lastLag(pair.phoneNotifications)
        XCTAssertTrue(ReachabilityWeather.reportLagMilliseconds.contains(lag), "\(lag)")
        guard case .success = sendOneWay(pair, from: .phone) else { return XCTFail("the send follows the fact") }

        pair.advance(by: lag - 1)
        XCTAssertTrue(reachability(pair.phoneNotifications).isEmpty)
        pair.advance(by: 1)
        XCTAssertEqual(reachability(pair.phoneNotifications), [true])
        XCTAssertTrue(pair.phone.status().isReachable)
    }

    /// openradar 23337218: "Lower and raise the watch quickly (within 1-2 seconds) ... The
    /// delegate gets called just once, reflecting the NOT reachable state and fails to call again
    /// to reflect the correct active state of the watch app."
    func testAFlipBackBeforeTheReportIsCoalescedAndTheSnapshotStaysStale() throws {
        let pair = pair(device: [.phone])
        pair.advance(by: 2_000)
        XCTAssertEqual(reachability(pair.phoneNotifications), [true])
        pair.clearNotifications()

        pair.command(.watch, .setAppState(.background))
        let lag = try lastLag(pair.phoneNotifications)
        pair.advance(by: lag / 2)
        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(
            weather(pair.phoneNotifications).last, .reportMissed(isReachable: true, seed: 7), "the raise is never reported")
        pair.advance(by: lag)
        XCTAssertEqual(reachability(pair.phoneNotifications), [false], "one callback: not reachable")
        XCTAssertFalse(pair.phone.status().isReachable, "the snapshot is stale")
        XCTAssertTrue(pair.phone.isReachable)
        guard case .success = sendOneWay(pair, from: .phone) else { return XCTFail("sends still go through") }
        pair.advance(by: 60_000)
        XCTAssertEqual(reachability(pair.phoneNotifications), [false], "stale until the next change")

        // The next change: lowered (the snapshot reads so already), then raised for good.
        pair.command(.watch, .setAppState(.background))
        XCTAssertEqual(weather(pair.phoneNotifications).count, 2, "nothing to tell: the app reads false already")
        pair.command(.watch, .setAppState(.foreground))
        pair.advance(by: try lastLag(pair.phoneNotifications))
        XCTAssertEqual(reachability(pair.phoneNotifications), [false, true])
    }

    // MARK: Spells

    /// Communicator 34: "a watch's Reachability will change very often, even if the screen is
    /// off but your watch app is still in the foreground".
    func testASpellLeavesTheWatchAppFrontmostButUnreachable() throws {
        let pair = pair(device: [.watch])
        pair.advance(by: 2_000)
        XCTAssertEqual(reachability(pair.phoneNotifications), [true])
        let spell = try nextSpell(pair)
        XCTAssertEqual(pair.watch.appState, .foreground, "the app stays frontmost")
        XCTAssertFalse(pair.watch.isReachable)
        XCTAssertEqual(pair.phone.peerState?.appState, .background, "the phone sees a watch app it cannot converse with")
        XCTAssertEqual(reachability(pair.phoneNotifications), [true, false], "the calm phone is told at once")
        guard case .failure(.wc(.notReachable, let message)) = sendOneWay(pair, from: .watch) else {
            return XCTFail("the watch app cannot send")
        }
        XCTAssertTrue(message.contains(spell.kind == .wristDown ? "the wrist is down" : "the screen went off"), message)
        guard case .failure(.wc(.notReachable, _)) = sendOneWay(pair, from: .phone) else { return XCTFail("the phone cannot send") }
        XCTAssertEqual(pair.watch.weatherStatus(now: pair.now).spell, spell.kind)

        pair.advance(by: spell.duration)
        XCTAssertTrue(weather(pair.watchNotifications).contains(.spellEnded(spell.kind, seed: 7)))
        XCTAssertTrue(pair.watch.isReachable)
        XCTAssertEqual(reachability(pair.phoneNotifications), [true, false, true])
        XCTAssertTrue(ReachabilityWeather.spellMilliseconds.contains(spell.duration) || ReachabilityWeather.glanceMilliseconds.contains(spell.duration))
    }

    /// `isReachable`, WatchKit extension side: "running with a high priority in the background
    /// (for example, during a workout session)": a workout keeps the app reachable in a spell.
    func testAWorkoutKeepsTheWatchReachableThroughASpell() throws {
        let pair = pair(device: [.watch])
        pair.command(.watch, .setWorkout(true))
        _ = try nextSpell(pair)
        XCTAssertTrue(pair.watch.isReachable)
        guard case .success = sendOneWay(pair, from: .watch) else { return XCTFail("the workout app sends") }
    }

    func testSpellsComeOnlyWhileTheAppIsInTheForeground() throws {
        let pair = pair(device: [.watch])
        _ = try nextSpell(pair)
        pair.command(.watch, .setAppState(.background))
        XCTAssertTrue(weather(pair.watchNotifications).contains { if case .spellEnded = $0 { true } else { false } }, "cut short")
        let count = weather(pair.watchNotifications).count
        pair.advance(by: 600_000)
        XCTAssertEqual(weather(pair.watchNotifications).count, count, "no spell in the background")
        pair.command(.watch, .setAppState(.foreground))
        _ = try nextSpell(pair)
    }

    // MARK: The seed

    private func script(seed: UInt64) -> [SessionNotification] {
        let pair = pair(seed: seed)
        for step in 0..<300 {
            pair.advance(by: 1_000)
            if step == 100 { pair.command(.watch, .setAppState(.background)) }
            if step == 101 { pair.command(.watch, .setAppState(.foreground)) }
        }
        return (pair.phoneNotifications + pair.watchNotifications).filter {
            switch $0 {
            case .weather, .reachabilityDidChange: return true
            default: return false
            }
        }
    }

    func testTheSameSeedReplaysTheSameWeather() {
        let first = script(seed: 42)
        XCTAssertGreaterThan(weather(first).count, 10, "five minutes of weather")
        XCTAssertEqual(script(seed: 42), first)
        XCTAssertNotEqual(script(seed: 43), first)
    }

    /// Each stream is the seed's: another seed, other spells and other lags.
    func testEveryDrawComesFromTheSeed() {
        func draws(_ seed: UInt64) -> (spells: [ReachabilityWeather.Spell], lags: [Int64]) {
            var model = ReachabilityWeather(profile: .device, seed: seed, role: .watch)
            return ((0..<20).map { _ in model.nextSpell() }, (0..<20).map { _ in model.reportLag() })
        }
        XCTAssertEqual(draws(42).spells, draws(42).spells)
        XCTAssertEqual(draws(42).lags, draws(42).lags)
        XCTAssertNotEqual(draws(42).spells, draws(43).spells)
        XCTAssertNotEqual(draws(42).lags, draws(43).lags)
    }

    func testTheDrawsStayInTheirRangesAndTheSidesDiffer() {
        var watch = ReachabilityWeather(profile: .device, seed: 1, role: .watch)
        var phone = ReachabilityWeather(profile: .device, seed: 1, role: .phone)
        var glances = 0
        var lags: Set<Int64> = []
        var phoneLags: [Int64] = [], watchLags: [Int64] = []
        for _ in 0..<3_000 {
            let spell = watch.nextSpell()
            XCTAssertTrue(ReachabilityWeather.spellGapMilliseconds.contains(spell.gapMilliseconds))
            if ReachabilityWeather.glanceMilliseconds.contains(spell.durationMilliseconds), spell.durationMilliseconds < 2_000 { glances += 1 }
            XCTAssertTrue(
                ReachabilityWeather.glanceMilliseconds.contains(spell.durationMilliseconds)
                    || ReachabilityWeather.spellMilliseconds.contains(spell.durationMilliseconds))
            let lag = phone.reportLag()
            XCTAssertTrue(ReachabilityWeather.reportLagMilliseconds.contains(lag))
            lags.insert(lag)
            phoneLags.append(lag)
            watchLags.append(watch.reportLag())
        }
        XCTAssertNotEqual(phoneLags, watchLags, "one seed, two sides, two streams")
        XCTAssertEqual(Double(glances) / 3_000, 1.0 / 3, accuracy: 0.05, "one spell in three is a glance")
        XCTAssertGreaterThan(lags.count, 1_000)
    }

    // MARK: weather.set

    func testSettingCalmTellsTheAppTheFactAtOnceAndEndsTheSpell() throws {
        let pair = pair(device: [.phone, .watch])
        _ = try nextSpell(pair)
        XCTAssertFalse(pair.watch.isReachable)
        pair.apply(pair.watch.setWeather(ReachabilityWeather(role: .watch), now: pair.now), from: .watch)
        pair.apply(pair.phone.setWeather(ReachabilityWeather(role: .phone), now: pair.now), from: .phone)
        pair.pump()
        XCTAssertTrue(pair.watch.isReachable, "the spell ended")
        XCTAssertTrue(pair.phone.status().isReachable, "told at once")
        XCTAssertTrue(pair.watch.status().isReachable)
        let count = weather(pair.watchNotifications).count
        pair.advance(by: 600_000)
        XCTAssertEqual(weather(pair.watchNotifications).count, count)
    }
}
