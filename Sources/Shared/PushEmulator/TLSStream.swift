import CSSL
import LinkCrypto

/// One TLS server connection over memory BIOs: ciphertext in from the socket, plaintext out
/// to HTTP/2, and the reverse, with no I/O of its own.
final class TLSStream {
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private(set) var isHandshakeComplete = false
    /// The peer sent `close_notify`.
    private(set) var isClosedByPeer = false

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(context: TLSServerContext) throws {
        guard let ssl = SSL_new(context.context) else { throw OpenSSLError("SSL_new") }
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw OpenSSLError("BIO_new")
        }
        _ = wl_bio_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.input = input
        self.output = output
    }

    deinit { SSL_free(ssl) }

    /// The client's certificate, if it sent one, read as APNs reads a provider certificate.
    var providerCertificate: ProviderCertificate? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return ProviderCertificate(certificate: certificate, verifyResult: Int(SSL_get_verify_result(ssl)))
    }

    /// The protocol chosen by ALPN, if any.
    var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Takes ciphertext from the socket, runs the handshake, and hands decrypted bytes to `body`.
    func receive(_ ciphertext: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        if ciphertext.count > 0 {
            guard BIO_write(input, ciphertext.baseAddress, Int32(ciphertext.count)) == Int32(ciphertext.count) else {
                throw OpenSSLError("BIO_write")
            }
        }
        if !isHandshakeComplete {
            let result = SSL_do_handshake(ssl)
            if result != 1 {
                try check(result, during: "the TLS handshake")
                return
            }
            isHandshakeComplete = true
        }
        try withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { buffer in
            while !isClosedByPeer {
                let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
                if n > 0 {
                    try body(UnsafeRawBufferPointer(rebasing: buffer[0..<Int(n)]))
                    continue
                }
                try check(n, during: "reading TLS records")
                return
            }
        }
    }

    /// Encrypts `plaintext`; the records wait in ``takeCiphertext()``.
    func send(_ plaintext: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < plaintext.count {
            let n = SSL_write(ssl, plaintext.baseAddress! + offset, Int32(min(plaintext.count - offset, 1 << 20)))
            guard n > 0 else { throw OpenSSLError("SSL_write") }
            offset += Int(n)
        }
    }

    /// Records waiting to go to the socket.
    func takeCiphertext() -> [UInt8] {
        guard wl_bio_pending(output) > 0 else { return [] }
        return MemoryBIO.drain(output)
    }

    private func check(_ result: Int32, during what: String) throws {
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            ERR_clear_error()
        case SSL_ERROR_ZERO_RETURN:
            isClosedByPeer = true
        default:
            let detail = OpenSSLError(what)
            throw Failure(description: "\(detail)")
        }
    }
}
