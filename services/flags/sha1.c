/*
 * sha1.c - SHA-1 as specified in FIPS 180-4, section 6.1.
 *
 * Straightforward 80-round compression over 64-byte blocks; the message
 * schedule is kept in a 16-word ring to stay small. Byte order is handled
 * explicitly, so the code does not depend on the host's endianness.
 */
#include "sha1.h"

#include <string.h>

static inline uint32_t rol(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

static void compress(uint32_t h[5], const uint8_t b[64])
{
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | (uint32_t)b[4 * i + 3];

    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; t++) {
        if (t >= 16) {
            uint32_t x = w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ w[t & 15];
            w[t & 15] = rol(x, 1);
        }
        uint32_t f, k;
        if (t < 20) {
            f = (bb & c) | (~bb & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = bb ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (bb & c) | (bb & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = bb ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t tmp = rol(a, 5) + f + e + k + w[t & 15];
        e = d;
        d = c;
        c = rol(bb, 30);
        bb = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void flg_sha1_init(flg_sha1_t *c)
{
    c->h[0] = 0x67452301u;
    c->h[1] = 0xefcdab89u;
    c->h[2] = 0x98badcfeu;
    c->h[3] = 0x10325476u;
    c->h[4] = 0xc3d2e1f0u;
    c->bytes = 0;
    c->fill = 0;
}

void flg_sha1_update(flg_sha1_t *c, const void *p, size_t n)
{
    const uint8_t *s = p;
    if (n == 0)
        return; /* p may be NULL for an empty slice */
    c->bytes += n;
    if (c->fill) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, s, take);
        c->fill += take;
        s += take;
        n -= take;
        if (c->fill < 64)
            return;
        compress(c->h, c->block);
        c->fill = 0;
    }
    for (; n >= 64; s += 64, n -= 64)
        compress(c->h, s);
    if (n) {
        memcpy(c->block, s, n);
        c->fill = n;
    }
}

void flg_sha1_final(flg_sha1_t *c, uint8_t out[FLG_SHA1_LEN])
{
    uint64_t bits = c->bytes * 8;
    uint8_t pad[72] = {0x80};
    /* Pad to 56 mod 64, then the 64-bit big-endian length. */
    size_t padlen = c->fill < 56 ? 56 - c->fill : 120 - c->fill;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    uint64_t keep = c->bytes;
    flg_sha1_update(c, pad, padlen + 8);
    c->bytes = keep;
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

void flg_sha1(const void *p, size_t n, uint8_t out[FLG_SHA1_LEN])
{
    flg_sha1_t c;
    flg_sha1_init(&c);
    flg_sha1_update(&c, p, n);
    flg_sha1_final(&c, out);
}
