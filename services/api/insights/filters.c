/*
 * filters.c - PostHog property filters and breakdown properties as HogQL
 * (see insights_int.h). Property keys are quoted identifiers in the text;
 * every value is a bound variable, so no user value is ever part of the
 * HogQL the compiler reads.
 *
 * A filter is {key, value, operator, type}: type "event" (default) or
 * "person"; operators exact (default; a list is "any of"), is_not,
 * icontains, not_icontains, gt, gte, lt, lte, is_set, is_not_set. A group
 * is {type: "AND" | "OR", values: [filters or groups]}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "insights/insights_int.h"

#define MAX_DEPTH 8

static api_query_value_t *next_value(ins_sql_t *q)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->values = cm_xrealloc(q->values, q->cap * sizeof(*q->values));
        q->names = cm_xrealloc(q->names, q->cap * sizeof(*q->names));
    }
    char name[24];
    snprintf(name, sizeof(name), "v%zu", q->n);
    q->names[q->n] = cm_xstrdup(name);
    cm_buf_appendf(&q->sql, "{variables.%s}", name);
    api_query_value_t *v = &q->values[q->n++];
    memset(v, 0, sizeof(*v));
    return v;
}

void api_insights__bind_str(ins_sql_t *q, cm_slice_t s)
{
    api_query_value_t *v = next_value(q);
    char *copy = cm_xmalloc(s.len + 1);
    if (s.len) /* an empty slice may have no bytes at all */
        memcpy(copy, s.p, s.len);
    copy[s.len] = '\0';
    v->kind = API_QV_STRING;
    v->s = copy;
    v->len = s.len;
}

void api_insights__bind_float(ins_sql_t *q, double d)
{
    api_query_value_t *v = next_value(q);
    v->kind = API_QV_FLOAT;
    v->f = d;
}

void api_insights__sql_free(ins_sql_t *q)
{
    for (size_t i = 0; i < q->n; i++) {
        free(q->names[i]);
        if (q->values[i].kind == API_QV_STRING)
            free((char *)q->values[i].s);
    }
    free(q->names);
    free(q->values);
    cm_buf_free(&q->sql);
    memset(q, 0, sizeof(*q));
}

/* A key as a quoted identifier: backticks, with ` and \ escaped. */
static void ident(cm_buf_t *b, cm_slice_t key)
{
    cm_buf_putc(b, '`');
    for (size_t i = 0; i < key.len; i++) {
        char c = key.p[i];
        if (c == '`' || c == '\\')
            cm_buf_putc(b, '\\');
        if (c == '\n')
            cm_buf_append_cstr(b, "\\n");
        else if (c == '\0')
            cm_buf_append_cstr(b, "\\0");
        else
            cm_buf_putc(b, c);
    }
    cm_buf_putc(b, '`');
}

int api_insights__property(ins_sql_t *q, cm_slice_t key, cm_slice_t type)
{
    if (type.p == NULL || cm_slice_eq_cstr(type, "event"))
        cm_buf_append_cstr(&q->sql, "properties.");
    else if (cm_slice_eq_cstr(type, "person"))
        cm_buf_append_cstr(&q->sql, "person.properties.");
    else
        return -1;
    ident(&q->sql, key);
    return 0;
}

/* A filter value as text: strings as they are, numbers and booleans as
 * JSON writes them (a property's value is compared as text). */
static int value_text(cm_json_t v, cm_buf_t *scratch, cm_slice_t *out)
{
    switch (cm_json_type(v)) {
    case CM_JSON_STRING: return cm_json_as_str(v, scratch, out);
    case CM_JSON_NUMBER:
    case CM_JSON_BOOL: *out = cm_json_raw(v); return 0;
    default: return -1;
    }
}

/* A number, or a string that is one. */
static bool number(cm_json_t v, cm_buf_t *scratch, double *d)
{
    if (cm_json_type(v) == CM_JSON_NUMBER)
        return cm_json_as_double(v, d) == 0;
    cm_slice_t s;
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_as_str(v, scratch, &s) != 0 || s.len == 0 ||
        s.len > 60)
        return false;
    char num[64], *end;
    memcpy(num, s.p, s.len);
    num[s.len] = '\0';
    *d = strtod(num, &end);
    return *end == '\0';
}

static int bind_text(ins_sql_t *q, cm_json_t v, cm_buf_t *err)
{
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s;
    int rc = value_text(v, &scratch, &s);
    if (rc == 0)
        api_insights__bind_str(q, s);
    else
        cm_buf_appendf(err, "A property filter's value must be a string, number or boolean");
    cm_buf_free(&scratch);
    return rc == 0 ? 0 : CM_EINVAL;
}

static int filter(ins_sql_t *q, cm_json_t f, cm_buf_t *err)
{
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t key = CM_SLICE_NULL, type = CM_SLICE_NULL, op = CM_SLICE_LIT("exact");
    cm_json_t k = cm_json_get(f, "key"), t = cm_json_get(f, "type"), o = cm_json_get(f, "operator");
    cm_json_t v = cm_json_get(f, "value");
    int rc = CM_EINVAL;
    if (cm_json_type(k) != CM_JSON_STRING || cm_json_as_str(k, &scratch, &key) != 0 ||
        key.len == 0) {
        cm_buf_appendf(err, "A property filter needs a key");
        goto done;
    }
    if (cm_json_type(t) == CM_JSON_STRING)
        type = cm_json_str_inner(t);
    if (cm_json_type(o) == CM_JSON_STRING)
        op = cm_json_str_inner(o);
    cm_buf_append_cstr(&q->sql, "(");
    size_t at = q->sql.len;
    cm_buf_append_cstr(&q->sql, "toString(");
    int known = api_insights__property(q, key, type);
    cm_buf_append_cstr(&q->sql, ")");
    if (known != 0) {
        cm_buf_appendf(err, "Property filters of type '%.*s' are not supported: event or person",
                       (int)(type.len > 40 ? 40 : type.len), type.p);
        goto done;
    }
    /* the property's text, for operators that name it twice */
    char prop[1024];
    snprintf(prop, sizeof(prop), "%.*s", (int)(q->sql.len - at), q->sql.p + at);
    bool list = cm_json_type(v) == CM_JSON_ARRAY;
    if (cm_slice_eq_cstr(op, "exact") || cm_slice_eq_cstr(op, "is_not")) {
        bool not = cm_slice_eq_cstr(op, "is_not");
        if (list) {
            cm_buf_append_cstr(&q->sql, not ? " NOT IN (" : " IN (");
            size_t n = cm_json_len(v);
            if (n == 0) {
                cm_buf_appendf(err, "A property filter's list of values is empty");
                goto done;
            }
            for (size_t i = 0; i < n; i++) {
                if (i)
                    cm_buf_append_cstr(&q->sql, ", ");
                if (bind_text(q, cm_json_at(v, i), err) != 0)
                    goto done;
            }
            cm_buf_append_cstr(&q->sql, ")");
        } else {
            cm_buf_append_cstr(&q->sql, not ? " != " : " = ");
            if (bind_text(q, v, err) != 0)
                goto done;
        }
        if (not ) /* a missing property is "not" the value, as PostHog counts it */
            cm_buf_appendf(&q->sql, " OR %s IS NULL", prop);
    } else if (cm_slice_eq_cstr(op, "icontains") || cm_slice_eq_cstr(op, "not_icontains")) {
        bool not = op.p[0] == 'n';
        q->sql.len = at;
        cm_buf_appendf(&q->sql, "position(lower(%s), lower(", prop);
        if (bind_text(q, v, err) != 0)
            goto done;
        cm_buf_append_cstr(&q->sql, not ? ")) = 0" : ")) > 0");
        if (not )
            cm_buf_appendf(&q->sql, " OR %s IS NULL", prop);
    } else if (cm_slice_eq_cstr(op, "gt") || cm_slice_eq_cstr(op, "gte") ||
               cm_slice_eq_cstr(op, "lt") || cm_slice_eq_cstr(op, "lte")) {
        double d;
        if (!number(v, &scratch, &d)) {
            cm_buf_appendf(err, "The operator %.*s needs a number", (int)op.len, op.p);
            goto done;
        }
        q->sql.len = at;
        const char *sym = op.p[0] == 'g' ? (op.len == 3 ? ">=" : ">") : (op.len == 3 ? "<=" : "<");
        cm_buf_appendf(&q->sql, "toFloat(%s) %s ", prop, sym);
        api_insights__bind_float(q, d);
    } else if (cm_slice_eq_cstr(op, "is_set")) {
        cm_buf_append_cstr(&q->sql, " IS NOT NULL");
    } else if (cm_slice_eq_cstr(op, "is_not_set")) {
        cm_buf_append_cstr(&q->sql, " IS NULL");
    } else {
        cm_buf_appendf(err, "The property operator '%.*s' is not supported here",
                       (int)(op.len > 40 ? 40 : op.len), op.p);
        goto done;
    }
    cm_buf_append_cstr(&q->sql, ")");
    rc = 0;
done:
    cm_buf_free(&scratch);
    return rc;
}

static int group(ins_sql_t *q, cm_json_t g, int depth, cm_buf_t *err);

/* One entry of a list or group: a filter, or a nested group. */
static int entry(ins_sql_t *q, cm_json_t e, int depth, cm_buf_t *err)
{
    if (cm_json_type(e) != CM_JSON_OBJECT) {
        cm_buf_appendf(err, "A property filter must be an object");
        return CM_EINVAL;
    }
    if (cm_json_exists(cm_json_get(e, "values")))
        return group(q, e, depth + 1, err);
    return filter(q, e, err);
}

static int group(ins_sql_t *q, cm_json_t g, int depth, cm_buf_t *err)
{
    if (depth > MAX_DEPTH) {
        cm_buf_appendf(err, "Property groups nest too deep");
        return CM_EINVAL;
    }
    cm_json_t t = cm_json_get(g, "type"), values = cm_json_get(g, "values");
    bool or = cm_json_str_eq(t, CM_SLICE_LIT("OR"));
    if (cm_json_exists(t) && ! or &&!cm_json_str_eq(t, CM_SLICE_LIT("AND"))) {
        cm_buf_appendf(err, "A property group's type is AND or OR");
        return CM_EINVAL;
    }
    if (cm_json_type(values) != CM_JSON_ARRAY) {
        cm_buf_appendf(err, "A property group's values must be a list");
        return CM_EINVAL;
    }
    size_t n = cm_json_len(values);
    if (n == 0) {
        cm_buf_append_cstr(&q->sql, "1 = 1");
        return 0;
    }
    cm_buf_append_cstr(&q->sql, "(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            cm_buf_append_cstr(&q->sql, or ? " OR " : " AND ");
        int rc = entry(q, cm_json_at(values, i), depth, err);
        if (rc != 0)
            return rc;
    }
    cm_buf_append_cstr(&q->sql, ")");
    return 0;
}

int api_insights__filters(ins_sql_t *q, cm_json_t filters, cm_buf_t *err)
{
    if (!cm_json_exists(filters) || cm_json_is_null(filters))
        return 0;
    cm_json_type_t t = cm_json_type(filters);
    if (t == CM_JSON_ARRAY) {
        for (size_t i = 0; i < cm_json_len(filters); i++) {
            cm_buf_append_cstr(&q->sql, " AND ");
            int rc = entry(q, cm_json_at(filters, i), 0, err);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    if (t == CM_JSON_OBJECT) {
        cm_buf_append_cstr(&q->sql, " AND ");
        return group(q, filters, 0, err);
    }
    cm_buf_appendf(err, "properties must be a list of filters or a group");
    return CM_EINVAL;
}
