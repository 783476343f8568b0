import WireProtocol
import LinkSession

/// Feeds the input to a ``FrameDecoder`` in chunks sized by the first byte, checks that every
/// decoded frame (and the file header of a file channel ITEM) re-encodes to one that decodes
/// back to itself, and drives both sides of a ``LinkHandshake`` with the frames.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let chunk = Int(first & 0x3F) + 1
    let input = bytes.dropFirst()

    var decoder = FrameDecoder(maximumFrameLength: 1 << 16)
    var watch = LinkHandshake(role: .watch, deviceId: "fuzz-watch", key: FuzzKey.key, nonce: FuzzKey.nonce)
    var phone = LinkHandshake(role: .phone, deviceId: "fuzz-phone", key: FuzzKey.key, nonce: FuzzKey.nonce)
    var start = input.startIndex
    decoding: while start < input.endIndex {
        let end = min(start + chunk, input.endIndex)
        decoder.append(input[start..<end])
        start = end
        while true {
            let frame: Frame?
            do { frame = try decoder.next() } catch { break decoding }
            guard let frame else { break }
            checkRoundTrip(frame)
            checkFileHeader(frame)
            _ = watch.receive(frame)
            _ = phone.receive(frame)
        }
    }
    precondition(decoder.bufferedByteCount <= Int(decoder.maximumFrameLength) + 4 + chunk,
                 "the decoder buffers \(decoder.bufferedByteCount) bytes, more than one frame")
    return 0
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

private enum FuzzKey {
    static let key = [UInt8](repeating: 0x5A, count: 32)
    static let nonce = [UInt8](repeating: 0x01, count: LinkProtocol.nonceLength)
}
