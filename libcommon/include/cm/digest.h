/*
 * digest.h - SHA-256, HMAC-SHA-256 and a constant-time compare (mbedTLS).
 *
 * Every secret the suite keeps (project secret tokens, personal API keys,
 * OAuth tokens) is stored as the hex SHA-256 of the whole token, prefix
 * included, and looked up by that hash; where a stored hash is compared
 * with a computed one, cm_ct_equal keeps the time independent of where
 * they differ.
 */
#ifndef CM_DIGEST_H
#define CM_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_SHA256_LEN     32
#define CM_SHA256_HEX_LEN 64

void cm_sha256(const void *in, size_t len, uint8_t out[CM_SHA256_LEN]);
/* Lowercase hex, NUL-terminated. */
void cm_sha256_hex(const void *in, size_t len, char out[CM_SHA256_HEX_LEN + 1]);
void cm_hmac_sha256(const void *key, size_t key_len, const void *in, size_t len,
                    uint8_t out[CM_SHA256_LEN]);
/* a and b equal over n bytes, in time that depends on n only. */
bool cm_ct_equal(const void *a, const void *b, size_t n);

#endif
