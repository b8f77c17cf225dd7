/* digest.c - SHA-256 and HMAC on mbedTLS 2 or 3 (see digest.h). */
#include "cm/digest.h"

#include <mbedtls/md.h>
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

#include "cm/hex.h"

void cm_sha256(const void *in, size_t len, uint8_t out[CM_SHA256_LEN])
{
#if MBEDTLS_VERSION_MAJOR >= 3
    mbedtls_sha256(in, len, out, 0);
#else
    mbedtls_sha256_ret(in, len, out, 0);
#endif
}

void cm_sha256_hex(const void *in, size_t len, char out[CM_SHA256_HEX_LEN + 1])
{
    uint8_t h[CM_SHA256_LEN];
    cm_sha256(in, len, h);
    cm_hex_encode(h, sizeof(h), out);
}

void cm_hmac_sha256(const void *key, size_t key_len, const void *in, size_t len,
                    uint8_t out[CM_SHA256_LEN])
{
    mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key, key_len, in, len, out);
}

bool cm_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= x[i] ^ y[i];
    return diff == 0;
}
