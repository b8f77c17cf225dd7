/*
 * breakdown.c - breakdowns, shared by trends.c and retention.c: the
 * breakdownFilter read, the breakdown key as HogQL, and the breakdown
 * variables as filters and as a key.
 *
 * The key is one text column: each breakdown property's value (NULL as
 * ''), joined with \x1f, so one or several breakdowns rank, map to "Other"
 * (a plain IN) and group alike; the answer splits it again. A breakdown
 * variable filters rows to coalesce(value, '') = the variable (null: '').
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "insights/insights_int.h"

#define DEFAULT_BREAKDOWN_LIMIT 25
#define MAX_BREAKDOWN_LIMIT     10000

int api_insights__breakdowns_read(ins_breakdowns_t *b, cm_json_t bf, cm_buf_t *err)
{
    b->limit = DEFAULT_BREAKDOWN_LIMIT;
    if (!cm_json_exists(bf) || cm_json_is_null(bf))
        return 0;
    int64_t lim = DEFAULT_BREAKDOWN_LIMIT;
    cm_json_t l = cm_json_get(bf, "breakdown_limit");
    if (cm_json_exists(l) && !cm_json_is_null(l) &&
        (cm_json_as_int64(l, &lim) != 0 || lim < 1 || lim > MAX_BREAKDOWN_LIMIT)) {
        cm_buf_appendf(err, "breakdown_limit must be 1 to %d", MAX_BREAKDOWN_LIMIT);
        return CM_EINVAL;
    }
    b->limit = (size_t)lim;
    cm_json_t many = cm_json_get(bf, "breakdowns");
    if (cm_json_type(many) == CM_JSON_ARRAY && cm_json_len(many) > 0) {
        if (cm_json_len(many) > INS_MAX_BREAKDOWNS) {
            cm_buf_appendf(err, "At most %d breakdowns", INS_MAX_BREAKDOWNS);
            return CM_EINVAL;
        }
        for (size_t i = 0; i < cm_json_len(many); i++) {
            cm_json_t e = cm_json_at(many, i);
            ins_breakdown_t *d = &b->bd[b->n++];
            d->property = api_insights__str_dup(cm_json_get(e, "property"));
            d->type = api_insights__str_dup(cm_json_get(e, "type"));
            if (d->property == NULL) {
                cm_buf_appendf(err, "breakdowns[%zu] needs a property", i);
                return CM_EINVAL;
            }
        }
    } else if (cm_json_exists(cm_json_get(bf, "breakdown")) &&
               !cm_json_is_null(cm_json_get(bf, "breakdown"))) {
        ins_breakdown_t *d = &b->bd[b->n++];
        d->property = api_insights__str_dup(cm_json_get(bf, "breakdown"));
        d->type = api_insights__str_dup(cm_json_get(bf, "breakdown_type"));
        if (d->property == NULL) {
            cm_buf_appendf(err, "breakdown must be a property name");
            return CM_EINVAL;
        }
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->bd[i].type && strcmp(b->bd[i].type, "event") != 0 &&
            strcmp(b->bd[i].type, "person") != 0) {
            cm_buf_appendf(err, "Breakdowns of type '%s' are not supported: event or person",
                           b->bd[i].type);
            return CM_EINVAL;
        }
    return 0;
}

void api_insights__breakdowns_free(ins_breakdowns_t *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->bd[i].property);
        free(b->bd[i].type);
    }
    b->n = 0;
}

size_t api_insights__breakdown_names(cm_json_t query, cm_slice_t *names, size_t max)
{
    size_t n = 0;
    cm_json_t bf = cm_json_get(query, "breakdownFilter");
    cm_json_t many = cm_json_get(bf, "breakdowns");
    if (cm_json_type(many) == CM_JSON_ARRAY && cm_json_len(many) > 0) {
        for (size_t i = 0; i < cm_json_len(many) && n < max; i++) {
            cm_json_t p = cm_json_get(cm_json_at(many, i), "property");
            if (cm_json_type(p) == CM_JSON_STRING)
                names[n++] = cm_json_str_inner(p);
        }
    } else if (cm_json_type(cm_json_get(bf, "breakdown")) == CM_JSON_STRING && n < max) {
        names[n++] = cm_json_str_inner(cm_json_get(bf, "breakdown"));
    }
    return n;
}

static void property(ins_sql_t *q, const ins_breakdown_t *d)
{
    api_insights__property(q, cm_slice_from_cstr(d->property),
                           d->type ? cm_slice_from_cstr(d->type) : CM_SLICE_NULL);
}

void api_insights__breakdown_key(ins_sql_t *q, const ins_breakdowns_t *b)
{
    cm_buf_append_cstr(&q->sql, b->n > 1 ? "concat(" : "");
    for (size_t i = 0; i < b->n; i++) {
        if (i)
            cm_buf_append_cstr(&q->sql, ", '\\x1f', ");
        cm_buf_append_cstr(&q->sql, "coalesce(toString(");
        property(q, &b->bd[i]);
        cm_buf_append_cstr(&q->sql, "), '')");
    }
    cm_buf_append_cstr(&q->sql, b->n > 1 ? ")" : "");
}

/* A variable's value as the key holds it: a string's text, '' for null,
 * else its JSON (3, true). */
static void var_text(cm_json_t v, cm_buf_t *out)
{
    if (cm_json_is_null(v))
        return;
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_str_append(v, out) != 0) {
        cm_slice_t raw = cm_json_raw(v);
        cm_buf_append(out, raw.p, raw.len);
    }
}

void api_insights__breakdown_filters(ins_sql_t *q, const ins_breakdowns_t *b, cm_json_t vars)
{
    cm_buf_t t = CM_BUF_INIT;
    for (size_t i = 0; i < b->n; i++) {
        cm_json_t v = cm_json_get(vars, b->bd[i].property);
        if (!cm_json_exists(v))
            continue;
        cm_buf_append_cstr(&q->sql, " AND coalesce(toString(");
        property(q, &b->bd[i]);
        cm_buf_append_cstr(&q->sql, "), '') = ");
        cm_buf_reset(&t);
        var_text(v, &t);
        api_insights__bind_str(q, cm_buf_slice(&t));
    }
    cm_buf_free(&t);
}

bool api_insights__breakdown_var_key(const ins_breakdowns_t *b, cm_json_t vars, cm_buf_t *key)
{
    for (size_t i = 0; i < b->n; i++) {
        if (i)
            cm_buf_putc(key, INS_KEY_SEP);
        cm_json_t v = cm_json_get(vars, b->bd[i].property);
        if (cm_json_exists(v))
            var_text(v, key);
    }
    return b->n > 0;
}

/* One breakdown value: null for '' (no value), "Other" for the rest. */
static void breakdown_part(cm_json_writer_t *w, cm_slice_t v)
{
    if (v.len == 0)
        cm_json_null(w);
    else if (cm_slice_eq_cstr(v, INS_OTHER))
        cm_json_str_cstr(w, "Other");
    else
        cm_json_str_s(w, v);
}

void api_insights__breakdown_value(cm_json_writer_t *w, size_t nbd, const char *key)
{
    if (nbd == 1 || strcmp(key, INS_OTHER) == 0) {
        breakdown_part(w, cm_slice_from_cstr(key));
        return;
    }
    cm_json_begin_array(w);
    for (const char *p = key;;) {
        const char *e = strchr(p, INS_KEY_SEP);
        breakdown_part(w, (cm_slice_t){p, e ? (size_t)(e - p) : strlen(p)});
        if (!e)
            break;
        p = e + 1;
    }
    cm_json_end_array(w);
}
