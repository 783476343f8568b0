#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkCrypto
import WireProtocol

/// The PowerAuth signature of data, as the SDK's `CalculateSignature` computes it and the
/// server validates it.
public enum PowerAuthSignature {
    /// How the factors' values are written.
    public enum Format: Hashable, Sendable {
        /// Protocol 3.1 online signatures: the last 16 bytes of each factor's HMAC,
        /// concatenated and base64-encoded.
        case base64
        /// Offline signatures (and protocol 3.0): each factor as `componentLength` (4…8)
        /// decimal digits, joined by `-`.
        case decimal(componentLength: Int)

        public static let componentLengths = 4...8
    }

    /// For each factor key `K_i` in the order possession, knowledge, biometry:
    /// `KEY_i = HMAC(K_i, CTR_DATA)`, chained with the later keys' derived keys as the SDK
    /// chains them, then `HMAC(KEY_i, data)`.
    public static func compute(
        keys: SignatureKeys, factor: SignatureFactor, counterData: [UInt8], data: [UInt8],
        format: Format
    ) -> String {
        let factorKeys = factor.components.map { keys.key($0) }
        var bytes: [UInt8] = []
        var decimals: [String] = []
        for i in factorKeys.indices {
            var derived = HMACSHA256.authenticationCode(key: factorKeys[i], message: counterData)
            // The SDK's inner loop takes keys[j + 1] for j < i: the keys after the first, up to i.
            for j in 0..<i {
                let inner = HMACSHA256.authenticationCode(key: factorKeys[j + 1], message: counterData)
                derived = HMACSHA256.authenticationCode(key: inner, message: derived)
            }
            let mac = HMACSHA256.authenticationCode(key: derived, message: data)
            switch format {
            case .base64: bytes += mac[16...]
            case .decimal(let length): decimals.append(decimalize(mac, componentLength: length))
            }
        }
        switch format {
        case .base64: return Data(bytes).base64EncodedString()
        case .decimal: return decimals.joined(separator: "-")
        }
    }

    /// The HOTP "dynamic binary code" of the **last** four bytes, modulo 10^length, padded
    /// with zeros (`CalculateDecimalizedSignature`).
    public static func decimalize(_ mac: [UInt8], componentLength: Int) -> String {
        precondition(Format.componentLengths.contains(componentLength), "a decimal component has 4…8 digits")
        let offset = mac.count - 4
        let code =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<componentLength { modulus *= 10 }
        let text = String(code % modulus)
        return String(repeating: "0", count: componentLength - text.count) + text
    }
}
