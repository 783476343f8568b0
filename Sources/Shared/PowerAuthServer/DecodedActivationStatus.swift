/// What the SDK's `Session::decodeActivationStatus` makes of a status answer: the blob
/// decrypted and read (`DecryptEncryptedStatusBlob`), the counter placed
/// (`Session::trySynchronizeCounter`, ``CounterSynchronization``), and the `ActivationStatus`
/// with its flags (`PublicTypes.cpp`).
public struct DecodedActivationStatus: Hashable, Sendable {
    public var blob: StatusBlob
    public var outcome: CounterSynchronization.Outcome
    /// The client's `CTR_DATA` and counter byte after decoding: moved to the server's on
    /// `updated`, or the byte captured by a client that had none.
    public var counterData: [UInt8]
    public var counterByte: UInt8?

    /// Decrypts `encryptedStatusBlob` with the client's transport key, its challenge and the
    /// server's nonce, and places the client's counter against it; a blob the SDK refuses
    /// throws (its `EC_Encryption`).
    public static func decode(
        encryptedStatusBlob: [UInt8], challenge: [UInt8], nonce: [UInt8], transportKey: [UInt8],
        counterData: [UInt8], counterByte: UInt8?
    ) throws(StatusBlobError) -> DecodedActivationStatus {
        let blob = try StatusBlobCipher.decrypt(encryptedStatusBlob, transportKey: transportKey, challenge: challenge, nonce: nonce)
        let outcome = CounterSynchronization.synchronize(
            counterData: counterData, counterByte: counterByte, blob: blob, transportKey: transportKey)
        var decoded = DecodedActivationStatus(blob: blob, outcome: outcome, counterData: counterData, counterByte: counterByte)
        if case .updated(let data, let byte) = outcome {
            decoded.counterData = data
            decoded.counterByte = byte
        }
        return decoded
    }

    /// `ActivationStatus::counterState`: `ok`, `updated`, `calculateSignature` or `invalid`.
    public var counterState: String {
        switch outcome {
        case .ok: return "ok"
        case .updated: return "updated"
        case .calculateSignature: return "calculateSignature"
        case .invalid: return "invalid"
        }
    }

    /// Whether the counter cannot be placed: the state is then `deadlock`, whatever the blob says.
    public var isDeadlock: Bool { outcome == .invalid }

    /// `ActivationStatus::state`: the blob's state, or `deadlock`.
    public var state: String { isDeadlock ? "deadlock" : blob.state.name }

    /// `isSignatureCalculationRecommended()`: `calculateSignature` while active.
    public var isSignatureCalculationRecommended: Bool {
        guard case .calculateSignature = outcome else { return false }
        return !isDeadlock && blob.state == .active
    }

    /// `needsSerializeSessionState()`: the counter was `updated`.
    public var needsSerializeSessionState: Bool {
        guard case .updated = outcome else { return false }
        return true
    }

    /// `isProtocolUpgradeAvailable()`: active, and current < upgrade ≤ 3.
    public var isProtocolUpgradeAvailable: Bool {
        !isDeadlock && blob.state == .active && blob.currentVersion < blob.upgradeVersion
            && blob.upgradeVersion <= ClientActivationStatus.maximumSupportedVersion
    }
}
