import LinkCrypto

/// Constants and rules of the link protocol that both sides share.
public enum LinkProtocol {
    /// The oldest protocol version this build speaks.
    public static let minVersion: UInt16 = 1
    /// The newest protocol version this build speaks.
    public static let maxVersion: UInt16 = 2
    /// The first protocol version with CLOCK_SET and CLOCK_ACK: a watch follows its phone's
    /// device clock on links of this version and later.
    public static let clockVersion: UInt16 = 2
    /// The length of the pairing key both sides prove they hold, in bytes.
    public static let pairingKeyLength = 32
    /// The length of a HELLO nonce, in bytes.
    public static let nonceLength = 32
    /// The length of an AUTH proof (an HMAC-SHA256), in bytes.
    public static let proofLength = HMACSHA256.byteCount
    /// The maximum frame length (type byte and body) until the handshake completes.
    public static let preHandshakeMaximumFrameLength: UInt32 = 4096
    /// The maximum payload of a MESSAGE or REPLY, in encoded bytes (larger is ``WCErrorCode/payloadTooLarge``).
    public static let maximumMessagePayloadLength = 65_536
    /// How long a side waits for the handshake to complete before it sends GOAWAY `handshakeTimeout`.
    public static let handshakeTimeoutSeconds = 5

    /// The version two sides speak: the higher maximum both support, if it reaches both minimums.
    ///
    /// - Returns: `min(maxA, maxB)` when that is at least `max(minA, minB)`, else `nil`
    ///   (the handshake fails with GOAWAY ``GoAwayCode/versionMismatch``).
    public static func negotiateVersion(
        ownMin: UInt16 = minVersion, ownMax: UInt16 = maxVersion,
        peerMin: UInt16, peerMax: UInt16
    ) -> UInt16? {
        let chosen = Swift.min(ownMax, peerMax)
        return chosen >= Swift.max(ownMin, peerMin) ? chosen : nil
    }
}
