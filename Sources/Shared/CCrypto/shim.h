#ifndef WATCHLINK_CCRYPTO_SHIM_H
#define WATCHLINK_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#endif
