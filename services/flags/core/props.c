/*
 * props.c - matching one property filter (see props.h).
 *
 * The posthog-node path follows matchFeatureFlagProperty step by step,
 * because its *order* matters as much as its answers: the property must
 * exist (else inconclusive); is_set / is_not_set answer on presence alone;
 * a null value is false except for the string operators, which read it as
 * "null"; then the operator. Wherever that code throws, FLG_M_INC is
 * returned, and flg_prop_match() asks the server path instead.
 */
#include "core/props.h"

#include <math.h>
#include <string.h>

#include "cm/common.h"
#include "compat/jsconv.h"
#include "compat/jsdate.h"
#include "compat/text.h"

/* ---- property lookup ------------------------------------------------------------------ */

/* Keys the server fills as $initial_<k> from $<k> ... */
static const char *const INITIAL_FROM_DOLLAR[] = {
    "browser",        "browser_version", "os",           "os_version",
    "current_url",    "pathname",        "referrer",     "referring_domain",
    "device_type",    "screen_height",   "screen_width", "viewport_height",
    "viewport_width", "raw_user_agent",  "app_build",    "app_name",
    "app_namespace",  "app_version",
};
/* ... and from <k> (campaign and click ids). */
static const char *const INITIAL_FROM_PLAIN[] = {
    "utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term", "gclid",   "gad_source",
    "gclsrc",     "dclid",      "gbraid",       "wbraid",      "fbclid",   "msclkid", "twclid",
    "li_fat_id",  "mc_cid",     "igshid",       "ttclid",      "rdt_cid",  "irclid",  "_kx",
};

static cm_json_t layer_get(cm_json_t obj, const cm_json_index_t *ix, cm_slice_t key)
{
    return ix ? cm_json_index_get(ix, key) : cm_json_get_s(obj, key);
}

cm_json_t flg_bag_find(const flg_bag_t *bag, cm_slice_t key)
{
    cm_json_t v = layer_get(bag->obj, bag->ix, key);
    for (int i = 0; i < FLG_BAG_UNDER && !cm_json_exists(v); i++)
        if (bag->under[i].doc != NULL)
            v = layer_get(bag->under[i], bag->under_ix[i], key);
    return v;
}

static cm_json_t backfill(const flg_bag_t *bag, cm_slice_t key)
{
    cm_slice_t prefix = CM_SLICE_LIT("$initial_");
    if (!cm_slice_starts_with(key, "$initial_"))
        return CM_JSON_NONE_VALUE;
    cm_slice_t rest = {key.p + prefix.len, key.len - prefix.len};
    for (size_t i = 0; i < CM_ARRAY_LEN(INITIAL_FROM_PLAIN); i++)
        if (cm_slice_eq_cstr(rest, INITIAL_FROM_PLAIN[i]))
            return flg_bag_find(bag, rest);
    for (size_t i = 0; i < CM_ARRAY_LEN(INITIAL_FROM_DOLLAR); i++) {
        if (cm_slice_eq_cstr(rest, INITIAL_FROM_DOLLAR[i])) {
            char buf[32];
            buf[0] = '$';
            memcpy(buf + 1, rest.p, rest.len);
            return flg_bag_find(bag, (cm_slice_t){buf, rest.len + 1});
        }
    }
    return CM_JSON_NONE_VALUE;
}

cm_json_t flg_bag_get(const flg_bag_t *bag, cm_slice_t key, bool server)
{
    cm_json_t v = flg_bag_find(bag, key);
    if (cm_json_exists(v))
        return v;
    if (bag->synth_key.p && cm_slice_eq(key, bag->synth_key))
        return bag->synth_val;
    if (server && bag->backfill_initial)
        return backfill(bag, key);
    return CM_JSON_NONE_VALUE;
}

/* ---- shared pieces -------------------------------------------------------------------- */

static flg_match_t tf(bool b)
{
    return b ? FLG_M_TRUE : FLG_M_FALSE;
}

static flg_match_t negate(flg_match_t m)
{
    return flg_m_decided(m) ? tf(m == FLG_M_FALSE) : m;
}

static bool is_negative_op(flg_op_t op)
{
    return op == FLG_OP_IS_NOT || op == FLG_OP_NOT_ICONTAINS || op == FLG_OP_NOT_STARTS_WITH ||
           op == FLG_OP_NOT_ENDS_WITH || op == FLG_OP_NOT_REGEX ||
           op == FLG_OP_NOT_ICONTAINS_MULTI || op == FLG_OP_NOT_BETWEEN;
}

static bool is_semver_op(flg_op_t op)
{
    return op >= FLG_OP_SEMVER_EQ && op <= FLG_OP_SEMVER_WILDCARD;
}

static bool cmp_holds(flg_op_t op, int c)
{
    switch (op) {
    case FLG_OP_GT:
    case FLG_OP_SEMVER_GT: return c > 0;
    case FLG_OP_GTE:
    case FLG_OP_SEMVER_GTE: return c >= 0;
    case FLG_OP_LT:
    case FLG_OP_SEMVER_LT: return c < 0;
    case FLG_OP_LTE:
    case FLG_OP_SEMVER_LTE: return c <= 0;
    case FLG_OP_SEMVER_EQ: return c == 0;
    default: /* SEMVER_NEQ */ return c != 0;
    }
}

static bool num_holds(flg_op_t op, double a, double b)
{
    switch (op) {
    case FLG_OP_GT: return a > b;
    case FLG_OP_GTE: return a >= b;
    case FLG_OP_LT: return a < b;
    default: return a <= b;
    }
}

/* A date filter value as an instant, for this evaluation's now and zone. */
static int64_t date_instant(const flg_date_t *d, const flg_pctx_t *pc)
{
    if (d->kind == FLG_DATE_RELATIVE)
        return flg_date_relative_apply(pc->now_ms, d->n, d->unit, pc->tz);
    return d->naive ? flg_local_to_utc_ms(d->ms, pc->tz) : d->ms;
}

static bool date_holds(flg_op_t op, int64_t actual, int64_t filter)
{
    return op == FLG_OP_IS_DATE_BEFORE  ? actual < filter
           : op == FLG_OP_IS_DATE_AFTER ? actual > filter
                                        : actual == filter;
}

/* Substring family on two already-lowered strings. */
static bool text_holds(flg_op_t op, cm_slice_t hay, cm_slice_t needle)
{
    switch (op) {
    case FLG_OP_ICONTAINS:
    case FLG_OP_NOT_ICONTAINS: return flg_slice_contains(hay, needle);
    case FLG_OP_STARTS_WITH:
    case FLG_OP_NOT_STARTS_WITH:
        return hay.len >= needle.len && memcmp(hay.p, needle.p, needle.len) == 0;
    default:
        return hay.len >= needle.len &&
               memcmp(hay.p + hay.len - needle.len, needle.p, needle.len) == 0;
    }
}

/* ---- posthog-node ----------------------------------------------------------------------- */

/* computeExactMatch; the caller negates for is_not. */
static flg_match_t node_exact(const flg_prep_t *p, cm_json_t v, flg_pctx_t *pc)
{
    if ((!pc->explicit_exact && p->truthy_or_falsy) || p->empty_array) {
        if (!flg_js_finite_everywhere(v))
            return FLG_M_INC;
        return tf(p->truthy == flg_truthy(v));
    }
    if (pc->explicit_exact && cm_json_type(v) == CM_JSON_NUMBER && p->truthy_or_falsy)
        return flg_js_finite_everywhere(v) ? FLG_M_FALSE : FLG_M_INC;
    if (!p->is_array && !p->items[0].js_ok)
        return FLG_M_INC; /* the filter side is stringified first */
    cm_buf_reset(&pc->a);
    cm_buf_reset(&pc->b);
    if (!flg_exact_string(v, FLG_STR_JS, &pc->a))
        return FLG_M_INC;
    flg_lower_unicode(cm_buf_slice(&pc->a), &pc->b);
    cm_slice_t actual = cm_buf_slice(&pc->b);
    for (uint32_t i = 0; i < p->nitems; i++) {
        if (!p->items[i].js_ok)
            return FLG_M_INC; /* Array.some stops at the first throw */
        if (cm_slice_eq(p->items[i].js_lower, actual))
            return FLG_M_TRUE;
    }
    return FLG_M_FALSE;
}

static flg_match_t node_compare(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    cm_buf_reset(&pc->a);
    flg_js_string(v, &pc->a);
    double actual = cm_json_type(v) == CM_JSON_NUMBER ? flg_js_number(v)
                                                      : flg_js_parse_float(cm_buf_slice(&pc->a));
    if (isfinite(actual) && isfinite(f->prep.js_num))
        return tf(num_holds(f->op, actual, f->prep.js_num));
    int c = flg_js_strcmp(cm_buf_slice(&pc->a), f->prep.js_str);
    return tf(cmp_holds(f->op, c));
}

static flg_match_t node_date(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    const flg_date_t *fd = &f->prep.node_date;
    if (fd->kind == FLG_DATE_BAD)
        return FLG_M_INC;
    int64_t actual;
    bool naive = false;
    if (cm_json_type(v) == CM_JSON_NUMBER) {
        if (!flg_js_date_from_number(flg_js_number(v), &actual))
            return FLG_M_INC;
    } else if (cm_json_type(v) == CM_JSON_STRING) {
        cm_buf_reset(&pc->a);
        cm_json_str_append(v, &pc->a);
        if (!flg_js_date_parse(cm_buf_slice(&pc->a), &actual, &naive))
            return FLG_M_INC;
        if (naive)
            actual = flg_local_to_utc_ms(actual, pc->tz);
        if (actual > FLG_DATE_MAX_MS || actual < -FLG_DATE_MAX_MS)
            return FLG_M_INC; /* Date's TimeClip after the zone conversion */
    } else {
        return FLG_M_INC;
    }
    return tf(date_holds(f->op, actual, date_instant(fd, pc)));
}

static flg_match_t node_semver(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    if (!f->prep.node_sem_ok)
        return FLG_M_INC; /* the filter is parsed before the property */
    cm_buf_reset(&pc->a);
    flg_js_string(v, &pc->a);
    flg_semtuple_t actual;
    if (!flg_semver_node_parse(cm_buf_slice(&pc->a), &actual))
        return FLG_M_INC;
    if (f->op >= FLG_OP_SEMVER_TILDE)
        return tf(flg_semrange_contains(&f->prep.node_range, &actual));
    return tf(cmp_holds(f->op, flg_semtuple_cmp(&actual, &f->prep.node_sem)));
}

static flg_match_t node_regex(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    cm_buf_reset(&pc->a);
    flg_js_string(v, &pc->a);
    switch (flg_regex_test_node(f->prep.re, cm_buf_slice(&pc->a), &pc->rx)) {
    case FLG_RX_MATCH: return tf(f->op == FLG_OP_REGEX);
    case FLG_RX_NOMATCH: return tf(f->op == FLG_OP_NOT_REGEX);
    case FLG_RX_INVALID: return FLG_M_FALSE; /* both operators, as in the SDK */
    case FLG_RX_DEFER: return FLG_M_INC_REGEX;
    default: return FLG_M_ERROR;
    }
}

static bool null_allowed(flg_op_t op)
{
    return op <= FLG_OP_NOT_REGEX && op != FLG_OP_ICONTAINS_MULTI &&
           op != FLG_OP_NOT_ICONTAINS_MULTI;
}

static bool node_knows(flg_op_t op)
{
    return op != FLG_OP_ICONTAINS_MULTI && op != FLG_OP_NOT_ICONTAINS_MULTI &&
           op != FLG_OP_BETWEEN && op != FLG_OP_NOT_BETWEEN && op != FLG_OP_IS_DATE_EXACT &&
           op != FLG_OP_IN && op != FLG_OP_NOT_IN && op != FLG_OP_FLAG_EVALUATES_TO &&
           op != FLG_OP_UNKNOWN;
}

/* The value as text (JavaScript's String() for the SDK's semantics, the
 * server's for its), ASCII-lowercased into pc->b: what the text operators
 * compare. */
static cm_slice_t lowered(cm_json_t v, bool server, flg_pctx_t *pc)
{
    cm_buf_reset(&pc->a);
    cm_buf_reset(&pc->b);
    if (server)
        flg_exact_string(v, FLG_STR_SERVER, &pc->a);
    else
        flg_js_string(v, &pc->a);
    flg_lower_ascii(cm_buf_slice(&pc->a), &pc->b);
    return cm_buf_slice(&pc->b);
}

/* icontains, starts_with, ends_with and their negations on lowered text. */
static flg_match_t text_op(const flg_filter_t *f, cm_slice_t lower)
{
    return tf(text_holds(f->op, lower, f->prep.js_lower) != is_negative_op(f->op));
}

flg_match_t flg_prop_match_node(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc)
{
    cm_json_t v = flg_bag_get(bag, f->key, false);
    if (!cm_json_exists(v))
        return FLG_M_INC;
    if (f->op == FLG_OP_IS_SET || f->op == FLG_OP_IS_NOT_SET)
        return tf(f->op == FLG_OP_IS_SET);
    /* Before the operator is even looked at: null only suits string operators. */
    if (cm_json_is_null(v) && !null_allowed(f->op))
        return FLG_M_FALSE;
    if (!node_knows(f->op))
        return FLG_M_INC;
    /* An absent filter value reads as undefined: String() gives "undefined",
     * and exact/is_not cannot stringify it (their prep says so). */
    switch (f->op) {
    case FLG_OP_EXACT: return node_exact(&f->prep, v, pc);
    case FLG_OP_IS_NOT: return negate(node_exact(&f->prep, v, pc));
    case FLG_OP_ICONTAINS:
    case FLG_OP_NOT_ICONTAINS:
    case FLG_OP_STARTS_WITH:
    case FLG_OP_NOT_STARTS_WITH:
    case FLG_OP_ENDS_WITH:
    case FLG_OP_NOT_ENDS_WITH: {
        return text_op(f, lowered(v, false, pc));
    }
    case FLG_OP_REGEX:
    case FLG_OP_NOT_REGEX: return node_regex(f, v, pc);
    case FLG_OP_GT:
    case FLG_OP_GTE:
    case FLG_OP_LT:
    case FLG_OP_LTE: return node_compare(f, v, pc);
    case FLG_OP_IS_DATE_BEFORE:
    case FLG_OP_IS_DATE_AFTER: return node_date(f, v, pc);
    default: return is_semver_op(f->op) ? node_semver(f, v, pc) : FLG_M_INC;
    }
}

/* ---- the server (match_property, non-partial) -------------------------------------------- */

static flg_match_t server_exact(const flg_prep_t *p, cm_json_t v, flg_pctx_t *pc)
{
    if ((!pc->explicit_exact && p->truthy_or_falsy) || p->empty_array)
        return tf(p->truthy == flg_truthy(v));
    if (pc->explicit_exact && cm_json_type(v) == CM_JSON_NUMBER && p->truthy_or_falsy)
        return FLG_M_FALSE;
    cm_buf_reset(&pc->a);
    cm_buf_reset(&pc->b);
    flg_exact_string(v, FLG_STR_SERVER, &pc->a);
    flg_lower_unicode(cm_buf_slice(&pc->a), &pc->b);
    for (uint32_t i = 0; i < p->nitems; i++)
        if (cm_slice_eq(p->items[i].sv_lower, cm_buf_slice(&pc->b)))
            return FLG_M_TRUE;
    return FLG_M_FALSE;
}

/* to_f64_representation of the property; false if it is not a number. */
static bool server_number_of(cm_json_t v, flg_pctx_t *pc, double *out)
{
    if (cm_json_type(v) == CM_JSON_NUMBER) {
        *out = flg_js_number(v);
        return true;
    }
    cm_buf_reset(&pc->a);
    flg_exact_string(v, FLG_STR_SERVER, &pc->a);
    return flg_server_parse_f64(cm_buf_slice(&pc->a), out);
}

static flg_match_t server_date(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    const flg_date_t *fd = &f->prep.server_date;
    int64_t actual;
    double secs;
    bool naive = false;
    if (cm_json_type(v) == CM_JSON_NUMBER) {
        secs = flg_js_number(v);
    } else if (cm_json_type(v) == CM_JSON_STRING) {
        cm_buf_reset(&pc->a);
        cm_json_str_append(v, &pc->a);
        if (!flg_server_parse_f64(cm_buf_slice(&pc->a), &secs)) {
            if (!flg_date_parse(cm_buf_slice(&pc->a), &actual, &naive))
                return FLG_M_FALSE;
            secs = NAN;
            if (naive)
                actual = flg_local_to_utc_ms(actual, pc->tz);
        }
    } else {
        return FLG_M_FALSE;
    }
    if (!isnan(secs)) { /* a number (or numeric string) is Unix seconds to the server */
        if (!isfinite(secs) || fabs(secs) > 8.64e12)
            return FLG_M_FALSE;
        actual = (int64_t)floor(secs * 1000.0);
    }
    if (fd->kind == FLG_DATE_BAD)
        return FLG_M_FALSE;
    return tf(date_holds(f->op, actual, date_instant(fd, pc)));
}

static flg_match_t server_semver(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    cm_buf_reset(&pc->a);
    flg_exact_string(v, FLG_STR_SERVER, &pc->a);
    flg_semver_t actual;
    if (!flg_semver_parse(cm_buf_slice(&pc->a), &actual) || !f->prep.full_sem_ok)
        return FLG_M_FALSE;
    if (f->op >= FLG_OP_SEMVER_TILDE)
        return tf(flg_semreq_matches(&f->prep.full_req, &actual));
    return tf(cmp_holds(f->op, flg_semver_cmp(&actual, &f->prep.full_sem)));
}

static flg_match_t server_regex(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    cm_buf_reset(&pc->a);
    flg_exact_string(v, FLG_STR_SERVER, &pc->a);
    switch (flg_regex_test_server(f->prep.re, cm_buf_slice(&pc->a), &pc->rx)) {
    case FLG_RX_MATCH: return tf(f->op == FLG_OP_REGEX);
    case FLG_RX_NOMATCH: return tf(f->op == FLG_OP_NOT_REGEX);
    case FLG_RX_INVALID: return FLG_M_FALSE;
    default: return FLG_M_ERROR; /* over the match limit: the flag cannot be computed */
    }
}

static flg_match_t server_multi(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    cm_slice_t text = lowered(v, true, pc);
    bool any = false;
    for (uint32_t i = 0; i < f->prep.nneedles && !any; i++)
        any = flg_slice_contains(text, f->prep.needles[i]);
    return tf(any == (f->op == FLG_OP_ICONTAINS_MULTI));
}

static flg_match_t server_between(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    double x;
    if (!f->prep.range_ok || !server_number_of(v, pc, &x) || isnan(x))
        return FLG_M_FALSE;
    bool in = x >= f->prep.range_lo && x <= f->prep.range_hi;
    return tf(in == (f->op == FLG_OP_BETWEEN));
}

static flg_match_t server_present(const flg_filter_t *f, cm_json_t v, flg_pctx_t *pc)
{
    switch (f->op) {
    case FLG_OP_EXACT: return server_exact(&f->prep, v, pc);
    case FLG_OP_IS_NOT: return negate(server_exact(&f->prep, v, pc));
    case FLG_OP_ICONTAINS:
    case FLG_OP_NOT_ICONTAINS:
    case FLG_OP_STARTS_WITH:
    case FLG_OP_NOT_STARTS_WITH:
    case FLG_OP_ENDS_WITH:
    case FLG_OP_NOT_ENDS_WITH: {
        return text_op(f, lowered(v, true, pc));
    }
    case FLG_OP_ICONTAINS_MULTI:
    case FLG_OP_NOT_ICONTAINS_MULTI: return server_multi(f, v, pc);
    case FLG_OP_REGEX:
    case FLG_OP_NOT_REGEX: return server_regex(f, v, pc);
    case FLG_OP_GT:
    case FLG_OP_GTE:
    case FLG_OP_LT:
    case FLG_OP_LTE: {
        double x, y = f->prep.js_num;
        if (!server_number_of(v, pc, &x) ||
            (cm_json_type(f->value) != CM_JSON_NUMBER && !flg_server_parse_f64(f->prep.js_str, &y)))
            return FLG_M_FALSE; /* a validation error: the filter does not match */
        return tf(num_holds(f->op, x, y));
    }
    case FLG_OP_BETWEEN:
    case FLG_OP_NOT_BETWEEN: return server_between(f, v, pc);
    case FLG_OP_IS_DATE_BEFORE:
    case FLG_OP_IS_DATE_AFTER:
    case FLG_OP_IS_DATE_EXACT: return server_date(f, v, pc);
    case FLG_OP_UNKNOWN: return FLG_M_ERROR; /* the server cannot even load such a filter */
    default: return is_semver_op(f->op) ? server_semver(f, v, pc) : FLG_M_FALSE;
    }
}

flg_match_t flg_prop_match_server(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc)
{
    if (f->op == FLG_OP_UNKNOWN)
        return FLG_M_ERROR;
    cm_json_t v = flg_bag_get(bag, f->key, true);
    if (f->op == FLG_OP_IS_SET || f->op == FLG_OP_IS_NOT_SET)
        return tf(cm_json_exists(v) == (f->op == FLG_OP_IS_SET));
    if (!cm_json_exists(f->value) || cm_json_is_null(f->value))
        return FLG_M_FALSE; /* serde reads a null value as None: no match */
    if (!cm_json_exists(v)) /* an absent property: only the negative operators hold */
        return tf(is_negative_op(f->op));
    return server_present(f, v, pc);
}

flg_match_t flg_prop_match(const flg_filter_t *f, const flg_bag_t *bag, flg_pctx_t *pc)
{
    flg_match_t m = flg_prop_match_node(f, bag, pc);
    if (flg_m_decided(m) || m == FLG_M_ERROR)
        return m;
    return flg_prop_match_server(f, bag, pc);
}
