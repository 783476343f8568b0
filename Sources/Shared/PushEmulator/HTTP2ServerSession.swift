import CNGHTTP2

/// The server side of one HTTP/2 connection, framing and HPACK by nghttp2: bytes in through
/// ``receive(_:)``, complete requests out through ``onRequest``, responses in through
/// ``respond(streamId:status:headers:body:)``, bytes out through ``takeOutput()``.
final class HTTP2ServerSession {
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: nghttp2_strerror(code)) }

        /// The peer flooded the session (unanswered SETTINGS or PING, too many CONTINUATION
        /// frames): RFC 9113 answers that with ENHANCE_YOUR_CALM.
        var isFlood: Bool { code == NGHTTP2_ERR_FLOODED.rawValue || code == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue }
    }

    /// At most this much input goes to nghttp2 at once, so that the answers to a client that
    /// reads them (SETTINGS and PING acknowledgements) leave between pieces.
    static let inputPieceLength = 4096

    /// The largest header list of a request, counted as HTTP/2 does (name + value + 32 each).
    static let maximumHeaderListSize = 16 * 1024
    static let maximumConcurrentStreams: UInt32 = 1000

    /// Called with each complete request; answer it with ``respond(streamId:status:headers:body:)``.
    var onRequest: ((Int32, APNsRequest) -> Void)?
    /// Called once when the session sends a GOAWAY with an error code (nghttp2's own, for a
    /// client that broke the protocol, or one of ``terminate(after:)``).
    var onErrorGoAway: ((UInt32) -> Void)?
    private(set) var sentErrorGoAway = false
    /// Called for a request whose header list went over ``maximumHeaderListSize``.
    var onOversizedHeaders: ((Int32) -> Void)?

    private var session: OpaquePointer?
    private struct Stream {
        var request = APNsRequest()
        var headerListSize = 0
        var oversized = false
    }
    private var streams: [Int32: Stream] = [:]
    private var bodies: [Int32: (bytes: [UInt8], offset: Int)] = [:]
    private(set) var requestCount = 0

    init() throws {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { throw Failure(code: NGHTTP2_ERR_NOMEM.rawValue) }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2ServerSession.from(user).beginHeaders(frame)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            HTTP2ServerSession.from(user).header(frame.pointee.hd.stream_id,
                                                 UnsafeBufferPointer(start: name, count: nameLength),
                                                 UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamId, data, length, user in
            guard let user, let data else { return 0 }
            HTTP2ServerSession.from(user).data(streamId, UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue),
                  frame.pointee.goaway.error_code != NGHTTP2_NO_ERROR.rawValue else { return 0 }
            HTTP2ServerSession.from(user).errorGoAwaySent(frame.pointee.goaway.error_code)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2ServerSession.from(user).frameReceived(frame)
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamId, _, user in
            guard let user else { return 0 }
            HTTP2ServerSession.from(user).streamClosed(streamId)
            return 0
        }
        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else { throw Failure(code: NGHTTP2_ERR_NOMEM.rawValue) }
        defer { nghttp2_option_del(options) }
        nghttp2_option_set_max_settings(options, 32)
        nghttp2_option_set_max_continuations(options, 8)
        nghttp2_option_set_max_outbound_ack(options, 1000)
        var session: OpaquePointer?
        let result = nghttp2_session_server_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), options)
        guard result == 0, let session else { throw Failure(code: result) }
        self.session = session
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: HTTP2ServerSession.maximumConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(HTTP2ServerSession.maximumHeaderListSize)),
        ]
        let submitted = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        guard submitted == 0 else { throw Failure(code: submitted) }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    private static func from(_ user: UnsafeMutableRawPointer) -> HTTP2ServerSession {
        Unmanaged<HTTP2ServerSession>.fromOpaque(user).takeUnretainedValue()
    }

    // MARK: Input and output

    /// Feeds received bytes; throws when the peer broke the protocol (then `terminate`).
    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard let session, let base = bytes.baseAddress, bytes.count > 0 else { return }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 { throw Failure(code: Int32(result)) }
    }

    /// Ends the session after `failure` with a GOAWAY naming it: ENHANCE_YOUR_CALM for a flood,
    /// PROTOCOL_ERROR otherwise (nghttp2 sends its own when it has queued one already).
    func terminate(after failure: Failure) {
        guard let session else { return }
        let code = failure.isFlood ? NGHTTP2_ENHANCE_YOUR_CALM.rawValue : NGHTTP2_PROTOCOL_ERROR.rawValue
        _ = nghttp2_session_terminate_session(session, code)
    }

    /// Frames waiting to go out.
    func takeOutput() throws -> [UInt8] {
        guard let session else { return [] }
        var output: [UInt8] = []
        while true {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            if n < 0 { throw Failure(code: Int32(n)) }
            guard n > 0, let data else { break }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        }
        return output
    }

    /// Whether the session is still open in either direction (false after GOAWAY exchanges or errors).
    var isAlive: Bool {
        guard let session else { return false }
        return nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    /// Streams opened and not yet closed.
    var openStreamCount: Int { streams.count + bodies.count }

    // MARK: Responding

    func respond(streamId: Int32, status: Int, headers: [(String, String)], body: [UInt8]) {
        guard let session else { return }
        streams[streamId] = nil
        var fields = [(":status", String(status))] + headers
        if !body.isEmpty { fields.append(("content-length", String(body.count))) }
        let flat = fields.flatMap { Array($0.0.utf8) + Array($0.1.utf8) }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(flat.count, 1))
        defer { storage.deallocate() }
        storage.initialize(from: flat, count: flat.count)
        var offset = 0
        var nva: [nghttp2_nv] = fields.map { name, value in
            let n = name.utf8.count, v = value.utf8.count
            defer { offset += n + v }
            return nghttp2_nv(name: storage + offset, value: storage + offset + n, namelen: n, valuelen: v,
                              flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        }
        if body.isEmpty {
            _ = nghttp2_submit_response(session, streamId, &nva, nva.count, nil)
            return
        }
        bodies[streamId] = (body, 0)
        var provider = nghttp2_data_provider()
        provider.read_callback = { _, streamId, buffer, length, flags, _, user in
            guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            return HTTP2ServerSession.from(user).readBody(streamId, buffer, length, flags)
        }
        if nghttp2_submit_response(session, streamId, &nva, nva.count, &provider) != 0 {
            bodies[streamId] = nil
        }
    }

    /// Refuses a stream with RST_STREAM.
    func reset(streamId: Int32, errorCode: UInt32) {
        guard let session else { return }
        streams[streamId] = nil
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamId, errorCode)
    }

    /// Sends GOAWAY: no new streams; those already open are still answered.
    func goAway(errorCode: UInt32, message: String) {
        guard let session else { return }
        let last = nghttp2_session_get_last_proc_stream_id(session)
        let bytes = Array(message.utf8.prefix(256))
        _ = bytes.withUnsafeBufferPointer {
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, errorCode, $0.baseAddress, $0.count)
        }
    }

    // MARK: Callbacks

    private func readBody(_ streamId: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ length: Int,
                          _ flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard var entry = bodies[streamId] else {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(length, entry.bytes.count - entry.offset)
        entry.bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + entry.offset, count: count) }
        entry.offset += count
        if entry.offset == entry.bytes.count {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            bodies[streamId] = nil
        } else {
            bodies[streamId] = entry
        }
        return count
    }

    private func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) {
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return }
        streams[frame.pointee.hd.stream_id] = Stream()
    }

    private func header(_ streamId: Int32, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        // In place: a copy of the stream would copy its request's header list on every header.
        guard streams[streamId]?.oversized == false else { return }
        Self.add(name, value, to: &streams[streamId]!)
    }

    private static func add(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>, to stream: inout Stream) {
        stream.headerListSize += name.count + value.count + 32
        if stream.headerListSize > HTTP2ServerSession.maximumHeaderListSize {
            stream.oversized = true
            stream.request = APNsRequest()
            return
        }
        let valueText = String(decoding: value, as: UTF8.self)
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":method".utf8) {
                stream.request.method = valueText
            } else if name.elementsEqual(":path".utf8) {
                stream.request.path = valueText
            }
            return
        }
        stream.request.headers.append((String(decoding: name, as: UTF8.self), valueText))
    }

    private func data(_ streamId: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard streams[streamId] != nil, !streams[streamId]!.oversized else { return }
        streams[streamId]!.request.appendBody(bytes)
    }

    private func errorGoAwaySent(_ code: UInt32) {
        guard !sentErrorGoAway else { return }
        sentErrorGoAway = true
        onErrorGoAway?(code)
    }

    private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let type = frame.pointee.hd.type
        guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue),
              frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 else { return }
        let streamId = frame.pointee.hd.stream_id
        guard let stream = streams[streamId] else { return }
        requestCount += 1
        if stream.oversized {
            onOversizedHeaders?(streamId)
        } else {
            onRequest?(streamId, stream.request)
        }
    }

    private func streamClosed(_ streamId: Int32) {
        streams[streamId] = nil
        bodies[streamId] = nil
    }
}
