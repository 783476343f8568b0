import WireProtocol

/// This side's app as a program that the emulated OS launches (`app.install`), as iOS and
/// watchOS launch theirs: the session says when (``SessionAction/launchApp(_:)``), the daemon
/// starts the program, and the program attaches as the app (AppAttachment.swift).
///
/// - Phone: a message from the watch app while the app is not running "wakes up the
///   corresponding iOS app in the background and makes it reachable" (`sendMessage`). The
///   message is held until the launched app has attached and its session is activated, then
///   delivered as any message is. One that waits longer than the reply timeout fails on the
///   watch as on a device: 7012 `messageReplyTimedOut` with a reply handler, 7014 without.
/// - Watch: "Background watch connectivity tasks are triggered whenever the paired device
///   sends data using" `updateApplicationContext`, `transferUserInfo`,
///   `transferCurrentComplicationUserInfo` or `transferFile`
///   (`WKWatchConnectivityRefreshBackgroundTask`): an item for the app launches it; the item
///   waits for it as every received item waits for a running app.
struct AppLaunchState {
    /// Whether the app is an installed program rather than the daemon itself.
    var isInstalled = false
    /// A launch was asked for and the app has not attached yet.
    var isUnderWay = false
    /// Messages of the watch that wait for the launched phone app, oldest first.
    var held: [HeldMessage] = []
    /// The deadline the ``SessionTimer/heldMessages`` timer is armed for.
    var armedDeadline: Int64?

    struct HeldMessage {
        var id: UInt64
        var wantsReply: Bool
        var payload: MessagePayload
        var deadline: Int64
    }
}

extension LinkSession {
    /// Whether this side's app is an installed program that is launched (``setAppInstalled(_:)``).
    public var isAppInstalled: Bool { launch.isInstalled }

    /// Whether the daemon plays this side's app, frameworks included: no app is installed or
    /// attached. Then the packets of a framework on this side (``Configuration/isSystemMessage``)
    /// are the daemon's; an app that is a process runs its frameworks itself, and their packets
    /// are its messages and userInfo like any other.
    public var frameworksRunInTheDaemon: Bool { attachedApp == nil && !launch.isInstalled }

    func setAppInstalled(_ installed: Bool, token: RequestToken) {
        launch.isInstalled = installed
        if attachedApp == nil {
            // Installed, the app runs only as its program; without one the daemon plays it.
            changeAppState(to: installed ? .notRunning : .foreground)
        }
        if !installed {
            launch.isUnderWay = false
            failHeldMessages(.deliveryFailed, "the app was uninstalled before it could take the message")
        }
        actions.append(.respond(token, .success(.empty)))
        if installed { wakeForBackgroundData() }
    }

    /// Whether a message from the watch must wait for the phone app to be launched.
    func holdsMessagesForLaunch() -> Bool {
        role == .phone && launch.isInstalled && (attachedApp == nil || activationState == .notActivated)
    }

    /// Holds a message of the watch for the phone app, launching it unless that is under way.
    func holdForLaunch(id: UInt64, wantsReply: Bool, payload: MessagePayload, now: Int64) {
        let deadline = now + configuration.defaultReplyTimeoutMilliseconds
        launch.held.append(AppLaunchState.HeldMessage(id: id, wantsReply: wantsReply, payload: payload, deadline: deadline))
        if launch.armedDeadline.map({ deadline < $0 }) ?? true {
            launch.armedDeadline = deadline
            actions.append(.armTimer(.heldMessages, deadlineMilliseconds: deadline))
        }
        requestLaunch(.message)
    }

    /// Asks the emulated OS to launch the app for `reason`, unless it runs or a launch is under way.
    func requestLaunch(_ reason: LaunchReason) {
        guard attachedApp == nil, !background.watchKitAttached, !launch.isUnderWay else { return }
        launch.isUnderWay = true
        actions.append(.launchApp(reason))
    }

    /// The launched app attached, or its session was activated: the held messages reach it.
    func deliverHeldMessages(now: Int64) {
        guard !launch.held.isEmpty, !holdsMessagesForLaunch() else { return }
        let held = launch.held
        launch.held.removeAll()
        cancelHeldMessagesTimer()
        for message in held where isLinkUp {
            receiveMessage(id: message.id, wantsReply: message.wantsReply, payload: message.payload, now: now)
        }
    }

    /// ``SessionTimer/heldMessages`` fired: the messages held past their deadline fail.
    func heldMessagesTimerFired(now: Int64) {
        launch.armedDeadline = nil
        let expired = launch.held.filter { $0.deadline <= now }
        launch.held.removeAll { $0.deadline <= now }
        for message in expired {
            fail(
                message, message.wantsReply ? .messageReplyTimedOut : .deliveryFailed,
                "the phone app, launched for this message, did not attach and activate its session within \(configuration.defaultReplyTimeoutMilliseconds) ms")
        }
        if let next = launch.held.map(\.deadline).min() {
            launch.armedDeadline = next
            actions.append(.armTimer(.heldMessages, deadlineMilliseconds: next))
        }
    }

    /// `app.attach` of a launched app ends its launch.
    func launchEnded() {
        launch.isUnderWay = false
    }

    func appLaunchFailed(_ reason: String, token: RequestToken) {
        launch.isUnderWay = false
        backgroundLaunchFailed()
        failHeldMessages(.deliveryFailed, reason)
        actions.append(.respond(token, .success(.empty)))
    }

    /// The held messages fail on the watch with `code`; the link going down forgets them (the
    /// watch's own sends fail with 7007 then).
    func failHeldMessages(_ code: WCErrorCode, _ description: String) {
        let held = launch.held
        launch.held.removeAll()
        cancelHeldMessagesTimer()
        for message in held { fail(message, code, description) }
    }

    func forgetHeldMessages() {
        launch.held.removeAll()
        cancelHeldMessagesTimer()
    }

    private func fail(_ message: AppLaunchState.HeldMessage, _ code: WCErrorCode, _ description: String) {
        guard isLinkUp else { return }
        actions.append(.send(.messageError(id: message.id, code: UInt16(code.rawValue), description: description)))
    }

    private func cancelHeldMessagesTimer() {
        guard launch.armedDeadline != nil else { return }
        launch.armedDeadline = nil
        actions.append(.cancelTimer(.heldMessages))
    }
}
