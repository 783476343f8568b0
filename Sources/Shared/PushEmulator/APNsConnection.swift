import LinkRuntime

/// One client connection of the endpoint: TLS (first byte 0x16, ALPN `h2`) or cleartext
/// HTTP/2 with prior knowledge, chosen from the first bytes, on the loop's thread.
final class APNsConnection {
    let serial: UInt64
    private let connection: Connection
    private unowned let server: APNsServer
    private var tls: TLSStream?
    private var http2: HTTP2ServerSession?
    private var isDecided = false
    private var plaintextReceived = 0
    private(set) var isEstablished = false
    private(set) var isClosed = false
    private var handshakeTimer: EventLoop.TimerID?
    private var idleTimer: EventLoop.TimerID?
    /// When the client last sent something (loop milliseconds).
    private(set) var lastActivity: Int64
    /// Closed to make room for a new client (see `APNsServer.evictOne`).
    private(set) var isEvicted = false
    /// How the connection authenticates: its certificate (read at the TLS handshake) or its
    /// provider tokens, whose rules APNs keeps per connection.
    private var credentials = ConnectionCredentials()

    /// Bytes of the HTTP/2 connection preface; the connection counts as established after them.
    private static let prefaceLength = 24
    /// A client that does not read its responses is cut off past this much queued output.
    static let maximumQueuedOutput = 8 << 20

    init(serial: UInt64, connection: Connection, server: APNsServer) {
        self.serial = serial
        self.connection = connection
        self.server = server
        lastActivity = connection.loop.nowMilliseconds
        connection.onRead = { [unowned self] bytes in self.received(bytes) }
        connection.onClose = { [unowned self] reason in self.closed(reason) }
        connection.onDrained = { [unowned self] in self.flush() }
        // Timers find the connection through the server, by serial, rather than holding a weak
        // reference: an object with a weak reference keeps its reference count in a side
        // table, where every retain and release of it takes the slow path.
        handshakeTimer = connection.loop.schedule(afterMilliseconds: server.limits.handshakeTimeoutMilliseconds) { [unowned server] in
            guard let self = server.connection(serial), !self.isClosed, !self.isEstablished else { return }
            self.server.logger.debug(
                "push: connection #\(self.serial) did not complete its handshake in \(self.server.limits.handshakeTimeoutMilliseconds) ms; closing")
            self.server.noteTimeout()
            self.connection.close()
        }
    }

    var kind: String { tls != nil ? "h2" : "h2c" }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        lastActivity = connection.loop.turnMilliseconds
        if !isDecided {
            isDecided = true
            if bytes.first == 0x16 {
                do { tls = try TLSStream(context: server.tlsContext) } catch {
                    fail("cannot start TLS: \(error)")
                    return
                }
            } else if bytes.first != UInt8(ascii: "P") {
                refuseNonHTTP2()
                return
            }
        }
        if let tls {
            do {
                try tls.receive(bytes) { plaintext in try self.receiveHTTP2(plaintext) }
                if tls.isHandshakeComplete, http2 == nil {
                    if let chosen = tls.negotiatedProtocol, chosen != "h2" {
                        fail("ALPN chose \(chosen), not h2")
                        return
                    }
                    try startHTTP2()
                }
            } catch let failure as HTTP2ServerSession.Failure {
                fail(failure)
                return
            } catch {
                fail("TLS: \(error)")
                return
            }
            if tls.isClosedByPeer { flush(); connection.closeAfterFlush(); return }
        } else {
            do { try receiveHTTP2(bytes) } catch let failure as HTTP2ServerSession.Failure {
                fail(failure)
                return
            } catch {
                fail("HTTP/2: \(error)")
                return
            }
        }
        flush()
    }

    private func startHTTP2() throws {
        guard http2 == nil else { return }
        // HTTP/2 starts once TLS is done (or at the first bytes of h2c), with the request that
        // may have come in the same read: the certificate is read first.
        if let tls { credentials.certificate = tls.providerCertificate }
        let session = try HTTP2ServerSession(authenticated: credentials.isAuthenticated || !server.limitsStreamsUntilAuthenticated())
        session.onRequest = { [unowned self] streamId, request in
            let answer = self.server.handle(request, &self.credentials)
            if self.credentials.isAuthenticated { self.http2?.allowAllStreams() }
            guard answer.delayMilliseconds > 0 else {
                self.respond(streamId, answer.response)
                return
            }
            // `push.delay` emulates the network, in real time: answers do not wait for a manual clock.
            self.connection.loop.schedule(afterMilliseconds: answer.delayMilliseconds, on: .realTime) { [unowned server = self.server, serial = self.serial] in
                server.connection(serial)?.respond(streamId, answer.response)
            }
        }
        session.onErrorGoAway = { [unowned self] code in
            self.server.logger.debug("push: connection #\(self.serial): GOAWAY with error \(code)")
            self.server.noteProtocolError()
        }
        session.onOversizedHeaders = { [unowned self] streamId in
            self.server.logger.debug("push: connection #\(self.serial) stream \(streamId): header list over \(HTTP2ServerSession.maximumHeaderListSize) bytes")
            self.server.noteOversizedHeaderList()
            self.http2?.respond(streamId: streamId, status: 431, headers: CollectionOfOne(("apns-id", APNsResponse.newApnsId())), body: [])
        }
        http2 = session
    }

    /// Input goes to nghttp2 a piece at a time; between pieces its answers go out while the
    /// client keeps reading (nothing is left queued for the socket). A client that does not
    /// read leaves them queued in nghttp2, which counts them and calls a flood a flood.
    private func receiveHTTP2(_ bytes: UnsafeRawBufferPointer) throws {
        try startHTTP2()
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + HTTP2ServerSession.inputPieceLength)
            try http2!.receive(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            if end < bytes.count, connection.pendingWriteByteCount == 0 { flush() }
        }
        plaintextReceived += bytes.count
        if !isEstablished, plaintextReceived >= APNsConnection.prefaceLength {
            isEstablished = true
            if let handshakeTimer { connection.loop.cancel(handshakeTimer) }
            handshakeTimer = nil
            armIdleTimer(after: server.limits.idleTimeoutMilliseconds)
        }
    }

    private func refuseNonHTTP2() {
        let text = "this endpoint speaks HTTP/2 only: TLS with ALPN h2, or cleartext with prior knowledge\n"
        connection.write(
            Array(
                "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain\r\ncontent-length: \(text.utf8.count)\r\nconnection: close\r\n\r\n\(text)"
                    .utf8))
        server.logger.debug("push: connection #\(serial) is not HTTP/2; refused")
        connection.closeAfterFlush()
    }

    // MARK: Output

    private func respond(_ streamId: Int32, _ response: APNsResponse) {
        guard !isClosed, let http2 else { return }
        if let uniqueId = response.uniqueId {
            http2.respond(
                streamId: streamId, status: response.status,
                headers: HeaderPair(first: ("apns-id", response.apnsId), second: ("apns-unique-id", uniqueId)), body: response.body)
        } else if response.reason == nil {
            http2.respond(streamId: streamId, status: response.status, headers: CollectionOfOne(("apns-id", response.apnsId)), body: [])
        } else {
            http2.respond(
                streamId: streamId, status: response.status,
                headers: [("apns-id", response.apnsId), ("content-type", "application/json")], body: response.body)
        }
        // Answers go out together: at the end of the read that carried their requests, or
        // of the loop turn for answers that came later.
        server.needsFlush(self)
    }

    /// Writes what nghttp2 has queued (the server calls it at the end of a loop turn).
    func flushPending() { flush() }

    /// Sends GOAWAY and closes once both sides are done.
    func goAway(errorCode: UInt32, message: String) {
        guard !isClosed else { return }
        guard let http2 else {
            connection.close()
            return
        }
        http2.goAway(errorCode: errorCode, message: message)
        flush()
        connection.closeAfterFlush()
    }

    /// Hands nghttp2's frames to the socket, but only while the client keeps up: while the
    /// socket holds unread output, frames wait in nghttp2 (which counts unanswered SETTINGS
    /// and PINGs and calls a flood a flood), and go out once the socket has drained.
    private func flush(evenBehind: Bool = false) {
        guard !isClosed else { return }
        if let http2, connection.pendingWriteByteCount == 0 || evenBehind {
            do {
                let output = try http2.takeOutput()
                if let tls {
                    try output.withUnsafeBytes { try tls.send($0) }
                } else {
                    connection.write(output)
                }
            } catch {
                server.logger.debug("push: connection #\(serial): \(error); closing")
                connection.close()
                return
            }
        }
        if let tls {
            let records = tls.takeCiphertext()
            if !records.isEmpty { connection.write(records) }
        }
        if connection.pendingWriteByteCount > APNsConnection.maximumQueuedOutput {
            server.logger.debug("push: connection #\(serial) does not read its responses; closing")
            connection.close()
            return
        }
        if let http2, !http2.isAlive { connection.closeAfterFlush() }
    }

    /// The client broke HTTP/2: GOAWAY with the reason (ENHANCE_YOUR_CALM for a flood), then
    /// close. The GOAWAY counts the protocol error (see `onErrorGoAway`).
    private func fail(_ failure: HTTP2ServerSession.Failure) {
        server.logger.debug("push: connection #\(serial): HTTP/2: \(failure); closing")
        http2?.terminate(after: failure)
        flush(evenBehind: true)
        if !(http2?.sentErrorGoAway ?? false) { server.noteProtocolError() }
        connection.closeAfterFlush()
    }

    private func fail(_ message: String) {
        server.logger.debug("push: connection #\(serial): \(message); closing")
        server.noteProtocolError()
        flush()
        connection.closeAfterFlush()
    }

    // MARK: Timers and closing

    private func armIdleTimer(after milliseconds: Int64) {
        idleTimer = connection.loop.schedule(afterMilliseconds: milliseconds) { [unowned server, serial] in
            server.connection(serial)?.idleCheck()
        }
    }

    private func idleCheck() {
        idleTimer = nil
        guard !isClosed else { return }
        let idle = connection.loop.nowMilliseconds - lastActivity
        let limit = server.limits.idleTimeoutMilliseconds
        if idle >= limit, (http2?.openStreamCount ?? 0) == 0 {
            server.logger.debug("push: connection #\(serial) idle for \(idle) ms; closing")
            goAway(errorCode: 0, message: APNsReason.idleTimeout.goAwayData)
            return
        }
        armIdleTimer(after: max(1, limit - idle))
    }

    func close() {
        connection.close()
    }

    /// Whether the connection may make room for a new client: its handshake is not done yet,
    /// or it has no request open.
    var isEvictable: Bool {
        !isClosed && !isEvicted && (!isEstablished || (http2?.openStreamCount ?? 0) == 0)
    }

    /// Makes room for a new client: a connection still in its handshake is closed; an idle
    /// one gets GOAWAY (no error) first, so its client knows to reconnect.
    func evict() {
        isEvicted = true
        if isEstablished {
            goAway(errorCode: 0, message: "too many connections; reconnect when you have work")
        } else {
            connection.close()
        }
    }

    private func closed(_ reason: CloseReason) {
        isClosed = true
        if let handshakeTimer { connection.loop.cancel(handshakeTimer) }
        if let idleTimer { connection.loop.cancel(idleTimer) }
        handshakeTimer = nil
        idleTimer = nil
        http2?.onRequest = nil
        http2?.onOversizedHeaders = nil
        server.connectionClosed(self, reason)
    }
}

/// Two response headers, without an array to hold them (one answer per push).
struct HeaderPair: RandomAccessCollection {
    let first: (String, String)
    let second: (String, String)

    var startIndex: Int { 0 }
    var endIndex: Int { 2 }

    subscript(position: Int) -> (String, String) { position == 0 ? first : second }
}
