import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkTrace
import WireProtocol

/// Carries out a session's actions once the committer releases them: frames onto the peer's
/// link, answers to whoever submitted the command, notifications to the features and the
/// event subscribers, timers on the loop, file work to the peer's engine.
final class ActionPerformer {
    private let role: Role
    private let loop: EventLoop
    private let logger: Logger
    private let directory: PeerDirectory
    private let committer: TurnCommitter
    private let gateway: SessionGateway
    private let control: ControlServer
    private let tracer: Tracer
    private let features: [DaemonFeature]
    private let launcher: AppLauncher

    init(
        role: Role, loop: EventLoop, logger: Logger, directory: PeerDirectory, committer: TurnCommitter,
        gateway: SessionGateway, control: ControlServer, tracer: Tracer, features: [DaemonFeature], launcher: AppLauncher
    ) {
        self.tracer = tracer
        self.launcher = launcher
        self.role = role
        self.loop = loop
        self.logger = logger
        self.directory = directory
        self.committer = committer
        self.gateway = gateway
        self.control = control
        self.features = features
    }

    func execute(_ action: SessionAction, from peer: PeerSession) {
        switch action {
        case .send(let frame):
            peer.channel?.send(frame)
        case .respond(let token, let result):
            gateway.complete(token, result)
        case .notify(let notification):
            notify(notification, from: peer)
        case .armTimer(let timer, let deadline):
            if let existing = peer.timers[timer] { loop.cancel(existing) }
            let wait = max(0, deadline - loop.turnMilliseconds)
            // Unowned peer: peers live as long as the daemon (`LinkChannel.owner` says why not weak).
            peer.timers[timer] = loop.schedule(afterMilliseconds: wait) { [unowned self, unowned peer] in
                peer.timers[timer] = nil
                let entry = self.tracer.record(.timer, ["name": .string(Self.name(of: timer))])
                self.tracer.withCause(entry) {
                    self.committer.perform(peer.session.timerFired(timer, now: self.loop.turnMilliseconds), from: peer)
                }
            }
        case .cancelTimer(let timer):
            if let existing = peer.timers.removeValue(forKey: timer) { loop.cancel(existing) }
        case .persist:
            break
        case .file(let fileAction):
            directory.executeFileAction(fileAction, of: peer)
        case .launchApp(let reason):
            if case .failure(let failure) = launcher.launch(.app, reason: reason) {
                gateway.submit(.appLaunchFailed(failure.description)) { _ in }
            }
        case .appProcess(let action):
            switch action {
            case .suspend: launcher.suspend(.app)
            case .resume: launcher.resume(.app)
            case .end(let reason, let detail): launcher.kill(.app, reason: reason, detail: detail)
            }
        }
    }

    private func notify(_ notification: SessionNotification, from peer: PeerSession) {
        // A message has no entry of its own (the MESSAGE received is its delivery): not even
        // the trip through `trace`, on the path of every message.
        if case .messageReceived = notification {} else if tracer.isOn { trace(notification, from: peer) }
        if case .file(.problem(let text)) = notification { logger.warning("file: \(text)"); return }
        if case .userInfoReceived = notification { directory.noteDelivery(peer) }
        // The app hears from its own session only (a delegate belongs to one session).
        guard peer === directory.appPeer || peer === directory.formerAppPeer else { return }
        // A watch's message launched the app in the background: every watch's session sees it.
        if case .appStateDidChange(let state) = notification, peer === directory.appPeer {
            directory.shareSettings(of: peer)
            launcher.appStateChanged(state)
        }
        if case .watchStateDidChange(let flags) = notification, peer === directory.appPeer { directory.watchFlagsChanged(to: flags) }
        for feature in features { feature.observe(notification) }
        // Rendering costs (base64, property lists): only for someone listening.
        guard control.hasSubscribers else { return }
        var (name, data) = ControlRendering.render(notification)
        if role == .phone, let watch = peer.deviceId { data["watchDeviceId"] = .string(watch) }
        // `watchDirectoryURL` changes with the watch state, and the delegate hears of both at once.
        if case .watchStateDidChange = notification { data["watchDirectory"] = directory.appWatchDirectory }
        control.publish(name, data)
    }

    // MARK: - Trace

    /// States as state entries, what the app is told of transfers as notes: never payloads.
    private func trace(_ notification: SessionNotification, from peer: PeerSession) {
        let watch = role == .phone ? peer.deviceId : nil
        let kind: TraceEntry.Kind
        var fields: JSONObject
        switch notification {
        case .activationDidComplete, .didBecomeInactive, .didDeactivate, .reachabilityDidChange, .watchStateDidChange,
            .companionAppInstalledDidChange, .appStateDidChange, .workoutStateDidChange, .weather:
            let (name, data) = ControlRendering.render(notification)
            kind = .state
            fields = ["name": .string(name)]
            for (key, value) in data { fields[key] = value }
            // Under the device weather a reachability callback is the weather's doing.
            if case .reachabilityDidChange = notification, let seed = peer.session.deviceWeatherSeed {
                fields["seed"] = .int(Int64(clamping: seed))
            }
        // The frequent ones, without a JSON object.
        case .messageReceived:
            return
        case .userInfoReceived(let seq, _, let isCurrent):
            tracer.note(isCurrent ? .complicationUserInfoReceived : .userInfoReceived, seq: seq, peer: watch)
            return
        case .userInfoDidFinish(let transferId, nil, nil):
            tracer.note(.userInfoDidFinish, transferId: transferId, peer: watch)
            return
        case .applicationContextReceived(let seq, _):
            tracer.note(.contextReceived, seq: seq, peer: watch)
            return
        case .userInfoDidFinish(let transferId, let error, let earlier):
            kind = error == nil ? .note : .fault
            fields = ["name": "userInfo.didFinish", "transferId": .string(transferId)]
            if let error { fields["error"] = error.controlError.json }
            // Told at a later launch: the seq the app acknowledges.
            if let seq = earlier?.seq { fields["seq"] = .int(Int64(clamping: seq)) }
        case .systemMessageReceived(let replyId, _):
            kind = .note
            fields = ["name": "system.messageReceived"]
            if let replyId { fields["replyId"] = .int(Int64(clamping: replyId)) }
        case .systemUserInfoReceived(let seq, _):
            kind = .note
            fields = ["name": "system.userInfoReceived", "seq": .int(Int64(clamping: seq))]
        case .file(.progress(let transferId, let completed, let total)):
            kind = .note
            fields = [
                "name": "file.progress", "transferId": .string(transferId),
                "completedBytes": .int(Int64(clamping: completed)), "totalBytes": .int(Int64(clamping: total)),
            ]
        case .file(.didFinish(let transferId, let error, let earlier)):
            kind = error == nil ? .note : .fault
            fields = ["name": "file.didFinish", "transferId": .string(transferId)]
            if let error { fields["error"] = error.controlError.json }
            if let seq = earlier?.seq { fields["seq"] = .int(Int64(clamping: seq)) }
        case .file(.received(let file)):
            kind = .note
            fields = [
                "name": "file.received", "seq": .int(Int64(clamping: file.seq)), "transferId": .string(file.transferId),
                "totalBytes": .int(Int64(clamping: file.totalBytes)),
            ]
        case .file(.problem(let text)):
            kind = .fault
            fields = ["name": "file.problem", "message": .string(TracePreview.clip(text))]
        case .backgroundTask(let event):
            // The app's background life is the emulated OS's: an app entry, named as its event.
            let (name, data) = ControlRendering.render(event, withUserInfo: false)
            kind = .app
            fields = ["name": .string(name)]
            // A task's kind is `taskKind` here: `kind` is the entry's.
            for (key, value) in data { fields[key == "kind" ? "taskKind" : key] = value }
            if case .wakeScheduled = event, let status = peer.session.backgroundTaskStatus(now: loop.turnMilliseconds),
                status.policy == .watch
            {
                fields["seed"] = .int(Int64(clamping: status.seed))
            }
        }
        if let watch { fields["peer"] = .string(watch) }
        tracer.record(kind, fields)
    }

    private static func name(of timer: SessionTimer) -> String {
        switch timer {
        case .replyTimeouts: return "replyTimeout"
        case .delayedReply: return "delayedReply"
        case .heldMessages: return "heldMessages"
        case .inactiveDelivery: return "inactiveDelivery"
        case .backgroundWake: return "backgroundWake"
        case .backgroundBudget: return "backgroundBudget"
        case .backgroundTasksExpiring: return "backgroundTasksExpiring"
        case .scheduledTask(let kind): return "scheduledTask." + kind.rawValue
        case .weatherReport: return "weatherReport"
        case .weatherSpell: return "weatherSpell"
        }
    }
}
