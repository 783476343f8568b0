/// The weather's part of the session (ReachabilityWeather.swift has the rules and their
/// sources): what the app is told of reachability, which may lag the fact, and the watch's
/// wrist-down and screen-off spells.
struct WeatherState {
    var model: ReachabilityWeather
    /// Reachability as the app reads it (`status`'s `isReachable`, the reachability callback).
    var reported = false
    /// The change the app is still to be told of, and when.
    var pendingReport: (isReachable: Bool, due: Int64)?
    /// Watch: the spell under way, and when it ends.
    var spell: (kind: ReachabilityWeather.SpellKind, ends: Int64)?
    /// Watch: the next spell, drawn when the previous one ended or the app entered the
    /// foreground, and when it begins.
    var upcoming: (spell: ReachabilityWeather.Spell, begins: Int64)?

    init(model: ReachabilityWeather) { self.model = model }
}

extension LinkSession {
    /// Reachability changed in fact (`isReachable`, which sends follow): the app is told at once
    /// in calm weather, else as the device profile has it.
    func reachabilityChangedInFact(to value: Bool) {
        guard !weather.model.isCalm else {
            report(value)
            return
        }
        let seed = weather.model.seed
        if let pending = weather.pendingReport {
            // A flip while the previous change is still to be reported: coalesced into that
            // one's callback (openradar 23337218).
            if value != pending.isReachable {
                actions.append(.notify(.weather(.reportMissed(isReachable: value, seed: seed))))
            }
            return
        }
        // The app's snapshot may already read this value (a change it was never told of).
        guard value != weather.reported else { return }
        let lag = weather.model.reportLag()
        weather.pendingReport = (value, currentTime + lag)
        actions.append(.notify(.weather(.reportDelayed(isReachable: value, lagMilliseconds: lag, seed: seed))))
        actions.append(.armTimer(.weatherReport, deadlineMilliseconds: currentTime + lag))
    }

    private func report(_ value: Bool) {
        guard value != weather.reported else { return }
        weather.reported = value
        actions.append(.notify(.reachabilityDidChange(value)))
    }

    /// The app is told of the change it was still to be told of, whatever the fact is now.
    func weatherReportDue() {
        guard let pending = weather.pendingReport else { return }
        weather.pendingReport = nil
        report(pending.isReachable)
    }

    /// The device weather's seed; nil in calm weather. What the weather caused (a reachability
    /// callback it delayed) names it in the trace.
    public var deviceWeatherSeed: UInt64? { weather.model.isCalm ? nil : weather.model.seed }

    /// Watch: whether a spell keeps the frontmost app from conversing.
    var isInWeatherSpell: Bool { weather.spell != nil }

    /// Watch: spells come while the app is in the foreground, in the device profile; leaving
    /// the foreground ends the one under way. Called whenever the state changes
    /// (``stateChanged()``, which sends the state that follows).
    func weatherAppStateChanged() {
        guard role == .watch, !weather.model.isCalm else { return }
        if appState == .foreground {
            if weather.spell == nil, weather.upcoming == nil { drawNextSpell() }
        } else {
            if weather.upcoming != nil {
                weather.upcoming = nil
                actions.append(.cancelTimer(.weatherSpell))
            }
            endSpell()
        }
    }

    private func drawNextSpell() {
        let spell = weather.model.nextSpell()
        let begins = currentTime + spell.gapMilliseconds
        weather.upcoming = (spell, begins)
        actions.append(.armTimer(.weatherSpell, deadlineMilliseconds: begins))
    }

    private func endSpell() {
        guard let spell = weather.spell else { return }
        weather.spell = nil
        actions.append(.cancelTimer(.weatherSpell))
        actions.append(.notify(.weather(.spellEnded(spell.kind, seed: weather.model.seed))))
    }

    /// Watch: the next spell begins, or the one under way ends (and the next is drawn).
    func weatherSpellDue() {
        if let spell = weather.spell {
            weather.spell = nil
            actions.append(.notify(.weather(.spellEnded(spell.kind, seed: weather.model.seed))))
            stateChanged()
            if appState == .foreground { drawNextSpell() }
        } else if let upcoming = weather.upcoming {
            weather.upcoming = nil
            guard appState == .foreground else { return }
            let ends = currentTime + upcoming.spell.durationMilliseconds
            weather.spell = (upcoming.spell.kind, ends)
            actions.append(
                .notify(
                    .weather(
                        .spellBegan(
                            upcoming.spell.kind, durationMilliseconds: upcoming.spell.durationMilliseconds,
                            seed: weather.model.seed))))
            actions.append(.armTimer(.weatherSpell, deadlineMilliseconds: ends))
            stateChanged()
        }
    }

    /// `weather.set`: another profile or seed from now on. What was pending is dropped: a spell
    /// under way ends, and the app is told the fact at once (calm) or after a lag (device).
    public func setWeather(_ model: ReachabilityWeather, now: Int64) -> [SessionAction] {
        currentTime = now
        if weather.pendingReport != nil {
            weather.pendingReport = nil
            actions.append(.cancelTimer(.weatherReport))
        }
        if weather.upcoming != nil {
            weather.upcoming = nil
            actions.append(.cancelTimer(.weatherSpell))
        }
        let hadSpell = weather.spell != nil
        endSpell()
        weather.model = model
        if hadSpell { stateChanged() } else { weatherAppStateChanged() }
        reachabilityChangedInFact(to: isReachable)
        return drain()
    }

    /// The weather for `status` and `weather.set`.
    public func weatherStatus(now: Int64) -> WeatherStatus {
        var status = WeatherStatus(profile: weather.model.profile, seed: weather.model.seed, isReachableInFact: isReachable)
        status.spell = weather.spell?.kind
        if let pending = weather.pendingReport {
            status.pendingReport = .init(isReachable: pending.isReachable, inMilliseconds: max(0, pending.due - now))
        }
        return status
    }
}
