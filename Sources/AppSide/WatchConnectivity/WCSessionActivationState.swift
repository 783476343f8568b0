/// The activation state of a ``WCSession``.
public enum WCSessionActivationState: Int, Sendable, Hashable {
    /// The session is not activated: call ``WCSession/activate()``.
    case notActivated = 0
    /// The session was active but is handing over to another watch (iOS): it delivers what it
    /// received and accepts nothing new.
    case inactive = 1
    /// The session is active: the app can send and receive.
    case activated = 2
}
