import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
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
    private let features: [DaemonFeature]

    init(role: Role, loop: EventLoop, logger: Logger, directory: PeerDirectory, committer: TurnCommitter,
         gateway: SessionGateway, control: ControlServer, features: [DaemonFeature]) {
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
            peer.timers[timer] = loop.schedule(afterMilliseconds: wait) { [unowned self, weak peer] in
                guard let peer else { return }
                peer.timers[timer] = nil
                self.committer.perform(peer.session.timerFired(timer, now: self.loop.turnMilliseconds), from: peer)
            }
        case .cancelTimer(let timer):
            if let existing = peer.timers.removeValue(forKey: timer) { loop.cancel(existing) }
        case .persist:
            break
        case .file(let fileAction):
            directory.executeFileAction(fileAction, of: peer)
        }
    }

    private func notify(_ notification: SessionNotification, from peer: PeerSession) {
        if case .file(.problem(let text)) = notification { logger.warning("file: \(text)"); return }
        if case .userInfoReceived = notification { directory.noteDelivery(peer) }
        // The app hears from its own session only (a delegate belongs to one session).
        guard peer === directory.appPeer || peer === directory.formerAppPeer else { return }
        // A watch's message launched the app in the background: every watch's session sees it.
        if case .appStateDidChange = notification, peer === directory.appPeer { directory.shareSettings(of: peer) }
        for feature in features { feature.observe(notification) }
        // Rendering costs (base64, property lists): only for someone listening.
        guard control.hasSubscribers else { return }
        var (name, data) = ControlRendering.render(notification)
        if role == .phone, let watch = peer.deviceId { data["watchDeviceId"] = .string(watch) }
        control.publish(name, data)
    }
}
