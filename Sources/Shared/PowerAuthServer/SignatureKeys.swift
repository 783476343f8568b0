/// The keys an activation derives from its master secret (`DeriveAllSecretKeys`): both the
/// SDK and the server hold the same five.
public struct SignatureKeys: Hashable, Sendable {
    public static let byteCount = 16

    /// `KEY_SIGNATURE_POSSESSION = KDF(KEY_MASTER_SECRET, 1)`.
    public var possession: [UInt8]
    /// `KEY_SIGNATURE_KNOWLEDGE = KDF(KEY_MASTER_SECRET, 2)`.
    public var knowledge: [UInt8]
    /// `KEY_SIGNATURE_BIOMETRY = KDF(KEY_MASTER_SECRET, 3)`.
    public var biometry: [UInt8]
    /// `KEY_TRANSPORT = KDF(KEY_MASTER_SECRET, 1000)`.
    public var transport: [UInt8]
    /// `KEY_ENCRYPTION_VAULT = KDF(KEY_MASTER_SECRET, 2000)`.
    public var vault: [UInt8]

    public init(masterSecret: [UInt8]) {
        precondition(masterSecret.count == Self.byteCount, "the master secret has 16 bytes, got \(masterSecret.count)")
        possession = PowerAuthKDF.derive(masterSecret, index: 1)
        knowledge = PowerAuthKDF.derive(masterSecret, index: 2)
        biometry = PowerAuthKDF.derive(masterSecret, index: 3)
        transport = PowerAuthKDF.derive(masterSecret, index: 1000)
        vault = PowerAuthKDF.derive(masterSecret, index: 2000)
    }

    /// The key of one factor.
    public func key(_ factor: SignatureFactor.Component) -> [UInt8] {
        switch factor {
        case .possession: return possession
        case .knowledge: return knowledge
        case .biometry: return biometry
        }
    }
}
