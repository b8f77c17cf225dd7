/*
 * hashfn.h - the small non-cryptographic hash every in-memory table uses:
 * FNV-1a over a byte string, 32 or 64 bits. Not for anything a client could
 * exploit by choosing keys en masse beyond the tables' own probing limits.
 */
#ifndef CM_HASHFN_H
#define CM_HASHFN_H

#include <stdint.h>

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

#endif
