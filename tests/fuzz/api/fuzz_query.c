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
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

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
    for (int d = 0; d < 3; d++) {
        api_query_print_opts_t o = {
            .dialect = d == 0 ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
            .clickhouse_modern = d == 2,
            .project_id = 4242,
            .var_names = names,
            .var_values = vals,
            .nvars = nv,
            .limit = (int64_t)(size % 7),
            .offset = (int64_t)(size % 3),
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
