import LinkCrypto

/// Why a client refused a status blob.
public enum StatusBlobError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not 32 bytes (or, encrypted, not a whole number of AES blocks).
    case wrongLength(Int)
    /// The first three bytes are not `DE C0 DE`, or the fourth is outside `D1`–`DF`.
    case wrongMagic([UInt8])
    /// STATUS is outside 1–5.
    case unknownState(UInt8)
    /// CTR_LOOK_AHEAD is 0 or over 64.
    case invalidLookAhead(UInt8)
    /// AES-CBC failed (wrong key size, OpenSSL error).
    case decryptionFailed(String)

    public var description: String {
        switch self {
        case .wrongLength(let count): return "the status blob has \(count) bytes, expected 32"
        case .wrongMagic(let bytes):
            return "the status blob starts with \(bytes.map { String($0, radix: 16, uppercase: true) }.joined(separator: " ")), expected DE C0 DE D1…DF"
        case .unknownState(let state): return "the status blob has state \(state), expected 1…5"
        case .invalidLookAhead(let value): return "the status blob has look-ahead \(value), expected 1…64"
        case .decryptionFailed(let why): return "the status blob cannot be decrypted: \(why)"
        }
    }
}

extension StatusBlobError {
    /// The status blob's reading of an AES-128 failure.
    init(_ error: AES128Error) {
        switch error {
        case .wrongLength(let count): self = .wrongLength(count)
        case .invalidKeyOrIV, .failed: self = .decryptionFailed(error.description)
        }
    }
}
