/*
 * fuzz_query.c - libFuzzer target for the HogQL compiler
 * (services/api/query): tokenizer, parser, resolver and both printers on
 * any bytes a client could send as a query.
 *
 * Whatever parses is printed for SQLite and for ClickHouse (18.16 and
 * current), with a value for every variable it uses; a print may refuse
 * (with a message) but must never crash, and every printed query must
 * read its tables through the project filter: the text holds one
 * "WHERE project_id = 4242" per stored table it reads.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "query/resolve.h"

static size_t count(const char *s, size_t n, const char *needle)
{
    size_t c = 0, m = strlen(needle);
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), needle, m)) != NULL; p += m)
        c++;
    return c;
}

/* The SQL with the insides of its quoted literals and names blanked, so
 * that a user's string holding "FROM events" is not counted. */
static char *unquoted(const cm_buf_t *sql, bool ch)
{
    char *s = malloc(sql->len + 1);
    memcpy(s, sql->p, sql->len);
    s[sql->len] = '\0';
    char q = 0;
    for (size_t i = 0; i < sql->len; i++) {
        char c = s[i];
        if (q == 0) {
            if (c == '\'' || c == '"' || c == '`')
                q = c;
            continue;
        }
        if (ch && c == '\\' && i + 1 < sql->len) {
            s[i] = s[i + 1] = ' ';
            i++;
            continue;
        }
        if (c == q) {
            if (!ch && i + 1 < sql->len && s[i + 1] == q) { /* doubled */
                s[i] = s[i + 1] = ' ';
                i++;
                continue;
            }
            q = 0;
            continue;
        }
        s[i] = ' ';
    }
    return s;
}

/* text for SQLite with the fuzz values, or NULL when it does not compile. */
static char *sqlite_text(const char *text, size_t len, const char **names,
                         const api_query_value_t *vals, size_t nv, bool *parsed)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q = NULL;
    char *out = NULL;
    *parsed = api_query_parse(text, len, &q, &err) == 0;
    if (*parsed) {
        api_query_print_opts_t o = {.dialect = API_QUERY_SQLITE,
                                    .project_id = 4242,
                                    .var_names = names,
                                    .var_values = vals,
                                    .nvars = nv};
        api_query_sql_t sql;
        if (api_query_print(q, &o, &sql, &err) == 0)
            out = strndup(sql.sql.p, sql.sql.len);
        api_query_sql_free(&sql);
    }
    api_query_free(q);
    cm_buf_free(&err);
    return out;
}

/* Printed back as HogQL, the query prints the same SQL; a materialization
 * it allows is HogQL that compiles for both stores. */
static void hogql_invariants(const uint8_t *data, size_t size, const api_query_t *q,
                             const char **names, const api_query_value_t *vals, size_t nv)
{
    cm_buf_t back = CM_BUF_INIT, reason = CM_BUF_INIT;
    q_print_hogql_select(q->root, NULL, &back);
    bool parsed, parsed_back;
    char *a = sqlite_text((const char *)data, size, names, vals, nv, &parsed);
    char *b = sqlite_text(back.p, back.len, names, vals, nv, &parsed_back);
    if (!parsed_back || (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0)) {
        fprintf(stderr, "printed back: %s\nwas: %s\nnow: %s\n", cm_buf_cstr(&back), a ? a : "-",
                b ? b : "-");
        abort();
    }
    bool compiles = a != NULL;
    free(a);
    free(b);
    api_query_mat_t m;
    if (api_query_materialize(q, &m, &reason) == 0) {
        /* the table's query has no variables left, and compiles where the
         * query did */
        char *t = sqlite_text(m.hogql.p, m.hogql.len, NULL, NULL, 0, &parsed);
        if (!parsed || (compiles && t == NULL)) {
            fprintf(stderr, "materialized: %s\n", cm_buf_cstr(&m.hogql));
            abort();
        }
        free(t);
        api_query_mat_free(&m);
    } else if (reason.len == 0) {
        abort();
    }
    cm_buf_free(&back);
    cm_buf_free(&reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q = NULL;
    if (api_query_parse((const char *)data, size, &q, &err) != 0) {
        if (err.len == 0) /* a refusal always says why */
            abort();
        cm_buf_free(&err);
        return 0;
    }
    size_t nv = api_query_nvariables(q);
    const char **names = calloc(nv + 1, sizeof(*names));
    api_query_value_t *vals = calloc(nv + 1, sizeof(*vals));
    api_query_value_t items[2] = {{.kind = API_QV_INT, .i = 1},
                                  {.kind = API_QV_STRING, .s = "x'\\", .len = 3}};
    for (size_t i = 0; i < nv; i++) {
        names[i] = api_query_variable(q, i);
        vals[i] = i % 3 == 0 ? (api_query_value_t){.kind = API_QV_STRING, .s = "a'b\\", .len = 4}
                  : i % 3 == 1
                      ? (api_query_value_t){.kind = API_QV_LIST, .items = items, .nitems = 2}
                      : (api_query_value_t){.kind = API_QV_FLOAT, .f = 1.5};
    }
    hogql_invariants(data, size, q, names, vals, nv);
    for (int d = 0; d < 4; d++) { /* SQLite, then ClickHouse 18.16, 21.8+ and 24 */
        api_query_print_opts_t o = {
            .dialect = d == 0 ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
            .clickhouse_version = d == 3   ? API_QUERY_CH_24
                                  : d == 2 ? API_QUERY_CH_21
                                           : API_QUERY_CH_1816,
            .project_id = 4242,
            .var_names = names,
            .var_values = vals,
            .nvars = nv,
            .limit = (int64_t)(size % 7),
            .offset = (int64_t)(size % 3),
            /* half the inputs in a project zone, with weeks from Monday */
            .timezone = size % 2 ? "America/New_York" : NULL,
            .week_start = (int)(size % 2),
        };
        api_query_sql_t sql;
        cm_buf_reset(&err);
        if (api_query_print(q, &o, &sql, &err) == 0) {
            char *text = unquoted(&sql.sql, d > 0);
            size_t n = strlen(text);
            size_t tables = count(text, n, "FROM events") + count(text, n, "FROM persons") +
                            count(text, n, "FROM groups");
            size_t filtered = count(text, n, "WHERE project_id = 4242");
            free(text);
            if (filtered < tables)
                abort();
        } else if (err.len == 0) {
            abort();
        }
        api_query_sql_free(&sql);
    }
    free(names);
    free(vals);
    api_query_free(q);
    cm_buf_free(&err);
    return 0;
}
