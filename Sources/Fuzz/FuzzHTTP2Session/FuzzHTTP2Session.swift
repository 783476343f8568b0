import PushEmulator

/// Reads the input as a client's side of an HTTP/2 connection to the APNs endpoint's session
/// (``HTTP2ServerSession``): the first byte chooses how the server behaves, the rest follows the
/// connection preface, which the target writes itself. The session takes the bytes in pieces,
/// as the endpoint does, answering between them: requests at once, later, with a body or with
/// RST_STREAM. Checked on every input: a stream's request reaches `onRequest` at most once, on
/// a client stream, and the session's count of open streams stays within what it allows.
///
/// The first byte: bit 0, the client starts authenticated (else one stream until
/// ``HTTP2ServerSession/allowAllStreams()``, sent after the first request when bit 1 is set);
/// bits 2-3, how a request is answered (at once; at once with a body; after the next piece;
/// reset after the next piece); bits 4-7, the piece length (1 << n bytes, at most 4 KiB).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let options = data[0]
    let authenticated = options & 1 != 0
    let allowAfterFirst = options & 2 != 0
    let policy = (options >> 2) & 3
    let pieceLength = 1 << min(Int(options >> 4), 12)
    let input = Array(connectionPreface) + Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    guard let session = try? HTTP2ServerSession(authenticated: authenticated) else { return 0 }
    var delivered: Set<Int32> = []
    var waiting: [Int32] = []
    session.onRequest = { [unowned session] streamId, request in
        precondition(streamId > 0 && streamId % 2 == 1, "a request on stream \(streamId), which the client cannot open")
        precondition(delivered.insert(streamId).inserted, "stream \(streamId)'s request delivered twice")
        precondition(request.bodyLength >= request.body.count, "a body of \(request.body.count) bytes counted as \(request.bodyLength)")
        if allowAfterFirst { session.allowAllStreams() }
        switch policy {
        case 0: session.respond(streamId: streamId, status: 200, headers: CollectionOfOne(("apns-id", "id")), body: [])
        case 1: session.respond(streamId: streamId, status: 400, headers: CollectionOfOne(("apns-id", "id")), body: Array(#"{"reason":"BadDeviceToken"}"#.utf8))
        default: waiting.append(streamId)
        }
    }
    session.onOversizedHeaders = { [unowned session] streamId in
        session.respond(streamId: streamId, status: 431, headers: CollectionOfOne(("apns-id", "id")), body: [])
    }

    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + pieceLength)
        do {
            try input[offset..<end].withUnsafeBytes { try session.receive($0) }
        } catch let failure as HTTP2ServerSession.Failure {
            session.terminate(after: failure)
            _ = try? session.takeOutput()
            break
        } catch {
            break
        }
        offset = end
        // Answers that waited for the next piece go now, as a late answer of the endpoint does.
        for streamId in waiting {
            if policy == 3 {
                session.reset(streamId: streamId, errorCode: 7)
            } else {
                session.respond(streamId: streamId, status: 200, headers: CollectionOfOne(("apns-id", "id")), body: [])
            }
        }
        waiting.removeAll()
        guard (try? session.takeOutput()) != nil else { break }
        precondition(session.openStreamCount >= 0, "open streams counted as \(session.openStreamCount)")
        precondition(
            session.openStreamCount <= Int(HTTP2ServerSession.maximumConcurrentStreams) + 1,
            "open streams counted as \(session.openStreamCount), over what the session allows")
        guard session.isAlive else { break }
    }
    return 0
}

/// The client's connection preface (RFC 9113, section 3.4).
private let connectionPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
