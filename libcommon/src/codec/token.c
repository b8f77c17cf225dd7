/* token.c - random tokens in base 57 (see token.h). */
#include "cm/token.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cm/uuid.h"

static const char alphabet[] = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

void cm_token_new(const char *prefix, char out[CM_TOKEN_MAX])
{
    uint8_t n[32]; /* big-endian 256-bit number */
    char digits[CM_TOKEN_BODY_LEN];
    size_t plen = strnlen(prefix, 16);
    cm_random_bytes(n, sizeof(n));
    n[0] |= 0x80;
    /* Long division by 57, least significant digit first. 57^44 > 2^256, so
     * 44 digits always suffice; the top bit makes the leading one non-zero
     * in all but a vanishing share of values, which then still pad to 44. */
    for (size_t d = 0; d < CM_TOKEN_BODY_LEN; d++) {
        unsigned rem = 0;
        for (size_t i = 0; i < sizeof(n); i++) {
            unsigned cur = rem << 8 | n[i];
            n[i] = (uint8_t)(cur / 57);
            rem = cur % 57;
        }
        digits[CM_TOKEN_BODY_LEN - 1 - d] = alphabet[rem];
    }
    memcpy(out, prefix, plen);
    memcpy(out + plen, digits, CM_TOKEN_BODY_LEN);
    out[plen + CM_TOKEN_BODY_LEN] = '\0';
}

void cm_token_mask(const char *token, char *out, size_t size)
{
    const char *us = strchr(token, '_');
    size_t plen = us ? (size_t)(us - token) + 1 : 0;
    size_t len = strlen(token);
    snprintf(out, size, "%.*s...%s", (int)plen, token, len >= 4 ? token + len - 4 : token);
}
