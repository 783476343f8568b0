#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import LinkControl
import LinkJSON
import LinkSystem

/// One control connection: a non-blocking socket read by a `DispatchSource` on a serial queue,
/// written in the callers' threads under a lock.
///
/// Locks: `writeLock` (held while a request line is written) is taken before `state`, never
/// after. The descriptor is closed only in the read source's cancel handler, holding both, so
/// a writer always writes to the descriptor it checked. Responses, events and the failure of
/// every waiting call are handed out on `queue`, in the order the lines arrived.
final class ClientConnection: @unchecked Sendable {
    typealias Completion = @Sendable (Result<JSONObject, WatchLinkError>) -> Void
    typealias EventHandler = @Sendable (WatchLinkEvent) -> Void
    typealias CloseHandler = @Sendable (WatchLinkError) -> Void

    /// The longest response or event line accepted from a daemon.
    static let maximumLineLength = 64 << 20

    private struct State {
        var nextId: Int64 = 1
        var pending: [Int64: (op: String, completion: Completion)] = [:]
        /// Set once closing has begun (by ``close(_:)`` or a failed read).
        var closeReason: WatchLinkError?
        var descriptorOpen = true
        var closed = false
        var eventHandlers: [EventHandler] = []
        var closeHandlers: [CloseHandler] = []
        var stream: AsyncStream<WatchLinkEvent>?
        var continuation: AsyncStream<WatchLinkEvent>.Continuation?
    }

    let path: String
    let queue: DispatchQueue
    private let descriptor: Int32
    private let writeLock = Locked(())
    private let state = Locked(State())
    private let source: any DispatchSourceRead

    // Confined to `queue`.
    private var framer = LineFramer(maximumLineLength: ClientConnection.maximumLineLength)
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        queue = DispatchQueue(label: "WatchLinkClient \(path)")
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [self] in readAvailable() }
        source.setCancelHandler { [self] in finishClose() }
        source.activate()
    }

    deinit {
        buffer.deallocate()
    }

    // MARK: Requests

    /// Writes the request line now, in the caller's thread; `completion` runs on ``queue``.
    func send(_ op: String, _ args: JSONObject, completion: @escaping Completion) {
        let failure: WatchLinkError? = writeLock.withLock { _ in
            let registered = state.withLock { state -> Result<Int64, WatchLinkError> in
                guard state.descriptorOpen, state.closeReason == nil else {
                    return .failure(state.closeReason ?? .connection("the connection to \(path) is closed"))
                }
                let id = state.nextId
                state.nextId += 1
                state.pending[id] = (op, completion)
                return .success(id)
            }
            let id: Int64
            switch registered {
            case .success(let registeredId): id = registeredId
            case .failure(let reason): return reason
            }
            let line = ControlCodec.request(ControlRequest(id: .int(id), op: op, args: args))
            guard let error = SocketWriter.writeAll(descriptor, line) else { return nil }
            guard state.withLock({ $0.pending.removeValue(forKey: id) }) != nil else { return nil }
            return .connection("cannot send '\(op)' to \(path): \(error.errno)")
        }
        if let failure {
            queue.async { completion(.failure(failure)) }
        }
    }

    // MARK: Events

    func addEventHandler(_ handler: @escaping EventHandler) {
        state.withLock { $0.eventHandlers.append(handler) }
    }

    func addCloseHandler(_ handler: @escaping CloseHandler) {
        let reason: WatchLinkError? = state.withLock { state in
            guard state.closed else {
                state.closeHandlers.append(handler)
                return nil
            }
            return state.closeReason
        }
        if let reason { queue.async { handler(reason) } }
    }

    /// The connection's one event stream, made the first time it is asked for.
    func eventStream() -> AsyncStream<WatchLinkEvent> {
        state.withLock { state in
            if let stream = state.stream { return stream }
            let (stream, continuation) = AsyncStream.makeStream(of: WatchLinkEvent.self, bufferingPolicy: .unbounded)
            state.stream = stream
            if state.closed {
                continuation.finish()
            } else {
                state.continuation = continuation
            }
            return stream
        }
    }

    // MARK: Closing

    var isClosed: Bool { state.withLock { $0.closeReason != nil } }

    /// Begins closing: shuts the socket down (waking a writer waiting for room) and cancels
    /// the read source, whose cancel handler fails every waiting call with `reason`.
    func close(_ reason: WatchLinkError) {
        let first = state.withLock { state -> Bool in
            guard state.closeReason == nil else { return false }
            state.closeReason = reason
            if state.descriptorOpen { Syscall.shutdown(descriptor, Int32(SHUT_RDWR)) }
            return true
        }
        if first { source.cancel() }
    }

    private func finishClose() {
        writeLock.withLock { _ in
            state.withLock { $0.descriptorOpen = false }
            Syscall.close(descriptor)
        }
        let (reason, pending, closeHandlers, continuation) = state.withLock { state in
            state.closed = true
            let taken = (
                state.closeReason ?? .connection("the connection to \(path) is closed"),
                state.pending.sorted { $0.key < $1.key }.map(\.value.completion),
                state.closeHandlers, state.continuation
            )
            state.pending = [:]
            state.closeHandlers = []
            state.eventHandlers = []
            state.continuation = nil
            return taken
        }
        for completion in pending { completion(.failure(reason)) }
        for handler in closeHandlers { handler(reason) }
        continuation?.finish()
    }

    // MARK: Reading (on `queue`)

    private func readAvailable() {
        // A bounded number of reads a turn; the source fires again while data waits.
        for _ in 0..<16 {
            switch SystemCalls.read(descriptor, into: buffer) {
            case .success(nil):
                return
            case .success(0?):
                close(.connection("the daemon closed the connection (\(path))"))
                return
            case .success(let count?):
                framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                while let output = framer.next() {
                    if let problem = handle(output) {
                        close(.connection("the daemon at \(path) sent \(problem); connection closed"))
                        return
                    }
                }
            case .failure(let error):
                if error.errno == .connectionReset {
                    close(.connection("the daemon closed the connection (\(path))"))
                } else {
                    close(.connection("cannot read from \(path): \(error.errno)"))
                }
                return
            }
        }
    }

    /// Hands one line to its waiting call or the event handlers; what is wrong with it, if anything.
    private func handle(_ output: LineFramerOutput) -> String? {
        guard case .line(let line) = output else {
            return "a line over \(Self.maximumLineLength) bytes"
        }
        let object: JSONObject
        do {
            guard case .object(let parsed) = try JSON.parse(line) else { return "a line that is not a JSON object" }
            object = parsed
        } catch {
            return "a line that is not JSON (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))"
        }
        if let name = object["event"] {
            guard let name = name.stringValue else { return "an event whose name is not a string: \(object)" }
            deliver(
                WatchLinkEvent(
                    name: name, at: object["at"]?.stringValue ?? "",
                    data: object["data"]?.objectValue ?? [:]))
            return nil
        }
        guard let id = object["id"]?.intValue,
            let waiting = state.withLock({ $0.pending.removeValue(forKey: id) })
        else { return nil }  // an answer to no call of ours (a `null` id, for instance)
        waiting.completion(Self.result(of: object, op: waiting.op))
        return nil
    }

    private func deliver(_ event: WatchLinkEvent) {
        let (handlers, continuation) = state.withLock { ($0.eventHandlers, $0.continuation) }
        for handler in handlers { handler(event) }
        continuation?.yield(event)
    }

    static func result(of response: JSONObject, op: String) -> Result<JSONObject, WatchLinkError> {
        switch response["ok"] {
        case .bool(true)?:
            switch response["result"] {
            case nil, .null?:
                return .success([:])
            case .object(let result)?:
                return .success(result)
            case let other?:
                return .failure(.invalidResponse("the result of '\(op)' is \(other.typeName), not an object"))
            }
        case .bool(false)?:
            guard let errorValue = response["error"], let error = WatchLinkError(json: errorValue) else {
                return .failure(.invalidResponse("the error response to '\(op)' has no valid 'error' object: \(response)"))
            }
            return .failure(error)
        default:
            return .failure(.invalidResponse("the response to '\(op)' has no boolean 'ok': \(response)"))
        }
    }
}
