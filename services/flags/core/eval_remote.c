/*
 * eval_remote.c - the flags server's algorithm for one flag, used when
 * posthog-node would not decide it; and early access, which only the
 * server implements.
 *
 * Filters are still answered the SDK's way wherever the SDK has an answer
 * (flg_prop_match and the "hybrid" cohort and dependency matchers below),
 * so one filter never means two different things; the server's reading
 * fills in only what the SDK leaves open. Beyond that the differences are
 * the server's own: filters are routed by type (person filters read person
 * properties, group filters the group's, cohorts the person's), a missing
 * group or device id makes the condition no_group_type / out_of_rollout,
 * a dependency on a flag that does not exist gives missing_dependency.
 */
#include <string.h>

#include "core/eval_int.h"
#include "core/hash.h"
#include "compat/jsconv.h"

/* ---- identifiers --------------------------------------------------------------------- */

/* A group key as the server reads it: a string, a number's text, else none. */
static cm_slice_t server_group_key(ev_t *ev, cm_json_t key)
{
    if (cm_json_type(key) == CM_JSON_STRING)
        return ev_js_string(ev, key);
    if (cm_json_type(key) == CM_JSON_NUMBER)
        return cm_json_raw(key);
    return CM_SLICE_LIT("");
}

static cm_slice_t distinct_id(const ev_t *ev)
{
    return ev->ctx->distinct_id.p ? ev->ctx->distinct_id : CM_SLICE_LIT("");
}

/* A person property holding a non-empty string, else a NULL slice. */
static cm_slice_t person_string(ev_t *ev, const char *key)
{
    cm_json_t v = ev_person_get(ev, cm_slice_from_cstr(key));
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_str_eq(v, CM_SLICE_LIT("")))
        return CM_SLICE_NULL;
    return ev_js_string(ev, v);
}

static cm_slice_t device_id(ev_t *ev)
{
    if (ev->ctx->device_id.len)
        return ev->ctx->device_id;
    return person_string(ev, "$device_id");
}

static cm_slice_t anon_id(ev_t *ev)
{
    if (ev->ctx->anon_distinct_id.len)
        return ev->ctx->anon_distinct_id;
    cm_slice_t p = person_string(ev, "$anon_distinct_id");
    return p.p ? p : distinct_id(ev);
}

/* The identifier person conditions hash; a NULL slice if the device id is missing. */
static cm_slice_t person_bucket(ev_t *ev, const flg_flag_t *f)
{
    if (f->device_bucketing)
        return device_id(ev);
    if (f->experience_continuity) {
        cm_json_t o = ev_lookup(ev->ctx->hash_key_overrides, ev->overrides_ix, f->key);
        if (cm_json_type(o) == CM_JSON_STRING)
            return ev_js_string(ev, o);
        return anon_id(ev);
    }
    return distinct_id(ev);
}

/* The holdout hashes the flag-level identifier (never the stored override). */
static cm_slice_t holdout_bucket(ev_t *ev, const flg_flag_t *f)
{
    if (f->agg >= 0) {
        cm_slice_t key = server_group_key(ev, ev_group_key(ev, ev_group_name(ev, f->agg)));
        return key.len ? key : CM_SLICE_NULL;
    }
    if (f->device_bucketing) {
        cm_slice_t d = device_id(ev);
        return d.p ? d : distinct_id(ev);
    }
    return f->experience_continuity ? anon_id(ev) : distinct_id(ev);
}

/* ---- filters ------------------------------------------------------------------------- */

typedef struct {
    ev_t *ev;
    const flg_bag_t *node_bag;   /* what the SDK would read: the condition's bag */
    const flg_bag_t *person_bag; /* what the server reads for cohorts */
} srv_env_t;

static flg_match_t hybrid_dep(ev_t *ev, const flg_filter_t *f)
{
    flg_match_t m = ev_local_dep(ev, f);
    if (flg_m_decided(m))
        return m;
    if (f->op != FLG_OP_FLAG_EVALUATES_TO && f->op != FLG_OP_EXACT)
        return FLG_M_FALSE;
    if (f->target < 0)
        return FLG_M_FALSE; /* reported as missing_dependency before we get here */
    const flg_flag_t *df = flg_snapshot_flag(ev->s, (uint32_t)f->target);
    static const flg_result_t off = {.state = FLG_RES_OK, .condition_index = -1};
    const flg_result_t *r = &off;
    if (!ev->filtered[f->target] && (df->invalid || df->active))
        r = ev_final(ev, f->target);
    if (r->state == FLG_RES_ERROR)
        return FLG_M_ERROR;
    return ev_dep_holds(f->value, r) ? FLG_M_TRUE : FLG_M_FALSE;
}

static flg_match_t hybrid_leaf(void *ud, const flg_filter_t *f, bool server)
{
    srv_env_t *se = ud;
    (void)server;
    if (f->type == FLG_PT_FLAG)
        return hybrid_dep(se->ev, f);
    flg_match_t m = flg_prop_match_node(f, se->node_bag, &se->ev->pc);
    if (flg_m_decided(m) || m == FLG_M_ERROR)
        return m;
    return flg_prop_match_server(f, se->person_bag, &se->ev->pc);
}

static int static_member(void *ud, const flg_filter_t *f)
{
    srv_env_t *se = ud;
    if (cm_json_type(se->ev->ctx->static_cohorts) != CM_JSON_ARRAY)
        return -1;
    return ev_static_member(se->ev, f) ? 1 : 0;
}

static flg_match_t hybrid_cohort(ev_t *ev, const flg_filter_t *f, const flg_bag_t *node_bag)
{
    flg_match_t m = ev_local_cohort(ev, f, node_bag);
    if (flg_m_decided(m))
        return m;
    flg_bag_t person = ev_person_bag(ev);
    srv_env_t se = {ev, node_bag, &person};
    flg_cohort_env_t env = {hybrid_leaf, static_member, &se, 0, &ev->budget};
    return flg_cohort_match(f, &env, true);
}

/* The bag the server routes a property filter to. */
static flg_bag_t routed_bag(ev_t *ev, const flg_filter_t *f, int32_t cond_agg)
{
    if (f->type != FLG_PT_GROUP)
        return ev_person_bag(ev);
    int32_t agg = f->group_type_index >= 0 ? f->group_type_index : cond_agg;
    cm_slice_t name = ev_group_name(ev, agg);
    return ev_group_bag(ev, name, ev_group_key(ev, name));
}

static flg_match_t server_filter(ev_t *ev, const flg_filter_t *f, const flg_bag_t *bag,
                                 int32_t cond_agg)
{
    if (f->type == FLG_PT_COHORT)
        return hybrid_cohort(ev, f, bag);
    if (f->type == FLG_PT_FLAG)
        return hybrid_dep(ev, f);
    flg_match_t m = flg_prop_match_node(f, bag, &ev->pc);
    if (flg_m_decided(m) || m == FLG_M_ERROR)
        return m;
    flg_bag_t routed = routed_bag(ev, f, cond_agg);
    return flg_prop_match_server(f, &routed, &ev->pc);
}

/* All filters of a condition: FALSE if any is false, else ERROR if any failed, else TRUE. */
static flg_match_t server_filters(ev_t *ev, const flg_condition_t *c, const flg_bag_t *bag,
                                  int32_t agg)
{
    bool failed = false;
    for (uint32_t i = 0; i < c->nfilters; i++) {
        flg_match_t m = server_filter(ev, &c->filters[i], bag, agg);
        if (m == FLG_M_FALSE)
            return FLG_M_FALSE;
        failed |= m == FLG_M_ERROR;
    }
    return failed ? FLG_M_ERROR : FLG_M_TRUE;
}

/* ---- early access --------------------------------------------------------------------- */

static bool super_keys_present(ev_t *ev, const flg_condition_t *c)
{
    for (uint32_t i = 0; i < c->nfilters; i++) {
        const flg_filter_t *f = &c->filters[i];
        if (f->type != FLG_PT_COHORT && f->type != FLG_PT_FLAG &&
            cm_json_exists(ev_person_get(ev, f->key)))
            return true;
    }
    return false;
}

bool ev_early_access(ev_t *ev, const flg_flag_t *f, flg_result_t *out)
{
    if (f->feature_enrollment) {
        cm_json_t v = ev_person_get(ev, f->enrollment_key);
        if (cm_json_exists(v)) {
            bool b = false, on = cm_json_str_eq(v, CM_SLICE_LIT("true"));
            if (cm_json_as_bool(v, &b) == 0 && b)
                on = true;
            ev_track_t t = {FLG_REASON_SUPER_CONDITION_VALUE, 0, false};
            if (on)
                ev_set_match(out, f, CM_SLICE_NULL, FLG_REASON_SUPER_CONDITION_VALUE, 0);
            else
                ev_set_nomatch(out, &t);
            return true;
        }
    }
    const flg_condition_t *sc = f->super_cond;
    if (!sc || !sc->nfilters || !super_keys_present(ev, sc))
        return false;
    flg_bag_t person = ev_person_bag(ev);
    flg_match_t m = server_filters(ev, sc, &person, -1);
    cm_slice_t bucket = person_bucket(ev, f);
    if (m == FLG_M_ERROR) {
        ev_set_error(out, "early access condition could not be computed");
    } else if (m == FLG_M_TRUE && bucket.p && !ev_out_of_rollout(f, sc, bucket)) {
        ev_set_match(out, f, ev_variant_for(f, sc, bucket), FLG_REASON_SUPER_CONDITION_VALUE, 0);
    } else {
        ev_track_t t = {FLG_REASON_SUPER_CONDITION_VALUE, 0, false};
        ev_set_nomatch(out, &t);
    }
    return true;
}

/* ---- the flag ------------------------------------------------------------------------------ */

static bool held_out(ev_t *ev, const flg_flag_t *f)
{
    if (!f->has_holdout)
        return false;
    cm_slice_t id = holdout_bucket(ev, f);
    if (!id.p)
        return false;
    return f->holdout_pct == 100 || !(flg_hash_holdout(id) > f->holdout_pct / 100.0);
}

static void server_conditions(ev_t *ev, const flg_flag_t *f, flg_result_t *r)
{
    ev_track_t tr;
    ev_track_init(&tr);
    for (uint32_t i = 0; i < f->nconds; i++) {
        const flg_condition_t *c = &f->conds[i];
        int32_t agg = c->agg_state == FLG_AGG_ABSENT ? f->agg
                      : c->agg_state == FLG_AGG_NULL ? -1
                                                     : c->agg;
        flg_bag_t bag;
        cm_slice_t bucket;
        if (agg >= 0) {
            cm_slice_t name = ev_group_name(ev, agg);
            cm_json_t key = ev_group_key(ev, name);
            bucket = server_group_key(ev, key);
            if (!name.p || !bucket.len) {
                ev_track(&tr, FLG_REASON_NO_GROUP_TYPE, (int32_t)i);
                tr.skipped = true;
                continue;
            }
            bag = ev_group_bag(ev, name, key);
        } else {
            bucket = person_bucket(ev, f);
            if (!bucket.p) { /* device-id bucketing without a device id */
                ev_track(&tr, FLG_REASON_OUT_OF_ROLLOUT_BOUND, (int32_t)i);
                continue;
            }
            bag = ev_person_bag(ev);
        }
        flg_match_t m = server_filters(ev, c, &bag, agg);
        if (m == FLG_M_ERROR) {
            ev_set_error(r, "a condition could not be computed");
            return;
        }
        if (m == FLG_M_FALSE) {
            ev_track(&tr, FLG_REASON_NO_CONDITION_MATCH, (int32_t)i);
            continue;
        }
        if (ev_out_of_rollout(f, c, bucket)) {
            ev_track(&tr, FLG_REASON_OUT_OF_ROLLOUT_BOUND, (int32_t)i);
            if (f->early_exit)
                break;
            continue;
        }
        ev_set_match(r, f, ev_variant_for(f, c, bucket), FLG_REASON_CONDITION_MATCH, (int32_t)i);
        return;
    }
    ev_set_nomatch(r, &tr);
}

void ev_remote_flag(ev_t *ev, int32_t i, flg_result_t *r)
{
    const flg_flag_t *f = flg_snapshot_flag(ev->s, (uint32_t)i);
    if (f->invalid) {
        ev_set_error(r, f->invalid);
        return;
    }
    if (!f->active) {
        ev_track_t t = {FLG_REASON_FLAG_DISABLED, -1, false};
        ev_set_nomatch(r, &t);
        return;
    }
    if (ev_early_access(ev, f, r))
        return;
    if (f->missing_dependency) {
        ev_track_t t = {FLG_REASON_MISSING_DEPENDENCY, -1, false};
        ev_set_nomatch(r, &t);
        return;
    }
    if (held_out(ev, f)) {
        ev_set_match(r, f, f->holdout_variant, FLG_REASON_HOLDOUT_CONDITION_VALUE, -1);
        return;
    }
    server_conditions(ev, f, r);
}
