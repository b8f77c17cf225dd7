/*
 * table.c - the SQL of the materialized tables; see table.h. The reads
 * are written for the tables the materializer made: a HogQL endpoint's
 * holds the query's columns and one per variable (a range variable's by
 * day), an insight's the five columns of its rows (docs/insights.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "query/table.h"

void api_query_table_ident(cm_buf_t *b, cm_evstore_dialect_t d, const char *name)
{
    bool ch = d != CM_EVSTORE_SQL_SQLITE;
    char q = ch ? '`' : '"';
    cm_buf_putc(b, q);
    for (const char *p = name; *p; p++) {
        /* ClickHouse reads escapes inside backquotes: a lone backslash
         * would take the closing quote with it */
        if (*p == q || (ch && *p == '\\'))
            cm_buf_putc(b, ch ? '\\' : '"');
        cm_buf_putc(b, *p);
    }
    cm_buf_putc(b, q);
}

static bool plain(const char *s)
{
    static const char word[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    return *s && !(*s >= '0' && *s <= '9') && s[strspn(s, word)] == '\0';
}

void api_query_table_name(cm_buf_t *b, cm_evstore_dialect_t d, const char *table)
{
    /* the names the api makes are plain and go as they are; anything else
     * (a stored name gone wrong) is still one name */
    if (plain(table))
        cm_buf_append_cstr(b, table);
    else
        api_query_table_ident(b, d, table);
}

void api_query_table_create(cm_buf_t *b, cm_evstore_dialect_t d, const char *table,
                            const char *select)
{
    cm_buf_append_cstr(b, "CREATE TABLE ");
    api_query_table_name(b, d, table);
    /* ClickHouse wants an engine; Log: written once, read whole */
    cm_buf_appendf(b, "%s AS %s", d != CM_EVSTORE_SQL_SQLITE ? " ENGINE = Log" : "", select);
}

void api_query_table_drop(cm_buf_t *b, cm_evstore_dialect_t d, const char *table)
{
    cm_buf_append_cstr(b, "DROP TABLE IF EXISTS ");
    api_query_table_name(b, d, table);
}

void api_query_table_describe(cm_buf_t *b, const char *select)
{
    cm_buf_appendf(b, "DESCRIBE TABLE (%s)", select);
}

/* database.table, each part a name as api_query_table_name writes it */
static void qualified(cm_buf_t *b, const char *database, const char *table)
{
    api_query_table_name(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, database);
    cm_buf_putc(b, '.');
    api_query_table_name(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, table);
}

/* a string literal's body: the name inside '' (backslash and quote escaped) */
static void literal_body(cm_buf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '\'')
            cm_buf_putc(b, '\\');
        cm_buf_putc(b, *s);
    }
}

void api_query_table_create_replicated(cm_buf_t *b, const char *table, const char *cluster,
                                       const char *database, const char *const *names,
                                       const char *const *types, size_t ncols)
{
    cm_buf_append_cstr(b, "CREATE TABLE ");
    qualified(b, database, table);
    cm_buf_append_cstr(b, " ON CLUSTER ");
    api_query_table_name(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, cluster);
    cm_buf_append_cstr(b, " (");
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            cm_buf_append_cstr(b, ", ");
        api_query_table_ident(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, names[i]);
        /* the type as DESCRIBE spelled it: the server's own text */
        cm_buf_appendf(b, " %s", types[i]);
    }
    /* every node a replica of one table: its path has no {shard} */
    cm_buf_append_cstr(b, ") ENGINE = ReplicatedMergeTree('/clickhouse/tables/noshard/");
    literal_body(b, database);
    cm_buf_putc(b, '.');
    literal_body(b, table);
    cm_buf_append_cstr(b, "', '{shard}-{replica}') ORDER BY tuple()");
}

void api_query_table_fill(cm_buf_t *b, const char *table, const char *select)
{
    cm_buf_append_cstr(b, "INSERT INTO ");
    api_query_table_name(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, table);
    cm_buf_appendf(b, " %s", select);
}

void api_query_table_drop_replicated(cm_buf_t *b, const char *table, const char *cluster,
                                     const char *database)
{
    cm_buf_append_cstr(b, "DROP TABLE IF EXISTS ");
    qualified(b, database, table);
    cm_buf_append_cstr(b, " ON CLUSTER ");
    api_query_table_name(b, CM_EVSTORE_SQL_CLICKHOUSE_1816, cluster);
}

void api_query_table_columns(cm_buf_t *b, cm_evstore_dialect_t d, const char *table)
{
    cm_buf_append_cstr(b, "SELECT * FROM ");
    api_query_table_name(b, d, table);
    cm_buf_append_cstr(b, " LIMIT 0");
}

void api_query_table_count(cm_buf_t *b, cm_evstore_dialect_t d, const char *table)
{
    cm_buf_append_cstr(b, "SELECT count(*) FROM ");
    api_query_table_name(b, d, table);
}

/* A value for the read: a SQLite parameter, or a ClickHouse literal. */
static void value(api_query_table_sql_t *o, cm_evstore_dialect_t d, const api_query_value_t *v,
                  bool day)
{
    char text[64];
    const char *s = NULL;
    size_t len = 0;
    char type = 't';
    switch (v->kind) {
    case API_QV_STRING:
        s = v->s;
        len = v->len;
        break;
    case API_QV_INT:
    case API_QV_BOOL:
        len = (size_t)snprintf(text, sizeof(text), "%lld", (long long)v->i);
        s = text;
        type = 'i';
        break;
    case API_QV_FLOAT:
        len = (size_t)snprintf(text, sizeof(text), "%.17g", v->f);
        s = text;
        type = 'f';
        break;
    default: s = ""; break;
    }
    if (day) { /* the value's day: YYYY-MM-DD 00:00:00, as the table's column */
        len = (size_t)snprintf(text, sizeof(text), "%.10s 00:00:00", s);
        s = text;
        type = 't';
    }
    if (d != CM_EVSTORE_SQL_SQLITE) {
        if (type == 't')
            cm_evstore_sql_quote(d, &o->sql, (cm_slice_t){s, len});
        else
            cm_buf_append(&o->sql, s, len);
        return;
    }
    o->params = cm_xrealloc(o->params, (o->nparams + 2) * sizeof(*o->params));
    o->types = cm_xrealloc(o->types, o->nparams + 2);
    o->params[o->nparams] = cm_xmalloc(len + 1);
    memcpy(o->params[o->nparams], s, len);
    o->params[o->nparams][len] = '\0';
    o->types[o->nparams++] = type;
    o->params[o->nparams] = NULL;
    o->types[o->nparams] = '\0';
    cm_buf_appendf(&o->sql, "$%zu", o->nparams);
}

static void comparisons(api_query_table_sql_t *o, cm_evstore_dialect_t d,
                        const api_query_table_var_t *v)
{
    const char *op = v->ops;
    for (;;) {
        op += strspn(op, " ");
        size_t n = strcspn(op, " ");
        if (n == 0)
            return;
        cm_buf_append_cstr(&o->sql, " AND ");
        api_query_table_ident(&o->sql, d, v->column);
        cm_buf_appendf(&o->sql, " %.*s ", (int)n, op);
        value(o, d, v->value, v->range);
        op += n;
    }
}

void api_query_table_read(const api_query_table_read_t *r, cm_evstore_dialect_t d,
                          api_query_table_sql_t *out)
{
    *out = (api_query_table_sql_t){
        .sql = CM_BUF_INIT, .params = cm_xcalloc(1, sizeof(char *)), .types = cm_xcalloc(1, 1)};
    cm_buf_t *sql = &out->sql, group = CM_BUF_INIT;
    cm_buf_append_cstr(sql, "SELECT ");
    for (size_t c = 0; c < r->ncols; c++) {
        const api_query_table_col_t *col = &r->cols[c];
        if (c)
            cm_buf_append_cstr(sql, ", ");
        char agg = r->reaggregate && col->reagg ? col->reagg : 'g';
        if (agg != 'g')
            cm_buf_append_cstr(sql, agg == 'c'   ? "coalesce(sum("
                                    : agg == 's' ? "sum("
                                    : agg == 'n' ? "min("
                                                 : "max(");
        api_query_table_ident(sql, d, col->column);
        if (agg != 'g')
            cm_buf_append_cstr(sql, agg == 'c' ? "), 0)" : ")");
        else if (r->reaggregate) {
            if (group.len)
                cm_buf_append_cstr(&group, ", ");
            api_query_table_ident(&group, d, col->column);
        }
    }
    cm_buf_append_cstr(sql, " FROM ");
    api_query_table_name(sql, d, r->table);
    cm_buf_append_cstr(sql, " WHERE 1 = 1");
    for (size_t i = 0; i < r->nvars; i++)
        if (r->vars[i].value != NULL)
            comparisons(out, d, &r->vars[i]);
    if (r->reaggregate && group.len)
        cm_buf_appendf(sql, " GROUP BY %s", cm_buf_cstr(&group));
    cm_buf_appendf(sql, " LIMIT %lld OFFSET %lld", (long long)r->limit, (long long)r->offset);
    cm_buf_free(&group);
}

void api_query_table_sql_free(api_query_table_sql_t *s)
{
    for (size_t i = 0; i < s->nparams; i++)
        free(s->params[i]);
    free(s->params);
    free(s->types);
    cm_buf_free(&s->sql);
    *s = (api_query_table_sql_t){.sql = CM_BUF_INIT};
}

size_t api_query_table_insight(cm_buf_t *b, cm_evstore_dialect_t d, const char *table,
                               const char *const cols[5], const cm_slice_t *key)
{
    size_t nparams = 0;
    cm_buf_append_cstr(b, "SELECT ");
    for (size_t i = 0; i < 5; i++) {
        if (i)
            cm_buf_append_cstr(b, ", ");
        api_query_table_name(b, d, cols[i]);
    }
    cm_buf_append_cstr(b, " FROM ");
    api_query_table_name(b, d, table);
    if (key != NULL) {
        cm_buf_append_cstr(b, " WHERE ");
        api_query_table_name(b, d, cols[2]);
        cm_buf_append_cstr(b, " = ");
        if (d != CM_EVSTORE_SQL_SQLITE) { /* ClickHouse's text carries the literal */
            cm_evstore_sql_quote(d, b, *key);
        } else {
            cm_buf_append_cstr(b, "$1");
            nparams = 1;
        }
    }
    cm_buf_append_cstr(b, " ORDER BY ");
    api_query_table_name(b, d, cols[0]);
    return nparams;
}
