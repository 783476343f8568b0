/// Quick watch switching, the phone's side of WatchConnectivity's activation states.
///
/// When the phone switches to another watch, its activated session becomes `inactive`
/// (`sessionDidBecomeInactive`): it still delivers what its watch sends and what was queued
/// for that watch, and it refuses new sends, transfers and context updates with 7016
/// `sessionInactive`. Once nothing of that watch is pending (every queued item acknowledged,
/// every message answered, every received item handed to the app) it becomes `notActivated`
/// (`sessionDidDeactivate`), and the app calls `activate()` again for the new watch.
extension LinkSession {
    /// The phone switched to another watch: an activated session becomes inactive, and
    /// deactivates at once when nothing of its watch is pending. Does nothing otherwise.
    public func becomeInactive(now: Int64) -> [SessionAction] {
        guard activationState == .activated else { return drain() }
        activationState = .inactive
        actions.append(.notify(.didBecomeInactive))
        stateChanged()
        return drain()
    }

    /// Whether data of this session's watch is still on its way: queued items not yet
    /// acknowledged, messages waiting for their answer, received items not yet delivered.
    public var hasPendingDelivery: Bool {
        !pendingSendsAreEmpty || !undelivered.isEmpty || queues.values.contains { !$0.isEmpty }
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
        if appState != other.appState || flags != other.flags {
            appState = other.appState
            flags = other.flags
            stateChanged()
            deliverPending()
        }
        return drain()
    }

    /// 7004 before activation, 7016 while inactive: sending needs an activated session.
    func activationFailure() -> SessionError? {
        switch activationState {
        case .activated:
            return nil
        case .inactive:
            return .wc(.sessionInactive,
                       "the session is inactive: the phone switched to another watch; wait for session.didDeactivate, then call session.activate")
        case .notActivated:
            return .wc(.sessionNotActivated, "the session is not activated: call session.activate first")
        }
    }

    func deactivateIfDelivered() {
        guard activationState == .inactive, !hasPendingDelivery else { return }
        activationState = .notActivated
        actions.append(.notify(.didDeactivate))
        stateChanged()
    }
}
