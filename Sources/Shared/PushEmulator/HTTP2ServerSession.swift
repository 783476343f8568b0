import CNGHTTP2

/// The server side of one HTTP/2 connection, framing and HPACK by nghttp2: bytes in through
/// ``receive(_:)``, complete requests out through ``onRequest``, responses in through
/// ``respond(streamId:status:headers:body:)``, bytes out through ``takeOutput()``. What the
/// fuzz target (`Sources/Fuzz/FuzzHTTP2Session`) drives is `package`.
package final class HTTP2ServerSession {
    package struct Failure: Error, CustomStringConvertible {
        let code: Int32
        package var description: String { String(cString: nghttp2_strerror(code)) }

        /// The peer flooded the session (unanswered SETTINGS or PING, too many CONTINUATION
        /// frames): RFC 9113 answers that with ENHANCE_YOUR_CALM.
        var isFlood: Bool { code == NGHTTP2_ERR_FLOODED.rawValue || code == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue }
    }

    /// At most this much input goes to nghttp2 at once, so that the answers to a client that
    /// reads them (SETTINGS and PING acknowledgements) leave between pieces.
    static let inputPieceLength = 4096

    /// The largest header list of a request, counted as HTTP/2 does (name + value + 32 each).
    static let maximumHeaderListSize = 16 * 1024
    package static let maximumConcurrentStreams: UInt32 = 1000
    /// Before a client has authenticated: "APNs allows only one stream until you post a
    /// request with a valid authentication token."
    static let unauthenticatedConcurrentStreams: UInt32 = 1

    /// Called with each complete request; answer it with ``respond(streamId:status:headers:body:)``.
    package var onRequest: ((Int32, APNsRequest) -> Void)?
    /// Called once when the session sends a GOAWAY with an error code (nghttp2's own, for a
    /// client that broke the protocol, or one of ``terminate(after:)``).
    var onErrorGoAway: ((UInt32) -> Void)?
    private(set) var sentErrorGoAway = false
    /// Called for a request whose header list went over ``maximumHeaderListSize``.
    package var onOversizedHeaders: ((Int32) -> Void)?

    private var session: OpaquePointer?
    private struct Stream {
        var request = APNsRequest()
        var headerListSize = 0
        var oversized = false

        mutating func add(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
            guard !oversized else { return }
            headerListSize += name.count + value.count + 32
            if headerListSize > HTTP2ServerSession.maximumHeaderListSize {
                oversized = true
                request = APNsRequest()
                return
            }
            request.append(name: name, value: value)
        }

        mutating func appendBody(_ bytes: UnsafeRawBufferPointer) {
            guard !oversized else { return }
            request.appendBody(bytes)
        }
    }
    /// Room reserved for a request's header list: a provider token and the usual fields fit.
    static let typicalHeaderListSize = 512
    /// The request whose header block is being received (HPACK delivers a block's fields
    /// together, so they go straight here rather than through a lookup each), and its stream.
    private var receiving = Stream()
    private var receivingId: Int32 = 0
    /// Requests whose header block is complete, until answered or closed, in slots that
    /// nghttp2 finds by stream (a stream's user data is its slot's index + 1): a body's frames
    /// and the answer reach their request with nghttp2's own lookup, and a slot is used again.
    private var slots: [Stream] = []
    private var freeSlots: [Int] = []
    /// The stream whose request ``onRequest`` is handling now, and whether it was answered
    /// during the call: an answer given at once needs no slot.
    private var answeringId: Int32 = 0
    private var answeredNow = false
    private var bodies: [Int32: (bytes: [UInt8], offset: Int)] = [:]
    private(set) var requestCount = 0
    /// Scratch space of ``respond(streamId:status:headers:body:)``: the fields' bytes one after
    /// another, and the fields pointing into them.
    private var responseBytes: [UInt8] = []
    private var responseFields: [nghttp2_nv] = []

    /// - Parameter authenticated: the client is known already (a provider certificate): it may
    ///   open every stream from the start; otherwise one until ``allowAllStreams()``.
    package init(authenticated: Bool = true) throws {
        allowsAllStreams = authenticated
        let concurrentStreams =
            authenticated
            ? HTTP2ServerSession.maximumConcurrentStreams
            : HTTP2ServerSession.unauthenticatedConcurrentStreams
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { throw Failure(code: NGHTTP2_ERR_NOMEM.rawValue) }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2ServerSession.with(user) { $0.beginHeaders(frame) }
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            HTTP2ServerSession.with(user) {
                $0.header(
                    frame.pointee.hd.stream_id,
                    UnsafeBufferPointer(start: name, count: nameLength),
                    UnsafeBufferPointer(start: value, count: valueLength))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamId, data, length, user in
            guard let user, let data else { return 0 }
            HTTP2ServerSession.with(user) { $0.data(streamId, UnsafeRawBufferPointer(start: data, count: length)) }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue),
                frame.pointee.goaway.error_code != NGHTTP2_NO_ERROR.rawValue
            else { return 0 }
            HTTP2ServerSession.with(user) { $0.errorGoAwaySent(frame.pointee.goaway.error_code) }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2ServerSession.with(user) { $0.frameReceived(frame) }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamId, _, user in
            guard let user else { return 0 }
            HTTP2ServerSession.with(user) { $0.streamClosed(streamId) }
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
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: concurrentStreams),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(HTTP2ServerSession.maximumHeaderListSize)),
        ]
        let submitted = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        guard submitted == 0 else { throw Failure(code: submitted) }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// Calls `body` with the session a callback's user data points to, without a reference
    /// taken: nghttp2 calls back only from within the session's own calls, while it lives.
    private static func with<Result>(_ user: UnsafeMutableRawPointer, _ body: (HTTP2ServerSession) -> Result) -> Result {
        Unmanaged<HTTP2ServerSession>.fromOpaque(user)._withUnsafeGuaranteedRef(body)
    }

    // MARK: Input and output

    /// Feeds received bytes; throws when the peer broke the protocol (then `terminate`).
    package func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard let session, let base = bytes.baseAddress, bytes.count > 0 else { return }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 { throw Failure(code: Int32(result)) }
    }

    /// Ends the session after `failure` with a GOAWAY naming it: ENHANCE_YOUR_CALM for a flood,
    /// PROTOCOL_ERROR otherwise (nghttp2 sends its own when it has queued one already).
    package func terminate(after failure: Failure) {
        guard let session else { return }
        let code = failure.isFlood ? NGHTTP2_ENHANCE_YOUR_CALM.rawValue : NGHTTP2_PROTOCOL_ERROR.rawValue
        _ = nghttp2_session_terminate_session(session, code)
    }

    /// Frames waiting to go out.
    package func takeOutput() throws -> [UInt8] {
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
    package var isAlive: Bool {
        guard let session else { return false }
        return nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    /// Streams opened and not yet closed.
    package var openStreamCount: Int { slots.count - freeSlots.count + bodies.count + (receivingId != 0 ? 1 : 0) }

    // MARK: Responding

    package func respond(streamId: Int32, status: Int, headers: some Collection<(String, String)>, body: [UInt8]) {
        guard let session else { return }
        forget(streamId)
        // The fields are written into a buffer kept from one response to the next (nghttp2
        // copies them): a response costs no allocation of its own.
        var length = 20 + (body.isEmpty ? 0 : 20)
        for (name, value) in headers { length += name.utf8.count + value.utf8.count }
        length += FieldWriter.fixedNamesLength
        if responseBytes.count < length { responseBytes = [UInt8](repeating: 0, count: max(length, 256)) }
        responseFields.removeAll(keepingCapacity: true)
        var submitted: Int32 = 0
        responseBytes.withUnsafeMutableBufferPointer { bytes in
            var writer = FieldWriter(base: bytes.baseAddress!)
            responseFields.append(writer.field(":status", digitsOf: status))
            for (name, value) in headers { responseFields.append(writer.field(name, value)) }
            if !body.isEmpty { responseFields.append(writer.field("content-length", digitsOf: body.count)) }
            if body.isEmpty {
                submitted = nghttp2_submit_response(session, streamId, responseFields, responseFields.count, nil)
                return
            }
            bodies[streamId] = (body, 0)
            var provider = nghttp2_data_provider()
            provider.read_callback = { _, streamId, buffer, length, flags, _, user in
                guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                return HTTP2ServerSession.with(user) { $0.readBody(streamId, buffer, length, flags) }
            }
            submitted = nghttp2_submit_response(session, streamId, responseFields, responseFields.count, &provider)
        }
        if submitted != 0, !body.isEmpty { bodies[streamId] = nil }
    }

    /// Refuses a stream with RST_STREAM.
    package func reset(streamId: Int32, errorCode: UInt32) {
        guard let session else { return }
        forget(streamId)
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamId, errorCode)
    }

    /// Lets the client open ``maximumConcurrentStreams`` streams (a new SETTINGS): it has
    /// authenticated.
    package func allowAllStreams() {
        guard let session, !allowsAllStreams else { return }
        allowsAllStreams = true
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: HTTP2ServerSession.maximumConcurrentStreams)
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    private(set) var allowsAllStreams = false

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

    private func readBody(
        _ streamId: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ length: Int,
        _ flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
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
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        else { return }
        receivingId = frame.pointee.hd.stream_id
        receiving = Stream(request: APNsRequest(reservingHeaderCapacity: HTTP2ServerSession.typicalHeaderListSize))
    }

    private func header(_ streamId: Int32, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        if streamId == receivingId {
            receiving.add(name, value)
        } else if let index = slot(of: streamId) {
            // Trailers: a header block after the body.
            slots[index].add(name, value)
        }
    }

    private func data(_ streamId: Int32, _ bytes: UnsafeRawBufferPointer) {
        if let index = slot(of: streamId) { slots[index].appendBody(bytes) }
    }

    private func errorGoAwaySent(_ code: UInt32) {
        guard !sentErrorGoAway else { return }
        sentErrorGoAway = true
        onErrorGoAway?(code)
    }

    private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let type = frame.pointee.hd.type
        let streamId = frame.pointee.hd.stream_id
        let endsStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if type == UInt8(NGHTTP2_HEADERS.rawValue), streamId == receivingId {
            // The header block is complete: the request is answered now, or waits for its body.
            receivingId = 0
            if endsStream {
                deliver(take(&receiving), streamId: streamId, slot: nil)
            } else {
                park(take(&receiving), streamId: streamId)
            }
            return
        }
        guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue), endsStream,
            let index = slot(of: streamId)
        else { return }
        deliver(take(&slots[index]), streamId: streamId, slot: index)
    }

    /// Hands a complete request on; its stream keeps a slot (`slot`, or a new one) while the
    /// answer is still to come.
    private func deliver(_ stream: Stream, streamId: Int32, slot index: Int?) {
        requestCount += 1
        answeringId = streamId
        answeredNow = false
        if stream.oversized {
            onOversizedHeaders?(streamId)
        } else {
            onRequest?(streamId, stream.request)
        }
        answeringId = 0
        if answeredNow {
            if let index { release(index, streamId: streamId) }
        } else if index == nil {
            park(Stream(), streamId: streamId)
        }
    }

    /// The stream is answered, reset or closed: it holds nothing any more.
    private func forget(_ streamId: Int32) {
        if streamId == answeringId {
            answeredNow = true
        } else if let index = slot(of: streamId) {
            release(index, streamId: streamId)
        }
    }

    private func slot(of streamId: Int32) -> Int? {
        guard let session, let user = nghttp2_session_get_stream_user_data(session, streamId) else { return nil }
        return Int(bitPattern: user) - 1
    }

    private func park(_ stream: Stream, streamId: Int32) {
        guard let session else { return }
        let index: Int
        if let free = freeSlots.popLast() {
            index = free
            slots[index] = stream
        } else {
            index = slots.count
            slots.append(stream)
        }
        if nghttp2_session_set_stream_user_data(session, streamId, UnsafeMutableRawPointer(bitPattern: index + 1)) != 0 {
            slots[index] = Stream()
            freeSlots.append(index)
        }
    }

    private func release(_ index: Int, streamId: Int32) {
        slots[index] = Stream()
        freeSlots.append(index)
        if let session { _ = nghttp2_session_set_stream_user_data(session, streamId, nil) }
    }

    private func take(_ stream: inout Stream) -> Stream {
        var taken = Stream()
        swap(&taken, &stream)
        return taken
    }

    private func streamClosed(_ streamId: Int32) {
        if streamId == receivingId {
            receivingId = 0
            receiving = Stream()
        }
        forget(streamId)
        if !bodies.isEmpty { bodies[streamId] = nil }
    }
}

/// Writes a response's fields one after another into scratch memory with room for them.
private struct FieldWriter {
    let base: UnsafeMutablePointer<UInt8>
    var offset = 0

    /// The room the names the writer adds itself take.
    static let fixedNamesLength = ":status".utf8.count + "content-length".utf8.count

    mutating func field(_ name: String, _ value: String) -> nghttp2_nv {
        // `apns-id` and `apns-unique-id` differ in every response: they are sent as literals
        // that neither side's HPACK table keeps (nghttp2's `NO_INDEX`), instead of evicting
        // useful entries from both tables on every response.
        let unique = name == "apns-id" || name == "apns-unique-id"
        return nv(write(name), write(value), flags: unique ? NGHTTP2_NV_FLAG_NO_INDEX.rawValue : NGHTTP2_NV_FLAG_NONE.rawValue)
    }

    /// A field whose value is the decimal digits of `value` (at least 0).
    mutating func field(_ name: String, digitsOf value: Int) -> nghttp2_nv {
        let name = write(name)
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let start = base + offset
        rest = value
        for index in stride(from: digits - 1, through: 0, by: -1) {
            start[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        offset += digits
        return nv(name, (start, digits), flags: NGHTTP2_NV_FLAG_NONE.rawValue)
    }

    private mutating func write(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
        var text = text
        let start = base + offset
        let count = text.withUTF8 { utf8 in
            if let source = utf8.baseAddress { start.update(from: source, count: utf8.count) }
            return utf8.count
        }
        offset += count
        return (start, count)
    }

    private func nv(
        _ name: (UnsafeMutablePointer<UInt8>, Int), _ value: (UnsafeMutablePointer<UInt8>, Int), flags: UInt32
    ) -> nghttp2_nv {
        nghttp2_nv(name: name.0, value: value.0, namelen: name.1, valuelen: value.1, flags: UInt8(flags))
    }
}
