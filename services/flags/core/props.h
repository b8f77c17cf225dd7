/*
 * props.h - property filters: every operator, as posthog-node and as the
 * flags server evaluate it.
 *
 * Three entry points share one preparation of the filter value:
 *   flg_prop_match_node    posthog-node 5.70's matchFeatureFlagProperty,
 *                          including when it gives up (FLG_M_INC): a missing
 *                          property, an operator it does not know, a whole
 *                          number in `exact`, an unparseable date or
 *                          version, a regex only the server can run;
 *   flg_prop_match_server  the Rust service's match_property in its
 *                          non-partial mode (a missing property is absent:
 *                          `is_not` / `not_*` true, the rest false);
 *   flg_prop_match         the product rule: posthog-node's answer when it
 *                          has one, the server's otherwise.
 * Dates are read in the project's time zone (UTC without one); `now` is a
 * parameter, so matching stays a pure function.
 */
#ifndef FLG_PROPS_H
#define FLG_PROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/arena.h"
#include "cm/buf.h"
#include "cm/json.h"
#include "core/dates.h"
#include "core/model.h"

typedef enum {
    FLG_M_FALSE = 0,
    FLG_M_TRUE = 1,
    FLG_M_INC,       /* posthog-node cannot decide (InconclusiveMatchError) */
    FLG_M_INC_REGEX, /* the same, because a regex needs the server's engine */
    FLG_M_SERVER,    /* posthog-node must ask the server (RequiresServerEvaluation) */
    FLG_M_ERROR      /* nobody can compute it here: the flag is reported as failed */
} flg_match_t;

static inline bool flg_m_decided(flg_match_t m)
{
    return m == FLG_M_FALSE || m == FLG_M_TRUE;
}

/*
 * The properties one filter reads: obj, then the layers under it for keys
 * obj lacks (the request's properties over GeoIP's over the stored ones).
 * synth_key/synth_val answer one key no layer has (the SDK's injected
 * distinct_id / $group_key); backfill_initial lets the server read
 * $initial_<x> from <x>.
 */
#define FLG_BAG_UNDER 2
typedef struct {
    cm_json_t obj;
    cm_slice_t synth_key;
    cm_json_t synth_val;
    bool backfill_initial;
    const cm_json_index_t *ix;      /* obj's index, or NULL: lookups scan obj */
    cm_json_t under[FLG_BAG_UNDER]; /* none where there is no such layer */
    const cm_json_index_t *under_ix[FLG_BAG_UNDER];
} flg_bag_t;

/* Per-evaluation settings and scratch space. */
typedef struct {
    int64_t now_ms;
    const flg_tz_t *tz;  /* NULL: UTC */
    bool explicit_exact; /* property_matching_version 2 */
    cm_buf_t a, b;       /* scratch, reused */
    flg_rx_budget_t rx;  /* regex time left for this evaluation */
} flg_pctx_t;

/* Prepares f->prep from f->op and f->value (called once, at load). */
void flg_prep_filter(flg_filter_t *f, cm_arena_t *arena);

flg_match_t flg_prop_match_node(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc);
flg_match_t flg_prop_match_server(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc);
flg_match_t flg_prop_match(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc);

/* The value of key in the first layer that has it, or none. */
cm_json_t flg_bag_find(const flg_bag_t *bag, cm_slice_t key);
/* The value the filter's key reads, the server's $initial_ back-fill included or not. */
cm_json_t flg_bag_get(const flg_bag_t *bag, cm_slice_t key, bool server);

#endif
