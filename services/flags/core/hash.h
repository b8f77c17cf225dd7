/*
 * hash.h - PostHog's bucketing hash: a number in [0, 1] from SHA-1.
 *
 *   hash(prefix, id, salt) = first 60 bits of SHA1(prefix id salt) / (2^60 - 1)
 *
 * computed exactly as the SDKs do it: the 15-hex-digit prefix read as an
 * integer, converted to double with round-to-nearest, divided by the double
 * nearest to 0xFFFFFFFFFFFFFFF (which is exactly 2^60). The empty
 * identifier is hashed like any other (posthog-node does; the Rust server
 * short-circuits to 0.0 - see docs/flags.md).
 */
#ifndef FLG_HASH_H
#define FLG_HASH_H

#include <stdbool.h>

#include "cm/buf.h"

double flg_hash(cm_slice_t prefix, cm_slice_t id, cm_slice_t salt);

/* sha1("<key>.<id>"): condition rollout. */
double flg_hash_rollout(cm_slice_t flag_key, cm_slice_t id);
/* sha1("<key>.<id>variant"): multivariate variant choice. */
double flg_hash_variant(cm_slice_t flag_key, cm_slice_t id);
/* sha1("holdout-<id>"): experiment holdout (the holdout id is not hashed). */
double flg_hash_holdout(cm_slice_t id);

/* In rollout iff hash <= pct / 100 (the SDK's "out iff hash > pct/100"). */
static inline bool flg_in_rollout(double hash, double pct)
{
    return !(hash > pct / 100.0);
}

#endif
