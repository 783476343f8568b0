import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import WireProtocol

/// What the daemon's op families and features (the push emulator, PowerAuth
/// synchronisation, benchmarks) get to work with: the loop they run on, where they may keep
/// files, and how to reach the app's session and the event subscribers.
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
    /// Whether any client listens for events: an event that costs something to build is
    /// built only then.
    public let hasEventSubscribers: () -> Bool
    /// Hands a command to the app's session (send a message, transfer a userInfo, answer a
    /// system message); `completion` gets the session's answer.
    public let submit: (SessionCommand, @escaping (Result<CommandResult, SessionError>) -> Void) -> Void
    /// The session's state now (activation, reachability, device flags).
    public let status: () -> SessionStatus
    /// The emulated OS's installed programs: launching the app for a push, the File Provider
    /// extension for a `fileprovider` push, ending the app for breaking a rule (nil in a
    /// feature's unit test).
    public var apps: AppLauncher? = nil
    /// Sends an event to one control client (by ``OperationCall/clientSerial``), subscribed
    /// or not: what the extension of one process is handed.
    public var sendEvent: (String, JSONObject, UInt64) -> Void = { _, _, _ in }
    /// Records a `fault` entry in the trace (`name` and what went wrong): something the app
    /// lost that a test should see.
    public var traceFault: (JSONObject) -> Void = { _ in }
    /// Says that a file of the feature's state (a database, a state file) could not be
    /// written: a log line, a trace fault and a `state.writeFailed` event (docs/durability.md).
    public var stateWriteFailed: (String, Error) -> Void = { _, _ in }
}

extension FeatureContext {
    /// Submits `command` for a control call and answers the call with the session's result,
    /// rendered as the control protocol shows it.
    func submit(_ command: SessionCommand, answering call: OperationCall) {
        let (role, answerer) = (role, call.answerer)
        submit(command) { result in
            answerer.respond(result.map { ControlRendering.render($0, role: role) }.mapError(\.controlError))
        }
    }
}

/// A feature built on the daemon: its control ops, its files, its part of `status`, its
/// reactions to the session.
///
/// To add a feature: give its ops in `operations` (each a ``ControlOperation`` with its sides,
/// arguments and handler), open its files in `start`, and add it to the features the
/// executable's `main` passes to ``DaemonMain/run(role:features:)``.
public protocol DaemonFeature: AnyObject {
    /// Its control ops. The daemon registers them once, in its one ``OperationTable``; a
    /// handler runs only after `start`.
    var operations: [ControlOperation] { get }
    /// Called once at startup, after the daemon's own files and sockets are ready; a thrown
    /// error stops the daemon with that message.
    func start(_ context: FeatureContext) throws
    /// Adds the feature's fields to `status`.
    func addStatus(to status: inout JSONObject)
    /// Called once when the daemon stops.
    func stop()
    /// Lets the feature set session hooks (e.g. `isSystemMessage`) before the session exists.
    func configureSession(_ configuration: inout LinkSession.Configuration)
    /// Sees every notification of the app's session, after the store committed what it reports.
    func observe(_ notification: SessionNotification)
    /// A control client's connection closed (its ``OperationCall/clientSerial``).
    func clientClosed(_ serial: UInt64)
    /// The command-line options it adds to its daemon; their values reach it in
    /// `FeatureContext.options`, and `--help` lists them.
    var commandLineOptions: [FeatureOption] { get }
}

/// A command-line option of a feature, e.g. `--apns-port N`.
public struct FeatureOption: Sendable, Hashable {
    /// Without the dashes: `apns-port`.
    public let name: String
    /// What the value is, for `--help`: `N`, `ADDR`.
    public let valueName: String
    public let summary: String

    public init(_ name: String, _ valueName: String, _ summary: String) {
        self.name = name
        self.valueName = valueName
        self.summary = summary
    }
}

extension DaemonFeature {
    public func addStatus(to status: inout JSONObject) {}
    public func stop() {}
    public func configureSession(_ configuration: inout LinkSession.Configuration) {}
    public func observe(_ notification: SessionNotification) {}
    public func clientClosed(_ serial: UInt64) {}
    public var commandLineOptions: [FeatureOption] { [] }
}
