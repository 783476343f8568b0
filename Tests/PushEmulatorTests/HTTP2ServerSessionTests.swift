import TestSupport
import XCTest

@testable import PushEmulator

/// HTTP/2 frames and HPACK written here from RFC 9113 and RFC 7541 (not with nghttp2, which
/// the session uses), fed to HTTP2ServerSession; its output is read frame by frame.
enum H2 {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let data: UInt8 = 0x0, headers: UInt8 = 0x1, rstStream: UInt8 = 0x3, settings: UInt8 = 0x4, goAway: UInt8 = 0x7
    static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4

    struct Frame: Equatable {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]
    }

    /// RFC 9113 section 4.1: 24-bit length, type, flags, 31-bit stream identifier, payload.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        var bytes: [UInt8] = [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
        bytes += [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
        return bytes + payload
    }

    static func frames(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while bytes.count - index >= 9 {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard bytes.count - index - 9 >= length else { break }
            var stream = UInt32(bytes[index + 5] & 0x7F)
            for offset in 6...8 { stream = stream << 8 | UInt32(bytes[index + offset]) }
            frames.append(
                Frame(
                    type: bytes[index + 3], flags: bytes[index + 4], stream: stream,
                    payload: Array(bytes[(index + 9)..<(index + 9 + length)])))
            index += 9 + length
        }
        return frames
    }

    /// RFC 9113 section 6.5.1: a SETTINGS payload is 16-bit identifiers, each with a 32-bit value.
    static func settingsEntries(_ frame: Frame) -> [(UInt16, UInt32)] {
        stride(from: 0, to: frame.payload.count - 5, by: 6).map { offset -> (UInt16, UInt32) in
            let p = frame.payload
            let id = UInt16(p[offset]) << 8 | UInt16(p[offset + 1])
            var value: UInt32 = 0
            for index in (offset + 2)..<(offset + 6) { value = value << 8 | UInt32(p[index]) }
            return (id, value)
        }
    }

    /// RFC 7541 section 5.1: an integer with an N-bit prefix.
    static func integer(_ value: Int, prefixBits: Int, first: UInt8) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        if value < limit { return [first | UInt8(value)] }
        var bytes = [first | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        return bytes + [UInt8(rest)]
    }

    /// RFC 7541 section 6.2.2: literal header field without indexing, new name, no Huffman.
    static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            block += integer(name.utf8.count, prefixBits: 7, first: 0)
            block += Array(name.utf8)
            block += integer(value.utf8.count, prefixBits: 7, first: 0)
            block += Array(value.utf8)
        }
        return block
    }
}

final class HTTP2ServerSessionTests: XCTestCase {
    private let requestHeaders: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/abcd"), (":authority", "localhost"),
        ("apns-topic", "com.example.files.pushkit.fileprovider"), ("apns-push-type", "fileprovider"),
    ]

    private func feed(_ session: HTTP2ServerSession, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try session.receive($0) }
    }

    private func openingOfAClient(stream: UInt32 = 1, headers: [(String, String)], body: [UInt8]?) -> [UInt8] {
        var bytes = H2.preface + H2.frame(H2.settings)
        bytes += H2.frame(H2.headers, flags: H2.endHeaders | (body == nil ? H2.endStream : 0), stream: stream, H2.headerBlock(headers))
        if let body { bytes += H2.frame(H2.data, flags: H2.endStream, stream: stream, body) }
        return bytes
    }

    func testARequestArrivesWholeAndTheAnswersAreFramed() throws {
        let session = try HTTP2ServerSession()
        var requests: [(Int32, APNsRequest)] = []
        session.onRequest = { requests.append(($0, $1)) }
        let body = Array(#"{"container-identifier":"NSFileProviderRootContainerItemIdentifier"}"#.utf8)
        try feed(session, openingOfAClient(headers: requestHeaders, body: body))
        XCTAssertEqual(requests.count, 1)
        let (stream, request) = try XCTUnwrap(requests.first)
        XCTAssertEqual(stream, 1)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/3/device/abcd")
        XCTAssertEqual(
            request.headers.filter { !$0.name.hasPrefix(":") }.map { "\($0.name): \($0.value)" },
            ["apns-topic: com.example.files.pushkit.fileprovider", "apns-push-type: fileprovider"])
        XCTAssertEqual(request.body, body)
        XCTAssertEqual(request.bodyLength, body.count)

        // The server's SETTINGS (RFC 9113 6.5.2: MAX_CONCURRENT_STREAMS 0x3, MAX_HEADER_LIST_SIZE 0x6)
        // and the ACK of the client's.
        let opening = H2.frames(try session.takeOutput())
        let settings = try XCTUnwrap(opening.first)
        XCTAssertEqual([settings.type, settings.flags], [H2.settings, 0])
        let entries = H2.settingsEntries(settings)
        XCTAssertTrue(entries.contains { $0 == (0x3, 1000) }, "\(entries)")
        XCTAssertTrue(entries.contains { $0 == (0x6, 16_384) }, "\(entries)")
        XCTAssertTrue(opening.contains { $0.type == H2.settings && $0.flags == H2.ack && $0.payload.isEmpty }, "the client's SETTINGS is acknowledged")

        // 200 without a body: one HEADERS frame that ends the stream; ":status: 200" is entry 8 of
        // HPACK's static table, sent indexed (0x88).
        session.respond(streamId: 1, status: 200, headers: [("apns-id", "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D")], body: [])
        let answer = H2.frames(try session.takeOutput())
        XCTAssertEqual(answer.count, 1, "\(answer)")
        XCTAssertEqual(answer.first?.type, H2.headers)
        XCTAssertEqual(answer.first?.stream, 1)
        XCTAssertEqual(answer.first?.flags, H2.endStream | H2.endHeaders)
        XCTAssertEqual(answer.first?.payload.first, 0x88)
        // apns-id, new in every response, follows as a literal kept out of the HPACK tables
        // (RFC 7541 6.2.3, never indexed, with a literal name: 0x10), not as an entry that
        // would evict others on both sides.
        XCTAssertEqual(answer.first?.payload.dropFirst().first, 0x10)
        XCTAssertEqual(session.openStreamCount, 0)

        // A refusal with a JSON body on stream 3: HEADERS (":status: 400" is entry 12, 0x8C), then
        // DATA with the body that ends the stream.
        try feed(
            session,
            H2.frame(H2.headers, flags: H2.endHeaders, stream: 3, H2.headerBlock(requestHeaders))
                + H2.frame(H2.data, flags: H2.endStream, stream: 3, body))
        XCTAssertEqual(requests.map(\.0), [1, 3])
        let reason = Array(#"{"reason":"BadTopic"}"#.utf8)
        session.respond(streamId: 3, status: 400, headers: [], body: reason)
        let refusal = H2.frames(try session.takeOutput()).filter { $0.stream == 3 }
        XCTAssertEqual(refusal.map(\.type), [H2.headers, H2.data], "\(refusal)")
        XCTAssertEqual(refusal.first?.flags, H2.endHeaders)
        XCTAssertEqual(refusal.first?.payload.first, 0x8C)
        XCTAssertEqual(refusal.last?.flags, H2.endStream)
        XCTAssertEqual(refusal.last?.payload, reason)
        XCTAssertEqual(session.requestCount, 2)
        XCTAssertTrue(session.isAlive)
    }

    /// Requests whose frames interleave, as a client with several streams sends them (nghttp2
    /// sends the HEADERS it has queued before any DATA): each body reaches its own request
    /// whatever the order, a trailer block ends its stream, a stream reset before its body
    /// ends delivers nothing, and a request answered later (with a body or without) keeps its
    /// stream open until then; one answered at once does not.
    func testInterleavedStreamsEachGetTheirOwnBody() throws {
        let session = try HTTP2ServerSession()
        var requests: [Int32: APNsRequest] = [:]
        var answerLater: Set<Int32> = [9, 11]
        session.onRequest = { [unowned session] stream, request in
            requests[stream] = request
            if !answerLater.contains(stream) { session.respond(streamId: stream, status: 200, headers: [("apns-id", "id-\(stream)")], body: []) }
        }
        var bytes = H2.preface + H2.frame(H2.settings)
        for stream: UInt32 in [1, 3, 5, 7, 9] {
            bytes += H2.frame(H2.headers, flags: H2.endHeaders, stream: stream, H2.headerBlock(requestHeaders))
        }
        try feed(session, bytes)
        XCTAssertEqual(requests.count, 0)
        XCTAssertEqual(session.openStreamCount, 5)
        try feed(
            session,
            H2.frame(H2.data, stream: 3, Array("{\"a\":".utf8)) + H2.frame(H2.data, flags: H2.endStream, stream: 7, Array("seven".utf8))
                + H2.frame(H2.data, flags: H2.endStream, stream: 3, Array("3}".utf8))
                + H2.frame(H2.data, stream: 1, Array("one".utf8))
                + H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: 1, H2.headerBlock([("x-trailer", "t")]))
                + H2.frame(H2.rstStream, stream: 5, [0, 0, 0, 0x8])
                + H2.frame(H2.data, flags: H2.endStream, stream: 9, Array("nine".utf8))
                + H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: 11, H2.headerBlock(requestHeaders)))
        XCTAssertEqual(session.openStreamCount, 2, "streams 9 and 11 wait for their answers")
        XCTAssertEqual(requests.keys.sorted(), [1, 3, 7, 9, 11])
        XCTAssertEqual(requests[11]?.body, [])
        XCTAssertEqual(requests[3]?.body, Array("{\"a\":3}".utf8))
        XCTAssertEqual(requests[7]?.body, Array("seven".utf8))
        XCTAssertEqual(requests[1]?.body, Array("one".utf8))
        XCTAssertEqual(requests[1]?.value("x-trailer"), "t")
        XCTAssertEqual(requests[9]?.body, Array("nine".utf8))
        XCTAssertEqual(requests[9]?.path, "/3/device/abcd")
        let answered = H2.frames(try session.takeOutput()).filter { $0.type == H2.headers }.map(\.stream)
        XCTAssertEqual(answered.sorted(), [1, 3, 7])
        XCTAssertEqual(session.openStreamCount, 2)
        answerLater = []
        session.respond(streamId: 9, status: 200, headers: [("apns-id", "id-9")], body: [])
        session.respond(streamId: 11, status: 200, headers: [("apns-id", "id-11")], body: [])
        XCTAssertEqual(session.openStreamCount, 0)
        XCTAssertEqual(H2.frames(try session.takeOutput()).filter { $0.type == H2.headers }.map(\.stream), [9, 11])
        XCTAssertEqual(session.requestCount, 5)
    }

    /// Random interleavings of many streams' frames, against what each stream sent: every
    /// request that ends arrives once with its own body and trailer, none of a stream reset
    /// first, answers given at once or later in any order, and no stream left open at the end.
    func testRandomInterleavingsDeliverEachRequestOnce() throws {
        var generator = SeededGenerator(seed: testSeed(default: 0x4832))
        for round in 0..<300 {
            let session = try HTTP2ServerSession()
            var delivered: [Int32: APNsRequest] = [:]
            var late: [Int32] = []
            session.onRequest = { [unowned session] stream, request in
                XCTAssertNil(delivered[stream], "round \(round): stream \(stream) delivered twice")
                delivered[stream] = request
                if Bool.random(using: &generator) {
                    session.respond(streamId: stream, status: 200, headers: [("apns-id", "id")], body: [])
                } else {
                    late.append(stream)
                }
            }
            // Each stream's frames in its own order; the streams' frames interleaved at random,
            // a stream's HEADERS after those of the streams with lower ids (RFC 9113 5.1.1).
            struct Plan {
                var frames: [[UInt8]] = []
                var body: [UInt8] = []
                var trailer = false
                var reset = false
            }
            let count = Int.random(in: 1...24, using: &generator)
            var plans: [Int32: Plan] = [:]
            for index in 0..<count {
                let stream = Int32(2 * index + 1)
                var plan = Plan()
                let chunks = Int.random(in: 0...3, using: &generator)
                plan.trailer = Int.random(in: 0..<4, using: &generator) == 0
                plan.reset = Int.random(in: 0..<6, using: &generator) == 0
                let endsAtHeaders = chunks == 0 && !plan.trailer
                plan.frames.append(
                    H2.frame(
                        H2.headers, flags: H2.endHeaders | (endsAtHeaders ? H2.endStream : 0), stream: UInt32(stream),
                        H2.headerBlock(requestHeaders)))
                for chunk in 0..<chunks {
                    let bytes = (0..<Int.random(in: 1...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    plan.body += bytes
                    let last = chunk == chunks - 1 && !plan.trailer
                    plan.frames.append(H2.frame(H2.data, flags: last ? H2.endStream : 0, stream: UInt32(stream), bytes))
                }
                if plan.trailer {
                    plan.frames.append(
                        H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: UInt32(stream), H2.headerBlock([("x-trailer", "\(stream)")])))
                }
                if plan.reset, plan.frames.count > 1 {
                    // Reset before its last frame, the one that ends it: the request never ends.
                    plan.frames.removeLast(plan.frames.count - Int.random(in: 1..<plan.frames.count, using: &generator))
                    plan.frames.append(H2.frame(H2.rstStream, stream: UInt32(stream), [0, 0, 0, 0x8]))
                } else {
                    plan.reset = false
                }
                plans[stream] = plan
            }
            var next: [Int32: Int] = [:]
            var opened = 0
            var bytes = H2.preface + H2.frame(H2.settings)
            while true {
                let ready = plans.keys.sorted().filter { stream in
                    let position = next[stream, default: 0]
                    return position < plans[stream]!.frames.count && (position > 0 || Int(stream) == 2 * opened + 1)
                }
                guard let stream = ready.randomElement(using: &generator) else { break }
                let position = next[stream, default: 0]
                if position == 0 { opened += 1 }
                bytes += plans[stream]!.frames[position]
                next[stream] = position + 1
                if Int.random(in: 0..<5, using: &generator) == 0 {
                    try feed(session, bytes)
                    bytes = []
                    if let stream = late.randomElement(using: &generator) {
                        late.removeAll { $0 == stream }
                        session.respond(streamId: stream, status: 200, headers: [("apns-id", "late")], body: [])
                    }
                    _ = try session.takeOutput()
                }
            }
            try feed(session, bytes)
            let expected = plans.filter { !$0.value.reset }
            XCTAssertEqual(delivered.keys.sorted(), expected.keys.sorted(), "round \(round)")
            for (stream, plan) in expected {
                XCTAssertEqual(delivered[stream]?.body, plan.body, "round \(round), stream \(stream)")
                XCTAssertEqual(delivered[stream]?.path, "/3/device/abcd")
                XCTAssertEqual(delivered[stream]?.value("x-trailer"), plan.trailer ? "\(stream)" : nil, "round \(round), stream \(stream)")
            }
            XCTAssertEqual(session.openStreamCount, late.count, "round \(round): only the requests not answered yet are open")
            for stream in late.shuffled(using: &generator) {
                session.respond(streamId: stream, status: 200, headers: [("apns-id", "late")], body: [])
            }
            _ = try session.takeOutput()
            XCTAssertEqual(session.openStreamCount, 0, "round \(round)")
            XCTAssertEqual(session.requestCount, expected.count)
        }
    }

    /// A header list over 16,384 bytes (as RFC 9113 counts it: name + value + 32 each), in a
    /// HEADERS frame within the default 16,384-byte frame size.
    func testHeadersOverTheLimitAreReportedNotDelivered() throws {
        let session = try HTTP2ServerSession()
        var requests = 0
        var oversized: [Int32] = []
        session.onRequest = { _, _ in requests += 1 }
        session.onOversizedHeaders = { oversized.append($0) }
        try feed(
            session,
            openingOfAClient(
                headers: requestHeaders + [("x-padding", String(repeating: "a", count: 16_100))],
                body: [0x7B, 0x7D]))
        XCTAssertEqual(oversized, [1])
        XCTAssertEqual(requests, 0)
    }

    /// The limit itself: a header list of exactly 16,384 bytes is a request, one more is not.
    func testAHeaderListOfExactly16KiBIsARequest() throws {
        let fixed = requestHeaders.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 32 }
        for (extra, taken) in [(0, true), (1, false)] {
            let session = try HTTP2ServerSession()
            var requests = 0
            var oversized: [Int32] = []
            session.onRequest = { _, _ in requests += 1 }
            session.onOversizedHeaders = { oversized.append($0) }
            let padding = 16_384 - fixed - "x-padding".utf8.count - 32 + extra
            try feed(
                session,
                openingOfAClient(
                    headers: requestHeaders + [("x-padding", String(repeating: "a", count: padding))],
                    body: [0x7B, 0x7D]))
            XCTAssertEqual(requests, taken ? 1 : 0, "a header list of \(16_384 + extra) bytes")
            XCTAssertEqual(oversized, taken ? [] : [1])
        }
    }

    /// "APNs allows only one stream until you post a request with a valid authentication
    /// token": a session for a client not yet authenticated announces MAX_CONCURRENT_STREAMS 1,
    /// refuses a second stream (REFUSED_STREAM, 0x7, so the client may send it again), and
    /// announces 1,000 once the client has authenticated.
    func testOneStreamUntilTheClientAuthenticates() throws {
        let session = try HTTP2ServerSession(authenticated: false)
        var requests: [Int32] = []
        session.onRequest = { stream, _ in requests.append(stream) }
        try feed(
            session,
            openingOfAClient(headers: requestHeaders, body: nil)
                + H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: 3, H2.headerBlock(requestHeaders)))
        let opening = H2.frames(try session.takeOutput())
        let settings = try XCTUnwrap(opening.first { $0.type == H2.settings && $0.flags == 0 })
        XCTAssertTrue(H2.settingsEntries(settings).contains { $0 == (0x3, 1) }, "\(H2.settingsEntries(settings))")
        XCTAssertEqual(requests, [1])
        XCTAssertTrue(opening.contains(H2.Frame(type: H2.rstStream, flags: 0, stream: 3, payload: [0, 0, 0, 7])), "\(opening)")
        try feed(session, H2.frame(H2.settings, flags: H2.ack))  // the client takes the server's first SETTINGS

        session.respond(streamId: 1, status: 200, headers: [], body: [])
        session.allowAllStreams()
        let after = H2.frames(try session.takeOutput())
        let raised = try XCTUnwrap(after.first { $0.type == H2.settings && $0.flags == 0 }, "\(after)")
        XCTAssertEqual(H2.settingsEntries(raised).map(\.0), [0x3])
        XCTAssertEqual(H2.settingsEntries(raised).map(\.1), [1000])
        try feed(
            session,
            H2.frame(H2.settings, flags: H2.ack)
                + H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: 5, H2.headerBlock(requestHeaders))
                + H2.frame(H2.headers, flags: H2.endHeaders | H2.endStream, stream: 7, H2.headerBlock(requestHeaders)))
        XCTAssertEqual(requests, [1, 5, 7], "two streams open at once once authenticated")
        XCTAssertFalse(H2.frames(try session.takeOutput()).contains { $0.type == H2.goAway || $0.type == H2.rstStream })
    }

    func testAWrongPrefaceIsAProtocolError() throws {
        let session = try HTTP2ServerSession()
        XCTAssertThrowsError(try feed(session, Array("PRI * HTTP/9.9\r\n\r\nnonsense".utf8))) {
            let failure = $0 as? HTTP2ServerSession.Failure
            XCTAssertNotNil(failure, "\($0)")
            XCTAssertEqual(failure?.code, -903, "NGHTTP2_ERR_BAD_CLIENT_MAGIC: \($0)")
        }
    }

    func testGoAwayAndResetAreFramedAsTheRFCSays() throws {
        let session = try HTTP2ServerSession()
        try feed(session, openingOfAClient(headers: requestHeaders, body: nil))
        _ = try session.takeOutput()
        session.reset(streamId: 1, errorCode: 0x8)
        let reset = H2.frames(try session.takeOutput())
        XCTAssertEqual(reset, [H2.Frame(type: H2.rstStream, flags: 0, stream: 1, payload: [0, 0, 0, 8])], "RST_STREAM CANCEL")
        session.goAway(errorCode: 0, message: "maintenance")
        let goAway = try XCTUnwrap(H2.frames(try session.takeOutput()).first { $0.type == H2.goAway })
        XCTAssertEqual(goAway.stream, 0)
        // Last stream id (1), error code NO_ERROR, then the debug data.
        XCTAssertEqual(goAway.payload, [0, 0, 0, 1, 0, 0, 0, 0] + Array("maintenance".utf8))
    }
}
