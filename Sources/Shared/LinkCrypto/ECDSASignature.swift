/// ECDSA P-256 signatures in the two encodings a JWT may carry: JOSE's raw `R‖S` (64 bytes)
/// and ASN.1 DER (`SEQUENCE { INTEGER r, INTEGER s }`), as some libraries emit.
public enum ECDSASignature {
    /// The DER encoding of a raw 64-byte `R‖S` signature, or `nil` for another length.
    public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        let r = integer(raw[0..<32]), s = integer(raw[32..<64])
        return [0x30, UInt8(r.count + s.count)] + r + s
    }

    /// The raw 64-byte `R‖S` of a DER signature, as JOSE (ES256) wants it; `nil` when `der` is
    /// not a well-formed signature or an integer does not fit 32 bytes.
    public static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        guard isDER(der) else { return nil }
        var index = 2
        var raw: [UInt8] = []
        for _ in 0..<2 {
            let length = Int(der[index + 1])
            let value = der[(index + 2)..<(index + 2 + length)].drop { $0 == 0 }
            guard value.count <= 32 else { return nil }
            raw += [UInt8](repeating: 0, count: 32 - value.count) + value
            index += 2 + length
        }
        return raw
    }

    /// Whether `bytes` is a well-formed DER `SEQUENCE` of two positive `INTEGER`s of at most
    /// 33 bytes each, with nothing after it.
    public static func isDER(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8, bytes[0] == 0x30, Int(bytes[1]) == bytes.count - 2, bytes[1] < 0x80 else { return false }
        var index = 2
        for _ in 0..<2 {
            guard index + 2 <= bytes.count, bytes[index] == 0x02 else { return false }
            let length = Int(bytes[index + 1])
            guard length >= 1, length <= 33, index + 2 + length <= bytes.count else { return false }
            let first = bytes[index + 2]
            if first & 0x80 != 0 { return false }
            if length > 1, first == 0, bytes[index + 3] & 0x80 == 0 { return false }
            index += 2 + length
        }
        return index == bytes.count
    }

    /// The signature in DER: raw `R‖S` converted, DER kept; `nil` when it is neither.
    public static func normalized(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.count == 64 { return der(fromRaw: bytes) }
        return isDER(bytes) ? bytes : nil
    }

    private static func integer(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return [0x02, UInt8(bytes.count)] + bytes
    }
}
