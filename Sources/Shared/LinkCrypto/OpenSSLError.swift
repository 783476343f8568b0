import CCrypto

/// A failed OpenSSL call, with the library's own error text when it left one.
public struct OpenSSLError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let detail: String

    /// Takes (and clears) the calling thread's OpenSSL error queue.
    public init(_ operation: String) {
        self.operation = operation
        detail = OpenSSLErrorQueue.takeMessages().joined(separator: "; ")
    }

    /// A refusal before OpenSSL was asked, with its reason.
    public init(operation: String, detail: String) {
        self.operation = operation
        self.detail = detail
    }

    public var description: String {
        detail.isEmpty ? "\(operation) failed" : "\(operation) failed: \(detail)"
    }
}

/// Memory BIOs: PEM text in and out.
package enum MemoryBIO {
    package static func withReading<T>(_ text: String, _ body: (OpaquePointer) -> T) -> T? {
        let bytes = Array(text.utf8)
        guard let bio = bytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else { return nil }
        defer { BIO_free(bio) }
        // BIO_new_mem_buf keeps a pointer to `bytes`, which lives until here.
        return withExtendedLifetime(bytes) { body(bio) }
    }

    package static func writing(_ body: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard body(bio) == 1 else { return nil }
        return String(decoding: drain(bio), as: UTF8.self)
    }

    package static func drain(_ bio: OpaquePointer) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
            if n <= 0 { break }
            output += chunk[0..<Int(n)]
        }
        return output
    }
}
