/*
 * eval.c - flg_evaluate(): the driver, the memo, and helpers shared by the
 * posthog-node reading (eval_local.c) and the server reading
 * (eval_remote.c). See eval.h for the rules.
 */
#include "core/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/common.h"
#include "cm/alloc.h"
#include "core/eval_int.h"
#include "core/hash.h"
#include "compat/jsconv.h"

/* ---- reasons ------------------------------------------------------------------------- */

static int score(flg_reason_t r)
{
    switch (r) {
    case FLG_REASON_SUPER_CONDITION_VALUE: return 6;
    case FLG_REASON_HOLDOUT_CONDITION_VALUE: return 5;
    case FLG_REASON_CONDITION_MATCH: return 4;
    case FLG_REASON_OUT_OF_ROLLOUT_BOUND: return 3;
    case FLG_REASON_NO_CONDITION_MATCH: return 2;
    case FLG_REASON_NO_GROUP_TYPE: return 1;
    case FLG_REASON_FLAG_DISABLED: return 0;
    default: return -1; /* missing_dependency */
    }
}

void ev_track_init(ev_track_t *t)
{
    *t = (ev_track_t){FLG_REASON_NO_GROUP_TYPE, -1, false};
}

void ev_track(ev_track_t *t, flg_reason_t r, int32_t index)
{
    if (score(t->reason) <= score(r)) { /* ties move to the later condition */
        t->reason = r;
        t->index = index;
    }
}

const char *flg_reason_code(flg_reason_t r)
{
    static const char *const codes[] = {
        "condition_match", "no_condition_match",    "out_of_rollout_bound",
        "no_group_type",   "super_condition_value", "holdout_condition_value",
        "flag_disabled",   "missing_dependency",
    };
    return (unsigned)r < CM_ARRAY_LEN(codes) ? codes[r] : "unknown";
}

const char *flg_reason_description(const flg_result_t *r, char buf[48])
{
    switch (r->reason) {
    case FLG_REASON_CONDITION_MATCH:
        /* Once per flag and request: no printf. */
        memcpy(buf, "Matched condition set ", 22);
        cm_fmt_int64(buf + 22, (int64_t)r->condition_index + 1);
        return buf;
    case FLG_REASON_NO_CONDITION_MATCH:
        return r->groups_skipped ? "No matching condition set (group conditions were not "
                                   "evaluated because no group type was provided)"
                                 : "No matching condition set";
    case FLG_REASON_OUT_OF_ROLLOUT_BOUND: return "Out of rollout bound";
    case FLG_REASON_NO_GROUP_TYPE: return "No group type";
    case FLG_REASON_SUPER_CONDITION_VALUE: return "Super condition value";
    case FLG_REASON_HOLDOUT_CONDITION_VALUE: return "Holdout condition value";
    case FLG_REASON_FLAG_DISABLED: return "Feature flag is disabled";
    default: return "Flag cannot be evaluated due to missing dependency";
    }
}

/* ---- results -------------------------------------------------------------------------- */

static cm_json_t payload_for(const flg_flag_t *f, cm_slice_t variant)
{
    cm_json_t p = cm_json_get_s(f->payloads, variant.p ? variant : CM_SLICE_LIT("true"));
    return cm_json_is_null(p) ? CM_JSON_NONE_VALUE : p;
}

void ev_set_match(flg_result_t *r, const flg_flag_t *f, cm_slice_t variant, flg_reason_t reason,
                  int32_t index)
{
    *r = (flg_result_t){.state = FLG_RES_OK,
                        .enabled = true,
                        .variant = variant,
                        .reason = reason,
                        .condition_index = index,
                        .payload = payload_for(f, variant)};
}

void ev_set_nomatch(flg_result_t *r, const ev_track_t *t)
{
    *r = (flg_result_t){.state = FLG_RES_OK,
                        .reason = t->reason,
                        .condition_index = t->index,
                        .groups_skipped = t->skipped};
}

void ev_set_error(flg_result_t *r, const char *why)
{
    *r = (flg_result_t){.state = FLG_RES_ERROR, .condition_index = -1, .error = why};
}

bool ev_dep_holds(cm_json_t expected, const flg_result_t *dep)
{
    if (cm_json_type(expected) == CM_JSON_BOOL) {
        bool want = false;
        cm_json_as_bool(expected, &want);
        if (!dep->enabled)
            return !want;
        if (dep->variant.p) /* a variant counts as true, unless it is the empty string */
            return want && dep->variant.len > 0;
        return want;
    }
    if (cm_json_type(expected) == CM_JSON_STRING)
        return dep->enabled && dep->variant.p && cm_json_str_eq(expected, dep->variant);
    return false; /* numbers and arrays never match */
}

/* ---- bags and bucketing ------------------------------------------------------------------- */

flg_bag_t ev_person_bag(const ev_t *ev)
{
    const flg_context_t *c = ev->ctx;
    return (flg_bag_t){
        .obj = c->person_properties,
        .synth_key = CM_SLICE_LIT("distinct_id"),
        .synth_val = ev->distinct_json,
        .backfill_initial = true,
        .ix = ev->person_ix[0],
        .under = {c->geoip_properties, c->stored_person_properties},
        .under_ix = {ev->person_ix[1], ev->person_ix[2]},
    };
}

cm_json_t ev_person_get(const ev_t *ev, cm_slice_t key)
{
    flg_bag_t bag = ev_person_bag(ev);
    return flg_bag_find(&bag, key);
}

flg_bag_t ev_group_bag(const ev_t *ev, cm_slice_t name, cm_json_t key)
{
    cm_json_t obj = ev_lookup(ev->ctx->group_properties, ev->group_props_ix, name);
    const cm_json_index_t *ix = NULL;
    for (uint32_t i = 0; i < ev->ngroup_ix && obj.doc != NULL; i++)
        if (ev->group_obj[i] == obj.i)
            ix = ev->group_ix[i];
    flg_bag_t bag = {obj, CM_SLICE_LIT("$group_key"), key, false, ix};
    for (uint32_t i = ev->ctx->nstored_groups; i-- > 0;) { /* the last of a repeated type */
        if (cm_slice_eq(ev->ctx->stored_groups[i].type, name)) {
            bag.under[0] = ev->ctx->stored_groups[i].properties;
            bag.under_ix[0] = ev->stored_group_ix[i];
            break;
        }
    }
    return bag;
}

cm_slice_t ev_group_name(const ev_t *ev, int32_t agg)
{
    cm_slice_t name = agg < 0 ? CM_SLICE_NULL : flg_snapshot_group_type(ev->s, agg);
    return name.len ? name : CM_SLICE_NULL; /* an empty name is no name (the SDK tests it falsy) */
}

cm_json_t ev_group_key(const ev_t *ev, cm_slice_t name)
{
    return name.p ? ev_lookup(ev->ctx->groups, ev->groups_ix, name) : CM_JSON_NONE_VALUE;
}

cm_slice_t ev_js_string(ev_t *ev, cm_json_t v)
{
    if (cm_json_type(v) == CM_JSON_STRING && !cm_json_str_has_escapes(v))
        return cm_json_str_inner(v);
    cm_buf_t b = CM_BUF_INIT;
    flg_js_string(v, &b);
    cm_slice_t out = cm_arena_dup(&ev->arena, cm_buf_slice(&b));
    cm_buf_free(&b);
    return out;
}

cm_slice_t ev_variant_for(const flg_flag_t *f, const flg_condition_t *c, cm_slice_t bucket)
{
    if (c->variant.len) /* an override names one of the flag's variants, else it is ignored */
        for (uint32_t i = 0; i < f->nvariants; i++)
            if (cm_slice_eq(f->variants[i].key, c->variant))
                return f->variants[i].key;
    if (!f->nvariants)
        return CM_SLICE_NULL;
    double h = flg_hash_variant(f->key, bucket), lo = 0;
    for (uint32_t i = 0; i < f->nvariants; i++) {
        double hi = lo + f->variants[i].pct / 100.0;
        if (h >= lo && h < hi)
            return f->variants[i].key;
        lo = hi;
    }
    return CM_SLICE_NULL; /* percentages short of 100: plain true */
}

bool ev_out_of_rollout(const flg_flag_t *f, const flg_condition_t *c, cm_slice_t bucket)
{
    /* The hash never exceeds 1.0, so 100 % takes everyone without hashing. */
    return c->has_rollout && c->rollout < 100 &&
           !flg_in_rollout(flg_hash_rollout(f->key, bucket), c->rollout);
}

/* ---- the memo ------------------------------------------------------------------------------- */

const flg_result_t *ev_final(ev_t *ev, int32_t i)
{
    ev_slot_t *sl = &ev->slots[i];
    if (sl->final_state == EV_DONE)
        return &sl->final_r;
    if (sl->final_state == EV_BUSY || ev->depth >= EV_MAX_DEPTH) {
        static const flg_result_t cycle = {
            .state = FLG_RES_ERROR, .condition_index = -1, .error = "dependency cycle"};
        return &cycle;
    }
    sl->final_state = EV_BUSY;
    ev->depth++;
    const flg_result_t *node = NULL;
    if (ev_local_flag(ev, i, &node) == FLG_M_TRUE)
        sl->final_r = *node;
    else
        ev_remote_flag(ev, i, &sl->final_r);
    ev->depth--;
    sl->final_state = EV_DONE;
    return &sl->final_r;
}

/* ---- request-level filtering ---------------------------------------------------------------- */

static bool runtime_keeps(flg_runtime_t want, flg_flag_runtime_t has)
{
    switch (want) {
    case FLG_RUNTIME_ALL: return true;
    case FLG_RUNTIME_CLIENT: return has != FLG_RT_SERVER;
    case FLG_RUNTIME_SERVER: return has != FLG_RT_CLIENT;
    default: return has == FLG_RT_ALL;
    }
}

/* A flag tagged with evaluation contexts is kept when one of its tags is
 * among the request's (exact, case-sensitive). */
static bool contexts_keep(const ev_t *ev, cm_json_t tags)
{
    if (cm_json_len(ev->ctx->evaluation_contexts) == 0 || cm_json_len(tags) == 0)
        return true;
    cm_json_iter_t it = cm_json_iter(tags);
    cm_json_t k, t;
    cm_buf_t tag = CM_BUF_INIT;
    bool keep = false;
    while (!keep && cm_json_next(&it, &k, &t)) {
        cm_buf_reset(&tag);
        if (cm_json_str_append(t, &tag) == 0)
            keep = ev_set_has(&ev->contexts_set, cm_buf_slice(&tag));
    }
    cm_buf_free(&tag);
    return keep;
}

static bool requested(const ev_t *ev, const flg_flag_t *f)
{
    cm_json_t keys = ev->ctx->flag_keys;
    if (!cm_json_exists(keys) || cm_json_is_null(keys))
        return true;
    return f->key.p && ev_set_has(&ev->keys_set, f->key);
}

/* distinct_id as a JSON string value, for the SDK's injected person property. */
static void make_aux(ev_t *ev)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_putc(&b, '[');
    cm_json_quote_lossy(&b, ev->ctx->distinct_id.p ? ev->ctx->distinct_id : CM_SLICE_LIT(""));
    cm_buf_putc(&b, ']');
    size_t len;
    char *text = cm_buf_detach(&b, &len);
    /* The document borrows its input, so the text lives in the evaluation arena. */
    cm_slice_t kept = cm_arena_dup(&ev->arena, (cm_slice_t){text, len});
    free(text);
    if (cm_json_parse(kept.p, kept.len, NULL, &ev->aux, NULL) == 0)
        ev->distinct_json = cm_json_at(cm_json_root(ev->aux), 0);
}

void flg_evaluate(const flg_snapshot_t *s, const flg_context_t *ctx, flg_eval_t *out)
{
    uint32_t n = flg_snapshot_nflags(s);
    ev_t ev = {.s = s, .ctx = ctx, .budget = EV_BUDGET, .arena = CM_ARENA_INIT};
    ev.pc = (flg_pctx_t){.now_ms = ctx->now_us / 1000 - (ctx->now_us % 1000 < 0),
                         .tz = ctx->tz,
                         .explicit_exact = flg_snapshot_explicit_exact(s),
                         .a = CM_BUF_INIT,
                         .b = CM_BUF_INIT,
                         .rx = {.limit_ns = ctx->regex_budget_ns}};
    ev_make_indexes(&ev);
    ev.slots = cm_xcalloc(n ? n : 1, sizeof *ev.slots);
    ev.filtered = cm_xcalloc(n ? n : 1, sizeof *ev.filtered);
    make_aux(&ev);
    for (uint32_t i = 0; i < n; i++) {
        const flg_flag_t *f = flg_snapshot_flag(s, i);
        ev.filtered[i] = !f->invalid && (!runtime_keeps(ctx->runtime, f->runtime) ||
                                         !contexts_keep(&ev, f->contexts));
    }
    *out = (flg_eval_t){.snap = s, .n = n};
    out->results = cm_xcalloc(n ? n : 1, sizeof *out->results);
    for (uint32_t i = 0; i < n; i++) {
        const flg_flag_t *f = flg_snapshot_flag(s, i);
        flg_result_t *r = &out->results[i];
        r->state = FLG_RES_SKIPPED;
        r->condition_index = -1;
        if (f->shadowed || ev.filtered[i] || !requested(&ev, f))
            continue;
        *r = *ev_final(&ev, (int32_t)i);
        if (!f->key.p && r->state == FLG_RES_ERROR) {
            out->errors = true; /* a flag without a usable key: reported, never listed */
            r->state = FLG_RES_SKIPPED;
        }
        if (r->state == FLG_RES_ERROR)
            out->errors = true;
    }
    out->regex_budget_spent = ev.pc.rx.exhausted;
    cm_buf_free(&ev.pc.a);
    cm_buf_free(&ev.pc.b);
    ev_free_indexes(&ev);
    cm_json_doc_free(ev.aux);
    free(ev.slots);
    free(ev.filtered);
    /* Variant and payload slices point into the snapshot, so the arena can go. */
    cm_arena_free(&ev.arena);
}

void flg_eval_free(flg_eval_t *e)
{
    if (!e)
        return;
    free(e->results);
    e->results = NULL;
    e->n = 0;
}
