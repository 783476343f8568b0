import LinkCollections

/// Cuts a byte stream into frames, incrementally: a two-state machine that waits for a
/// 4-byte header, then for the body it declares.
///
/// The declared length is checked against ``maximumFrameLength`` as soon as the header is
/// complete, before any of the body is awaited; the check uses the maximum in force when
/// ``next()`` reads that header. The first bad frame puts the decoder in a failed state:
/// every later ``next()`` throws the same error and appended bytes are dropped.
public struct FrameDecoder: Sendable {
    /// The default maximum frame length: 1 MiB of type byte and body.
    public static let defaultMaximumFrameLength: UInt32 = 1 << 20

    /// The largest frame (type byte and body) the decoder accepts; settable at any time.
    public var maximumFrameLength: UInt32

    private enum State: Sendable {
        case waitingForHeader
        case waitingForBody(length: Int)
        case failed(FrameDecodingError)
    }

    private var state = State.waitingForHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// A payload from this size on makes the decoder expect its frame's type and length again
    /// (see ``readExpectedFrame(_:)``).
    public static let expectedPayloadThreshold = 4096

    /// The type and length (type byte and body) of the last frame with a large payload, until a
    /// read shows the next frame is not like it.
    private var expected: (type: UInt8, length: Int, fieldsLength: Int)?
    /// Where ``readExpectedFrame(_:)`` reads the length prefix, type and fields of the expected
    /// frame, and its payload: an array the frame will own as it is.
    private var expectedHead: [UInt8] = []
    private var expectedPayload: [UInt8] = []

    /// Consumed bytes are moved out of the buffer once there are at least this many
    /// and they make up at least half of it, so each byte is moved at most once on average.
    private static let compactionThreshold = 4096

    public init(maximumFrameLength: UInt32 = FrameDecoder.defaultMaximumFrameLength) {
        self.maximumFrameLength = maximumFrameLength
    }

    /// The number of received bytes not yet returned as frames.
    public var bufferedByteCount: Int {
        switch state {
        case .waitingForBody: return buffer.count - readIndex + 4
        case .waitingForHeader, .failed: return buffer.count - readIndex
        }
    }

    private var unreadByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard prepareToAppend() else { return }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard prepareToAppend() else { return }
        PieceCopy.append(bytes, to: &buffer)
    }

    /// The next complete frame, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``FrameDecodingError`` for the first bad frame, and again on every later call.
    public mutating func next() throws -> Frame? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .waitingForHeader:
                guard unreadByteCount >= 4 else { return nil }
                let declared = Self.declaredLength(buffer, at: readIndex)
                if declared == 0 {
                    throw fail(.emptyFrame)
                }
                if declared > maximumFrameLength {
                    throw fail(.frameTooLarge(declared: declared, maximum: maximumFrameLength))
                }
                readIndex += 4
                state = .waitingForBody(length: Int(declared))
            case .waitingForBody(let length):
                guard unreadByteCount >= length else { return nil }
                let start = readIndex
                let result = buffer.withUnsafeBytes { raw -> Result<Frame, FrameDecodingError> in
                    let body = UnsafeRawBufferPointer(rebasing: raw[(start + 1)..<(start + length)])
                    return Result { () throws(FrameDecodingError) -> Frame in
                        try FrameParser.parse(type: raw[start], body: body)
                    }
                }
                switch result {
                case .success(let frame):
                    noteFrame(type: buffer[start], length: length)
                    readIndex += length
                    state = .waitingForHeader
                    return frame
                case .failure(let error):
                    throw fail(error)
                }
            }
        }
    }

    /// Decodes the frames in `bytes`, handing each to `body`, without copying them into the
    /// decoder's buffer: only a frame split across reads is buffered, and of the next read
    /// only the bytes that complete it are copied; the frames after it are decoded in place.
    /// What follows the last complete frame, or everything once `body` returns `false`, is
    /// buffered for ``next()`` and later calls. Throws on the first bad frame, like
    /// ``next()``; the maximum frame length must not change during the call.
    public mutating func decode(_ bytes: UnsafeRawBufferPointer, _ body: (Frame) -> Bool) throws {
        var rest = bytes
        while hasBufferedFrame {
            while let frame = try next() {
                if !body(frame) {
                    append(rest)
                    return
                }
            }
            guard hasBufferedFrame else { break }
            let missing: Int
            switch state {
            case .waitingForHeader: missing = 4 - unreadByteCount
            case .waitingForBody(let length): missing = length - unreadByteCount
            case .failed(let error): throw error
            }
            guard rest.count >= missing else {
                append(rest)
                return
            }
            append(UnsafeRawBufferPointer(rebasing: rest[..<missing]))
            rest = UnsafeRawBufferPointer(rebasing: rest[missing...])
        }
        var index = 0
        while rest.count - index >= 4 {
            let declared = Self.declaredLength(rest, at: index)
            if declared == 0 { throw fail(.emptyFrame) }
            if declared > maximumFrameLength {
                throw fail(.frameTooLarge(declared: declared, maximum: maximumFrameLength))
            }
            let length = Int(declared)
            guard rest.count - index - 4 >= length else { break }
            let start = index + 4
            let frame: Frame
            do {
                frame = try FrameParser.parse(
                    type: rest[start],
                    body: UnsafeRawBufferPointer(rebasing: rest[(start + 1)..<(start + length)]))
            } catch {
                throw fail(error)
            }
            noteFrame(type: rest[start], length: length)
            index = start + length
            if !body(frame) { break }
        }
        if index < rest.count {
            append(UnsafeRawBufferPointer(rebasing: rest[index...]))
        }
    }

    // MARK: Reading a large payload in place

    /// Whether the next read can go through ``readExpectedFrame(_:)``: the decoder is between
    /// frames and the last frame had a payload of at least ``expectedPayloadThreshold`` bytes.
    public var expectsFrame: Bool {
        expected != nil && !hasBufferedFrame
    }

    /// Lends `read` the memory of the expected frame: `head` for its length prefix, type byte and
    /// fixed fields, `payload` for its payload. `read` fills them in order and then memory of its
    /// own (a `recvmsg(2)` whose last vector is the connection's buffer) and returns the byte
    /// count, or `nil` when nothing was there. Pass the count and that memory to
    /// ``decode(expectedFrameRead:rest:_:)`` before anything else.
    ///
    /// The payload memory is an array the frame takes as it is when the guess is right, so the
    /// payload is never copied; otherwise the bytes are decoded as any others and the array is
    /// kept for the next guess.
    public mutating func readExpectedFrame(
        _ read: (_ head: UnsafeMutableRawBufferPointer, _ payload: UnsafeMutableRawBufferPointer) throws -> Int?
    ) rethrows -> Int? {
        guard let expected, !hasBufferedFrame else { preconditionFailure("no frame is expected") }
        let headLength = 4 + 1 + expected.fieldsLength
        let payloadLength = expected.length - 1 - expected.fieldsLength
        if expectedHead.count != headLength {
            expectedHead = [UInt8](repeating: 0, count: headLength)
        }
        if expectedPayload.count != payloadLength {
            // Not initialized: a read writes the bytes, and only the bytes it wrote are read.
            expectedPayload = ByteArrays.unwritten(count: payloadLength)
        }
        return try expectedHead.withUnsafeMutableBytes { head in
            try expectedPayload.withUnsafeMutableBytes { payload in try read(head, payload) }
        }
    }

    /// Decodes the `count` bytes a ``readExpectedFrame(_:)`` read: in the head, in the payload,
    /// then in `rest` (the memory of the read's own after them). When the head announces the
    /// expected frame and the whole of it arrived, its payload is the array read into;
    /// otherwise the bytes are decoded in order like those of ``decode(_:_:)``, and the decoder
    /// expects nothing until the next large payload. Calls `body` as ``decode(_:_:)`` does.
    public mutating func decode(
        expectedFrameRead count: Int, rest: UnsafeRawBufferPointer,
        _ body: (Frame) -> Bool
    ) throws {
        guard let expected, !hasBufferedFrame else { preconditionFailure("no frame is expected") }
        let head = expectedHead
        let payload = expectedPayload
        let restCount = count - head.count - payload.count
        if restCount >= 0, Int(Self.declaredLength(head, at: 0)) == expected.length, head[4] == expected.type {
            expectedPayload = []
            let result = head.withUnsafeBytes { raw in
                Result { () throws(FrameDecodingError) -> Frame in
                    try FrameParser.parse(type: expected.type, fields: UnsafeRawBufferPointer(rebasing: raw[5...]), payload: payload)
                }
            }
            let frame: Frame
            switch result {
            case .success(let decoded): frame = decoded
            case .failure(let error): throw fail(error)
            }
            let unread = UnsafeRawBufferPointer(rebasing: rest[..<restCount])
            if body(frame) {
                try decode(unread, body)
            } else {
                append(unread)
            }
            return
        }
        self.expected = nil
        let headCount = min(count, head.count)
        let payloadCount = min(count - headCount, payload.count)
        try head.withUnsafeBytes { head in
            try payload.withUnsafeBytes { payload in
                var stopped = false
                let parts = [
                    UnsafeRawBufferPointer(rebasing: head[..<headCount]),
                    UnsafeRawBufferPointer(rebasing: payload[..<payloadCount]),
                    UnsafeRawBufferPointer(rebasing: rest[..<max(0, restCount)]),
                ]
                for part in parts {
                    if stopped {
                        append(part)
                    } else {
                        try decode(part) { frame in
                            stopped = !body(frame)
                            return !stopped
                        }
                    }
                }
            }
        }
    }

    /// The body length that the 4-byte big-endian prefix at `index` declares.
    @inline(__always)
    private static func declaredLength<Bytes: RandomAccessCollection>(_ bytes: Bytes, at index: Int) -> UInt32
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var declared: UInt32 = 0
        for offset in 0..<4 { declared = declared << 8 | UInt32(bytes[index + offset]) }
        return declared
    }

    /// Expects a frame like this one next if its payload is large.
    @inline(__always)
    private mutating func noteFrame(type: UInt8, length: Int) {
        guard length > Self.expectedPayloadThreshold, let fieldsLength = FrameParser.fixedFieldsLength(ofType: type),
            length - 1 - fieldsLength >= Self.expectedPayloadThreshold
        else { return }
        expected = (type, length, fieldsLength)
    }

    /// Whether part of a frame (or a failure) waits in the decoder.
    private var hasBufferedFrame: Bool {
        switch state {
        case .waitingForHeader: return unreadByteCount > 0
        case .waitingForBody, .failed: return true
        }
    }

    private mutating func fail(_ error: FrameDecodingError) -> FrameDecodingError {
        state = .failed(error)
        buffer = []
        readIndex = 0
        return error
    }

    /// Drops consumed bytes when that is cheap; `false` once the decoder has failed.
    private mutating func prepareToAppend() -> Bool {
        if case .failed = state { return false }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex >= Self.compactionThreshold && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        return true
    }
}
