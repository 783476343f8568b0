/// Which keys a PowerAuth signature uses, named as the SDK's `ConvertSignatureFactorToString`
/// and the `pa_signature_type` header value name them.
public enum SignatureFactor: String, CaseIterable, Hashable, Sendable {
    case possession
    case knowledge
    case biometry
    case possessionKnowledge = "possession_knowledge"
    case possessionBiometry = "possession_biometry"
    case possessionKnowledgeBiometry = "possession_knowledge_biometry"

    /// One key of a signature.
    public enum Component: Hashable, Sendable {
        case possession, knowledge, biometry
    }

    /// The keys in the order the signature chains them: possession, knowledge, biometry.
    public var components: [Component] {
        switch self {
        case .possession: return [.possession]
        case .knowledge: return [.knowledge]
        case .biometry: return [.biometry]
        case .possessionKnowledge: return [.possession, .knowledge]
        case .possessionBiometry: return [.possession, .biometry]
        case .possessionKnowledgeBiometry: return [.possession, .knowledge, .biometry]
        }
    }

    /// The SDK's factor mask (`SF_Possession` 0x0001, `SF_Knowledge` 0x0010, `SF_Biometry`
    /// 0x0100), which a token carries as `af`.
    public var mask: Int {
        components.reduce(0) { mask, component in
            switch component {
            case .possession: return mask | 0x0001
            case .knowledge: return mask | 0x0010
            case .biometry: return mask | 0x0100
            }
        }
    }

    /// Whether the server counts the signature's outcome in the fail count: only signatures
    /// with knowledge or biometry do (the server's `notPossessionFactorSignature`).
    public var countsFailedAttempts: Bool { self != .possession }

    /// The server's name of the factors (`SignatureType`: `POSSESSION_KNOWLEDGE`, ...).
    public var serverName: String { rawValue.uppercased() }
}
