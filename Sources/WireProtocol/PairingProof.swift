import LinkCrypto

/// The AUTH proof that a side holds the pairing key, bound to both HELLO nonces and the sender's role.
///
/// `proof = HMAC-SHA256(key, "WatchLink pairing v1" || senderRole || senderNonce || receiverNonce)`,
/// where the label is ASCII without a terminator and the role is one byte.
public enum PairingProof {
    /// The ASCII label that starts every proven message.
    public static let label: [UInt8] = Array("WatchLink pairing v1".utf8)

    /// The proof a side with `senderRole` sends: its own nonce first, then the peer's.
    public static func compute(key: [UInt8], senderRole: Role, senderNonce: [UInt8], receiverNonce: [UInt8]) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(label.count + 1 + senderNonce.count + receiverNonce.count)
        message.append(contentsOf: label)
        message.append(senderRole.rawValue)
        message.append(contentsOf: senderNonce)
        message.append(contentsOf: receiverNonce)
        return HMACSHA256.authenticationCode(key: key, message: message)
    }

    /// Whether `proof` is what a sender with `senderRole` and the same key computes,
    /// compared in constant time.
    public static func verify(_ proof: [UInt8], key: [UInt8], senderRole: Role, senderNonce: [UInt8], receiverNonce: [UInt8]) -> Bool {
        let expected = compute(key: key, senderRole: senderRole, senderNonce: senderNonce, receiverNonce: receiverNonce)
        return ConstantTime.equal(proof, expected)
    }
}
