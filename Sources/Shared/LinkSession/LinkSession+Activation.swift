import WireProtocol

/// The session's activation (`activate`), the device flags it is told (`device.set`), what it
/// does when this side's state changes (a STATE frame to the peer), and reachability by the
/// WatchConnectivity rules.
extension LinkSession {
    // MARK: - Activation and state

    func activate(token: RequestToken, now: Int64) {
        if activationState == .inactive {
            // Data of the previous watch is still being delivered (quick watch switching):
            // activation completes as inactive, and the session deactivates once it is done.
            actions.append(.respond(token, .success(.activationState(activationState))))
            actions.append(.notify(.activationDidComplete(activationState)))
            return
        }
        let changed = activationState != .activated
        activationState = .activated
        actions.append(.respond(token, .success(.activationState(activationState))))
        actions.append(.notify(.activationDidComplete(activationState)))
        if changed { stateChanged() }
        deliverPending()
        deliverHeldMessages(now: now)
    }

    func setDeviceFlags(_ changes: [DeviceFlagName: Bool], token: RequestToken) {
        let allowed = Set(DeviceFlagName.owned(by: role))
        for name in changes.keys.sorted(by: { $0.rawValue < $1.rawValue }) where !allowed.contains(name) {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .invalidArgument(
                            "device.set: '\(name.rawValue)' is not a flag of the \(role == .phone ? "phone" : "watch") (expected one of: \(allowed.map(\.rawValue).sorted().joined(separator: ", ")))"
                        ))))
            return
        }
        let before = flags
        let mayGoBefore = queuedItemsMayGo
        for (name, value) in changes {
            if value { flags.insert(name.flag) } else { flags.remove(name.flag) }
        }
        if flags != before {
            stateChanged()
            resumeQueuedItems(ifHeldBefore: mayGoBefore)
            switch role {
            case .phone: actions.append(.notify(.watchStateDidChange(flags)))
            case .watch:
                if flags.contains(.isCompanionAppInstalled) != before.contains(.isCompanionAppInstalled) {
                    actions.append(.notify(.companionAppInstalledDidChange(flags.contains(.isCompanionAppInstalled))))
                }
            }
        }
        actions.append(.respond(token, .success(.deviceFlags(flags))))
    }

    func stateChanged() {
        weatherAppStateChanged()
        if isLinkUp { actions.append(.send(.state(localState))) }
        updateReachability()
    }

    /// Watch: whether the app can converse with the phone: it runs in the foreground, or with a
    /// high priority in the background during a workout. `isReachable`, WatchKit extension side:
    /// "the WatchKit extension is running in the foreground, or is running with a high priority
    /// in the background (for example, during a workout session ...)".
    var appIsInteractive: Bool {
        switch appState {
        // A wrist-down or screen-off spell (device weather) leaves the app frontmost but idle.
        case .foreground: return !isInWeatherSpell || workoutRunning
        case .background: return workoutRunning
        case .notRunning: return false
        }
    }

    /// The app's state as reachability sees it (the watch's STATE).
    var conversingAppState: AppState {
        appState == .notRunning ? .notRunning : appIsInteractive ? .foreground : .background
    }

    /// `workout.start` / `workout.end` (watch): a workout keeps the app reachable in the
    /// background, with no background run's budget and no suspension while it lasts.
    func setWorkout(_ running: Bool, token: RequestToken) {
        guard role == .watch else {
            actions.append(.respond(token, .failure(.invalidArgument("workout: workout sessions run on the watch"))))
            return
        }
        guard !running || appState != .notRunning else {
            actions.append(.respond(token, .failure(.invalidArgument("workout.start: the watch app is not running; a workout session is the running app's"))))
            return
        }
        if running != workoutRunning {
            workoutRunning = running
            actions.append(.notify(.workoutStateDidChange(running)))
            stateChanged()
            backgroundWorkoutChanged()
        }
        actions.append(.respond(token, .success(.empty)))
    }

    /// Reachability by the WatchConnectivity rules (`WCSession` `isReachable`): the link is up,
    /// both sessions are activated, the pair is usable (paired, watch app and companion app
    /// installed) and, seen from the phone, the watch app runs in the foreground. Seen from the
    /// watch the phone app's state does not matter: "calling this method from your WatchKit
    /// extension while it is active and running wakes up the corresponding iOS app in the
    /// background and makes it reachable" (`sendMessage`).
    private func computeReachability() -> Bool {
        guard isLinkUp, activationState == .activated, let peer = peerState,
            peer.activationState == .activated
        else { return false }
        let phoneFlags = role == .phone ? flags : peer.flags
        let watchFlags = role == .watch ? flags : peer.flags
        guard phoneFlags.contains(.isPaired), phoneFlags.contains(.isWatchAppInstalled),
            watchFlags.contains(.isCompanionAppInstalled), !watchFlags.contains(.isWatchOnlyApp)
        else { return false }
        switch role {
        case .phone: return peer.appState == .foreground
        // The phone app's state does not matter: a message from the watch app wakes it.
        case .watch: return appIsInteractive
        }
    }

    func updateReachability() {
        let now = computeReachability()
        if now != isReachable {
            isReachable = now
            reachabilityChangedInFact(to: now)
        }
    }
}
