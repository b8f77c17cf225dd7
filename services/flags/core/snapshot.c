/*
 * snapshot.c - see snapshot.h.
 *
 * Loading happens in three passes over the parsed document:
 *   1. group type mapping and cohorts (property groups, filters unresolved);
 *   2. flags, each parsed into flg_flag_t; the first structural problem
 *      marks the flag invalid and the rest of it is skipped;
 *   3. resolution: a key index over the flags (the last of a repeated key
 *      wins, earlier ones are "shadowed"), then every filter's references
 *      (dependency chains, target flags, cohorts) become pointers/indices.
 * Type rules are strict where the SDK would coerce JavaScript-style (a
 * string rollout percentage, a numeric variant key): such a definition is
 * not something PostHog ever serves, and refusing it keeps evaluation
 * simple. Everything lives in one arena, freed with the snapshot.
 */
#include "core/snapshot.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/arena.h"
#include "cm/common.h"
#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/hashfn.h"
#include "compat/jsconv.h"
#include "core/props.h"

typedef struct {
    cm_slice_t id;
    flg_pgroup_t *group;
} cohort_entry_t;

typedef struct {
    cm_slice_t index; /* the mapping's key, e.g. "0" */
    cm_slice_t name;
} group_type_t;

struct flg_snapshot {
    atomic_int refs;
    char *src;
    cm_json_doc_t *doc;
    cm_arena_t arena;
    flg_flag_t *flags;
    uint32_t nflags;
    int32_t *slots; /* open-addressing index: flag index + 1, 0 = empty */
    uint32_t nslots;
    cohort_entry_t *cohorts;
    uint32_t ncohorts;
    group_type_t *types;
    uint32_t ntypes;
    flg_regex_t **regexes;
    uint32_t nregexes, capregexes;
    bool explicit_exact;
};

typedef struct {
    flg_snapshot_t *s;
    const char *why; /* first problem in the flag being parsed */
} loader_t;

/* ---- typed optional fields: absent and null take the default ------------------------ */

static bool absent(cm_json_t v)
{
    return !cm_json_exists(v) || cm_json_is_null(v);
}

static bool opt_bool(cm_json_t v, bool dflt, bool *out)
{
    if (absent(v)) {
        *out = dflt;
        return true;
    }
    return cm_json_as_bool(v, out) == 0;
}

static bool opt_int(cm_json_t v, int64_t dflt, int64_t *out)
{
    if (absent(v)) {
        *out = dflt;
        return true;
    }
    return cm_json_as_int64(v, out) == 0;
}

static bool fail(loader_t *L, const char *why)
{
    if (!L->why)
        L->why = why;
    return false;
}

static cm_slice_t dup_json_str(loader_t *L, cm_json_t v)
{
    if (!cm_json_str_has_escapes(v))
        return cm_arena_dup(&L->s->arena, cm_json_str_inner(v));
    cm_buf_t tmp = CM_BUF_INIT;
    cm_json_str_append(v, &tmp);
    cm_slice_t out = cm_arena_dup(&L->s->arena, cm_buf_slice(&tmp));
    cm_buf_free(&tmp);
    return out;
}

static void keep_regex(flg_snapshot_t *s, flg_regex_t *re)
{
    if (!re)
        return;
    if (s->nregexes == s->capregexes) {
        s->capregexes = s->capregexes ? s->capregexes * 2 : 8;
        s->regexes = cm_xrealloc(s->regexes, s->capregexes * sizeof *s->regexes);
    }
    s->regexes[s->nregexes++] = re;
}

/* ---- property filters ------------------------------------------------------------------- */

static const struct {
    const char *name;
    flg_op_t op;
} OPS[] = {
    {"exact", FLG_OP_EXACT},
    {"is_not", FLG_OP_IS_NOT},
    {"icontains", FLG_OP_ICONTAINS},
    {"not_icontains", FLG_OP_NOT_ICONTAINS},
    {"icontains_multi", FLG_OP_ICONTAINS_MULTI},
    {"not_icontains_multi", FLG_OP_NOT_ICONTAINS_MULTI},
    {"starts_with", FLG_OP_STARTS_WITH},
    {"not_starts_with", FLG_OP_NOT_STARTS_WITH},
    {"ends_with", FLG_OP_ENDS_WITH},
    {"not_ends_with", FLG_OP_NOT_ENDS_WITH},
    {"regex", FLG_OP_REGEX},
    {"not_regex", FLG_OP_NOT_REGEX},
    {"gt", FLG_OP_GT},
    {"gte", FLG_OP_GTE},
    {"lt", FLG_OP_LT},
    {"lte", FLG_OP_LTE},
    {"between", FLG_OP_BETWEEN},
    {"not_between", FLG_OP_NOT_BETWEEN},
    {"is_set", FLG_OP_IS_SET},
    {"is_not_set", FLG_OP_IS_NOT_SET},
    {"is_date_before", FLG_OP_IS_DATE_BEFORE},
    {"is_date_after", FLG_OP_IS_DATE_AFTER},
    {"is_date_exact", FLG_OP_IS_DATE_EXACT},
    {"semver_eq", FLG_OP_SEMVER_EQ},
    {"semver_neq", FLG_OP_SEMVER_NEQ},
    {"semver_gt", FLG_OP_SEMVER_GT},
    {"semver_gte", FLG_OP_SEMVER_GTE},
    {"semver_lt", FLG_OP_SEMVER_LT},
    {"semver_lte", FLG_OP_SEMVER_LTE},
    {"semver_tilde", FLG_OP_SEMVER_TILDE},
    {"semver_caret", FLG_OP_SEMVER_CARET},
    {"semver_wildcard", FLG_OP_SEMVER_WILDCARD},
    {"in", FLG_OP_IN},
    {"not_in", FLG_OP_NOT_IN},
    {"flag_evaluates_to", FLG_OP_FLAG_EVALUATES_TO},
};

static const struct {
    const char *name;
    flg_ptype_t type;
} TYPES[] = {
    {"person", FLG_PT_PERSON},
    {"group", FLG_PT_GROUP},
    {"cohort", FLG_PT_COHORT},
    {"flag", FLG_PT_FLAG},
    {"person_metadata", FLG_PT_PERSON_METADATA},
};

static bool parse_type(cm_json_t v, flg_ptype_t *out)
{
    *out = FLG_PT_PERSON;
    if (absent(v))
        return true;
    if (cm_json_type(v) != CM_JSON_STRING)
        return false;
    *out = FLG_PT_OTHER;
    for (size_t i = 0; i < CM_ARRAY_LEN(TYPES); i++)
        if (cm_json_str_eq(v, cm_slice_from_cstr(TYPES[i].name)))
            *out = TYPES[i].type;
    return true;
}

static bool parse_op(cm_json_t v, flg_op_t *out)
{
    *out = FLG_OP_EXACT;
    if (absent(v))
        return true;
    if (cm_json_type(v) != CM_JSON_STRING)
        return false;
    *out = FLG_OP_UNKNOWN;
    for (size_t i = 0; i < CM_ARRAY_LEN(OPS); i++)
        if (cm_json_str_eq(v, cm_slice_from_cstr(OPS[i].name)))
            *out = OPS[i].op;
    return true;
}

/* The chain is kept as raw keys until pass 3 turns them into indices. */
static bool parse_chain(loader_t *L, cm_json_t chain, flg_filter_t *f)
{
    f->has_chain = cm_json_exists(chain);
    f->chain_is_array = cm_json_type(chain) == CM_JSON_ARRAY;
    if (!f->chain_is_array)
        return true;
    f->chain_json = chain;
    f->nchain = cm_json_len(chain);
    f->chain = cm_arena_alloc(&L->s->arena, (f->nchain ? f->nchain : 1) * sizeof *f->chain);
    cm_json_iter_t it = cm_json_iter(chain);
    cm_json_t k, e;
    while (cm_json_next(&it, &k, &e))
        if (cm_json_type(e) != CM_JSON_STRING)
            return fail(L, "dependency_chain holds a non-string");
    return true;
}

static bool parse_filter(loader_t *L, cm_json_t j, flg_filter_t *f)
{
    if (cm_json_type(j) != CM_JSON_OBJECT)
        return fail(L, "property filter is not an object");
    if (!parse_type(cm_json_get(j, "type"), &f->type))
        return fail(L, "property filter type is not a string");
    if (!parse_op(cm_json_get(j, "operator"), &f->op))
        return fail(L, "property filter operator is not a string");
    cm_json_t key = cm_json_get(j, "key");
    if (cm_json_type(key) == CM_JSON_STRING)
        f->key = dup_json_str(L, key);
    else if (f->type != FLG_PT_COHORT)
        return fail(L, "property filter key is not a string");
    f->value = cm_json_get(j, "value");
    if (!opt_bool(cm_json_get(j, "negation"), false, &f->negation))
        return fail(L, "property filter negation is not a boolean");
    int64_t gti;
    if (!opt_int(cm_json_get(j, "group_type_index"), -1, &gti) || gti < -1 || gti > INT32_MAX)
        return fail(L, "property filter group_type_index is not an integer");
    f->group_type_index = (int32_t)gti;
    f->target = -1;
    if (f->type == FLG_PT_FLAG && !parse_chain(L, cm_json_get(j, "dependency_chain"), f))
        return false;
    if (f->type == FLG_PT_COHORT) {
        cm_buf_t tmp = CM_BUF_INIT;
        flg_js_string(f->value, &tmp);
        f->cohort_id = cm_arena_dup(&L->s->arena, cm_buf_slice(&tmp));
        cm_buf_free(&tmp);
        f->cohort_id_numeric = cm_json_as_int64(f->value, &f->cohort_num) == 0;
    }
    flg_prep_filter(f, &L->s->arena);
    keep_regex(L->s, f->prep.re);
    return true;
}

static bool parse_filters(loader_t *L, cm_json_t arr, flg_filter_t **out, uint32_t *n)
{
    *n = 0;
    if (absent(arr))
        return true;
    if (cm_json_type(arr) != CM_JSON_ARRAY)
        return fail(L, "properties is not an array");
    *n = cm_json_len(arr);
    *out = cm_arena_alloc(&L->s->arena, (*n ? *n : 1) * sizeof **out);
    cm_json_iter_t it = cm_json_iter(arr);
    cm_json_t k, e;
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++)
        if (!parse_filter(L, e, &(*out)[i]))
            return false;
    return true;
}

/* ---- cohort property groups --------------------------------------------------------- */

static void parse_pgroup(loader_t *L, cm_json_t j, flg_pgroup_t *g, int depth);

static bool is_group_object(cm_json_t v)
{
    return cm_json_type(v) == CM_JSON_OBJECT && cm_json_exists(cm_json_get(v, "values"));
}

static void parse_pgroup(loader_t *L, cm_json_t j, flg_pgroup_t *g, int depth)
{
    if (cm_json_is_null(j) || (cm_json_type(j) == CM_JSON_OBJECT && cm_json_len(j) == 0)) {
        g->kind = FLG_PG_EMPTY; /* the backend's canonical "matches everyone" */
        return;
    }
    cm_json_t type = cm_json_get(j, "type");
    if (cm_json_str_eq(type, CM_SLICE_LIT("AND")) || cm_json_str_eq(type, CM_SLICE_LIT("property")))
        g->kind = FLG_PG_AND;
    else if (cm_json_str_eq(type, CM_SLICE_LIT("OR")))
        g->kind = FLG_PG_OR;
    else {
        g->kind = FLG_PG_BAD_TYPE;
        return;
    }
    cm_json_t values = cm_json_get(j, "values");
    if (absent(values))
        return;
    if (cm_json_type(values) != CM_JSON_ARRAY || depth > 64) {
        g->kind = FLG_PG_MALFORMED;
        return;
    }
    g->n = cm_json_len(values);
    if (!g->n)
        return;
    g->nested = is_group_object(cm_json_at(values, 0));
    cm_json_iter_t it = cm_json_iter(values);
    cm_json_t k, e;
    if (g->nested) {
        g->groups = cm_arena_alloc(&L->s->arena, g->n * sizeof *g->groups);
        for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++)
            parse_pgroup(L, e, &g->groups[i], depth + 1);
        return;
    }
    g->filters = cm_arena_alloc(&L->s->arena, g->n * sizeof *g->filters);
    loader_t sub = {L->s, NULL};
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++) {
        if (is_group_object(e) || !parse_filter(&sub, e, &g->filters[i])) {
            g->kind = FLG_PG_MALFORMED; /* a leaf list mixing in groups, or a bad leaf */
            return;
        }
    }
}

static void parse_cohorts(loader_t *L, cm_json_t obj)
{
    flg_snapshot_t *s = L->s;
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return;
    s->ncohorts = cm_json_len(obj);
    s->cohorts = cm_arena_alloc(&s->arena, (s->ncohorts ? s->ncohorts : 1) * sizeof *s->cohorts);
    cm_json_iter_t it = cm_json_iter(obj);
    cm_json_t k, v;
    for (uint32_t i = 0; cm_json_next(&it, &k, &v); i++) {
        s->cohorts[i].id = dup_json_str(L, k);
        s->cohorts[i].group = cm_arena_alloc(&s->arena, sizeof(flg_pgroup_t));
        parse_pgroup(L, v, s->cohorts[i].group, 0);
    }
}

static void parse_group_types(loader_t *L, cm_json_t obj)
{
    flg_snapshot_t *s = L->s;
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return;
    s->types = cm_arena_alloc(&s->arena, (cm_json_len(obj) + 1) * sizeof *s->types);
    cm_json_iter_t it = cm_json_iter(obj);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        if (cm_json_type(v) != CM_JSON_STRING)
            continue;
        s->types[s->ntypes].index = dup_json_str(L, k);
        s->types[s->ntypes].name = dup_json_str(L, v);
        s->ntypes++;
    }
}

/* ---- conditions and flags --------------------------------------------------------- */

static bool parse_condition(loader_t *L, cm_json_t j, flg_condition_t *c)
{
    if (cm_json_type(j) != CM_JSON_OBJECT)
        return fail(L, "condition is not an object");
    if (!parse_filters(L, cm_json_get(j, "properties"), &c->filters, &c->nfilters))
        return false;
    cm_json_t r = cm_json_get(j, "rollout_percentage");
    if (!absent(r)) {
        if (cm_json_type(r) != CM_JSON_NUMBER)
            return fail(L, "rollout_percentage is not a number");
        c->has_rollout = true;
        c->rollout = flg_js_number(r);
    }
    cm_json_t var = cm_json_get(j, "variant");
    if (!absent(var)) {
        if (cm_json_type(var) != CM_JSON_STRING)
            return fail(L, "condition variant is not a string");
        c->variant = dup_json_str(L, var);
    }
    cm_json_t agg = cm_json_get(j, "aggregation_group_type_index");
    int64_t a;
    c->agg_state = !cm_json_exists(agg)   ? FLG_AGG_ABSENT
                   : cm_json_is_null(agg) ? FLG_AGG_NULL
                                          : FLG_AGG_SET;
    if (c->agg_state == FLG_AGG_SET) {
        if (cm_json_as_int64(agg, &a) != 0 || a < 0 || a > INT32_MAX)
            return fail(L, "condition aggregation_group_type_index is not an integer");
        c->agg = (int32_t)a;
    }
    return true;
}

static bool parse_conditions(loader_t *L, cm_json_t arr, flg_condition_t **out, uint32_t *n)
{
    *n = 0;
    if (absent(arr))
        return true;
    if (cm_json_type(arr) != CM_JSON_ARRAY)
        return fail(L, "groups is not an array");
    *n = cm_json_len(arr);
    *out = cm_arena_alloc(&L->s->arena, (*n ? *n : 1) * sizeof **out);
    cm_json_iter_t it = cm_json_iter(arr);
    cm_json_t k, e;
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++)
        if (!parse_condition(L, e, &(*out)[i]))
            return false;
    return true;
}

static bool parse_variants(loader_t *L, cm_json_t mv, flg_flag_t *f)
{
    if (absent(mv))
        return true;
    cm_json_t arr = cm_json_get(mv, "variants");
    if (cm_json_type(mv) != CM_JSON_OBJECT || (!absent(arr) && cm_json_type(arr) != CM_JSON_ARRAY))
        return fail(L, "multivariate is malformed");
    f->nvariants = cm_json_len(arr);
    f->variants =
        cm_arena_alloc(&L->s->arena, (f->nvariants ? f->nvariants : 1) * sizeof *f->variants);
    cm_json_iter_t it = cm_json_iter(arr);
    cm_json_t k, e;
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++) {
        cm_json_t key = cm_json_get(e, "key"), pct = cm_json_get(e, "rollout_percentage");
        if (cm_json_type(key) != CM_JSON_STRING ||
            (!cm_json_is_null(pct) && cm_json_type(pct) != CM_JSON_NUMBER))
            return fail(L, "variant needs a string key and a numeric rollout_percentage");
        f->variants[i].key = dup_json_str(L, key);
        f->variants[i].pct = cm_json_is_null(pct) ? 0 : flg_js_number(pct);
    }
    return true;
}

static bool parse_holdout(loader_t *L, cm_json_t h, flg_flag_t *f)
{
    if (absent(h))
        return true;
    if (cm_json_type(h) != CM_JSON_OBJECT)
        return fail(L, "holdout is not an object");
    cm_json_t id = cm_json_get(h, "id"), pct = cm_json_get(h, "exclusion_percentage");
    if (absent(id) || absent(pct))
        return true; /* posthog-node: a null id or percentage means no holdout */
    if ((cm_json_type(id) != CM_JSON_NUMBER && cm_json_type(id) != CM_JSON_STRING) ||
        cm_json_type(pct) != CM_JSON_NUMBER)
        return fail(L, "holdout id or exclusion_percentage has the wrong type");
    double p = flg_js_number(pct);
    if (!isfinite(p)) /* the SDK then ignores the holdout */
        return true;
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "holdout-");
    flg_js_string(id, &b);
    f->holdout_variant = cm_arena_dup(&L->s->arena, cm_buf_slice(&b));
    cm_buf_free(&b);
    f->holdout_pct = p < 0 ? 0 : p > 100 ? 100 : p;
    f->has_holdout = true;
    return true;
}

static bool parse_runtime_and_contexts(loader_t *L, cm_json_t j, flg_flag_t *f)
{
    cm_json_t rt = cm_json_get(j, "evaluation_runtime");
    f->runtime = FLG_RT_ALL;
    if (cm_json_type(rt) == CM_JSON_STRING) {
        cm_slice_t v = cm_json_str_inner(rt);
        if (cm_slice_eq_nocase(v, "client"))
            f->runtime = FLG_RT_CLIENT;
        else if (cm_slice_eq_nocase(v, "server"))
            f->runtime = FLG_RT_SERVER;
    }
    cm_json_t ctx = cm_json_get(j, "evaluation_contexts");
    if (absent(ctx))
        ctx = cm_json_get(j, "evaluation_tags");
    if (absent(ctx))
        return true;
    if (cm_json_type(ctx) != CM_JSON_ARRAY)
        return fail(L, "evaluation_contexts is not an array");
    f->contexts = ctx;
    return true;
}

static bool parse_filters_object(loader_t *L, cm_json_t fl, flg_flag_t *f)
{
    if (absent(fl))
        return true;
    if (cm_json_type(fl) != CM_JSON_OBJECT)
        return fail(L, "filters is not an object");
    int64_t agg;
    if (!opt_int(cm_json_get(fl, "aggregation_group_type_index"), -1, &agg) || agg < -1 ||
        agg > INT32_MAX)
        return fail(L, "aggregation_group_type_index is not an integer");
    f->agg = (int32_t)agg;
    if (!parse_conditions(L, cm_json_get(fl, "groups"), &f->conds, &f->nconds) ||
        !parse_variants(L, cm_json_get(fl, "multivariate"), f) ||
        !parse_holdout(L, cm_json_get(fl, "holdout"), f))
        return false;
    cm_json_t payloads = cm_json_get(fl, "payloads");
    if (!absent(payloads) && cm_json_type(payloads) != CM_JSON_OBJECT)
        return fail(L, "payloads is not an object");
    f->payloads = payloads;
    if (!opt_bool(cm_json_get(fl, "feature_enrollment"), false, &f->feature_enrollment) ||
        !opt_bool(cm_json_get(fl, "early_exit"), false, &f->early_exit))
        return fail(L, "feature_enrollment / early_exit is not a boolean");
    if (f->feature_enrollment) {
        cm_buf_t key = CM_BUF_INIT;
        cm_buf_append_cstr(&key, "$feature_enrollment/");
        cm_buf_append_slice(&key, f->key);
        f->enrollment_key = cm_arena_dup(&L->s->arena, cm_buf_slice(&key));
        cm_buf_free(&key);
    }
    cm_json_t super = cm_json_get(fl, "super_groups");
    if (!absent(super) && cm_json_type(super) != CM_JSON_ARRAY)
        return fail(L, "super_groups is not an array");
    if (cm_json_len(super) > 0) {
        f->super_cond = cm_arena_alloc(&L->s->arena, sizeof *f->super_cond);
        if (!parse_condition(L, cm_json_at(super, 0), f->super_cond))
            return false;
    }
    return true;
}

static bool parse_flag_fields(loader_t *L, cm_json_t j, flg_flag_t *f)
{
    if (cm_json_type(j) != CM_JSON_OBJECT)
        return fail(L, "flag is not an object");
    cm_json_t key = cm_json_get(j, "key");
    if (cm_json_type(key) != CM_JSON_STRING)
        return fail(L, "flag key is not a string");
    f->key = dup_json_str(L, key);
    cm_json_t bucketing = cm_json_get(j, "bucketing_identifier");
    if (!opt_int(cm_json_get(j, "id"), 0, &f->id) ||
        !opt_int(cm_json_get(j, "version"), 0, &f->version))
        return fail(L, "flag id / version is not an integer");
    if (!opt_bool(cm_json_get(j, "active"), false, &f->active) ||
        !opt_bool(cm_json_get(j, "deleted"), false, &f->deleted) ||
        !opt_bool(cm_json_get(j, "ensure_experience_continuity"), false,
                  &f->experience_continuity) ||
        !opt_bool(cm_json_get(j, "has_experiment"), false, &f->has_experiment))
        return fail(L, "flag active / deleted / ensure_experience_continuity is not a boolean");
    if (!absent(bucketing) && cm_json_type(bucketing) != CM_JSON_STRING)
        return fail(L, "bucketing_identifier is not a string");
    f->device_bucketing = cm_json_str_eq(bucketing, CM_SLICE_LIT("device_id"));
    return parse_runtime_and_contexts(L, j, f) &&
           parse_filters_object(L, cm_json_get(j, "filters"), f);
}

static void parse_flags(loader_t *L, cm_json_t arr)
{
    flg_snapshot_t *s = L->s;
    uint32_t n = cm_json_len(arr);
    s->flags = cm_arena_alloc(&s->arena, (n ? n : 1) * sizeof *s->flags);
    cm_json_iter_t it = cm_json_iter(arr);
    cm_json_t k, e;
    while (cm_json_next(&it, &k, &e)) {
        flg_flag_t *f = &s->flags[s->nflags];
        *f = (flg_flag_t){.agg = -1};
        L->why = NULL;
        if (!parse_flag_fields(L, e, f))
            f->invalid = L->why ? L->why : "malformed flag";
        if (f->deleted)
            continue; /* not served to anyone; dropped as if absent */
        s->nflags++;
    }
}

/* ---- pass 3: key index and references ----------------------------------------------- */

static void build_index(flg_snapshot_t *s)
{
    s->nslots = 16;
    while (s->nslots < s->nflags * 2)
        s->nslots *= 2;
    s->slots = cm_arena_alloc(&s->arena, s->nslots * sizeof *s->slots);
    for (uint32_t i = 0; i < s->nflags; i++) {
        flg_flag_t *f = &s->flags[i];
        if (!f->key.p)
            continue;
        uint32_t h = cm_fnv1a_32(f->key) & (s->nslots - 1);
        while (s->slots[h]) {
            flg_flag_t *g = &s->flags[s->slots[h] - 1];
            if (cm_slice_eq(g->key, f->key)) {
                g->shadowed = true; /* the later definition wins, as in the SDK's map */
                break;
            }
            h = (h + 1) & (s->nslots - 1);
        }
        s->slots[h] = (int32_t)i + 1;
    }
}

static int cohort_cmp(const void *a, const void *b)
{
    const cohort_entry_t *x = a, *y = b;
    size_t n = x->id.len < y->id.len ? x->id.len : y->id.len;
    int c = memcmp(x->id.p, y->id.p, n);
    return c ? c : (x->id.len > y->id.len) - (x->id.len < y->id.len);
}

static void resolve_filter(flg_snapshot_t *s, flg_filter_t *f)
{
    if (f->type == FLG_PT_COHORT) {
        f->cohort = flg_snapshot_cohort(s, f->cohort_id);
    } else if (f->type == FLG_PT_FLAG) {
        f->target = flg_snapshot_find(s, f->key);
        cm_json_iter_t it = cm_json_iter(f->chain_json);
        cm_json_t k, e;
        for (uint32_t i = 0; i < f->nchain && cm_json_next(&it, &k, &e); i++) {
            cm_buf_t tmp = CM_BUF_INIT;
            cm_json_str_append(e, &tmp);
            f->chain[i] = flg_snapshot_find(s, cm_buf_slice(&tmp));
            cm_buf_free(&tmp);
        }
    }
}

static void resolve_group(flg_snapshot_t *s, flg_pgroup_t *g)
{
    if (g->kind != FLG_PG_AND && g->kind != FLG_PG_OR)
        return;
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->nested)
            resolve_group(s, &g->groups[i]);
        else
            resolve_filter(s, &g->filters[i]);
    }
}

static void resolve_condition(flg_snapshot_t *s, flg_condition_t *c)
{
    for (uint32_t i = 0; i < c->nfilters; i++)
        resolve_filter(s, &c->filters[i]);
}

static void resolve(flg_snapshot_t *s)
{
    if (s->ncohorts)
        qsort(s->cohorts, s->ncohorts, sizeof *s->cohorts, cohort_cmp);
    for (uint32_t i = 0; i < s->ncohorts; i++)
        resolve_group(s, s->cohorts[i].group);
    for (uint32_t i = 0; i < s->nflags; i++) {
        flg_flag_t *f = &s->flags[i];
        if (f->invalid)
            continue;
        for (uint32_t c = 0; c < f->nconds; c++) {
            resolve_condition(s, &f->conds[c]);
            for (uint32_t k = 0; k < f->conds[c].nfilters; k++)
                if (f->conds[c].filters[k].type == FLG_PT_FLAG && f->conds[c].filters[k].target < 0)
                    f->missing_dependency = true;
        }
        if (f->super_cond)
            resolve_condition(s, f->super_cond);
    }
}

/* ---- public API ------------------------------------------------------------------- */

int flg_snapshot_load(const void *json, size_t len, flg_snapshot_t **out, cm_json_error_t *err)
{
    *out = NULL;
    flg_snapshot_t *s = cm_xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->src = cm_xmemdup(json, len);
    int rc = cm_json_parse(s->src, len, NULL, &s->doc, err);
    cm_json_t root = cm_json_root(s->doc);
    cm_json_t flags = cm_json_get(root, "flags");
    if (rc == 0 && cm_json_type(flags) != CM_JSON_ARRAY) {
        rc = CM_EINVAL;
        if (err)
            *err = (cm_json_error_t){CM_EINVAL, 0, "no \"flags\" array"};
    }
    if (rc != 0) {
        flg_snapshot_unref(s);
        return rc;
    }
    loader_t L = {s, NULL};
    parse_group_types(&L, cm_json_get_either(root, "group_type_mapping", "groupTypeMapping"));
    parse_cohorts(&L, cm_json_get(root, "cohorts"));
    parse_flags(&L, flags);
    double pmv = flg_js_number(
        cm_json_get_either(root, "property_matching_version", "propertyMatchingVersion"));
    s->explicit_exact = pmv == 2;
    build_index(s);
    resolve(s);
    *out = s;
    return 0;
}

flg_snapshot_t *flg_snapshot_ref(flg_snapshot_t *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void flg_snapshot_unref(flg_snapshot_t *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (uint32_t i = 0; i < s->nregexes; i++)
        flg_regex_free(s->regexes[i]);
    free(s->regexes);
    cm_arena_free(&s->arena);
    cm_json_doc_free(s->doc);
    free(s->src);
    free(s);
}

uint32_t flg_snapshot_nflags(const flg_snapshot_t *s)
{
    return s->nflags;
}

const flg_flag_t *flg_snapshot_flag(const flg_snapshot_t *s, uint32_t i)
{
    return i < s->nflags ? &s->flags[i] : NULL;
}

int32_t flg_snapshot_find(const flg_snapshot_t *s, cm_slice_t key)
{
    if (!s->nslots)
        return -1;
    uint32_t h = cm_fnv1a_32(key) & (s->nslots - 1);
    while (s->slots[h]) {
        int32_t i = s->slots[h] - 1;
        if (cm_slice_eq(s->flags[i].key, key))
            return i;
        h = (h + 1) & (s->nslots - 1);
    }
    return -1;
}

cm_slice_t flg_snapshot_group_type(const flg_snapshot_t *s, int32_t index)
{
    char buf[16];
    int n = snprintf(buf, sizeof buf, "%d", (int)index);
    cm_slice_t k = {buf, (size_t)n};
    cm_slice_t found = CM_SLICE_NULL;
    for (uint32_t i = 0; i < s->ntypes; i++) /* last duplicate wins, as in JSON.parse */
        if (cm_slice_eq(s->types[i].index, k))
            found = s->types[i].name;
    return found;
}

int32_t flg_snapshot_group_type_index(const flg_snapshot_t *s, cm_slice_t name)
{
    int32_t found = -1;
    for (uint32_t i = 0; i < s->ntypes; i++) {
        int64_t idx;
        char buf[24];
        if (!cm_slice_eq(s->types[i].name, name) || s->types[i].index.len >= sizeof buf)
            continue;
        memcpy(buf, s->types[i].index.p, s->types[i].index.len);
        buf[s->types[i].index.len] = 0;
        char *end;
        idx = strtoll(buf, &end, 10);
        if (*end == 0 && end != buf && idx >= 0 && idx <= INT32_MAX &&
            flg_snapshot_group_type(s, (int32_t)idx).p == s->types[i].name.p)
            found = (int32_t)idx; /* only a canonical index that maps back to this name */
    }
    return found;
}

const flg_pgroup_t *flg_snapshot_cohort(const flg_snapshot_t *s, cm_slice_t id)
{
    cohort_entry_t key = {id, NULL};
    const cohort_entry_t *e =
        s->ncohorts ? bsearch(&key, s->cohorts, s->ncohorts, sizeof key, cohort_cmp) : NULL;
    return e ? e->group : NULL;
}

bool flg_snapshot_explicit_exact(const flg_snapshot_t *s)
{
    return s->explicit_exact;
}
