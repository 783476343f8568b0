import Foundation
import LinkControl
import LinkJSON

/// A blocking client of a daemon's control socket.
///
/// Safe to share between threads: many calls may be in flight at once, from several threads,
/// on one connection. A reader thread matches each response to its call by id and queues
/// events for ``nextEvent(timeoutSeconds:)``.
public final class ControlClient: @unchecked Sendable {
    /// The socket this client is connected to.
    public let socketPath: String
    /// The time allowed for an answer when a call names none.
    public let timeoutSeconds: Double

    private let connection: ControlConnection

    /// Connects to the control socket at `socketPath`.
    ///
    /// - Throws: ``ControlClientError/cannotConnect(path:errno:)`` when nothing listens there,
    ///   ``ControlClientError/socketPathTooLong(path:limit:)`` when the path does not fit.
    public init(socketPath: String, timeoutSeconds: Double = 10) throws {
        self.socketPath = socketPath
        self.timeoutSeconds = timeoutSeconds
        connection = ControlConnection(socket: try ClientSocket.connect(path: socketPath))
        connection.startReader()
    }

    deinit {
        connection.close()
    }

    /// Calls `op` and returns its result.
    ///
    /// - Throws: ``ControlError`` when the daemon answers `ok: false`; ``ControlClientError`` when
    ///   no valid answer arrives in time or the connection fails.
    public func call(_ op: String, _ args: JSONObject = [:], timeoutSeconds: Double? = nil) throws -> JSONObject {
        let timeout = timeoutSeconds ?? self.timeoutSeconds
        let response = try connection.exchange(timeoutSeconds: timeout, what: "no response to '\(op)' within \(Self.format(timeout)) s") { id in
            ControlCodec.request(ControlRequest(id: id, op: op, args: args))
        }
        switch response["ok"] {
        case .bool(true)?:
            guard let result = response["result"] else { return [:] }
            guard case .object(let object) = result else {
                throw ControlClientError.invalidResponse("'result' of '\(op)' is \(result.typeName), not an object: \(response)")
            }
            return object
        case .bool(false)?:
            guard let errorValue = response["error"], let error = ControlError(json: errorValue) else {
                throw ControlClientError.invalidResponse("error response of '\(op)' has no valid 'error' object: \(response)")
            }
            throw error
        default:
            throw ControlClientError.invalidResponse("response of '\(op)' has no boolean 'ok': \(response)")
        }
    }

    /// Sends `line` as it is (a `"\n"` is added when missing) and returns the next response
    /// that no ``call(_:_:timeoutSeconds:)`` is waiting for, typically the error answer to a
    /// malformed line.
    public func callRaw(line: [UInt8], timeoutSeconds: Double? = nil) throws -> JSONValue {
        var bytes = line
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        let timeout = timeoutSeconds ?? self.timeoutSeconds
        return try connection.exchangeRaw(bytes, timeoutSeconds: timeout, what: "no response to a raw line within \(Self.format(timeout)) s")
    }

    /// Sends `events.subscribe` and waits for its success; events then queue up for
    /// ``nextEvent(timeoutSeconds:)``.
    public func subscribe(timeoutSeconds: Double? = nil) throws {
        _ = try call("events.subscribe", [:], timeoutSeconds: timeoutSeconds)
    }

    /// The next event, waiting up to `timeoutSeconds`; `nil` when none arrived in time.
    ///
    /// - Throws: ``ControlClientError/connectionClosed(_:)`` once the connection is closed and
    ///   every event received before has been returned.
    public func nextEvent(timeoutSeconds: Double) throws -> ControlEvent? {
        try connection.nextEvent(deadline: Date(timeIntervalSinceNow: timeoutSeconds))
    }

    /// Waits for the next event called `name` that satisfies `predicate`, dropping other events.
    ///
    /// - Throws: ``ControlClientError/timedOut(_:)`` naming the event when none came in time.
    public func waitForEvent(
        _ name: String, timeoutSeconds: Double,
        where predicate: (ControlEvent) -> Bool = { _ in true }
    ) throws -> ControlEvent {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while let event = try connection.nextEvent(deadline: deadline) {
            if event.name == name && predicate(event) {
                return event
            }
        }
        throw ControlClientError.timedOut("no event '\(name)' within \(Self.format(timeoutSeconds)) s")
    }

    /// Closes the connection; calls in flight fail with ``ControlClientError/connectionClosed(_:)``.
    public func close() {
        connection.close()
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds)
    }
}
