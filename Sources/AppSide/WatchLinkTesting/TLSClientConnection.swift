import CSSL
import LinkCrypto
import LinkSystem

/// A blocking TLS client connection (OpenSSL over memory BIOs, the socket read and written
/// by LinkSystem, so a closed peer is an error, never SIGPIPE): it trusts only the CA file it
/// is given, checks the server's name and asks for ALPN `h2`.
final class TLSClientConnection {
    private let fd: Int32
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private let peer: String
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    /// Connects to `host`:`port` and completes the handshake, checking the certificate against
    /// `caFile` for `serverName`; every read and write waits at most `timeoutMilliseconds`.
    init(host: String, port: UInt16, caFile: String, serverName: String, timeoutMilliseconds: Int) throws {
        peer = "\(host):\(port)"
        do {
            fd = try TCPSocket.connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            throw WatchLinkTestingError("cannot connect to the APNs endpoint at \(peer): \(error)")
        }
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            Syscall.close(fd)
            throw WatchLinkTestingError("\(OpenSSLError("SSL_CTX_new"))")
        }
        // The context first: SSL_new copies its verification mode and ALPN list.
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1, wl_ssl_ctx_set_min_tls12(context) == 1,
            SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0,
            let ssl = SSL_new(context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem())
        else {
            let detail = OpenSSLError("setting up TLS")
            SSL_CTX_free(context)
            Syscall.close(fd)
            throw WatchLinkTestingError("cannot set up TLS trusting the CA in \(caFile): \(detail)")
        }
        self.context = context
        self.ssl = ssl
        self.input = input
        self.output = output
        _ = wl_bio_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        guard wl_ssl_set_tlsext_host_name(ssl, serverName) == 1, SSL_set1_host(ssl, serverName) == 1 else {
            throw WatchLinkTestingError("cannot name \(serverName) for TLS: \(OpenSSLError("SSL_set1_host"))")
        }
        try handshake(serverName: serverName, caFile: caFile)
    }

    deinit {
        SSL_free(ssl)  // frees both BIOs
        SSL_CTX_free(context)
        Syscall.close(fd)
    }

    private func handshake(serverName: String, caFile: String) throws {
        while true {
            let result = SSL_do_handshake(ssl)
            try flush()
            if result == 1 { break }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ else {
                let verify = SSL_get_verify_result(ssl)
                let why = verify == X509_V_OK ? "" : " (certificate: \(String(cString: X509_verify_cert_error_string(verify))))"
                throw WatchLinkTestingError(
                    "TLS handshake with \(peer) as \(serverName), trusting \(caFile), failed\(why): \(OpenSSLError("SSL_do_handshake"))")
            }
            guard try fill() else { throw WatchLinkTestingError("\(peer) closed the connection during the TLS handshake") }
        }
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        guard let selected, String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self) == "h2" else {
            throw WatchLinkTestingError("\(peer) did not select ALPN h2")
        }
    }

    /// Encrypts and sends all of `plaintext`.
    func write(_ plaintext: [UInt8]) throws {
        var offset = 0
        while offset < plaintext.count {
            let n = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(min(plaintext.count - offset, 1 << 20))) }
            guard n > 0 else { throw WatchLinkTestingError("\(OpenSSLError("SSL_write"))") }
            offset += Int(n)
        }
        try flush()
    }

    /// The next plaintext from the server, waiting for it; empty once the server closed.
    func read() throws -> [UInt8] {
        while true {
            let n = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 { return Array(buffer[0..<Int(n)]) }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ:
                try flush()
                if try !fill() { return [] }
            case SSL_ERROR_ZERO_RETURN:
                return []
            default:
                throw WatchLinkTestingError("reading from \(peer): \(OpenSSLError("SSL_read"))")
            }
        }
    }

    /// Sends the records OpenSSL has written.
    private func flush() throws {
        let records = MemoryBIO.drain(output)
        guard !records.isEmpty else { return }
        let failure = records.withUnsafeBytes { bytes -> (any Error)? in
            do { try Syscall.sendAll(fd, bytes) } catch { return error }
            return nil
        }
        if let failure { throw WatchLinkTestingError("cannot send to \(peer): \(failure)") }
    }

    /// Reads what the socket has into OpenSSL; false once the server closed.
    private func fill() throws -> Bool {
        let result = buffer.withUnsafeMutableBytes { bytes -> Result<Int?, any Error> in
            do { return .success(try Syscall.read(fd, bytes.baseAddress!, bytes.count)) } catch { return .failure(error) }
        }
        let count: Int?
        switch result {
        case .success(let read): count = read
        case .failure(let error): throw WatchLinkTestingError("cannot read from \(peer): \(error)")
        }
        guard let count else { throw WatchLinkTestingError("\(peer) sent nothing within the timeout") }
        guard count > 0 else { return false }
        _ = buffer.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32(count)) }
        return true
    }
}
