import LinkSession
import WireProtocol

/// The phone's paired watches and quick watch switching, as phoned's `PeerDirectory` drives
/// them: the world's watch is the first paired; other watches link (they are paired, up to
/// the phone's limit) and the phone switches to one of them and back. Those other watches
/// are not simulated: while one is active the phone's app talks to it, outside this world,
/// and the world's watch's session on the phone is what is checked.
///
/// The rules and their sources (docs/app-side.md, docs/wire-protocol.md):
/// - at a switch an activated session becomes inactive and "all interactive messages will be
///   cancelled" (`WCSession.h`, `sessionDidBecomeInactive`): a message of the phone waiting
///   for its reply fails at once with 7016 `sessionInactive`;
/// - the inactive session has "a small amount of time to deliver any data that has already
///   been received" (WCSession, "Supporting Communication with Multiple Apple Watches"),
///   2,000 ms as WatchLink ships it: it deactivates at the latest then;
/// - what was queued for the old watch stays stored for it and goes out only while it is the
///   active watch again: no ITEM goes to a watch that is not the active one;
/// - a phone keeps 16 paired watches; a further one is refused when it links
///   (docs/wire-protocol.md: a watch that links while "the phone has 16 paired already ...
///   gets GOAWAY").
final class SimSwitching {
    static let pairedWatchesLimit = 16
    static let inactiveDeliveryMilliseconds: Int64 = 2_000
    static let worldWatch = "watch"

    unowned let world: SimWorld
    /// phoned's `watches.json`: saved before a switch acts, so it outlives a crash.
    private(set) var paired = PairedWatches()
    private var otherWatches = 0
    /// When the world's watch stopped being the active one, while its session has not
    /// deactivated since.
    private var inactiveSince: Int64?
    /// Requests of the phone (messages waiting for their reply) that a switch must answer at
    /// once with 7016.
    private var cancelledAtTheSwitch: Set<UInt64> = []

    init(world: SimWorld) {
        self.world = world
        _ = paired.admit(Self.worldWatch)
    }

    /// Whether another watch is the phone's active one.
    var isAway: Bool { paired.activeDeviceId != Self.worldWatch }

    // MARK: - The workload

    /// A switch to another watch (paired now when it links for the first time, sometimes
    /// after a run of watches that fill the phone's list), or back to the world's watch.
    func step() {
        let phone = world.node(.phone)
        guard phone.isUp else { return }
        if isAway { return switchBack() }
        if world.random.chance(0.2) {
            for _ in 0...Self.pairedWatchesLimit { _ = link(newWatch()) }
        }
        let target: String
        if otherWatches > 0, world.random.chance(0.5) {
            target = "other-\(world.random.int(1...otherWatches))"
        } else {
            target = newWatch()
        }
        guard link(target), case .success(.switched) = paired.switchTo(target) else { return }
        world.coverage.count(.watchSwitch)
        world.trace("phone switches to \(target)")
        if phone.app != nil, world.random.chance(0.5) {
            // The app is busy for a while: what it was handed stays undelivered, and the
            // inactive session's time runs out.
            phone.acknowledgesNotBefore = world.now + world.random.int64(1_000...4_000)
        }
        if phone.peer.session.activationState == .activated {
            inactiveSince = world.now
            cancelledAtTheSwitch = world.history.phoneMessagesAwaitingReplies()
            if !cancelledAtTheSwitch.isEmpty { world.coverage.count(.switchWithMessagesAwaitingReplies) }
        }
        // phoned: the app's session becomes inactive, then every watch's session learns
        // whether it is the active one.
        phone.turn { phone.peer.session.becomeInactive(now: world.now) + phone.peer.session.setActiveWatch(false, now: world.now) }
        for token in cancelledAtTheSwitch.sorted() {
            world.history.fail("phone request \(token): a message waiting for its reply was not cancelled with 7016 at the switch")
        }
        cancelledAtTheSwitch = []
    }

    private func newWatch() -> String {
        otherWatches += 1
        return "other-\(otherWatches)"
    }

    /// A watch links with the phone: it is paired unless the phone's list is full.
    private func link(_ deviceId: String) -> Bool {
        let count = paired.watches.count
        switch paired.admit(deviceId) {
        case .known: return true
        case .added:
            if count >= Self.pairedWatchesLimit {
                world.history.fail("the phone paired watch \(count + 1) (\(deviceId)); it keeps \(Self.pairedWatchesLimit)")
            }
            return true
        case .full:
            world.coverage.count(.pairedWatchesFull)
            if count != Self.pairedWatchesLimit {
                world.history.fail("the phone refused a watch with \(count) paired; it keeps \(Self.pairedWatchesLimit)")
            }
            otherWatches -= 1
            return false
        }
    }

    /// The phone switches back to the world's watch (the final phase does, so that all drains).
    func switchBack() {
        let phone = world.node(.phone)
        guard phone.isUp, isAway, case .success(.switched) = paired.switchTo(Self.worldWatch) else { return }
        world.trace("phone switches back to \(Self.worldWatch)")
        let session = phone.peer.session
        if session.activationState == .inactive {
            // Still the app's session: it deactivates as before, and the app activates it again.
            phone.turn { session.becomeInactive(now: world.now) + session.setActiveWatch(true, now: world.now) }
        } else {
            phone.turn { session.setActiveWatch(true, now: world.now) }
            phone.activate()
        }
    }

    // MARK: - Hooks

    /// The phone (re)started: a session not with the active watch is not the app's.
    func phoneStarted() { inactiveSince = nil }

    func responded(_ token: RequestToken, _ result: Result<CommandResult, SessionError>) {
        guard cancelledAtTheSwitch.remove(token.rawValue) != nil else { return }
        guard case .failure(.wc(.sessionInactive, _)) = result else {
            return world.history.fail("phone request \(token.rawValue): a message waiting for its reply at the switch was answered \(result), not 7016")
        }
    }

    /// The world's watch's session on the phone deactivated.
    func deactivated() {
        guard let since = inactiveSince else { return }
        inactiveSince = nil
        let elapsed = world.now - since
        if elapsed > Self.inactiveDeliveryMilliseconds {
            world.history.fail(
                "the phone's session deactivated \(elapsed) ms after the switch, past the \(Self.inactiveDeliveryMilliseconds) ms it has to deliver")
        }
        if elapsed == Self.inactiveDeliveryMilliseconds { world.coverage.count(.inactiveDeliveryEnded) }
        // Back with the world's watch meanwhile: the app activates its session again.
        if !isAway { world.schedule(.phoneActivates, at: world.now + 1) }
    }

    /// An ITEM left the phone.
    func phoneSentItem() {
        if isAway { world.history.fail("the phone sent an ITEM to its watch while another watch is the active one") }
    }
}
