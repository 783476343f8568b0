/// The 32-byte activation status blob of PowerAuth protocol 3:
///
/// ```
/// DE C0 DE D1 | STATUS | CURRENT_VERSION | UPGRADE_VERSION | 5 reserved (random) |
/// CTR_BYTE | FAIL_COUNT | MAX_FAIL_COUNT | CTR_LOOK_AHEAD | 16-byte CTR_DATA hash
/// ```
public struct StatusBlob: Hashable, Sendable {
    public static let byteCount = 32
    public static let magic: [UInt8] = [0xDE, 0xC0, 0xDE, 0xD1]
    /// The largest look-ahead a client accepts.
    public static let maximumLookAhead: UInt8 = 64

    public var state: ServerActivationState
    public var currentVersion: UInt8
    public var upgradeVersion: UInt8
    /// The least significant byte of the server's numeric counter.
    public var counterByte: UInt8
    public var failCount: UInt8
    public var maxFailCount: UInt8
    public var lookAhead: UInt8
    /// `KDF_INTERNAL(KEY_TRANSPORT_CTR, CTR_DATA)` of the server's counter data.
    public var counterDataHash: [UInt8]
    /// Bytes 7…11: the server writes random bytes there; the SDK skips them.
    public var reserved: [UInt8]

    public static let reservedByteCount = 5

    public init(
        state: ServerActivationState, currentVersion: UInt8, upgradeVersion: UInt8, counterByte: UInt8,
        failCount: UInt8, maxFailCount: UInt8, lookAhead: UInt8, counterDataHash: [UInt8],
        reserved: [UInt8] = [UInt8](repeating: 0, count: reservedByteCount)
    ) {
        precondition(counterDataHash.count == 16, "the counter data hash has 16 bytes")
        precondition(reserved.count == Self.reservedByteCount, "the reserved part has 5 bytes")
        self.reserved = reserved
        self.state = state
        self.currentVersion = currentVersion
        self.upgradeVersion = upgradeVersion
        self.counterByte = counterByte
        self.failCount = failCount
        self.maxFailCount = maxFailCount
        self.lookAhead = lookAhead
        self.counterDataHash = counterDataHash
    }

    /// The 32 plain bytes.
    public func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes += [state.rawValue, currentVersion, upgradeVersion]
        bytes += reserved
        bytes += [counterByte, failCount, maxFailCount, lookAhead]
        bytes += counterDataHash
        return bytes
    }

    /// Reads plain bytes as the SDK does: the magic's last byte may be `D1`–`DF` (newer blob
    /// versions keep this layout's prefix), the state must be 1–5, the look-ahead 1–64.
    public static func decode(_ bytes: [UInt8]) throws(StatusBlobError) -> StatusBlob {
        guard bytes.count == byteCount else { throw .wrongLength(bytes.count) }
        guard bytes[0] == 0xDE, bytes[1] == 0xC0, bytes[2] == 0xDE, (0xD1...0xDF).contains(bytes[3]) else {
            throw .wrongMagic(Array(bytes[0..<4]))
        }
        guard let state = ServerActivationState(rawValue: bytes[4]) else { throw .unknownState(bytes[4]) }
        let lookAhead = bytes[15]
        guard lookAhead >= 1, lookAhead <= maximumLookAhead else { throw .invalidLookAhead(lookAhead) }
        return StatusBlob(
            state: state, currentVersion: bytes[5], upgradeVersion: bytes[6], counterByte: bytes[12],
            failCount: bytes[13], maxFailCount: bytes[14], lookAhead: lookAhead,
            counterDataHash: Array(bytes[16..<32]), reserved: Array(bytes[7..<12]))
    }
}
