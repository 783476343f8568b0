#ifndef WATCHLINK_CSSL_SHIM_H
#define WATCHLINK_CSSL_SHIM_H
#include <string.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Helpers for what OpenSSL offers only as macros or variadic functions. */

/* Adds the extension `nid` = `value` (OpenSSL config syntax) to `cert`, issued by `issuer`. */
static inline int wl_x509_add_extension(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (extension == NULL) return 0;
    int ok = X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
    return ok;
}

static inline long wl_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

static inline long wl_ssl_ctx_set_modes(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

/* ALPN: selects "h2"; a client that offers protocols but not h2 is refused. */
static inline int wl_alpn_select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                    const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char h2[] = { 2, 'h', '2' };
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    if (SSL_select_next_proto(&selected, &selectedLength, h2, sizeof h2, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    *outlen = selectedLength;
    return SSL_TLSEXT_ERR_OK;
}

static inline void wl_ssl_ctx_select_h2(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, wl_alpn_select_h2, NULL);
}

/* SNI: the host name a client names in its ClientHello. */
static inline long wl_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline long wl_bio_pending(BIO *bio) {
    return (long)BIO_ctrl_pending(bio);
}

static inline int wl_bio_set_mem_eof_return(BIO *bio, int value) {
    return (int)BIO_set_mem_eof_return(bio, value);
}

/* Client certificates: asked for, never required, and accepted at the handshake whatever
   their verification says; the endpoint reads the verdict (SSL_get_verify_result) and answers
   the requests of a connection with a bad certificate itself, as APNs answers BadCertificate. */
static inline int wl_accept_any_client_certificate(int preverified, X509_STORE_CTX *ctx) {
    (void)preverified; (void)ctx;
    return 1;
}

static inline void wl_ssl_ctx_request_client_certificates(SSL_CTX *ctx) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, wl_accept_any_client_certificate);
}
#endif
