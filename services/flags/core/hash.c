/*
 * hash.c - see hash.h. The parts are fed to SHA-1 one after another, so no
 * buffer is built and keys of any length cost nothing extra.
 *
 * SHA-1 is nettle's: its x86-64 build picks the SHA-NI instructions at run
 * time where the CPU has them (about 4x our portable C version, measured
 * on the flag keys this hashes). SHA-1 is used only because PostHog's
 * bucketing is defined on it; nothing security-relevant depends on it.
 */
#include "core/hash.h"

#include <stdint.h>

#include <nettle/sha1.h>

/* 0xFFFFFFFFFFFFFFF as a double rounds to 2^60; written out to say so. */
#define LONG_SCALE ((double)0xFFFFFFFFFFFFFFFULL)

/* SHA-1 of the concatenation of up to four parts, mapped to [0, 1]. */
static double unit_hash(const cm_slice_t *parts, int n)
{
    struct sha1_ctx c;
    uint8_t d[SHA1_DIGEST_SIZE];
    sha1_init(&c);
    for (int i = 0; i < n; i++)
        if (parts[i].len > 0) /* an empty slice may have a NULL pointer */
            sha1_update(&c, parts[i].len, (const uint8_t *)parts[i].p);
    sha1_digest(&c, sizeof(d), d);

    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return (double)(v >> 4) / LONG_SCALE; /* the first 15 hex digits */
}

double flg_hash(cm_slice_t prefix, cm_slice_t id, cm_slice_t salt)
{
    cm_slice_t parts[3] = {prefix, id, salt};
    return unit_hash(parts, 3);
}

double flg_hash_rollout(cm_slice_t flag_key, cm_slice_t id)
{
    cm_slice_t parts[3] = {flag_key, CM_SLICE_LIT("."), id};
    return unit_hash(parts, 3);
}

double flg_hash_variant(cm_slice_t flag_key, cm_slice_t id)
{
    cm_slice_t parts[4] = {flag_key, CM_SLICE_LIT("."), id, CM_SLICE_LIT("variant")};
    return unit_hash(parts, 4);
}

double flg_hash_holdout(cm_slice_t id)
{
    cm_slice_t parts[2] = {CM_SLICE_LIT("holdout-"), id};
    return unit_hash(parts, 2);
}
