/*
 * props_prep.c - flg_prep_filter(): everything about a filter value that
 * does not depend on the person, computed once when definitions load, in
 * both readings (posthog-node's and the server's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compat/jsconv.h"
#include "compat/jsdate.h"
#include "core/props.h"
#include "compat/text.h"

static cm_slice_t keep(cm_arena_t *a, cm_buf_t *b)
{
    return cm_arena_dup(a, cm_buf_slice(b));
}

static void prep_exact_item(flg_exact_item_t *it, cm_json_t v, cm_arena_t *a)
{
    cm_buf_t s = CM_BUF_INIT, low = CM_BUF_INIT;
    it->js_ok = flg_exact_string(v, FLG_STR_JS, &s);
    if (it->js_ok) {
        flg_lower_unicode(cm_buf_slice(&s), &low);
        it->js_lower = keep(a, &low);
    }
    cm_buf_reset(&s);
    cm_buf_reset(&low);
    flg_exact_string(v, FLG_STR_SERVER, &s);
    flg_lower_unicode(cm_buf_slice(&s), &low);
    it->sv_lower = keep(a, &low);
    cm_buf_free(&s);
    cm_buf_free(&low);
}

static void prep_exact(flg_prep_t *p, cm_json_t v, cm_arena_t *a)
{
    p->truthy_or_falsy = flg_truthy_or_falsy(v);
    p->truthy = flg_truthy(v);
    p->is_array = cm_json_type(v) == CM_JSON_ARRAY;
    p->empty_array = p->is_array && cm_json_len(v) == 0;
    if (!p->is_array) {
        p->nitems = 1;
        p->items = cm_arena_alloc(a, sizeof *p->items);
        prep_exact_item(&p->items[0], v, a);
        return;
    }
    p->nitems = cm_json_len(v);
    p->items = cm_arena_alloc(a, (p->nitems ? p->nitems : 1) * sizeof *p->items);
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t k, e;
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++)
        prep_exact_item(&p->items[i], e, a);
}

static cm_slice_t server_lower_ascii(cm_json_t v, cm_arena_t *a)
{
    cm_buf_t s = CM_BUF_INIT, low = CM_BUF_INIT;
    flg_exact_string(v, FLG_STR_SERVER, &s);
    flg_lower_ascii(cm_buf_slice(&s), &low);
    cm_slice_t out = keep(a, &low);
    cm_buf_free(&s);
    cm_buf_free(&low);
    return out;
}

static void prep_multi(flg_prep_t *p, cm_json_t v, cm_arena_t *a)
{
    bool arr = cm_json_type(v) == CM_JSON_ARRAY;
    p->nneedles = arr ? cm_json_len(v) : 1;
    p->needles = cm_arena_alloc(a, (p->nneedles ? p->nneedles : 1) * sizeof *p->needles);
    if (!arr) {
        p->needles[0] = server_lower_ascii(v, a);
        return;
    }
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t k, e;
    for (uint32_t i = 0; cm_json_next(&it, &k, &e); i++)
        p->needles[i] = server_lower_ascii(e, a);
}

/* The server's to_f64_representation. */
static bool server_f64(cm_json_t v, double *out)
{
    if (cm_json_type(v) == CM_JSON_NUMBER) {
        *out = flg_js_number(v);
        return true;
    }
    cm_buf_t s = CM_BUF_INIT;
    flg_exact_string(v, FLG_STR_SERVER, &s);
    bool ok = flg_server_parse_f64(cm_buf_slice(&s), out);
    cm_buf_free(&s);
    return ok;
}

static void prep_between(flg_prep_t *p, cm_json_t v)
{
    double lo, hi;
    p->range_ok = cm_json_type(v) == CM_JSON_ARRAY && cm_json_len(v) == 2 &&
                  server_f64(cm_json_at(v, 0), &lo) && server_f64(cm_json_at(v, 1), &hi) &&
                  !isnan(lo) && !isnan(hi) && lo <= hi;
    if (p->range_ok)
        p->range_lo = lo, p->range_hi = hi;
}

static flg_semrange_kind_t range_kind(flg_op_t op)
{
    return op == FLG_OP_SEMVER_TILDE   ? FLG_SEMRANGE_TILDE
           : op == FLG_OP_SEMVER_CARET ? FLG_SEMRANGE_CARET
                                       : FLG_SEMRANGE_WILDCARD;
}

static void prep_semver(flg_prep_t *p, flg_op_t op)
{
    bool range =
        op == FLG_OP_SEMVER_TILDE || op == FLG_OP_SEMVER_CARET || op == FLG_OP_SEMVER_WILDCARD;
    if (range) {
        p->node_sem_ok = flg_semver_node_range(range_kind(op), p->js_str, &p->node_range);
        p->full_sem_ok = flg_semreq_parse(range_kind(op), p->js_str, &p->full_req);
    } else {
        p->node_sem_ok = flg_semver_node_parse(p->js_str, &p->node_sem);
        p->full_sem_ok = flg_semver_parse(p->js_str, &p->full_sem);
    }
}

static void prep_dates(flg_prep_t *p, cm_json_t v)
{
    flg_date_t *nd = &p->node_date, *sd = &p->server_date;
    cm_json_type_t t = cm_json_type(v);
    /* posthog-node: booleans refused; relative text; then new Date(string | number). */
    if (t != CM_JSON_BOOL && flg_date_relative_parse(p->js_str, &nd->n, &nd->unit))
        nd->kind = FLG_DATE_RELATIVE;
    else if (t == CM_JSON_STRING && flg_js_date_parse(p->js_str, &nd->ms, &nd->naive))
        nd->kind = FLG_DATE_ABSOLUTE;
    else if (t == CM_JSON_NUMBER && flg_js_date_from_number(flg_js_number(v), &nd->ms))
        nd->kind = FLG_DATE_ABSOLUTE;
    /* The server: the filter must be a string. */
    if (t != CM_JSON_STRING)
        return;
    if (flg_date_relative_parse(p->js_str, &sd->n, &sd->unit))
        sd->kind = FLG_DATE_RELATIVE;
    else if (flg_date_parse(p->js_str, &sd->ms, &sd->naive))
        sd->kind = FLG_DATE_ABSOLUTE;
}

void flg_prep_filter(flg_filter_t *f, cm_arena_t *a)
{
    flg_prep_t *p = &f->prep;
    cm_buf_t b = CM_BUF_INIT;
    flg_js_string(f->value, &b);
    p->js_str = keep(a, &b);
    cm_buf_reset(&b);
    flg_lower_ascii(p->js_str, &b);
    p->js_lower = keep(a, &b);
    cm_buf_free(&b);
    p->js_num = cm_json_type(f->value) == CM_JSON_NUMBER ? flg_js_number(f->value)
                                                         : flg_js_parse_float(p->js_str);
    if (f->type == FLG_PT_COHORT || f->type == FLG_PT_FLAG)
        return;
    switch (f->op) {
    case FLG_OP_EXACT:
    case FLG_OP_IS_NOT: prep_exact(p, f->value, a); break;
    case FLG_OP_ICONTAINS_MULTI:
    case FLG_OP_NOT_ICONTAINS_MULTI: prep_multi(p, f->value, a); break;
    case FLG_OP_BETWEEN:
    case FLG_OP_NOT_BETWEEN: prep_between(p, f->value); break;
    case FLG_OP_REGEX:
    case FLG_OP_NOT_REGEX: p->re = flg_regex_new(p->js_str); break;
    case FLG_OP_IS_DATE_BEFORE:
    case FLG_OP_IS_DATE_AFTER:
    case FLG_OP_IS_DATE_EXACT: prep_dates(p, f->value); break;
    default:
        if (f->op >= FLG_OP_SEMVER_EQ && f->op <= FLG_OP_SEMVER_WILDCARD)
            prep_semver(p, f->op);
        break;
    }
}
