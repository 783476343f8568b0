import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import WireProtocol

/// What a feature built on the daemon (the push emulator, PowerAuth synchronisation) gets
/// to work with: the loop it runs on, where it may keep files, and how to emit events.
public struct FeatureContext {
    public let role: Role
    public let loop: EventLoop
    public let logger: Logger
    public let home: String
    public let stateDirectory: String
    /// Options given on the command line for features (`--apns-port 0` → `["apns-port": "0"]`).
    public let options: [String: String]
    /// Sends an event to every `events.subscribe` client.
    public let publish: (String, JSONObject) -> Void
    /// Hands a command to the session on the feature's behalf (send a message, transfer a
    /// userInfo, answer a system message); `completion` gets the session's answer.
    public let submit: (SessionCommand, @escaping (Result<CommandResult, SessionError>) -> Void) -> Void
    /// The session's state now (activation, reachability, device flags).
    public let status: () -> SessionStatus
}

/// A feature that serves its own control ops on the daemon's loop.
public protocol DaemonFeature: AnyObject {
    /// The ops it serves, e.g. `["push.register", "push.token"]`.
    var operations: [String] { get }
    /// Called once at startup, after the daemon's own files and sockets are ready; a thrown
    /// error stops the daemon with that message.
    func start(_ context: FeatureContext) throws
    /// Serves one request. Call `respond` exactly once, now or later (on the loop's thread).
    func handle(_ request: ControlRequest, respond: @escaping (Result<JSONObject, ControlError>) -> Void)
    /// Adds the feature's fields to `status`.
    func addStatus(to status: inout JSONObject)
    /// Called once when the daemon stops.
    func stop()
    /// Lets the feature set session hooks (e.g. `isSystemMessage`) before the session exists.
    func configureSession(_ configuration: inout LinkSession.Configuration)
    /// Sees every notification of the session, after the store committed what it reports.
    func observe(_ notification: SessionNotification)
}

extension DaemonFeature {
    public func configureSession(_ configuration: inout LinkSession.Configuration) {}
    public func observe(_ notification: SessionNotification) {}
}
