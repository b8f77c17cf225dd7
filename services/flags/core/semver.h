/*
 * semver.h - the two version comparisons flags use.
 *
 * posthog-node ("node"): trim, drop one leading v/V, cut at the first '-'
 * and '+', split on '.', and read up to three parts as decimal numbers
 * (missing or empty parts are 0, extra parts ignored, a part with a leading
 * zero or a non-digit is invalid). Pre-release tags play no part in the
 * comparison of the (major, minor, patch) tuples.
 *
 * The server ("full"): drop one leading v, trim, strip leading zeros from
 * the numeric core, pad it to three parts, then parse as SemVer 2.0.0 and
 * compare by SemVer precedence (a pre-release sorts below its release,
 * identifiers compared numerically or by ASCII; build metadata ignored).
 * Ranges follow Cargo's rules: a pre-release version only satisfies a range
 * whose lower bound is a pre-release of the same major.minor.patch.
 *
 * Nothing here allocates: pre-release and build slices point into the text.
 */
#ifndef FLG_SEMVER_H
#define FLG_SEMVER_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"

typedef enum { FLG_SEMRANGE_TILDE, FLG_SEMRANGE_CARET, FLG_SEMRANGE_WILDCARD } flg_semrange_kind_t;

/* ---- posthog-node ---- */
typedef struct {
    double v[3]; /* parseInt results: huge parts round like JavaScript numbers */
} flg_semtuple_t;

typedef struct {
    flg_semtuple_t lo, hi; /* lo <= version < hi */
} flg_semrange_t;

bool flg_semver_node_parse(cm_slice_t text, flg_semtuple_t *out);
bool flg_semver_node_range(flg_semrange_kind_t kind, cm_slice_t text, flg_semrange_t *out);
int flg_semtuple_cmp(const flg_semtuple_t *a, const flg_semtuple_t *b);
bool flg_semrange_contains(const flg_semrange_t *r, const flg_semtuple_t *v);

/* ---- full SemVer (the server's parser) ---- */
typedef struct {
    uint64_t core[3];
    cm_slice_t pre;   /* without the '-', empty if none */
    cm_slice_t build; /* without the '+', empty if none */
} flg_semver_t;

typedef struct {
    bool any;        /* "*" / "x": every release matches */
    flg_semver_t lo; /* inclusive */
    flg_semver_t hi; /* exclusive; hi_open = no upper bound */
    bool hi_open;
} flg_semreq_t;

bool flg_semver_parse(cm_slice_t text, flg_semver_t *out);
int flg_semver_cmp(const flg_semver_t *a, const flg_semver_t *b);
bool flg_semreq_parse(flg_semrange_kind_t kind, cm_slice_t text, flg_semreq_t *out);
bool flg_semreq_matches(const flg_semreq_t *r, const flg_semver_t *v);

#endif
