/*
 * hashfn.h - the small non-cryptographic hashes the in-memory tables use:
 * FNV-1a over a byte string, 32 or 64 bits; cm_hash_words, eight bytes a
 * step, for tables on a hot path (the writer's property maps). Not for
 * anything a client could exploit by choosing keys en masse beyond the
 * tables' own probing limits.
 */
#ifndef CM_HASHFN_H
#define CM_HASHFN_H

#include <stdint.h>
#include <string.h>

#include "cm/buf.h"

static inline uint32_t cm_fnv1a_32(cm_slice_t s)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < s.len; i++)
        h = (h ^ (uint8_t)s.p[i]) * 16777619u;
    return h;
}

static inline uint64_t cm_fnv1a_64(cm_slice_t s)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < s.len; i++)
        h = (h ^ (uint8_t)s.p[i]) * 1099511628211ull;
    return h;
}

/* Eight bytes a step (FNV-1a's byte a step was the writer's largest single
 * cost: every property of every event hashed a few times).
 * Multiply-xorshift, mixed well enough for masked low bits. */
static inline uint64_t cm_hash_words(cm_slice_t key)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ key.len, w;
    size_t i = 0;
    for (; i + 8 <= key.len; i += 8) {
        memcpy(&w, key.p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    /* the tail a byte at a time: a memcpy of a variable length is a call
     * into libc, which cost more than the hash around it */
    w = 0;
    for (size_t j = 0; i + j < key.len; j++)
        w |= (uint64_t)(uint8_t)key.p[i + j] << (8 * j);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

#endif
