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
    /// (see ``readExpectedFrames(_:)``).
    public static let expectedPayloadThreshold = 4096

    /// The most frames like the expected one that one read takes in place: a stream of them
    /// (one-way messages) is read up to eight at a time, each payload into its own array.
    public static let maximumExpectedFramesPerRead = 8

    /// The type and length (type byte and body) of the last frame with a large payload, until a
    /// read shows the next frame is not like it.
    private var expected: (type: UInt8, length: Int, fieldsLength: Int)?
    /// Where ``readExpectedFrames(_:)`` reads the length prefix, type and fields of each
    /// expected frame (one after another, ``maximumExpectedFramesPerRead`` places), and their
    /// payloads: arrays the frames will own as they are.
    private var expectedHeads: [UInt8] = []
    private var expectedPayloads: [[UInt8]] = []
    /// How many frames the next read lends memory for: one, doubled after each read that
    /// filled them all with more bytes behind (a stream).
    private var expectedFrameCount = 1
    /// The bytes of the first expected frame (head, then payload) that earlier reads put in
    /// place: a read that ended inside a frame leaves it there, and the next one goes on.
    private var expectedFilled = 0

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
        case .waitingForHeader, .failed: return buffer.count - readIndex + expectedFilled
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
        settleExpected()
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
        settleExpected()
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
                adoptPartialFrame()
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
            adoptPartialFrame()
        }
    }

    // MARK: Reading large payloads in place

    /// Whether the next read can go through ``readExpectedFrames(_:)``: nothing but part of an
    /// expected frame waits in the decoder, and the last frame had a payload of at least
    /// ``expectedPayloadThreshold`` bytes.
    public var expectsFrame: Bool {
        expected != nil && !hasBufferedFrame
    }

    /// Lends `read` the memory of the next frames, if they are like the expected one: `parts`,
    /// in the order the bytes come, are each frame's head (length prefix, type byte and fixed
    /// fields) and payload, for one to ``maximumExpectedFramesPerRead`` frames, the first
    /// without the bytes that earlier reads put in place. `read` fills them in order and then
    /// memory of its own (a `recvmsg(2)` whose last vector is the connection's buffer) and
    /// returns the byte count, or `nil` when nothing was there. Pass the count and that memory
    /// to ``decode(expectedFramesRead:rest:_:)`` before anything else.
    ///
    /// Each payload's memory is an array the frame takes as it is when the guess is right, so a
    /// stream of such frames is read once, by the kernel; otherwise the bytes are decoded as
    /// any others and the arrays are kept for the next guess.
    public mutating func readExpectedFrames(
        _ read: (_ parts: UnsafeBufferPointer<UnsafeMutableRawBufferPointer>) throws -> Int?
    ) rethrows -> Int? {
        guard let expected, !hasBufferedFrame else { preconditionFailure("no frame is expected") }
        let headLength = 4 + 1 + expected.fieldsLength
        let payloadLength = expected.length - 1 - expected.fieldsLength
        let frames = expectedFrameCount
        prepareExpectedMemory(headLength: headLength, payloadLength: payloadLength, frames: frames)
        let filled = expectedFilled
        return try expectedHeads.withUnsafeMutableBytes { heads in
            try expectedPayloads.withUnsafeMutableBufferPointer { payloads in
                try withUnsafeTemporaryAllocation(of: UnsafeMutableRawBufferPointer.self, capacity: 2 * frames) { parts in
                    try Self.lend(
                        frame: 0, of: frames, heads: heads, headLength: headLength, payloads: payloads,
                        filled: filled, parts: parts, count: 0, read)
                }
            }
        }
    }

    /// Pins the payload of `frame` and those after it, adding them and their heads to `parts`
    /// (`count` so far), then calls `read` with them.
    private static func lend(
        frame: Int, of frames: Int, heads: UnsafeMutableRawBufferPointer, headLength: Int,
        payloads: UnsafeMutableBufferPointer<[UInt8]>, filled: Int,
        parts: UnsafeMutableBufferPointer<UnsafeMutableRawBufferPointer>, count: Int,
        _ read: (_ parts: UnsafeBufferPointer<UnsafeMutableRawBufferPointer>) throws -> Int?
    ) rethrows -> Int? {
        guard frame < frames else { return try read(UnsafeBufferPointer(rebasing: parts[0..<count])) }
        return try payloads[frame].withUnsafeMutableBytes { payload in
            var count = count
            let skip = frame == 0 ? filled : 0
            if skip < headLength {
                parts[count] = UnsafeMutableRawBufferPointer(rebasing: heads[(frame * headLength + skip)..<((frame + 1) * headLength)])
                parts[count + 1] = payload
                count += 2
            } else {
                parts[count] = UnsafeMutableRawBufferPointer(rebasing: payload[(skip - headLength)...])
                count += 1
            }
            return try lend(
                frame: frame + 1, of: frames, heads: heads, headLength: headLength, payloads: payloads,
                filled: filled, parts: parts, count: count, read)
        }
    }

    /// Room for the heads of the most frames a read takes, and a payload array of the expected
    /// size for each of the first `frames` (an array a frame took is replaced here, by the next
    /// read: the allocation the frame's payload needs anyway).
    @inline(__always)
    private mutating func prepareExpectedMemory(headLength: Int, payloadLength: Int, frames: Int) {
        if _slowPath(expectedHeads.count < headLength * Self.maximumExpectedFramesPerRead) {
            var heads = [UInt8](repeating: 0, count: headLength * Self.maximumExpectedFramesPerRead)
            // The head of a frame that a read ended inside stays where it is.
            for index in 0..<min(expectedHeads.count, expectedFilled, headLength) { heads[index] = expectedHeads[index] }
            expectedHeads = heads
        }
        while expectedPayloads.count < frames { expectedPayloads.append([]) }
        for frame in 0..<frames where expectedPayloads[frame].count != payloadLength {
            // Not initialized: a read writes the bytes, and only the bytes it wrote are read.
            expectedPayloads[frame] = ByteArrays.unwritten(count: payloadLength)
        }
    }

    /// Decodes the `count` bytes a ``readExpectedFrames(_:)`` read: in the parts it lent, then
    /// in `rest` (the memory of the read's own after them). Each frame whose head announces the
    /// expected frame and whose bytes all arrived takes its payload array as it is; a frame the
    /// read ended inside stays in place for the next read; from the first frame unlike the
    /// expected one on, the bytes are decoded in order like those of ``decode(_:_:)``, and the
    /// decoder expects nothing until the next large payload. Calls `body` as ``decode(_:_:)``
    /// does.
    public mutating func decode(
        expectedFramesRead count: Int, rest: UnsafeRawBufferPointer,
        _ body: (Frame) -> Bool
    ) throws {
        guard let expected, !hasBufferedFrame else { preconditionFailure("no frame is expected") }
        let headLength = 4 + 1 + expected.fieldsLength
        let frameLength = 4 + expected.length
        let frames = expectedFrameCount
        // The bytes from the first frame's start: what earlier reads left, and this read's.
        let total = expectedFilled + count
        expectedFilled = 0
        let restCount = max(0, total - frames * frameLength)
        for frame in 0..<frames {
            let inFrame = min(frameLength, total - frame * frameLength)
            guard inFrame > 0 else { return }
            let head = frame * headLength
            // As soon as the length prefix is in, it is checked (one over the limit fails now,
            // as it would in the buffer), then the type.
            if inFrame >= 4 {
                let announced = expectedHeads.withUnsafeBytes { Int(Self.declaredLength($0, at: head)) }
                guard announced == expected.length, inFrame == 4 || expectedHeads[head + 4] == expected.type else {
                    return try decodeInOrder(from: frame, total: total, rest: rest, restCount: restCount, body)
                }
            }
            if inFrame < frameLength {
                // The read ended inside this frame: it waits in place (first) for the next read.
                if frame > 0 {
                    expectedHeads.withUnsafeMutableBytes { heads in
                        heads.copyMemory(from: UnsafeRawBufferPointer(rebasing: heads[head..<(head + min(inFrame, headLength))]))
                    }
                    expectedPayloads.swapAt(0, frame)
                }
                expectedFilled = inFrame
                return
            }
            let payload = expectedPayloads[frame]
            expectedPayloads[frame] = []
            let result = expectedHeads.withUnsafeBytes { raw in
                Result { () throws(FrameDecodingError) -> Frame in
                    try FrameParser.parse(
                        type: expected.type, fields: UnsafeRawBufferPointer(rebasing: raw[(head + 5)..<(head + headLength)]),
                        payload: payload)
                }
            }
            let decoded: Frame
            switch result {
            case .success(let frame): decoded = frame
            case .failure(let error): throw fail(error)
            }
            guard body(decoded) else {
                // What follows waits in the buffer.
                try decodeInOrder(from: frame + 1, total: total, rest: rest, restCount: restCount, keepingAll: true) { _ in true }
                return
            }
        }
        // Every frame lent was filled: more may be behind (a stream), so the next read lends more.
        guard restCount > 0 else { return }
        expectedFrameCount = min(frames * 2, Self.maximumExpectedFramesPerRead)
        try decode(UnsafeRawBufferPointer(rebasing: rest[..<restCount]), body)
    }

    /// Decodes the bytes of the lent frames from `first` on, then `rest[..<restCount]`, in order
    /// as ``decode(_:_:)`` does, after the expected frame turned out wrong (or, `keepingAll`,
    /// keeps them all in the buffer): the decoder expects nothing until the next large payload.
    private mutating func decodeInOrder(
        from first: Int, total: Int, rest: UnsafeRawBufferPointer, restCount: Int, keepingAll: Bool = false,
        _ body: (Frame) -> Bool
    ) throws {
        guard let expected else { return }
        let headLength = 4 + 1 + expected.fieldsLength
        let frameLength = 4 + expected.length
        let frames = expectedFrameCount
        if !keepingAll {
            self.expected = nil
            expectedFrameCount = 1
        }
        // Read, not taken: the arrays stay for the next guess.
        let heads = expectedHeads
        let payloads = expectedPayloads
        var stopped = keepingAll
        try heads.withUnsafeBytes { heads in
            for frame in first..<frames {
                let inFrame = min(frameLength, total - frame * frameLength)
                guard inFrame > 0 else { break }
                let head = UnsafeRawBufferPointer(rebasing: heads[(frame * headLength)..<(frame * headLength + min(inFrame, headLength))])
                try decodePart(head, stopped: &stopped, body)
                if inFrame > headLength {
                    try payloads[frame].withUnsafeBytes { payload in
                        try decodePart(UnsafeRawBufferPointer(rebasing: payload[..<(inFrame - headLength)]), stopped: &stopped, body)
                    }
                }
            }
        }
        try decodePart(UnsafeRawBufferPointer(rebasing: rest[..<restCount]), stopped: &stopped, body)
    }

    /// Decodes `part` as ``decode(_:_:)`` does until `body` declines a frame, and appends
    /// every part after that to the buffer.
    private mutating func decodePart(_ part: UnsafeRawBufferPointer, stopped: inout Bool, _ body: (Frame) -> Bool) throws {
        if stopped {
            append(part)
            return
        }
        try decode(part) { frame in
            stopped = !body(frame)
            return !stopped
        }
    }

    /// Moves the bytes of the expected frame that earlier reads put in place into the buffer,
    /// for a read that does not go through ``readExpectedFrames(_:)``.
    private mutating func settleExpected() {
        guard expectedFilled > 0, let expected else { return }
        let filled = expectedFilled
        expectedFilled = 0
        let headLength = 4 + 1 + expected.fieldsLength
        buffer.append(contentsOf: expectedHeads[0..<min(filled, headLength)])
        if filled > headLength {
            expectedPayloads[0].withUnsafeBytes { PieceCopy.append(UnsafeRawBufferPointer(rebasing: $0[..<(filled - headLength)]), to: &buffer) }
        }
    }

    /// When all the buffer holds is the start of a frame that may be the expected one, moves it
    /// into the place the next read lends (one copy of those bytes), so that the frame and
    /// those like it after it are read in place: a read that ended inside a frame would
    /// otherwise leave every later read ending inside one too, each frame copied.
    private mutating func adoptPartialFrame() {
        guard let expected, readIndex < buffer.count || isWaitingForBody else { return }
        let unread = buffer.count - readIndex
        let headLength = 4 + 1 + expected.fieldsLength
        let payloadLength = expected.length - 1 - expected.fieldsLength
        // The length prefix is in the buffer, or was read from it already (waiting for the body).
        let prefixRead: Bool
        switch state {
        case .waitingForHeader:
            prefixRead = false
            if unread >= 4, Int(Self.declaredLength(buffer, at: readIndex)) != expected.length { return }
            if unread >= 5, buffer[readIndex + 4] != expected.type { return }
        case .waitingForBody(let length):
            prefixRead = true
            guard length == expected.length, unread == 0 || buffer[readIndex] == expected.type else { return }
        case .failed:
            return
        }
        let filled = unread + (prefixRead ? 4 : 0)
        guard filled < 4 + expected.length else { return }
        prepareExpectedMemory(headLength: headLength, payloadLength: payloadLength, frames: 1)
        let prefix = UInt32(expected.length).bigEndian
        let start = readIndex
        expectedHeads.withUnsafeMutableBytes { heads in
            buffer.withUnsafeBytes { bytes in
                var written = 0
                if prefixRead {
                    withUnsafeBytes(of: prefix) { heads.copyMemory(from: $0) }
                    written = 4
                }
                let inHead = min(unread, headLength - written)
                UnsafeMutableRawBufferPointer(rebasing: heads[written..<(written + inHead)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + inHead)]))
                if unread > inHead {
                    expectedPayloads[0].withUnsafeMutableBytes { payload in
                        PieceCopy.copy(UnsafeRawBufferPointer(rebasing: bytes[(start + inHead)...]), to: payload.baseAddress!)
                    }
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
        readIndex = 0
        state = .waitingForHeader
        expectedFilled = filled
    }

    private var isWaitingForBody: Bool {
        if case .waitingForBody = state { return true }
        return false
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
        expectedFilled = 0
        return error
    }

    /// Drops consumed bytes when that is cheap; `false` once the decoder has failed.
    private mutating func prepareToAppend() -> Bool {
        if case .failed = state { return false }
        settleExpected()
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
