/*
 * query.c - the compiler's entry points (query.h): parse and resolve once,
 * print for a store as often as asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/tzone.h"
#include "query/print_int.h"

int api_query_parse(const char *text, size_t len, api_query_t **out, cm_buf_t *err)
{
    *out = NULL;
    if (len > Q_MAX_TEXT) {
        cm_buf_appendf(err, "the query is too long (more than %d bytes)", Q_MAX_TEXT);
        return CM_EINVAL;
    }
    api_query_t *q = cm_xcalloc(1, sizeof(*q));
    q->arena = CM_ARENA_INIT;
    cm_slice_t src =
        cm_arena_dup(&q->arena, (cm_slice_t){text, len}); /* NUL after: re2c's sentinel */
    q_parse_t p = {.arena = &q->arena, .src = src.p, .len = len, .err = err};
    q->root = q_parse_text(&p);
    if (q->root == NULL || q_resolve(q, err) != 0) {
        api_query_free(q);
        return CM_EINVAL;
    }
    *out = q;
    return 0;
}

void api_query_free(api_query_t *q)
{
    if (q == NULL)
        return;
    cm_arena_free(&q->arena);
    free(q);
}

size_t api_query_nvariables(const api_query_t *q)
{
    return q->nvars;
}

const char *api_query_variable(const api_query_t *q, size_t i)
{
    return i < q->nvars ? q->vars[i] : NULL;
}

static const char *type_name(q_type_t t)
{
    switch (t) {
    case Q_T_NULL: return "Nothing";
    case Q_T_BOOL: return "UInt8";
    case Q_T_INT: return "Int64";
    case Q_T_FLOAT: return "Float64";
    case Q_T_DATE: return "Date";
    case Q_T_DATETIME: return "DateTime";
    case Q_T_UUID: return "UUID";
    case Q_T_ARRAY: return "Array";
    case Q_T_TUPLE: return "Tuple";
    default: return "String";
    }
}

/* The zone of the answer's column k (UTC for a stored column by *: it
 * leaves the store as it is kept, an instant, and is written in the
 * project's zone like any other). */
static cm_slice_t out_zone(const q_printer_t *pr, const q_select_t *s, size_t k)
{
    while (s->nparts > 0)
        s = s->parts[0];
    for (size_t i = 0; i < s->ncols; i++)
        if (s->cols[i].expr->kind == QE_STAR)
            return q_project_zone(pr);
    return k < s->ncols ? q_zone_of(pr, s->cols[k].expr) : q_project_zone(pr);
}

int api_query_print(const api_query_t *q, const api_query_print_opts_t *o, api_query_sql_t *out,
                    cm_buf_t *err)
{
    memset(out, 0, sizeof(*out));
    cm_buf_init(&out->sql);
    out->whole = o->whole;
    out->limit = o->limit <= 0 ? API_QUERY_DEFAULT_ROWS : o->limit;
    if (out->limit > API_QUERY_MAX_ROWS)
        out->limit = API_QUERY_MAX_ROWS;
    out->offset = o->offset > 0 ? o->offset : 0;
    if (o->timezone != NULL && !q_zone_is_utc(cm_slice_from_cstr(o->timezone))) {
        /* a zone both stores compute in (ICU's names; the project's setting is checked too) */
        cm_tzone_t *z = cm_tzone_open(cm_slice_from_cstr(o->timezone));
        if (z == NULL) {
            cm_buf_appendf(err, "The project's time zone '%.64s' is not known", o->timezone);
            return CM_EINVAL;
        }
        cm_tzone_free(z);
    }
    /* .top stays NULL: every column gets a name of ours (print_int.h) */
    q_printer_t pr = {.o = o,
                      .ch = o->dialect == API_QUERY_CLICKHOUSE,
                      .out = &out->sql,
                      .res = out,
                      .err = err,
                      .root = q->root};
    q_pselect(&pr, q->root, true);
    if (pr.failed)
        return CM_EINVAL;
    const q_select_t *s = q->root;
    out->cols = cm_xcalloc(s->nout ? s->nout : 1, sizeof(*out->cols));
    out->ncols = s->nout;
    for (size_t i = 0; i < s->nout; i++) {
        cm_slice_t n = s->out_names[i];
        out->cols[i].name = cm_xmalloc(n.len + 1);
        memcpy(out->cols[i].name, n.p, n.len);
        out->cols[i].name[n.len] = '\0';
        const char *t = type_name(s->out_types[i]);
        char zoned[96];
        cm_slice_t z = s->out_types[i] == Q_T_DATETIME ? out_zone(&pr, s, i) : CM_SLICE_NULL;
        if (!q_zone_is_utc(z)) {
            snprintf(zoned, sizeof(zoned), "DateTime('%.*s')", (int)z.len, z.p);
            t = zoned;
        }
        char arr[64];
        if (s->out_types[i] == Q_T_ARRAY) { /* Array(Int64), as ClickHouse names it */
            q_type_t el = s->out_elems[i];
            const q_expr_t *c = s->out_exprs[i];
            if (el == Q_T_ARRAY && c != NULL && c->nmembers == 1 && c->members[0] != Q_T_ANY &&
                c->members[0] != Q_T_ARRAY && c->members[0] != Q_T_TUPLE)
                snprintf(arr, sizeof(arr), "Array(Array(%s))", type_name(c->members[0]));
            else
                snprintf(arr, sizeof(arr), "Array(%s)",
                         el == Q_T_ANY || el == Q_T_ARRAY ? "Array" : type_name(el));
            t = arr;
        }
        if (s->out_nullable[i] && s->out_types[i] != Q_T_NULL && s->out_types[i] != Q_T_ARRAY &&
            s->out_types[i] != Q_T_TUPLE) {
            size_t n = strlen(t) + 11;
            out->cols[i].type = cm_xmalloc(n);
            snprintf(out->cols[i].type, n, "Nullable(%s)", t);
        } else {
            out->cols[i].type = cm_xstrdup(t);
        }
    }
    return 0;
}

void api_query_params_text(const api_query_sql_t *s, char **text, char *types)
{
    for (size_t i = 0; i < s->nparams; i++) {
        const api_query_value_t *v = s->params[i];
        char num[40];
        text[i] = NULL;
        switch (v->kind) {
        case API_QV_NULL: types[i] = 't'; break;
        case API_QV_STRING:
            types[i] = 't';
            text[i] = cm_xmalloc(v->len + 1);
            memcpy(text[i], v->s, v->len);
            text[i][v->len] = '\0';
            break;
        case API_QV_INT:
        case API_QV_BOOL:
            types[i] = 'i';
            snprintf(num, sizeof(num), "%lld", (long long)v->i);
            text[i] = cm_xstrdup(num);
            break;
        case API_QV_FLOAT:
            types[i] = 'f';
            snprintf(num, sizeof(num), "%.17g", v->f);
            text[i] = cm_xstrdup(num);
            break;
        case API_QV_LIST: types[i] = 't'; break; /* never a parameter */
        }
    }
}

void api_query_sql_free(api_query_sql_t *s)
{
    cm_buf_free(&s->sql);
    free(s->params);
    for (size_t i = 0; i < s->ncols; i++) {
        free(s->cols[i].name);
        free(s->cols[i].type);
    }
    free(s->cols);
    memset(s, 0, sizeof(*s));
}

api_query_ch_version_t api_query_ch_version(cm_evstore_dialect_t d)
{
    switch (d) {
    case CM_EVSTORE_SQL_CLICKHOUSE_24: return API_QUERY_CH_24;
    case CM_EVSTORE_SQL_CLICKHOUSE_MODERN: return API_QUERY_CH_21;
    default: return API_QUERY_CH_1816;
    }
}
