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

    /// Keys given as they are (a record imported from another server, the published vectors).
    public init(possession: [UInt8], knowledge: [UInt8], biometry: [UInt8], transport: [UInt8], vault: [UInt8]) {
        for key in [possession, knowledge, biometry, transport, vault] {
            precondition(key.count == Self.byteCount, "a PowerAuth key has 16 bytes, got \(key.count)")
        }
        self.possession = possession
        self.knowledge = knowledge
        self.biometry = biometry
        self.transport = transport
        self.vault = vault
    }

    /// The five keys in the order possession, knowledge, biometry, transport, vault (80 bytes).
    public var concatenated: [UInt8] { possession + knowledge + biometry + transport + vault }

    /// The keys of ``concatenated``; nil for another length.
    public init?(concatenated bytes: [UInt8]) {
        guard bytes.count == 5 * Self.byteCount else { return nil }
        func key(_ index: Int) -> [UInt8] { Array(bytes[(index * Self.byteCount)..<((index + 1) * Self.byteCount)]) }
        self.init(possession: key(0), knowledge: key(1), biometry: key(2), transport: key(3), vault: key(4))
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
