import CSSL
import LinkCrypto

/// An `SSL_CTX` for the endpoint: its certificate and key, TLS 1.2 or later, ALPN `h2`.
final class TLSServerContext {
    let context: OpaquePointer

    init(certificate: OpaquePointer, key: P256PrivateKey) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLError("SSL_CTX_new") }
        self.context = context
        guard wl_ssl_ctx_set_min_tls12(context) == 1,
              SSL_CTX_use_certificate(context, certificate) == 1,
              SSL_CTX_use_PrivateKey(context, key.key) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            throw OpenSSLError("setting up TLS")
        }
        _ = wl_ssl_ctx_set_modes(context)
        wl_ssl_ctx_select_h2(context)
    }

    deinit { SSL_CTX_free(context) }
}
