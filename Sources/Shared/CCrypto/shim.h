#ifndef WATCHLINK_CCRYPTO_SHIM_H
#define WATCHLINK_CCRYPTO_SHIM_H
#include <string.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
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
/* A P-256 key from parameters: the group, and a public point (SEC1 octets) and, for a key
   pair, the private scalar. NULL when OpenSSL refuses them. */
static inline EVP_PKEY *wl_p256_from_params(const unsigned char *point, size_t point_length, const BIGNUM *scalar) {
    EVP_PKEY *key = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    if (build == NULL) return NULL;
    if (OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point, point_length) != 1 ||
        (scalar != NULL && OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, scalar) != 1)) {
        goto done;
    }
    params = OSSL_PARAM_BLD_to_param(build);
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &key, scalar != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        key = NULL;
    }
done:
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    return key;
}

/* A P-256 public key from its SEC1 encoding (33 bytes compressed, 65 uncompressed), checked to
   be a point of the curve's group other than infinity; NULL otherwise. */
static inline EVP_PKEY *wl_p256_public_from_octets(const unsigned char *bytes, size_t length) {
    if (length != 33 && length != 65) return NULL;
    EVP_PKEY *key = wl_p256_from_params(bytes, length, NULL);
    if (key == NULL) return NULL;
    EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int valid = check != NULL && EVP_PKEY_public_check(check) == 1;
    EVP_PKEY_CTX_free(check);
    if (!valid) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* A P-256 key pair from its private scalar (big-endian, 1 <= d < n), its public point d*G
   computed; NULL otherwise. */
static inline EVP_PKEY *wl_p256_private_from_scalar(const unsigned char *bytes, size_t length) {
    EVP_PKEY *key = NULL;
    unsigned char point[65];
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *scalar = BN_bin2bn(bytes, (int)length, NULL);
    EC_POINT *public_point = group != NULL ? EC_POINT_new(group) : NULL;
    if (group == NULL || scalar == NULL || public_point == NULL) goto done;
    if (BN_is_zero(scalar) || BN_cmp(scalar, EC_GROUP_get0_order(group)) >= 0) goto done;
    if (EC_POINT_mul(group, public_point, scalar, NULL, NULL, NULL) != 1 ||
        EC_POINT_point2oct(group, public_point, POINT_CONVERSION_UNCOMPRESSED, point, sizeof point, NULL) != sizeof point) {
        goto done;
    }
    key = wl_p256_from_params(point, sizeof point, scalar);
done:
    EC_POINT_free(public_point);
    BN_clear_free(scalar);
    EC_GROUP_free(group);
    return key;
}

/* The affine coordinates of a P-256 key's public point, 32 bytes each, big-endian. */
static inline int wl_p256_public_xy(const EVP_PKEY *key, unsigned char x[32], unsigned char y[32]) {
    BIGNUM *bx = NULL, *by = NULL;
    int ok = EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, &bx) == 1 &&
             EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, &by) == 1 &&
             BN_bn2binpad(bx, x, 32) == 32 && BN_bn2binpad(by, y, 32) == 32;
    BN_free(bx);
    BN_free(by);
    return ok;
}
#endif
