/*
 * sha1.h - a small SHA-1 (FIPS 180-4) for flag bucketing.
 *
 * SHA-1 is used here only because PostHog's rollout and variant hashing is
 * defined on it; nothing security-relevant depends on it. Incremental, so
 * the hash of prefix + identifier + salt needs no concatenation buffer.
 */
#ifndef FLG_SHA1_H
#define FLG_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define FLG_SHA1_LEN 20

typedef struct {
    uint32_t h[5];
    uint64_t bytes;     /* total input length */
    uint8_t block[64];  /* pending partial block */
    size_t fill;        /* bytes in block */
} flg_sha1_t;

void flg_sha1_init(flg_sha1_t *c);
void flg_sha1_update(flg_sha1_t *c, const void *p, size_t n);
void flg_sha1_final(flg_sha1_t *c, uint8_t out[FLG_SHA1_LEN]);
/* One-shot convenience. */
void flg_sha1(const void *p, size_t n, uint8_t out[FLG_SHA1_LEN]);

#endif
