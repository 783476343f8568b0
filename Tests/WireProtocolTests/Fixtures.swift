import TestSupport
import WireProtocol

/// Values shared by the tests; the byte values match the vectors in docs/wire-protocol.md.
enum Fixtures {
    static let phoneNonce = Array(UInt8(0x00)...UInt8(0x1F))
    static let watchNonce = Array(UInt8(0x80)...UInt8(0x9F))
    static let pairingKey = Array(UInt8(0x40)...UInt8(0x5F))

    /// HMAC-SHA256 computed with Python's `hmac` module, not with the code under test.
    static let phoneProof = bytes("763bd4f5448d71ab9944a0979963791ad730168cd7e628cc408dca1d745c9945")
    static let watchProof = bytes("6570df6ab687589b43f56a1b2b6ea8ec38fd8b56fcc8379e66ea69e9dd88b11f")

    /// `plistlib.dumps({"action": "ping", "count": 1, "urgent": True}, fmt=plistlib.FMT_BINARY)`.
    static let pingPropertyList = bytes(
        """
        62706c6973743030d301020304050656616374696f6e55636f756e7456757267\
        656e745470696e67100109080f161c23282a0000000000000101000000000000\
        00070000000000000000000000000000002b
        """)
    /// `plistlib.dumps({"ok": True}, fmt=plistlib.FMT_BINARY)`.
    static let okPropertyList = bytes(
        """
        62706c6973743030d10102526f6b09080b0e0000000000000101000000000000\
        00030000000000000000000000000000000f
        """)

    static let phoneHello = Hello(minVersion: 1, maxVersion: 1, role: .phone, deviceId: "phone-1", nonce: phoneNonce)
    static let watchHello = Hello(minVersion: 1, maxVersion: 1, role: .watch, deviceId: "watch-1", nonce: watchNonce)

    /// One frame of every kind, with edge values.
    static let sampleFrames: [Frame] = [
        .hello(phoneHello),
        .hello(Hello(minVersion: 0, maxVersion: .max, role: .watch, deviceId: String(repeating: "é", count: 127) + "x", nonce: watchNonce)),
        .auth(proof: phoneProof),
        .ready,
        .state(SessionState(activationState: .activated, appState: .foreground, flags: DeviceFlags.all)),
        .state(SessionState()),
        .message(id: 1, wantsReply: true, payload: .dictionary(pingPropertyList)),
        .message(id: .max, wantsReply: false, payload: .data([])),
        .message(id: 7, wantsReply: true, payload: .data(Array(repeating: 0xAB, count: 70_000))),
        .reply(id: 1, payload: .dictionary(okPropertyList)),
        .reply(id: 0, payload: .data([0, 1, 2])),
        .messageError(id: 3, code: 7012, description: "reply timed out"),
        .messageError(id: 4, code: 0, description: ""),
        .messageAck(id: 2),
        .ping(0),
        .pong(.max),
        .goAway(code: 5, reason: "bad proof"),
        .goAway(code: 999, reason: "ünknown cöde"),
        .item(channel: 1, seq: 1, flags: 0, payload: pingPropertyList),
        .item(channel: 1, seq: .max, flags: 0x01, payload: okPropertyList),
        .item(channel: 2, seq: 0, flags: 0, payload: []),
        .item(channel: 255, seq: 9, flags: 0, payload: Array(repeating: 0xCD, count: 70_000)),
        .ack(channel: 1, seq: 0),
        .ack(channel: 2, seq: .max),
        .ack(channel: 255, seq: 1),
        .item(channel: 3, seq: 1, flags: 0, payload: fileHeader.encoded()),
        .fileChunk(seq: 1, offset: 0, data: Array("hello".utf8)),
        .fileChunk(seq: .max, offset: UInt64(Int64.max) - 70_000, data: Array(repeating: 0xEF, count: 70_000)),
        .fileChunkAck(seq: 1, flags: [], receivedOffset: 5, committedOffset: 0),
        .fileChunkAck(seq: .max, flags: [.resume, .rejected], receivedOffset: UInt64(Int64.max), committedOffset: UInt64(Int64.max)),
        .fileCancel(seq: 0),
        .fileCancel(seq: .max),
        .itemError(channel: 1, seq: 1, code: 7015, description: ""),
        .itemError(channel: 3, seq: .max, code: 7017, description: String(repeating: "é", count: 300)),
        .clockSet(ClockSetting(round: 0, isManual: false, monotonicMilliseconds: 0, wallMilliseconds: 0)),
        .clockSet(
            ClockSetting(
                round: .max, isManual: true, monotonicMilliseconds: UInt64(Int64.max),
                wallMilliseconds: ClockSetting.maximumWallMilliseconds)),
        .clockAck(round: 0, nextTimerInMilliseconds: nil),
        .clockAck(round: .max, nextTimerInMilliseconds: 0),
        .clockAck(round: 7, nextTimerInMilliseconds: UInt64(Int64.max)),
    ]

    /// The header of the `file-item` vector: "hello" as x.bin with the metadata {ok: true}.
    static let fileHeader = FileHeader(
        totalBytes: 5, sha256: bytes("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
        transferId: "transfer-1", name: "x.bin", metadata: okPropertyList)
    /// The header of the `file-item-empty` vector: an empty file without metadata.
    static let emptyFileHeader = FileHeader(
        totalBytes: 0, sha256: bytes("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        transferId: "t2", name: "empty", metadata: [])

    static func bytes(_ hex: String) -> [UInt8] { TestSupport.bytes(fromHex: hex) }
}
