#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import LinkRuntime
import LinkSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client of the control socket.
final class ControlClientConnection {
    let serial: UInt64
    let connection: Connection
    static let maximumLineLength = 1 << 20
    private var framer = LineFramer(maximumLineLength: ControlClientConnection.maximumLineLength)
    fileprivate(set) var isSubscribed = false
    /// Receives `trace.entry` events (`trace.get {"follow": true}`).
    fileprivate(set) var followsTrace = false
    /// The line of the answer being written: kept, with its capacity, for the next one.
    private var responseLine: [UInt8] = []
    /// The most the kept response line holds on to between answers.
    static let keptResponseCapacity = 16 << 10
    /// Output held while the client does not read (events are dropped past the limit).
    static let maximumPendingOutput = 16 << 20

    init(serial: UInt64, connection: Connection) {
        self.serial = serial
        self.connection = connection
    }

    var isOpen: Bool { connection.isOpen }

    func write(_ line: [UInt8]) {
        guard connection.isOpen else { return }
        connection.write(line)
    }

    /// The answer to the request `id`.
    func respond(id: JSONValue, _ result: Result<JSONObject, ControlError>) {
        switch result {
        case .success(let object): respond(id: id, result: object)
        case .failure(let error): respond(id: id, error: error)
        }
    }

    func respond(id: JSONValue, result: JSONObject) {
        guard connection.isOpen else { return }
        let detached = ControlCodec.appendSuccess(
            id: id, result: result, to: &responseLine, detachingTextsOfAtLeast: Self.detachedTextThreshold)
        if detached.isEmpty {
            connection.write(responseLine)
        } else {
            write(responseLine, with: detached[...])
        }
        // The capacity kept for the next answer, unless an answer made it large.
        responseLine.removeAll(keepingCapacity: responseLine.capacity <= Self.keptResponseCapacity)
    }

    /// Texts in an answer from this size on (a large reply's dictionary) are written from
    /// their own arrays (`sendmsg`), not copied into the answer's line.
    static let detachedTextThreshold = 4096

    /// Writes `line` with the `detached` texts at their offsets, in one `sendmsg` (each text is
    /// pinned for the write, hence the recursion; answers hold one or two).
    private func write(_ line: [UInt8], with detached: ArraySlice<(offset: Int, text: [UInt8])>) {
        line.withUnsafeBytes { line in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2 * detached.count + 1) { vectors in
                var count = 0
                var start = 0
                func add(_ bytes: UnsafeRawBufferPointer) {
                    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
                    vectors[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: bytes.count)
                    count += 1
                }
                func pin(_ index: Int) {
                    guard index < detached.endIndex else {
                        add(UnsafeRawBufferPointer(rebasing: line[start...]))
                        connection.write(vectors: UnsafeBufferPointer(rebasing: vectors[0..<count]))
                        return
                    }
                    let offset = detached[index].offset
                    add(UnsafeRawBufferPointer(rebasing: line[start..<offset]))
                    start = offset
                    detached[index].text.withUnsafeBytes { text in
                        add(text)
                        pin(index + 1)
                    }
                }
                pin(detached.startIndex)
            }
        }
    }

    func respond(id: JSONValue?, error: ControlError) {
        write(ControlCodec.failure(id: id, error: error))
    }

    /// Hands `body` each line `bytes` complete (lent from them where it arrived whole), until
    /// the connection closes.
    fileprivate func lines(from bytes: UnsafeRawBufferPointer, _ body: (LineFramerLentOutput) -> Void) {
        framer.append(bytes) { output in
            body(output)
            return connection.isOpen
        }
    }
}

/// The control socket: JSON lines from local clients of the same user.
final class ControlServer {
    typealias RequestHandler = (ControlClientConnection, ControlRequest) -> Void

    private let loop: EventLoop
    private let logger: Logger
    let path: String
    private var listener: Int32 = -1
    private var clients: [UInt64: ControlClientConnection] = [:]
    private var nextSerial: UInt64 = 1
    var onRequest: RequestHandler?
    var onClientClosed: ((ControlClientConnection) -> Void)?

    init(loop: EventLoop, path: String, logger: Logger) {
        self.loop = loop
        self.path = path
        self.logger = logger
    }

    func start() throws {
        listener = try UnixSocket.listen(path: path)
        // Control clients are served first in each turn: a person or a tool waiting for an
        // answer does not wait behind bulk traffic (a turn can hold 100 APNs requests).
        try loop.watch(listener, events: .readable, priority: .interactive) { [unowned self] _ in self.acceptAll() }
    }

    /// Stops accepting and removes the socket file.
    func stop() {
        guard listener >= 0 else { return }
        loop.unwatch(listener)
        _ = SystemCalls.close(listener)
        listener = -1
        SystemCalls.unlink(path)
        for client in clients.values { client.connection.closeAfterFlush() }
    }

    func subscribe(_ client: ControlClientConnection) {
        guard !client.isSubscribed else { return }
        client.isSubscribed = true
        subscriberCount += 1
    }

    /// Sends this client every trace entry from now on.
    func followTrace(_ client: ControlClientConnection) {
        guard !client.followsTrace else { return }
        client.followsTrace = true
        traceFollowerCount += 1
        onTraceFollowersChanged?()
    }

    /// How many clients follow the trace; the daemon builds entries for them only while there are any.
    private(set) var traceFollowerCount = 0
    var onTraceFollowersChanged: (() -> Void)?

    /// Sends a `trace.entry` event to every follower of the trace.
    func publishTraceEntry(_ data: JSONObject) {
        send(ControlCodec.event(name: "trace.entry", atMilliseconds: loop.wallMilliseconds, data: data), to: "trace follower") { $0.followsTrace }
    }

    /// Whether any client listens for events (counted, so the hot path does not scan clients).
    private(set) var subscriberCount = 0
    var hasSubscribers: Bool { subscriberCount > 0 }

    /// Sends an event line to every subscriber; a subscriber that stopped reading long ago
    /// is disconnected rather than allowed to grow the daemon without bound.
    func broadcast(_ line: [UInt8]) {
        send(line, to: "event subscriber") { $0.isSubscribed }
    }

    /// Writes `line` to the open clients that `listens`; one that stopped reading long ago
    /// (a `kind` of listener, for the log) is disconnected.
    private func send(_ line: [UInt8], to kind: String, where listens: (ControlClientConnection) -> Bool) {
        for client in clients.values where listens(client) && client.isOpen {
            if client.connection.pendingWriteByteCount > ControlClientConnection.maximumPendingOutput {
                logger.warning("control: \(kind) #\(client.serial) is not reading; disconnecting it")
                client.connection.close()
                continue
            }
            client.write(line)
        }
    }

    /// Sends an event to the client `serial` alone, subscribed or not.
    func sendEvent(_ name: String, _ data: JSONObject, toClient serial: UInt64) {
        guard let client = clients[serial] else { return }
        send(ControlCodec.event(name: name, atMilliseconds: loop.wallMilliseconds, data: data), to: "client") { $0 === client }
    }

    /// Publishes an event to every subscriber (`events.subscribe`).
    func publish(_ name: String, _ data: JSONObject) {
        logger.debug("event \(name)")
        guard hasSubscribers else { return }
        broadcast(ControlCodec.event(name: name, atMilliseconds: loop.wallMilliseconds, data: data))
    }

    private func acceptAll() {
        do {
            try UnixSocket.acceptPending(
                listener,
                refuse: { fd, uid in
                    logger.warning("control: refused a client of uid \(uid) (only uid \(SystemCalls.userID()) may connect)")
                    let line = ControlCodec.failure(
                        id: nil,
                        error: .control(
                            .badRequest,
                            "permission denied: this control socket serves uid \(SystemCalls.userID()) only"))
                    line.withUnsafeBytes { _ = SystemCalls.write(fd, $0) }
                }, serve: serve)
        } catch {
            logger.warning("control: accept failed: \(error)")
        }
    }

    private func serve(_ fd: Int32) {
        do {
            let connection = try Connection(loop: loop, fd: fd, priority: .interactive)
            let client = ControlClientConnection(serial: nextSerial, connection: connection)
            nextSerial += 1
            clients[client.serial] = client
            let serial = client.serial
            connection.onRead = { [unowned self] bytes in
                if let client = self.clients[serial] { self.read(client, bytes) }
            }
            connection.onClose = { [unowned self] _ in
                if let client = self.clients.removeValue(forKey: serial) {
                    if client.isSubscribed { self.subscriberCount -= 1 }
                    if client.followsTrace {
                        self.traceFollowerCount -= 1
                        self.onTraceFollowersChanged?()
                    }
                    self.onClientClosed?(client)
                }
            }
            logger.debug("control: client #\(client.serial) connected")
            // linkctl and the client libraries send their request right after connecting:
            // answer it in this turn rather than the next.
            connection.readArrived()
        } catch {
            logger.warning("control: could not serve a new client: \(error)")
            _ = SystemCalls.close(fd)
        }
    }

    private func read(_ client: ControlClientConnection, _ bytes: UnsafeRawBufferPointer) {
        client.lines(from: bytes) { output in
            switch output {
            case .tooLong(let length):
                client.respond(
                    id: nil,
                    error: .control(
                        .lineTooLong,
                        "request line of at least \(length) bytes is over the limit of \(ControlClientConnection.maximumLineLength) bytes; it was discarded"))
            case .line(let line):
                switch ControlCodec.parseRequest(line: line) {
                case .success(let request):
                    onRequest?(client, request)
                case .failure(let failure):
                    client.respond(id: failure.id, error: failure.error)
                }
            }
        }
    }
}
