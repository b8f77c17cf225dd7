/*
 * db_sqlite_cityhash.c - cm_city_hash64(s, ...) for SQLite connections:
 * ClickHouse's cityHash64 of strings, for the query compiler. ClickHouse
 * ships Google's CityHash at version 1.0.2 (later versions hash
 * differently); this is that version's 64-bit function, written from its
 * description: strings up to 16, 32 and 64 bytes each have their own
 * mixing, longer ones are read in 64-byte blocks after their last 64 bytes.
 * Several arguments combine as ClickHouse combines them: the first's hash,
 * then each next one folded in with Hash128to64(previous, next).
 *
 * The answer is a UInt64, past SQLite's integers: it is answered as its 20
 * decimal digits, zero-padded, so that text order is number order and the
 * reading of an answer (evstore_value.c) gets the number exactly. NULL for
 * a NULL argument; the compiler gives it strings only.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "db_sqlite_ch.h"

static const uint64_t k0 = 0xc3a5c85c97cb3127ULL;
static const uint64_t k1 = 0xb492b66fbe98f273ULL;
static const uint64_t k2 = 0x9ae16a3b2f90404fULL;
static const uint64_t k3 = 0xc949d7c7509e6557ULL;

static uint64_t load64(const unsigned char *p) /* little-endian, as on x86 */
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t load32(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t rot(uint64_t v, int s)
{
    return s == 0 ? v : (v >> s) | (v << (64 - s));
}

static uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

/* Hash128to64 of the pair (low u, high v). */
static uint64_t hash16(uint64_t u, uint64_t v)
{
    const uint64_t mul = 0x9ddfea08eb382d69ULL;
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static uint64_t len0to16(const unsigned char *s, size_t len)
{
    if (len > 8) {
        uint64_t a = load64(s), b = load64(s + len - 8);
        return hash16(a, rot(b + len, (int)len)) ^ b; /* len is 9..16: never a zero shift */
    }
    if (len >= 4)
        return hash16(len + (load32(s) << 3), load32(s + len - 4));
    if (len > 0) {
        uint32_t y = (uint32_t)s[0] + ((uint32_t)s[len >> 1] << 8);
        uint32_t z = (uint32_t)len + ((uint32_t)s[len - 1] << 2);
        return shift_mix(y * k2 ^ z * k3) * k2;
    }
    return k2;
}

static uint64_t len17to32(const unsigned char *s, size_t len)
{
    uint64_t a = load64(s) * k1, b = load64(s + 8);
    uint64_t c = load64(s + len - 8) * k2, d = load64(s + len - 16) * k0;
    return hash16(rot(a - b, 43) + rot(c, 30) + d, a + rot(b ^ k3, 20) - c + len);
}

static uint64_t len33to64(const unsigned char *s, size_t len)
{
    uint64_t z = load64(s + 24);
    uint64_t a = load64(s) + (len + load64(s + len - 16)) * k0;
    uint64_t b = rot(a + z, 52), c = rot(a, 37);
    a += load64(s + 8);
    c += rot(a, 7);
    a += load64(s + 16);
    uint64_t vf = a + z, vs = b + rot(a, 31) + c;
    a = load64(s + 16) + load64(s + len - 32);
    z = load64(s + len - 8);
    b = rot(a + z, 52);
    c = rot(a, 37);
    a += load64(s + len - 24);
    c += rot(a, 7);
    a += load64(s + len - 16);
    uint64_t wf = a + z, ws = b + rot(a, 31) + c;
    uint64_t r = shift_mix((vf + ws) * k2 + (wf + vs) * k0);
    return shift_mix(r * k0 + vs) * k2;
}

typedef struct {
    uint64_t first, second;
} pair_t;

/* 32 bytes at s mixed into the seeds a and b. */
static pair_t weak32(const unsigned char *s, uint64_t a, uint64_t b)
{
    uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
    a += w;
    b = rot(b + a + z, 21);
    uint64_t c = a;
    a += x;
    a += y;
    b += rot(a, 44);
    return (pair_t){a + z, b + c};
}

static uint64_t city_hash64(const unsigned char *s, size_t len)
{
    if (len <= 16)
        return len0to16(s, len);
    if (len <= 32)
        return len17to32(s, len);
    if (len <= 64)
        return len33to64(s, len);
    /* the last 64 bytes first, then 64-byte blocks from the start, with
     * 56 bytes of state: v, w, x, y, z */
    uint64_t x = load64(s);
    uint64_t y = load64(s + len - 16) ^ k1;
    uint64_t z = load64(s + len - 56) ^ k0;
    pair_t v = weak32(s + len - 64, len, y);
    pair_t w = weak32(s + len - 32, len * k1, k0);
    z += shift_mix(v.second) * k1;
    x = rot(z + x, 39) * k1;
    y = rot(y, 33) * k1;
    size_t left = (len - 1) & ~(size_t)63;
    do {
        x = rot(x + y + v.first + load64(s + 16), 37) * k1;
        y = rot(y + v.second + load64(s + 48), 42) * k1;
        x ^= w.second;
        y ^= v.first;
        z = rot(z ^ w.first, 33);
        v = weak32(s, v.second * k1, x + w.first);
        w = weak32(s + 32, z + w.second, y);
        uint64_t t = z;
        z = x;
        x = t;
        s += 64;
        left -= 64;
    } while (left != 0);
    return hash16(hash16(v.first, w.first) + shift_mix(y) * k1 + z, hash16(v.second, w.second) + x);
}

static void city_hash_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    uint64_t h = 0;
    for (int i = 0; i < argc; i++) {
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
            sqlite3_result_null(ctx);
            return;
        }
        const unsigned char *s = sqlite3_value_blob(argv[i]);
        size_t n = (size_t)sqlite3_value_bytes(argv[i]);
        uint64_t one = city_hash64(s ? s : (const unsigned char *)"", n);
        h = i == 0 ? one : hash16(h, one);
    }
    char digits[24];
    snprintf(digits, sizeof(digits), "%020llu", (unsigned long long)h);
    sqlite3_result_text(ctx, digits, -1, SQLITE_TRANSIENT);
}

int cm__sqlite_add_city_hash(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "cm_city_hash64", -1,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                      city_hash_fn, NULL, NULL, NULL);
}
