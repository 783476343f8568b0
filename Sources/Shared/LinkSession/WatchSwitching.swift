import LinkStore

/// Quick watch switching, the phone's side of WatchConnectivity's activation states.
///
/// When the phone switches to another watch, its activated session becomes `inactive`
/// (`sessionDidBecomeInactive`: "the session can no longer be used to modify or add any new
/// transfers and, all interactive messages will be cancelled", WCSession.h): messages waiting
/// for their answer fail at once with 7016 `sessionInactive`, messages of the watch waiting
/// for the app's reply fail on the watch with 7007, and new sends, transfers and context
/// updates are refused with 7016. The session has "a small amount of time to deliver any
/// data that has already been received. As soon as that data is delivered, the session
/// moves to the deactivated state" (WCSession, "Supporting Communication with Multiple Apple
/// Watches"): it deactivates (`sessionDidDeactivate`) once every received item reached the
/// app, or when ``LinkSession/Configuration/inactiveDeliveryMilliseconds`` have passed,
/// whether or not the old watch is in range. What was queued for the old watch and not yet
/// on the link stays stored for it (``LinkSession/isWithActiveWatch``) and goes out when it
/// is the active watch again.
extension LinkSession {
    /// The phone switched to another watch: an activated session becomes inactive, and
    /// deactivates once what it received is delivered. Does nothing otherwise.
    public func becomeInactive(now: Int64) -> [SessionAction] {
        isWithActiveWatch = false
        guard activationState == .activated else { return drain() }
        activationState = .inactive
        actions.append(.notify(.didBecomeInactive))
        cancelInteractiveMessages()
        stateChanged()
        if !undelivered.isEmpty {
            actions.append(.armTimer(.inactiveDelivery, deadlineMilliseconds: now + configuration.inactiveDeliveryMilliseconds))
        }
        return drain()
    }

    /// Whether this session's watch is the phone's active watch: only then does its queue go
    /// out. Always true on the watch and on a phone with one watch.
    public func setActiveWatch(_ active: Bool, now: Int64) -> [SessionAction] {
        guard active != isWithActiveWatch else { return drain() }
        isWithActiveWatch = active
        if active {
            for channel in QueueChannel.allCases { pump(channel) }
        }
        return drain()
    }

    /// Whether a received message waits for this session's answer under `replyId`.
    public func awaitsReply(_ replyId: UInt64) -> Bool {
        awaitingReplies[replyId] != nil
    }

    /// Takes the phone-wide settings of `other`: the app state, the device flags and the
    /// reply configuration belong to the phone and its app, not to one watch, and phoned
    /// keeps one session per watch. The peer learns the new state; nothing is reported to
    /// the app (`other` did that).
    public func adoptSettings(from other: LinkSession) -> [SessionAction] {
        replies = other.replies
        launch.isInstalled = other.launch.isInstalled
        if attachedApp != other.attachedApp { setAttachedApp(other.attachedApp) }
        if appState != other.appState || flags != other.flags {
            let mayGoBefore = queuedItemsMayGo
            appState = other.appState
            flags = other.flags
            stateChanged()
            deliverPending()
            resumeQueuedItems(ifHeldBefore: mayGoBefore)
        }
        return drain()
    }

    /// 7005 / 7006 on the phone, 7019 / 7018 on the watch: every send, immediate or queued, needs a
    /// paired watch with the watch app installed, and on the watch the companion iOS app
    /// (`WCError.h`: `WCErrorCodeDeviceNotPaired`, `WCErrorCodeWatchAppNotInstalled`,
    /// `WCErrorCodeWatchOnlyApp`, `WCErrorCodeCompanionAppNotInstalled`). Checked after activation.
    func pairingFailure() -> SessionError? {
        switch role {
        case .phone:
            if !flags.contains(.isPaired) {
                return .wc(.deviceNotPaired, "no Apple Watch is paired with this phone (device.set isPaired)")
            }
            if !flags.contains(.isWatchAppInstalled) {
                return .wc(.watchAppNotInstalled, "the watch app is not installed (device.set isWatchAppInstalled)")
            }
        case .watch:
            if flags.contains(.isWatchOnlyApp) {
                return .wc(.watchOnlyApp, "the watch app is a watch-only app: it has no companion iOS app to talk to (device.set isWatchOnlyApp)")
            }
            if !flags.contains(.isCompanionAppInstalled) {
                return .wc(.companionAppNotInstalled, "the companion iOS app is not installed (device.set isCompanionAppInstalled)")
            }
        }
        return nil
    }

    /// 7004 before activation, 7016 while inactive: sending needs an activated session.
    func activationFailure() -> SessionError? {
        switch activationState {
        case .activated:
            return nil
        case .inactive:
            return .wc(
                .sessionInactive,
                "the session is inactive: the phone switched to another watch; wait for session.didDeactivate, then call session.activate")
        case .notActivated:
            return .wc(.sessionNotActivated, "the session is not activated: call session.activate first")
        }
    }

    /// Deactivates an inactive session once nothing it received waits for the app.
    func deactivateIfDelivered() {
        guard activationState == .inactive, undelivered.isEmpty else { return }
        deactivate()
    }

    /// The short while of an inactive session is over: it deactivates; what it received and
    /// could not deliver (the app was not running) waits for the app's next activation with
    /// this watch.
    func inactiveDeliveryEnded() {
        guard activationState == .inactive else { return }
        deactivate()
    }

    private func deactivate() {
        activationState = .notActivated
        actions.append(.cancelTimer(.inactiveDelivery))
        actions.append(.notify(.didDeactivate))
        stateChanged()
    }
}
