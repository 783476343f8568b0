import CCrypto

/// Why AES-128 refused or failed.
public enum AES128Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key or the IV does not have 16 bytes.
    case invalidKeyOrIV(keyByteCount: Int, ivByteCount: Int)
    /// The input is empty or not a whole number of blocks.
    case wrongLength(Int)
    /// OpenSSL failed; its error text.
    case failed(String)

    public var description: String {
        switch self {
        case .invalidKeyOrIV(let keyCount, let ivCount):
            return "AES-128 needs a 16-byte key and IV, got \(keyCount) and \(ivCount)"
        case .wrongLength(let count): return "AES-128 needs whole 16-byte blocks, got \(count) bytes"
        case .failed(let why): return why
        }
    }
}

/// AES-128 in CBC mode without padding, through OpenSSL's EVP interface.
public enum AES128 {
    public static let keyByteCount = 16
    public static let blockByteCount = 16

    /// Encrypts whole blocks; `key` and `iv` have 16 bytes.
    public static func encryptCBC(_ plain: [UInt8], key: [UInt8], iv: [UInt8]) throws(AES128Error) -> [UInt8] {
        try run(plain, key: key, iv: iv, encrypt: true)
    }

    /// Decrypts whole blocks; `key` and `iv` have 16 bytes.
    public static func decryptCBC(_ cipher: [UInt8], key: [UInt8], iv: [UInt8]) throws(AES128Error) -> [UInt8] {
        try run(cipher, key: key, iv: iv, encrypt: false)
    }

    /// One block encrypted under `key` with a zero IV (AES-ECB of one block).
    public static func encryptBlock(_ block: [UInt8], key: [UInt8]) throws(AES128Error) -> [UInt8] {
        try run(block, key: key, iv: [UInt8](repeating: 0, count: blockByteCount), encrypt: true)
    }

    private static func run(_ input: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Bool) throws(AES128Error) -> [UInt8] {
        guard key.count == keyByteCount, iv.count == blockByteCount else {
            throw .invalidKeyOrIV(keyByteCount: key.count, ivByteCount: iv.count)
        }
        guard !input.isEmpty, input.count % blockByteCount == 0 else { throw .wrongLength(input.count) }
        guard let context = EVP_CIPHER_CTX_new() else { throw .failed("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + blockByteCount)
        var written: Int32 = 0
        var final: Int32 = 0
        let ok = key.withUnsafeBufferPointer { keyBytes in
            iv.withUnsafeBufferPointer { ivBytes in
                input.withUnsafeBufferPointer { inputBytes in
                    output.withUnsafeMutableBufferPointer { outputBytes -> Bool in
                        guard
                            EVP_CipherInit_ex(
                                context, EVP_aes_128_cbc(), nil, keyBytes.baseAddress, ivBytes.baseAddress,
                                encrypt ? 1 : 0) == 1,
                            EVP_CIPHER_CTX_set_padding(context, 0) == 1,
                            EVP_CipherUpdate(
                                context, outputBytes.baseAddress, &written, inputBytes.baseAddress,
                                Int32(inputBytes.count)) == 1,
                            EVP_CipherFinal_ex(context, outputBytes.baseAddress! + Int(written), &final) == 1
                        else { return false }
                        return true
                    }
                }
            }
        }
        guard ok else { throw .failed(OpenSSLErrorQueue.describeAndClear()) }
        return Array(output.prefix(Int(written + final)))
    }
}
