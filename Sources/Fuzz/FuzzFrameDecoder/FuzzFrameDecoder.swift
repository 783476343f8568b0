import WireProtocol
import LinkSession

/// Feeds the input to a ``FrameDecoder`` in chunks sized by the first byte, checks that every
/// decoded frame (and the file header of a file channel ITEM) re-encodes to one that decodes
/// back to itself, and drives both sides of a ``LinkHandshake`` with the frames. A second
/// decoder reads the same chunks as a link connection does (a large payload read in place when
/// a frame like the last large one is expected) and must give the same frames and error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let chunk = Int(first & 0x3F) + 1
    let input = bytes.dropFirst()

    var decoder = FrameDecoder(maximumFrameLength: 1 << 16)
    var watch = LinkHandshake(role: .watch, deviceId: "fuzz-watch", key: FuzzKey.key, nonce: FuzzKey.nonce)
    var phone = LinkHandshake(role: .phone, deviceId: "fuzz-phone", key: FuzzKey.key, nonce: FuzzKey.nonce)
    var frames: [Frame] = []
    var failure: FrameDecodingError?
    var start = input.startIndex
    decoding: while start < input.endIndex {
        let end = min(start + chunk, input.endIndex)
        decoder.append(input[start..<end])
        start = end
        while true {
            let frame: Frame?
            do { frame = try decoder.next() } catch { failure = error as? FrameDecodingError; break decoding }
            guard let frame else { break }
            frames.append(frame)
            checkRoundTrip(frame)
            checkFileHeader(frame)
            _ = watch.receive(frame)
            _ = phone.receive(frame)
        }
    }
    precondition(
        decoder.bufferedByteCount <= Int(decoder.maximumFrameLength) + 4 + chunk,
        "the decoder buffers \(decoder.bufferedByteCount) bytes, more than one frame")
    checkScatteredReads(Array(input), chunk: chunk, frames: frames, failure: failure)
    return 0
}

/// Reads `input` in chunks as ``LinkChannel`` does: into the expected frames' heads and payloads
/// first whenever the decoder expects them. Frames and error must be those of `next()`.
private func checkScatteredReads(_ input: [UInt8], chunk: Int, frames expected: [Frame], failure expectedFailure: FrameDecodingError?) {
    var decoder = FrameDecoder(maximumFrameLength: 1 << 16)
    var frames: [Frame] = []
    var failure: FrameDecodingError?
    var rest = [UInt8](repeating: 0, count: 1 << 17)
    var start = 0
    reading: while start < input.count {
        // An odd `chunk`: reads of `chunk` bytes, or of the lent head and payload and `chunk`
        // more. An even one: reads of one frame each while the bytes read as frames, as in a
        // round trip (any other read is `chunk` bytes).
        let wholeFrame = chunk % 2 == 0 ? frameLength(input, at: start) : nil
        let lent = decoder.expectsFrame
        var count = 0
        do {
            if lent {
                count = rest.withUnsafeMutableBytes { rest in
                    decoder.readExpectedFrames { parts in
                        let n = wholeFrame ?? min(input.count - start, parts.reduce(0) { $0 + $1.count } + chunk)
                        var left = n
                        for target in Array(parts) + [rest] where left > 0 {
                            let part = min(left, target.count)
                            input.withUnsafeBytes { raw in
                                UnsafeMutableRawBufferPointer(rebasing: target[..<part])
                                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[(start + n - left)..<(start + n - left + part)]))
                            }
                            left -= part
                        }
                        return n
                    }!
                }
                try rest.withUnsafeBytes { rest in
                    try decoder.decode(expectedFramesRead: count, rest: rest) {
                        frames.append($0); return true
                    }
                }
            } else {
                count = wholeFrame ?? min(chunk, input.count - start)
                try input[start..<start + count].withUnsafeBytes { raw in
                    try decoder.decode(raw) {
                        frames.append($0); return true
                    }
                }
            }
        } catch {
            failure = error as? FrameDecodingError
            break reading
        }
        start += count
    }
    precondition(frames == expected, "reading large payloads in place changed the frames")
    precondition(
        failure == expectedFailure,
        "reading large payloads in place changed the error: \(String(describing: failure)) against \(String(describing: expectedFailure))")
}

private func checkRoundTrip(_ frame: Frame) {
    let encoded = FrameEncoder.encode(frame)
    precondition(encoded.count == FrameEncoder.encodedLength(of: frame), "encodedLength disagrees with encode for \(frame.typeName)")
    var again = FrameDecoder(maximumFrameLength: UInt32.max)
    again.append(encoded)
    guard let decoded = try? again.next() else {
        preconditionFailure("a decoded \(frame.typeName) frame re-encodes to bytes that do not decode")
    }
    precondition(decoded == frame, "a \(frame.typeName) frame changes across encode and decode")
}

/// The payload of an ITEM on the file channel is a file header: one that decodes must encode
/// back to a header that decodes to itself.
private func checkFileHeader(_ frame: Frame) {
    guard case .item(3, _, _, let payload) = frame, let header = try? FileHeader(decoding: payload) else { return }
    precondition((try? FileHeader(decoding: header.encoded())) == header, "a file header changes across encode and decode")
}

/// The length of the frame (prefix included) that starts at `start`, if all of it is there.
private func frameLength(_ input: [UInt8], at start: Int) -> Int? {
    guard input.count - start >= 4 else { return nil }
    let declared = input[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
    guard declared > 0, input.count - start - 4 >= declared else { return nil }
    return 4 + declared
}

private enum FuzzKey {
    static let key = [UInt8](repeating: 0x5A, count: 32)
    static let nonce = [UInt8](repeating: 0x01, count: LinkProtocol.nonceLength)
}
