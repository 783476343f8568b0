import CNGHTTP2

/// The client side of one HTTP/2 connection, framing and HPACK by nghttp2, over a
/// ``TLSClientConnection``: one request at a time, each waited for.
final class HTTP2ClientSession {
    /// A response: its status, header fields (lowercase names) and body.
    struct Response {
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []

        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    private let connection: TLSClientConnection
    private let authority: String
    private var session: OpaquePointer?
    private var response = Response()
    private var streamId: Int32 = 0
    private var streamClosed = false
    private var streamError: UInt32 = 0
    private var goAway: (lastStreamId: Int32, errorCode: UInt32)?
    private var requestBody: [UInt8] = []
    private var bodyOffset = 0

    init(connection: TLSClientConnection, authority: String) throws {
        self.connection = connection
        self.authority = authority
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw Self.failure("nghttp2_session_callbacks_new", NGHTTP2_ERR_NOMEM.rawValue)
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            HTTP2ClientSession.from(user).header(
                frame.pointee.hd.stream_id, String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamId, data, length, user in
            guard let user, let data else { return 0 }
            HTTP2ClientSession.from(user).data(streamId, UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamId, errorCode, user in
            guard let user else { return 0 }
            HTTP2ClientSession.from(user).closed(streamId, errorCode)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue) else { return 0 }
            HTTP2ClientSession.from(user).goAway = (frame.pointee.goaway.last_stream_id, frame.pointee.goaway.error_code)
            return 0
        }
        var session: OpaquePointer?
        let created = nghttp2_session_client_new(&session, callbacks, Unmanaged.passUnretained(self).toOpaque())
        guard created == 0, let session else { throw Self.failure("nghttp2_session_client_new", created) }
        self.session = session
        let settings = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil, 0)
        guard settings == 0 else { throw Self.failure("nghttp2_submit_settings", settings) }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    private static func from(_ user: UnsafeMutableRawPointer) -> HTTP2ClientSession {
        Unmanaged<HTTP2ClientSession>.fromOpaque(user).takeUnretainedValue()
    }

    private static func failure(_ call: String, _ code: Int32) -> WatchLinkTestingError {
        WatchLinkTestingError("\(call) failed: \(String(cString: nghttp2_strerror(code)))")
    }

    /// Whether a new request can go on this connection (no GOAWAY, nghttp2 still wants to talk).
    var isUsable: Bool {
        guard let session, goAway == nil else { return false }
        return nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    /// Sends one request and waits for its whole response.
    func send(method: String, path: String, headers: [(String, String)], body: [UInt8]) throws -> Response {
        guard let session else { throw WatchLinkTestingError("the HTTP/2 session is closed") }
        response = Response()
        streamClosed = false
        streamError = 0
        requestBody = body
        bodyOffset = 0
        let fields = [(":method", method), (":scheme", "https"), (":authority", authority), (":path", path)] + headers
        let names = fields.map { Array($0.0.utf8) }, values = fields.map { Array($0.1.utf8) }
        var provider = nghttp2_data_provider()
        provider.read_callback = { _, _, buffer, length, flags, _, user in
            guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            return HTTP2ClientSession.from(user).readBody(buffer, length, flags)
        }
        let submitted: Int32 = withNameValues(names, values) { nva in
            if body.isEmpty { return nghttp2_submit_request(session, nil, nva.baseAddress, nva.count, nil, nil) }
            return withUnsafePointer(to: &provider) { nghttp2_submit_request(session, nil, nva.baseAddress, nva.count, $0, nil) }
        }
        guard submitted > 0 else { throw Self.failure("nghttp2_submit_request", submitted) }
        streamId = submitted
        while !streamClosed {
            try pumpOutput()
            if streamClosed { break }
            if let goAway, goAway.lastStreamId < streamId {
                throw WatchLinkTestingError("the endpoint sent GOAWAY (error \(goAway.errorCode)) before taking the request")
            }
            let input = try connection.read()
            guard !input.isEmpty else { throw WatchLinkTestingError("the endpoint closed the connection before answering \(path)") }
            let consumed = input.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
            guard consumed >= 0 else { throw Self.failure("nghttp2_session_mem_recv", Int32(consumed)) }
        }
        try pumpOutput()
        guard streamError == 0 else { throw WatchLinkTestingError("the endpoint reset the stream of \(path) (HTTP/2 error \(streamError))") }
        return response
    }

    private func pumpOutput() throws {
        guard let session else { return }
        var output: [UInt8] = []
        while true {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            guard n >= 0 else { throw Self.failure("nghttp2_session_mem_send", Int32(n)) }
            guard n > 0, let data else { break }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        }
        if !output.isEmpty { try connection.write(output) }
    }

    /// `body` with an `nghttp2_nv` for each name and value, pointing into one buffer.
    private func withNameValues<T>(_ names: [[UInt8]], _ values: [[UInt8]], _ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> T) -> T {
        let flat = zip(names, values).flatMap { $0 + $1 }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(flat.count, 1))
        defer { storage.deallocate() }
        storage.initialize(from: flat, count: flat.count)
        var offset = 0
        var nva: [nghttp2_nv] = zip(names, values).map { name, value in
            defer { offset += name.count + value.count }
            return nghttp2_nv(
                name: storage + offset, value: storage + offset + name.count, namelen: name.count, valuelen: value.count,
                flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        }
        return nva.withUnsafeMutableBufferPointer { body($0) }
    }

    // MARK: Callbacks

    private func header(_ stream: Int32, _ name: String, _ value: String) {
        guard stream == streamId else { return }
        if name == ":status" { response.status = Int(value) ?? 0 } else { response.headers.append((name, value)) }
    }

    private func data(_ stream: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard stream == streamId else { return }
        response.body.append(contentsOf: bytes)
    }

    private func closed(_ stream: Int32, _ errorCode: UInt32) {
        guard stream == streamId else { return }
        streamClosed = true
        streamError = errorCode
    }

    private func readBody(_ buffer: UnsafeMutablePointer<UInt8>, _ length: Int, _ flags: UnsafeMutablePointer<UInt32>) -> Int {
        let count = min(length, requestBody.count - bodyOffset)
        requestBody.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + bodyOffset, count: count) }
        bodyOffset += count
        if bodyOffset == requestBody.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }
}
