/*
 * filters.c - checks a feature flag's filters before they are stored
 * (pure: no I/O). The shape is proto/flag.schema.json's "filters"; on top
 * of the schema, PostHog's own rules: known operators and property types,
 * rollout percentages within 0..100, variant splits summing to 100, a
 * condition's variant among the variants. References to cohorts and other
 * flags are collected for the caller, who checks them against the store
 * (unknown cohorts, dependency cycles).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdarg.h>
#include <stdlib.h>

#include "cm/common.h"
#include "cm/err.h"
#include "flagdefs/flagdefs.h"

/* The operator names of proto/flag.schema.json (test_flagdefs checks
 * the two agree). */
const char *const api_flagdefs_operators[] = {
    "exact",
    "is_not",
    "icontains",
    "not_icontains",
    "icontains_multi",
    "not_icontains_multi",
    "starts_with",
    "not_starts_with",
    "ends_with",
    "not_ends_with",
    "regex",
    "not_regex",
    "gt",
    "gte",
    "lt",
    "lte",
    "between",
    "not_between",
    "is_set",
    "is_not_set",
    "is_date_before",
    "is_date_after",
    "is_date_exact",
    "semver_eq",
    "semver_neq",
    "semver_gt",
    "semver_gte",
    "semver_lt",
    "semver_lte",
    "semver_tilde",
    "semver_caret",
    "semver_wildcard",
    "in",
    "not_in",
    "flag_evaluates_to",
    NULL,
};

static const char *const types[] = {"person", "group", "cohort", "flag", "person_metadata", NULL};

static bool in_list(const char *const *list, cm_slice_t s)
{
    for (size_t i = 0; list[i]; i++)
        if (cm_slice_eq_cstr(s, list[i]))
            return true;
    return false;
}

static int fail(cm_api_error_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cm_api_error_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cm_api_error_vset(e, 400, "invalid_input", "filters", fmt, ap);
    va_end(ap);
    return -1;
}

static bool is_type(cm_json_t v, cm_json_type_t t)
{
    return cm_json_exists(v) && cm_json_type(v) == t;
}

static bool absent_or_null(cm_json_t v)
{
    return !cm_json_exists(v) || cm_json_is_null(v);
}

static void add_ref(api_flagdefs_refs_t *refs, bool cohort, long long id)
{
    long long *list = cohort ? refs->cohorts : refs->flags;
    size_t *n = cohort ? &refs->ncohorts : &refs->nflags;
    for (size_t i = 0; i < *n; i++)
        if (list[i] == id)
            return;
    if (*n < API_FLAGDEFS_MAX_REFS)
        list[(*n)++] = id;
}

/* An integer id given as a number or a string of digits. */
static bool ref_id(cm_json_t v, long long *out)
{
    int64_t n;
    if (cm_json_as_int64(v, &n) == CM_OK && n > 0) {
        *out = n;
        return true;
    }
    cm_slice_t s = cm_json_str_inner(v);
    if (s.p == NULL || s.len == 0 || s.len > 18 || cm_slice_span(s, "0123456789") < s.len)
        return false;
    *out = 0;
    for (size_t i = 0; i < s.len; i++)
        *out = *out * 10 + (s.p[i] - '0');
    return *out > 0;
}

static int check_property(cm_json_t p, const char *at, api_flagdefs_refs_t *refs, cm_api_error_t *e)
{
    if (!is_type(p, CM_JSON_OBJECT))
        return fail(e, "%s must be an object.", at);
    cm_json_t type = cm_json_get(p, "type"), op = cm_json_get(p, "operator");
    cm_json_t key = cm_json_get(p, "key");
    cm_slice_t t = cm_json_str_inner(type);
    if (!absent_or_null(type) && (t.p == NULL || !in_list(types, t)))
        return fail(e, "%s: unknown property type.", at);
    if (!absent_or_null(op)) {
        cm_slice_t o = cm_json_str_inner(op);
        if (o.p == NULL || !in_list(api_flagdefs_operators, o))
            return fail(e, "%s: unknown operator \"%.*s\".", at, (int)(o.len > 40 ? 40 : o.len),
                        o.p ? o.p : "");
    }
    if (!is_type(key, CM_JSON_STRING) && !is_type(key, CM_JSON_NUMBER))
        return fail(e, "%s: key is required.", at);
    long long id;
    if (cm_slice_eq_cstr(t, "cohort")) {
        if (!ref_id(cm_json_get(p, "value"), &id))
            return fail(e, "%s: a cohort filter needs a cohort id.", at);
        add_ref(refs, true, id);
    } else if (cm_slice_eq_cstr(t, "flag")) {
        if (!ref_id(key, &id))
            return fail(e, "%s: a flag filter's key is a flag id.", at);
        add_ref(refs, false, id);
    } else if (cm_slice_eq_cstr(t, "group")) {
        cm_json_t gti = cm_json_get(p, "group_type_index");
        int64_t n;
        if (cm_json_as_int64(gti, &n) != CM_OK || n < 0 || n > 4)
            return fail(e, "%s: group_type_index must be 0 to 4.", at);
    }
    cm_json_t neg = cm_json_get(p, "negation");
    bool b;
    if (!absent_or_null(neg) && cm_json_as_bool(neg, &b) != CM_OK)
        return fail(e, "%s: negation must be a boolean.", at);
    return 0;
}

static int check_percentage(cm_json_t v, const char *what, size_t i, cm_api_error_t *e)
{
    double d;
    if (absent_or_null(v))
        return 0;
    if (cm_json_as_double(v, &d) != CM_OK || !(d >= 0 && d <= 100))
        return fail(e, "%s[%zu]: rollout_percentage must be a number from 0 to 100.", what, i);
    return 0;
}

static int check_variants(cm_json_t mv, cm_api_error_t *e)
{
    if (absent_or_null(mv))
        return 0;
    cm_json_t variants = cm_json_get(mv, "variants");
    if (!is_type(mv, CM_JSON_OBJECT) || !is_type(variants, CM_JSON_ARRAY))
        return fail(e, "multivariate.variants must be a list.");
    double sum = 0;
    cm_json_iter_t it = cm_json_iter(variants);
    cm_json_t v;
    size_t i = 0;
    while (cm_json_next(&it, NULL, &v)) {
        cm_slice_t key = cm_json_str_inner(cm_json_get(v, "key"));
        double pct = 0;
        if (!is_type(v, CM_JSON_OBJECT) || key.p == NULL || key.len == 0)
            return fail(e, "multivariate.variants[%zu] needs a key.", i);
        if (cm_json_as_double(cm_json_get(v, "rollout_percentage"), &pct) != CM_OK || pct < 0 ||
            pct > 100)
            return fail(e, "multivariate.variants[%zu]: rollout_percentage from 0 to 100.", i);
        for (size_t j = 0; j < i; j++)
            if (cm_json_str_eq(cm_json_get(cm_json_at(variants, (uint32_t)j), "key"), key))
                return fail(e, "multivariate.variants: duplicate key \"%.*s\".", (int)key.len,
                            key.p);
        sum += pct;
        i++;
    }
    if (i > 0 && fabs(sum - 100) > 1e-9)
        return fail(e, "Invalid variant definitions: Variant rollout percentages must sum to 100.");
    return 0;
}

static bool variant_known(cm_json_t mv, cm_json_t name)
{
    cm_json_iter_t it = cm_json_iter(cm_json_get(mv, "variants"));
    cm_json_t v;
    while (cm_json_next(&it, NULL, &v))
        if (cm_json_str_eq(cm_json_get(v, "key"), cm_json_str_inner(name)))
            return true;
    return false;
}

static int check_groups(cm_json_t groups, cm_json_t mv, const char *what, api_flagdefs_refs_t *refs,
                        cm_api_error_t *e)
{
    if (absent_or_null(groups))
        return 0;
    if (!is_type(groups, CM_JSON_ARRAY))
        return fail(e, "%s must be a list.", what);
    cm_json_iter_t it = cm_json_iter(groups);
    cm_json_t g;
    for (size_t gi = 0; cm_json_next(&it, NULL, &g); gi++) {
        if (!is_type(g, CM_JSON_OBJECT))
            return fail(e, "%s[%zu] must be an object.", what, gi);
        if (check_percentage(cm_json_get(g, "rollout_percentage"), what, gi, e) != 0)
            return -1;
        cm_json_t variant = cm_json_get(g, "variant");
        if (!absent_or_null(variant) &&
            (!is_type(variant, CM_JSON_STRING) ||
             (strcmp(what, "groups") == 0 && !variant_known(mv, variant))))
            return fail(e, "%s[%zu]: variant must be one of the flag's variants.", what, gi);
        cm_json_t props = cm_json_get(g, "properties");
        if (absent_or_null(props))
            continue;
        if (!is_type(props, CM_JSON_ARRAY))
            return fail(e, "%s[%zu].properties must be a list.", what, gi);
        cm_json_iter_t pit = cm_json_iter(props);
        cm_json_t p;
        char at[96];
        for (size_t pi = 0; cm_json_next(&pit, NULL, &p); pi++)
            if (snprintf(at, sizeof(at), "%s[%zu].properties[%zu]", what, gi, pi) > 0 &&
                check_property(p, at, refs, e) != 0)
                return -1;
    }
    return 0;
}

/* A cohort's property group: {"type": "AND"|"OR", "values": [groups...]}
 * or, at the leaves, {"type": ..., "values": [property filters...]}. */
static int check_group(cm_json_t g, const char *at, int depth, api_flagdefs_refs_t *refs,
                       cm_api_error_t *e)
{
    cm_json_t type = cm_json_get(g, "type"), values = cm_json_get(g, "values");
    if (depth > 10)
        return fail(e, "%s: property groups nest 10 deep at most.", at);
    if (!is_type(g, CM_JSON_OBJECT) || !is_type(values, CM_JSON_ARRAY) ||
        !(cm_json_str_eq(type, cm_slice_from_cstr("AND")) ||
          cm_json_str_eq(type, cm_slice_from_cstr("OR"))))
        return fail(e, "%s must be {\"type\": \"AND\" or \"OR\", \"values\": [...]}.", at);
    cm_json_iter_t it = cm_json_iter(values);
    cm_json_t v;
    char inner[160];
    for (size_t i = 0; cm_json_next(&it, NULL, &v); i++) {
        snprintf(inner, sizeof(inner), "%s.values[%zu]", at, i);
        cm_json_t vt = cm_json_get(v, "type");
        bool group = cm_json_str_eq(vt, cm_slice_from_cstr("AND")) ||
                     cm_json_str_eq(vt, cm_slice_from_cstr("OR"));
        int rc =
            group ? check_group(v, inner, depth + 1, refs, e) : check_property(v, inner, refs, e);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int api_flagdefs_check_cohort(cm_json_t group, api_flagdefs_refs_t *refs, cm_api_error_t *e)
{
    memset(refs, 0, sizeof(*refs));
    return check_group(group, "filters.properties", 0, refs, e);
}

int api_flagdefs_check(cm_json_t f, api_flagdefs_refs_t *refs, cm_api_error_t *e)
{
    memset(refs, 0, sizeof(*refs));
    if (!is_type(f, CM_JSON_OBJECT))
        return fail(e, "filters must be an object.");
    cm_json_t mv = cm_json_get(f, "multivariate");
    if (check_variants(mv, e) != 0 ||
        check_groups(cm_json_get(f, "groups"), mv, "groups", refs, e) != 0 ||
        check_groups(cm_json_get(f, "super_groups"), mv, "super_groups", refs, e) != 0 ||
        check_groups(cm_json_get(f, "holdout_groups"), mv, "holdout_groups", refs, e) != 0)
        return -1;
    cm_json_t agg = cm_json_get(f, "aggregation_group_type_index");
    int64_t n;
    if (!absent_or_null(agg) && (cm_json_as_int64(agg, &n) != CM_OK || n < 0 || n > 4))
        return fail(e, "aggregation_group_type_index must be 0 to 4 or null.");
    cm_json_t payloads = cm_json_get(f, "payloads");
    if (!absent_or_null(payloads) && !is_type(payloads, CM_JSON_OBJECT))
        return fail(e, "payloads must be an object.");
    return 0;
}

/* The references of stored JSON text, read by one of the checks above
 * (stored text passed them once; if it no longer parses, none). */
static void refs_of(const char *text,
                    int (*check)(cm_json_t, api_flagdefs_refs_t *, cm_api_error_t *),
                    api_flagdefs_refs_t *refs)
{
    cm_json_doc_t *doc = NULL;
    cm_api_error_t ignored;
    memset(refs, 0, sizeof(*refs));
    if (text && cm_json_parse(text, strlen(text), NULL, &doc, NULL) == CM_OK)
        check(cm_json_root(doc), refs, &ignored);
    cm_json_doc_free(doc);
}

void api_flagdefs_refs_of(const char *filters, api_flagdefs_refs_t *refs)
{
    refs_of(filters, api_flagdefs_check, refs);
}

void api_flagdefs_cohort_refs_of(const char *group, api_flagdefs_refs_t *refs)
{
    refs_of(group, api_flagdefs_check_cohort, refs);
}
