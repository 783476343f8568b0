#ifndef WATCHLINK_CCRYPTO_SHIM_H
#define WATCHLINK_CCRYPTO_SHIM_H
#include <string.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

/* Helpers for what OpenSSL offers only as macros or variadic functions. */

/* A new P-256 key pair, or NULL. */
static inline EVP_PKEY *wl_p256_generate(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    if (EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_CTX_set_group_name(ctx, "P-256") <= 0 ||
        EVP_PKEY_generate(ctx, &key) <= 0) {
        key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* 1 when `key` is an EC key on P-256 (prime256v1). */
static inline int wl_is_p256(const EVP_PKEY *key) {
    char name[64] = {0};
    size_t length = 0;
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof name, &length) != 1) return 0;
    return strcmp(name, "prime256v1") == 0 || strcmp(name, "P-256") == 0;
}
#endif
