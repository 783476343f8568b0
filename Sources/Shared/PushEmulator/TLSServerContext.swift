import CSSL
import LinkCrypto

/// An `SSL_CTX` for the endpoint: its certificate and key, TLS 1.2 or later, ALPN `h2`.
final class TLSServerContext {
    let context: OpaquePointer

    /// - Parameter clientCAFile: the CA that provider certificates must lead to; with one, clients
    ///   are asked for a certificate (never required).
    init(certificate: OpaquePointer, key: P256PrivateKey, clientCAFile: String? = nil) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLError("SSL_CTX_new") }
        self.context = context
        guard wl_ssl_ctx_set_min_tls12(context) == 1,
            SSL_CTX_use_certificate(context, certificate) == 1,
            SSL_CTX_use_PrivateKey(context, key.key) == 1,
            SSL_CTX_check_private_key(context) == 1
        else {
            throw OpenSSLError("setting up TLS")
        }
        _ = wl_ssl_ctx_set_modes(context)
        wl_ssl_ctx_select_h2(context)
        if let clientCAFile {
            guard SSL_CTX_load_verify_locations(context, clientCAFile, nil) == 1 else {
                throw OpenSSLError("loading \(clientCAFile) to check client certificates")
            }
            if let names = SSL_load_client_CA_file(clientCAFile) { SSL_CTX_set_client_CA_list(context, names) }
            wl_ssl_ctx_request_client_certificates(context)
        }
    }

    deinit { SSL_CTX_free(context) }
}
