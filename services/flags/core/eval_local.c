/*
 * eval_local.c - posthog-node 5.70's local evaluation of one flag
 * (computeFlagValueLocally / matchFeatureFlagProperties / isConditionMatch
 * / evaluateFlagDependency), reproduced decision for decision, including
 * when it gives up. Its value is the answer whenever it reaches one.
 *
 * Where it gives up matters as much as what it answers:
 *   - in a condition, an inconclusive filter does not stop the loop; a
 *     later false filter still rules the condition out;
 *   - an inconclusive condition does not stop the flag; a later condition
 *     may still match (unless an earlier regex-deferred condition would
 *     have produced a different value);
 *   - "requires server evaluation" (a static cohort) stops the whole flag.
 * The reason and condition index that go with a decided value are tracked
 * with the server's bookkeeping, so a decided flag reports what the server
 * would. Early access is applied first, as on the server (the SDK has none).
 */
#include <string.h>

#include "cm/common.h"
#include "core/eval_int.h"
#include "core/hash.h"

typedef enum { C_MATCH, C_NO_MATCH, C_OUT_OF_ROLLOUT } cond_outcome_t;

/* ---- cohorts, as the SDK walks them (against the condition's bag) ------------------ */

typedef struct {
    ev_t *ev;
    const flg_bag_t *bag;
} node_env_t;

static flg_match_t node_leaf(void *ud, const flg_filter_t *f, bool server)
{
    node_env_t *ne = ud;
    (void)server;
    if (f->type == FLG_PT_FLAG)
        return ev_local_dep(ne->ev, f);
    return flg_prop_match_node(f, ne->bag, &ne->ev->pc);
}

flg_match_t ev_local_cohort(ev_t *ev, const flg_filter_t *f, const flg_bag_t *bag)
{
    node_env_t ne = {ev, bag};
    flg_cohort_env_t env = {node_leaf, NULL, &ne, 0, &ev->budget};
    return flg_cohort_match(f, &env, false);
}

/* ---- flag dependencies ---------------------------------------------------------------- */

/* The value a dependency has for posthog-node, or why it has none. */
static flg_match_t dep_value(ev_t *ev, int32_t d, const flg_result_t **out)
{
    static const flg_result_t off = {.state = FLG_RES_OK, .condition_index = -1};
    const flg_flag_t *df = flg_snapshot_flag(ev->s, (uint32_t)d);
    if (ev->filtered[d] || (!df->invalid && !df->active)) {
        *out = &off; /* filtered out or inactive: false */
        return FLG_M_TRUE;
    }
    return ev_local_flag(ev, d, out);
}

flg_match_t ev_local_dep(ev_t *ev, const flg_filter_t *f)
{
    if (!f->has_chain || !f->chain_is_array || f->nchain == 0)
        return FLG_M_INC; /* missing, malformed or circular (an empty chain) */
    for (uint32_t k = 0; k < f->nchain; k++)
        if (f->chain[k] < 0)
            return FLG_M_INC; /* a dependency with no definition */
    for (uint32_t k = 0; k < f->nchain; k++) {
        const flg_result_t *r;
        flg_match_t m = dep_value(ev, f->chain[k], &r);
        if (m == FLG_M_SERVER)
            return FLG_M_SERVER;
        if (m != FLG_M_TRUE)
            return m == FLG_M_INC_REGEX ? FLG_M_INC_REGEX : FLG_M_INC;
    }
    if (f->target < 0)
        return FLG_M_FALSE; /* the SDK compares against undefined */
    const flg_result_t *r;
    flg_match_t m = dep_value(ev, f->target, &r);
    if (m != FLG_M_TRUE)
        return m == FLG_M_SERVER      ? FLG_M_SERVER
               : m == FLG_M_INC_REGEX ? FLG_M_INC_REGEX
                                      : FLG_M_INC;
    return ev_dep_holds(f->value, r) ? FLG_M_TRUE : FLG_M_FALSE;
}

/* ---- one condition (isConditionMatch) ---------------------------------------------------- */

static flg_match_t node_filter(ev_t *ev, const flg_filter_t *f, const flg_bag_t *bag)
{
    if (f->type == FLG_PT_COHORT)
        return ev_local_cohort(ev, f, bag);
    if (f->type == FLG_PT_FLAG)
        return ev_local_dep(ev, f);
    return flg_prop_match_node(f, bag, &ev->pc);
}

/* FLG_M_TRUE with *out set, or why the condition is undecided. */
static flg_match_t node_condition(ev_t *ev, const flg_flag_t *fl, const flg_condition_t *c,
                                  cm_slice_t bucket, const flg_bag_t *bag, cond_outcome_t *out)
{
    bool inc = false, regex = false, server = false;
    for (uint32_t i = 0; i < c->nfilters; i++) {
        flg_match_t m = node_filter(ev, &c->filters[i], bag);
        if (m == FLG_M_FALSE) {
            *out = C_NO_MATCH;
            return FLG_M_TRUE;
        }
        if (m == FLG_M_TRUE)
            continue;
        if (m == FLG_M_ERROR) {
            if (inc)
                break; /* stop the condition there, as inconclusive */
            return FLG_M_ERROR;
        }
        if (m == FLG_M_SERVER && !inc)
            server = true; /* only the first unresolved filter can send the flag to the server */
        regex |= m == FLG_M_INC_REGEX;
        inc = true;
    }
    if (server)
        return FLG_M_SERVER;
    if (inc)
        return regex ? FLG_M_INC_REGEX : FLG_M_INC;
    *out = ev_out_of_rollout(fl, c, bucket) ? C_OUT_OF_ROLLOUT : C_MATCH;
    return FLG_M_TRUE;
}

/* ---- the condition loop (matchFeatureFlagProperties) ---------------------------------------- */

/* The values earlier regex-deferred conditions could have produced. */
typedef struct {
    bool any;
    bool has_false, has_true;
    cm_slice_t variants[8];
    uint32_t nvariants;
    bool overflow;
} deferred_t;

static void defer_value(deferred_t *d, bool enabled, cm_slice_t variant)
{
    d->any = true;
    if (!enabled)
        d->has_false = true;
    else if (!variant.p)
        d->has_true = true;
    else if (d->nvariants < CM_ARRAY_LEN(d->variants))
        d->variants[d->nvariants++] = variant;
    else
        d->overflow = true;
}

/* Some deferred value differs from the chosen one (true or a variant). */
static bool deferred_differs(const deferred_t *d, cm_slice_t chosen)
{
    if (d->has_false || d->overflow)
        return true;
    if (d->has_true && chosen.p)
        return true;
    for (uint32_t i = 0; i < d->nvariants; i++)
        if (!chosen.p || !cm_slice_eq(d->variants[i], chosen))
            return true;
    return false;
}

typedef struct {
    cm_slice_t bucket;
    flg_bag_t bag;
} target_t;

/* Per-condition override of the aggregation, the SDK's way. false: skip the condition. */
static bool condition_target(ev_t *ev, const flg_flag_t *f, const flg_condition_t *c,
                             const target_t *flag_level, target_t *t)
{
    *t = *flag_level;
    if (c->agg_state != FLG_AGG_SET || c->agg == f->agg)
        return true; /* absent, null, or the flag's own: the flag-level target */
    cm_slice_t name = ev_group_name(ev, c->agg);
    cm_json_t key = ev_group_key(ev, name);
    if (!cm_json_exists(key))
        return false;
    t->bag = ev_group_bag(ev, name, key);
    t->bucket = ev_js_string(ev, key);
    return true;
}

static flg_match_t match_conditions(ev_t *ev, const flg_flag_t *f, const target_t *flag_level,
                                    flg_result_t *r)
{
    if (f->has_holdout) {
        double h = flg_hash_holdout(flag_level->bucket);
        if (f->holdout_pct == 100 || !(h > f->holdout_pct / 100.0)) {
            ev_set_match(r, f, f->holdout_variant, FLG_REASON_HOLDOUT_CONDITION_VALUE, -1);
            return FLG_M_TRUE;
        }
    }
    ev_track_t tr;
    ev_track_init(&tr);
    /* not "= {0}": zeroing the variants array for every flag was 2 % of an
     * evaluation of 1,000 flags (rep stos); only nvariants of them are read */
    deferred_t def;
    def.any = def.has_false = def.has_true = def.overflow = false;
    def.nvariants = 0;
    bool inc = false;
    for (uint32_t i = 0; i < f->nconds; i++) {
        const flg_condition_t *c = &f->conds[i];
        target_t t;
        if (!condition_target(ev, f, c, flag_level, &t)) {
            ev_track(&tr, FLG_REASON_NO_GROUP_TYPE, (int32_t)i);
            tr.skipped = true;
            continue;
        }
        cond_outcome_t co;
        flg_match_t m = node_condition(ev, f, c, t.bucket, &t.bag, &co);
        if (m == FLG_M_SERVER || m == FLG_M_ERROR)
            return m;
        if (m != FLG_M_TRUE) {
            inc = true;
            if (m == FLG_M_INC_REGEX) {
                if (f->early_exit && ev_out_of_rollout(f, c, t.bucket))
                    defer_value(&def, false, CM_SLICE_NULL);
                else
                    defer_value(&def, true, ev_variant_for(f, c, t.bucket));
            }
            continue;
        }
        if (co == C_MATCH) {
            cm_slice_t v = ev_variant_for(f, c, t.bucket);
            if (def.any && deferred_differs(&def, v))
                return FLG_M_INC;
            ev_set_match(r, f, v, FLG_REASON_CONDITION_MATCH, (int32_t)i);
            return FLG_M_TRUE;
        }
        ev_track(&tr,
                 co == C_OUT_OF_ROLLOUT ? FLG_REASON_OUT_OF_ROLLOUT_BOUND
                                        : FLG_REASON_NO_CONDITION_MATCH,
                 (int32_t)i);
        if (co == C_OUT_OF_ROLLOUT && f->early_exit) {
            if (inc)
                return FLG_M_INC;
            break;
        }
    }
    if (inc)
        return FLG_M_INC;
    ev_set_nomatch(r, &tr);
    return FLG_M_TRUE;
}

/* ---- the flag (computeFlagValueLocally) ------------------------------------------------------ */

static flg_match_t node_flag_body(ev_t *ev, const flg_flag_t *f, flg_result_t *r)
{
    if (f->invalid)
        return FLG_M_ERROR;
    if (!f->active) {
        ev_track_t t = {FLG_REASON_FLAG_DISABLED, -1, false};
        ev_set_nomatch(r, &t);
        return FLG_M_TRUE;
    }
    if (ev_early_access(ev, f, r))
        return r->state == FLG_RES_OK ? FLG_M_TRUE : FLG_M_ERROR;
    if (f->experience_continuity)
        return FLG_M_INC;
    target_t t;
    if (f->agg >= 0) {
        cm_slice_t name = ev_group_name(ev, f->agg);
        if (!name.p)
            return FLG_M_INC; /* unknown group type index */
        cm_json_t key = ev_group_key(ev, name);
        if (!cm_json_exists(key)) {
            ev_track_t tr;
            ev_track_init(&tr);
            for (uint32_t i = 0; i < f->nconds; i++)
                ev_track(&tr, FLG_REASON_NO_GROUP_TYPE, (int32_t)i);
            tr.skipped = f->nconds > 0;
            ev_set_nomatch(r, &tr);
            return FLG_M_TRUE;
        }
        t.bag = ev_group_bag(ev, name, key);
        t.bucket = ev_js_string(ev, key);
    } else {
        t.bag = ev_person_bag(ev);
        t.bucket = ev->ctx->distinct_id.p ? ev->ctx->distinct_id : CM_SLICE_LIT("");
        if (f->device_bucketing) {
            cm_json_t dev = ev_person_get(ev, CM_SLICE_LIT("$device_id"));
            if (!cm_json_exists(dev) || cm_json_is_null(dev) ||
                cm_json_str_eq(dev, CM_SLICE_LIT("")))
                return FLG_M_INC;
            t.bucket = ev_js_string(ev, dev);
        }
    }
    return match_conditions(ev, f, &t, r);
}

flg_match_t ev_local_flag(ev_t *ev, int32_t i, const flg_result_t **out)
{
    ev_slot_t *sl = &ev->slots[i];
    *out = &sl->node_r;
    if (sl->node_state == EV_DONE)
        return sl->node_m;
    if (sl->node_state == EV_BUSY || ev->depth >= EV_MAX_DEPTH)
        return FLG_M_ERROR; /* a cycle: the SDK would not resolve it either */
    sl->node_state = EV_BUSY;
    ev->depth++;
    sl->node_m = node_flag_body(ev, flg_snapshot_flag(ev->s, (uint32_t)i), &sl->node_r);
    ev->depth--;
    sl->node_state = EV_DONE;
    return sl->node_m;
}
