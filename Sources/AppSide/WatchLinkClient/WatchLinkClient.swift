import Dispatch
import LinkControl
import LinkJSON
import LinkSystem

/// An async client of one daemon's control socket (`HOME/phone.ctl` or `HOME/watch.ctl`).
///
/// Many calls may be in flight on one connection; the daemon may answer them in any order
/// and each answer goes to its call. Request lines are written in the caller's thread, so
/// requests reach the daemon in the order they were made. The connection is read by a
/// dispatch source on the client's serial queue: no thread of its own.
///
/// ```swift
/// let phone = try await WatchLinkClient.connect(home: home, side: .phone)
/// _ = try await phone.activate()
/// let reply = try await phone.sendMessage(["hello": "watch"], wantsReply: true)
/// ```
///
/// Closing the client, or the daemon going away, fails every waiting call with
/// ``WatchLinkError/connection(_:)``.
public final class WatchLinkClient: Sendable {
    /// The control socket this client is connected to.
    public let socketPath: String

    private let connection: ClientConnection

    private init(connection: ClientConnection) {
        self.connection = connection
        socketPath = connection.path
    }

    deinit {
        connection.close(.connection("the client was closed"))
    }

    /// Connects to the control socket at `socketPath`.
    ///
    /// - Throws: ``WatchLinkError/connection(_:)`` naming the path and the system's error when
    ///   nothing listens there (is the daemon running?) or the path does not fit a socket address.
    public static func connect(socketPath: String) async throws(WatchLinkError) -> WatchLinkClient {
        try connectNow(socketPath: socketPath)
    }

    /// Connects to the `side` daemon of the WatchLink home directory `home`.
    public static func connect(home: String, side: WatchLinkSide) async throws(WatchLinkError) -> WatchLinkClient {
        try connectNow(socketPath: side.controlSocketPath(home: home))
    }

    /// Connects at once, in the caller's thread (connecting to a Unix socket does not wait).
    package static func connectNow(socketPath: String) throws(WatchLinkError) -> WatchLinkClient {
        let descriptor: Int32
        do {
            descriptor = try UnixSocket.connect(path: socketPath)
        } catch let error as SocketPathError {
            throw .connection("cannot connect to \(socketPath): \(error)")
        } catch let error as SystemError {
            throw .connection(connectFailure(socketPath, error.errno))
        } catch {
            throw .connection("cannot connect to \(socketPath): \(error)")
        }
        return WatchLinkClient(connection: ClientConnection(descriptor: descriptor, path: socketPath))
    }

    private static func connectFailure(_ path: String, _ errno: Errno) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let daemon = WatchLinkSide.allCases.first { $0.controlSocketName == name }?.daemonName ?? "the daemon"
        if errno == .wouldBlock {
            return "cannot connect to \(path): \(errno): \(daemon) has too many connections waiting"
        }
        return "cannot connect to \(path): \(errno) — is \(daemon) running?"
    }

    // MARK: Calls

    /// Sends a request for `op` now and calls `completion` with its result or error.
    ///
    /// The request line is written before this method returns, so requests made one after
    /// the other reach the daemon in that order. `completion` runs on the client's serial
    /// queue, in the order the answers arrive, interleaved with the ``onEvent(_:)`` handlers.
    public func send(
        _ op: String, _ args: JSONObject = [:],
        completion: @escaping @Sendable (Result<JSONObject, WatchLinkError>) -> Void
    ) {
        connection.send(op, args, completion: completion)
    }

    /// Calls `op` with `args` and returns its result.
    ///
    /// The call is not cancelled with its task: the daemon carries the operation out whether
    /// or not anyone waits for the answer.
    ///
    /// - Throws: the daemon's error (``WatchLinkError/watchConnectivity(code:name:message:)``,
    ///   ``WatchLinkError/control(code:name:message:)``), or
    ///   ``WatchLinkError/connection(_:)`` when the connection closes first.
    public func call(_ op: String, _ args: JSONObject = [:]) async throws(WatchLinkError) -> JSONObject {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONObject, WatchLinkError>, Never>) in
            connection.send(op, args) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    // MARK: Events

    /// The events of this connection, in arrival order, from the first time this property is
    /// read: read it before ``subscribe()`` to see every event. Every read returns the same
    /// stream (one consumer); it finishes when the connection closes.
    public var events: AsyncStream<WatchLinkEvent> {
        connection.eventStream()
    }

    /// Calls `handler` with every event from now on, on the client's serial queue, in arrival
    /// order (and in order with the completions of ``send(_:_:completion:)``).
    public func onEvent(_ handler: @escaping @Sendable (WatchLinkEvent) -> Void) {
        connection.addEventHandler(handler)
    }

    /// Calls `handler` once, on the client's queue, when the connection closes (at once if it
    /// is closed already), after every waiting call has failed.
    public func onClose(_ handler: @escaping @Sendable (WatchLinkError) -> Void) {
        connection.addCloseHandler(handler)
    }

    /// Sends `events.subscribe`: from then on the connection carries the daemon's events.
    public func subscribe() async throws(WatchLinkError) {
        _ = try await call("events.subscribe")
    }

    // MARK: Closing

    /// Whether the connection is closed or closing.
    public var isClosed: Bool { connection.isClosed }

    /// Closes the connection; waiting calls fail with ``WatchLinkError/connection(_:)`` and the
    /// event stream finishes. Closing twice is harmless.
    public func close() {
        connection.close(.connection("the client was closed"))
    }
}

extension WatchLinkClient {
    /// Calls `op` and waits at most `timeoutSeconds` for its answer: for the synchronous methods
    /// of Apple's and the SDKs' APIs. Never call it on the client's queue, which the answer needs.
    package func callAndWait(_ op: String, _ args: JSONObject = [:], timeoutSeconds: Double = 30) -> Result<JSONObject, WatchLinkError> {
        let answered = DispatchSemaphore(value: 0)
        let answer = Locked<Result<JSONObject, WatchLinkError>?>(nil)
        send(op, args) { result in
            answer.withLock { $0 = result }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + timeoutSeconds) == .success, let result = answer.current else {
            return .failure(.connection("no answer to '\(op)' from \(socketPath) within \(Int(timeoutSeconds)) s"))
        }
        return result
    }
}
