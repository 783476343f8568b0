import LinkRuntime
import LinkSystem

/// The APNs provider endpoint: one TCP listener on loopback that serves HTTP/2 over TLS and
/// cleartext HTTP/2 with prior knowledge, on the daemon's loop.
final class APNsServer {
    let loop: EventLoop
    let logger: Logger
    let limits: APNsServerLimits
    let tlsContext: TLSServerContext
    let host: String
    private(set) var port: UInt16 = 0
    private var listener: Int32 = -1
    private var connections: [UInt64: APNsConnection] = [:]
    private var nextSerial: UInt64 = 1
    /// Connections with answers queued in this loop turn; written once at its end.
    private var pendingFlush: [APNsConnection] = []
    /// Queued on the loop with the first answer of a turn, so that an idle endpoint costs the
    /// daemon's other turns nothing (an after-turn hook would run on every turn). Made once,
    /// so that queueing it allocates nothing.
    private lazy var flushTask: () -> Void = { [weak self] in self?.flushPending() }
    /// The environment this endpoint is (development or production).
    let environment: APNsEnvironment
    /// Whether a new token connection may open one stream only until it authenticates (APNs'
    /// rule; `push.config {"oneStreamUntilAuthenticated": false}` turns it off).
    var limitsStreamsUntilAuthenticated: () -> Bool = { true }
    /// Answers one request of a connection, on the loop's thread.
    private let handler: (APNsRequest, inout ConnectionCredentials, APNsEnvironment) -> APNsAnswer

    private(set) var acceptedConnections = 0
    private(set) var refusedConnections = 0
    /// Connections closed at the cap to make room for a new client.
    private(set) var evictedConnections = 0
    private(set) var timedOutConnections = 0
    private(set) var protocolErrors = 0
    /// Requests answered 431 because their header list was over the limit.
    private(set) var oversizedHeaderLists = 0

    init(
        loop: EventLoop, logger: Logger, host: String, environment: APNsEnvironment = .development, limits: APNsServerLimits,
        tlsContext: TLSServerContext, handler: @escaping (APNsRequest, inout ConnectionCredentials, APNsEnvironment) -> APNsAnswer
    ) {
        self.loop = loop
        self.environment = environment
        self.logger = logger
        self.host = host
        self.limits = limits
        self.tlsContext = tlsContext
        self.handler = handler
    }

    func start(port requested: UInt16) throws {
        let (fd, port) = try TCPSocket.listen(host: host, port: requested)
        do {
            try loop.watch(fd, events: .readable) { [unowned self] _ in self.acceptAll() }
        } catch {
            _ = SystemCalls.close(fd)
            throw error
        }
        listener = fd
        self.port = port
    }

    func needsFlush(_ connection: APNsConnection) {
        if pendingFlush.isEmpty { loop.execute(flushTask) }
        pendingFlush.append(connection)
    }

    private func flushPending() {
        guard !pendingFlush.isEmpty else { return }
        let connections = pendingFlush
        pendingFlush.removeAll(keepingCapacity: true)
        var seen = Set<UInt64>()
        for connection in connections where seen.insert(connection.serial).inserted { connection.flushPending() }
    }

    var connectionCount: Int { connections.count }

    /// The open connection with `serial`, if it is still open.
    func connection(_ serial: UInt64) -> APNsConnection? { connections[serial] }

    /// The connections that count against the cap: all but those draining after an eviction.
    private var servingCount: Int { connections.values.reduce(0) { $0 + ($1.isEvicted ? 0 : 1) } }

    /// At the cap: closes the connection that has waited longest in its handshake, else the
    /// one idle longest with no request open, so that a client with work never waits for an
    /// idle socket. False when every connection is busy.
    private func evictOne() -> Bool {
        let candidates = connections.values.filter(\.isEvictable)
        let victim =
            candidates.filter { !$0.isEstablished }.min { $0.serial < $1.serial }
            ?? candidates.min { $0.lastActivity < $1.lastActivity }
        guard let victim else { return false }
        evictedConnections += 1
        logger.debug("push: connection #\(victim.serial) (\(victim.isEstablished ? "idle" : "in its handshake")) closed to make room")
        victim.evict()
        return true
    }

    private func acceptAll() {
        while listener >= 0 {
            let fd: Int32
            do {
                guard let accepted = try TCPSocket.accept(listener) else { return }
                fd = accepted
            } catch {
                logger.warning("push: accept failed: \(error)")
                return
            }
            guard servingCount < limits.maximumConnections || evictOne() else {
                refusedConnections += 1
                logger.debug("push: refused a connection: \(connections.count) open and busy, the limit is \(limits.maximumConnections)")
                _ = SystemCalls.close(fd)
                continue
            }
            do {
                let connection = try Connection(loop: loop, fd: fd)
                let serial = nextSerial
                nextSerial += 1
                acceptedConnections += 1
                connections[serial] = APNsConnection(serial: serial, connection: connection, server: self)
                logger.trace("push: connection #\(serial) accepted")
            } catch {
                logger.warning("push: cannot serve a new connection: \(error)")
                _ = SystemCalls.close(fd)
            }
        }
    }

    func handle(_ request: APNsRequest, _ credentials: inout ConnectionCredentials) -> APNsAnswer {
        handler(request, &credentials, environment)
    }

    func connectionClosed(_ connection: APNsConnection, _ reason: CloseReason) {
        connections[connection.serial] = nil
        logger.trace("push: connection #\(connection.serial) closed: \(reason)")
    }

    func noteTimeout() { timedOutConnections += 1 }
    func noteProtocolError() { protocolErrors += 1 }
    func noteOversizedHeaderList() { oversizedHeaderLists += 1 }

    /// Sends GOAWAY on every connection; returns how many got it.
    func goAwayAll(errorCode: UInt32, message: String) -> Int {
        let current = Array(connections.values)
        for connection in current { connection.goAway(errorCode: errorCode, message: message) }
        return current.count
    }

    func stop() {
        if listener >= 0 {
            loop.unwatch(listener)
            _ = SystemCalls.close(listener)
            listener = -1
        }
        for connection in Array(connections.values) { connection.close() }
        connections.removeAll()
        // A flush task still queued finds nothing (the connections are closed and let go).
        pendingFlush.removeAll()
    }
}
