/*
 * test_query.c - the HogQL compiler (services/api/query): golden SQL for
 * both stores, the errors a user sees, the limits, and the project filter
 * on every table a hostile query names.
 *
 * Golden cases live in tests/unit/api/query/query_golden*.txt (one file
 * per topic; query_golden_modern*.txt hold what only ClickHouse 21.8+ runs,
 * from the "-- clickhouse 21+" section on):
 *
 *   == name
 *   HogQL text (one or more lines)
 *   -- sqlite
 *   expected SQLite text, or "error: message"
 *   -- clickhouse
 *   expected ClickHouse 18.16 text, or "error: message"
 *   -- clickhouse 21+
 *   expected ClickHouse 21.8 to 23.x text, or "same as 18.16"
 *   -- clickhouse 24
 *   expected ClickHouse 24+ text (the new analyzer), or "same as 21+"
 *
 * UPDATE_GOLDEN=1 rewrites the expected parts from what the compiler
 * prints now (then read the diff before committing it). Variables in a
 * case get fixed values: {variables.s} a string, {variables.n} 42,
 * {variables.l} a list.
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cm/buf.h"
#include "cm/err.h"
#include "query/query.h"
#include "query/resolve.h"

#define GOLDEN_GLOB        "tests/unit/api/query/query_golden*.txt"
#define GOLDEN_MODERN_GLOB "tests/unit/api/query/query_golden_modern*.txt"

static const api_query_value_t list_items[] = {
    {.kind = API_QV_STRING, .s = "a", .len = 1},
    {.kind = API_QV_STRING, .s = "it's", .len = 4},
};
static const char *const var_names[] = {"s", "n", "l", "f", "b"};
static const api_query_value_t var_values[] = {
    {.kind = API_QV_STRING, .s = "x' OR 1=1 --\\", .len = 13},
    {.kind = API_QV_INT, .i = 42},
    {.kind = API_QV_LIST, .items = list_items, .nitems = 2},
    {.kind = API_QV_FLOAT, .f = 1.5},
    {.kind = API_QV_BOOL, .i = 1},
};

/* The project's zone and week start for the case being compiled: a case
 * named "== name @Zone" or "== name @Zone/1" (query_golden_dates.txt). */
static char case_zone[64];
static int case_week_start;

static void case_options(const char *name, size_t len)
{
    case_zone[0] = '\0';
    case_week_start = 0;
    const char *at = memchr(name, '@', len);
    if (at == NULL)
        return;
    size_t n = len - (size_t)(at + 1 - name);
    snprintf(case_zone, sizeof(case_zone), "%.*s", (int)n, at + 1);
    char *w = strrchr(case_zone, '/');
    if (w != NULL && (w[1] == '0' || w[1] == '1') && w[2] == '\0') {
        case_week_start = w[1] - '0';
        *w = '\0';
    }
}

/* What the compiler makes of text for one store (and ClickHouse version):
 * SQL or "error: ...". */
static void compile_v(const char *text, api_query_dialect_t d, api_query_ch_version_t v,
                      cm_buf_t *out)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q = NULL;
    cm_buf_reset(out);
    if (api_query_parse(text, strlen(text), &q, &err) != 0) {
        cm_buf_appendf(out, "error: %.*s", (int)err.len, err.p);
        cm_buf_free(&err);
        return;
    }
    api_query_print_opts_t o = {.dialect = d,
                                .clickhouse_version = v,
                                .project_id = 7,
                                .var_names = var_names,
                                .var_values = var_values,
                                .nvars = 5,
                                .timezone = case_zone[0] ? case_zone : NULL,
                                .week_start = case_week_start};
    api_query_sql_t sql;
    if (api_query_print(q, &o, &sql, &err) != 0)
        cm_buf_appendf(out, "error: %.*s", (int)err.len, err.p);
    else
        cm_buf_append(out, sql.sql.p, sql.sql.len);
    api_query_sql_free(&sql);
    api_query_free(q);
    cm_buf_free(&err);
}

/* The same for ClickHouse 18.16 (modern false) or 21.8+ (true). */
static void compile(const char *text, api_query_dialect_t d, bool modern, cm_buf_t *out)
{
    compile_v(text, d, modern ? API_QUERY_CH_21 : API_QUERY_CH_1816, out);
}

/* The query printed back as HogQL (print_hogql.c); false if it does not parse. */
static bool as_hogql(const char *text, cm_buf_t *out)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q = NULL;
    cm_buf_reset(out);
    bool ok = api_query_parse(text, strlen(text), &q, &err) == 0;
    if (ok)
        q_print_hogql_select(q->root, NULL, out);
    api_query_free(q);
    cm_buf_free(&err);
    return ok;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    cm_buf_t b = CM_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        cm_buf_append(&b, chunk, n);
    fclose(f);
    return cm_buf_detach(&b, NULL);
}

/* A golden case's sections, in this order: every store, and every
 * supported ClickHouse version (query.h). A version's section may instead
 * say that its SQL is the previous version's ("same as 18.16"), which the
 * test checks as well, so a change in any version's SQL fails. A file of
 * query_golden_modern*.txt starts at 21+ (18.16 refuses those queries; the
 * refusals are pinned by test_clickhouse18_refusals). */
static const struct {
    const char *mark;
    api_query_dialect_t dialect;
    api_query_ch_version_t version;
    const char *same; /* what the section may say instead of the previous one's SQL */
} sections[] = {
    {"\n-- sqlite\n", API_QUERY_SQLITE, API_QUERY_CH_1816, NULL},
    {"\n-- clickhouse\n", API_QUERY_CLICKHOUSE, API_QUERY_CH_1816, NULL},
    {"\n-- clickhouse 21+\n", API_QUERY_CLICKHOUSE, API_QUERY_CH_21, "same as 18.16"},
    {"\n-- clickhouse 24\n", API_QUERY_CLICKHOUSE, API_QUERY_CH_24, "same as 21+"},
};
#define NSECTIONS    (sizeof(sections) / sizeof(sections[0]))
#define FIRST_MODERN 2 /* sections[2]: a modern file's first */

static char *trimmed(const char *p, size_t n)
{
    while (n > 0 && p[n - 1] == '\n')
        n--;
    return strndup(p, n);
}

/* One golden file's cases, counted into *ncases; the failures. Each case's
 * query is compiled for every section of its file (a missing section is a
 * failure: UPDATE_GOLDEN=1 adds it), and, printed back as HogQL, compiles
 * to the same text for each. */
static int golden_file(const char *path, int *ncases)
{
    char *text = slurp(path);
    assert_non_null(text);
    bool update = getenv("UPDATE_GOLDEN") != NULL;
    size_t first = strstr(path, "_modern") != NULL ? FIRST_MODERN : 0;
    cm_buf_t rewritten = CM_BUF_INIT, got = CM_BUF_INIT, prev = CM_BUF_INIT;
    int cases = 0, failures = 0;
    char *p = strstr(text, "== ");
    assert_non_null(p);
    cm_buf_append(&rewritten, text, (size_t)(p - text));
    while (p != NULL) {
        char *name_end = strchr(p, '\n');
        assert_non_null(name_end);
        int nlen = (int)(name_end - p);
        char *next = strstr(name_end, "\n== ");
        char *end = next ? next : name_end + strlen(name_end);
        char *qend = strstr(name_end, sections[first].mark);
        assert_true(qend != NULL && qend < end); /* a case has its first section */
        char *query = strndup(name_end + 1, (size_t)(qend - name_end - 1));
        case_options(p, (size_t)nlen);
        cm_buf_append(&rewritten, p, (size_t)(name_end - p + 1));
        cm_buf_append_cstr(&rewritten, query);
        char *at = qend;
        for (size_t k = first; k < NSECTIONS; k++) {
            compile_v(query, sections[k].dialect, sections[k].version, &got);
            char *mark = at ? strstr(at, sections[k].mark) : NULL;
            char *want = NULL;
            if (mark != NULL && mark < end) {
                char *body = mark + strlen(sections[k].mark);
                char *stop = k + 1 < NSECTIONS ? strstr(body - 1, sections[k + 1].mark) : NULL;
                if (stop == NULL || stop > end)
                    stop = end;
                want = trimmed(body, (size_t)(stop - body));
                at = stop;
            }
            bool same_ok = sections[k].same != NULL && k > first;
            bool same = same_ok && prev.len == got.len && memcmp(prev.p, got.p, got.len) == 0;
            bool ok;
            if (want == NULL)
                ok = false;
            else if (same_ok && strcmp(want, sections[k].same) == 0)
                ok = same;
            else
                ok = got.len == strlen(want) && memcmp(got.p, want, got.len) == 0;
            if (!ok) {
                failures++;
                if (!update)
                    print_error("%.*s (%.*s)\n  want: %s\n  got:  %.*s\n", nlen, p,
                                (int)strlen(sections[k].mark) - 5, sections[k].mark + 4,
                                want ? want : "(no such section)", (int)got.len, got.p);
            }
            cm_buf_append_cstr(&rewritten, sections[k].mark);
            if (same)
                cm_buf_append_cstr(&rewritten, sections[k].same);
            else
                cm_buf_append(&rewritten, got.p, got.len);
            cm_buf_reset(&prev);
            cm_buf_append(&prev, got.p, got.len);
            free(want);
        }
        cm_buf_append_cstr(&rewritten, "\n");
        /* printed back as HogQL, it compiles to the same text for each */
        cm_buf_t hogql = CM_BUF_INIT, again = CM_BUF_INIT;
        if (as_hogql(query, &hogql)) {
            for (size_t k = first; k < NSECTIONS; k++) {
                compile_v(cm_buf_cstr(&hogql), sections[k].dialect, sections[k].version, &again);
                compile_v(query, sections[k].dialect, sections[k].version, &got);
                if (again.len != got.len || memcmp(again.p, got.p, got.len) != 0) {
                    failures++;
                    print_error("%.*s (%.*s, printed back as HogQL: %s)\n  want: %.*s\n"
                                "  got:  %.*s\n",
                                nlen, p, (int)strlen(sections[k].mark) - 5, sections[k].mark + 4,
                                cm_buf_cstr(&hogql), (int)got.len, got.p, (int)again.len, again.p);
                }
            }
        }
        cm_buf_free(&hogql);
        cm_buf_free(&again);
        if (next)
            cm_buf_append_cstr(&rewritten, "\n");
        free(query);
        cases++;
        p = next ? next + 1 : NULL;
    }
    if (update) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(rewritten.p, 1, rewritten.len, f);
        fclose(f);
        failures = 0;
    }
    case_options("", 0); /* the next tests run in UTC */
    cm_buf_free(&rewritten);
    cm_buf_free(&got);
    cm_buf_free(&prev);
    free(text);
    *ncases += cases;
    return failures;
}

/* Every tests/unit/api/query/query_golden*.txt but the modern ones: one
 * file per topic, so topics grow without touching each other. */
static void test_golden(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob(GOLDEN_GLOB, 0, NULL, &g), 0);
    int cases = 0, failures = 0;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (strstr(g.gl_pathv[i], "_modern") == NULL)
            failures += golden_file(g.gl_pathv[i], &cases);
    globfree(&g);
    assert_true(cases >= 40);
    assert_int_equal(failures, 0);
}

/* ClickHouse 21.8 and later: what 18.16 refuses prints (nested properties,
 * JSON functions, window functions, several JOINs, LIMIT n OFFSET m BY):
 * tests/unit/api/query/query_golden_modern*.txt, "== name", the query,
 * "-- clickhouse 21+" and "-- clickhouse 24" with their texts. */
static void test_golden_modern(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob(GOLDEN_MODERN_GLOB, 0, NULL, &g), 0);
    int cases = 0, failures = 0;
    for (size_t i = 0; i < g.gl_pathc; i++)
        failures += golden_file(g.gl_pathv[i], &cases);
    globfree(&g);
    assert_true(cases >= 8);
    assert_int_equal(failures, 0);
}

/* ---- errors a user sees ------------------------------------------------------------------ */

static void expect_error(const char *text, const char *want)
{
    cm_buf_t got = CM_BUF_INIT;
    compile(text, API_QUERY_SQLITE, false, &got);
    cm_buf_t w = CM_BUF_INIT;
    cm_buf_appendf(&w, "error: %s", want);
    if (got.len != w.len || memcmp(got.p, w.p, w.len) != 0)
        fail_msg("%s\n  want: %s\n  got:  %.*s", text, w.p, (int)got.len, got.p);
    cm_buf_free(&got);
    cm_buf_free(&w);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("SELECT", "Syntax error: the query ends too early");
    expect_error("SELECT 1 FROM", "Syntax error: the query ends too early");
    expect_error("SELECT 1 2", "Syntax error at line 1, column 10: unexpected '2'");
    expect_error("SELECT 1\nFROM events WHERE", "Syntax error: the query ends too early");
    expect_error("DELETE FROM events", "Syntax error at line 1, column 1: unexpected 'DELETE'");
    expect_error("SELECT 1; DROP TABLE events", "unexpected character ';' at offset 8");
    expect_error("SELECT 'abc", "unterminated string at offset 7");
    expect_error(
        "SELECT * FROM system.tables",
        "Unknown table `system.tables`. Tables: events, persons, groups, person_distinct_ids");
    expect_error(
        "SELECT * FROM sqlite_master",
        "Unknown table `sqlite_master`. Tables: events, persons, groups, person_distinct_ids");
    expect_error("SELECT nope FROM events", "Unable to resolve field: nope");
    expect_error("SELECT uniq(person._id) FROM events",
                 "Unable to resolve field: person._id (events have person.id and "
                 "person.properties)");
    expect_error("SELECT person.id.x FROM events",
                 "Unable to resolve field: person.id (events have person.id and "
                 "person.properties)");
    expect_error("SELECT file('x')", "Unsupported function call 'file(...)'");
    expect_error("SELECT load_extension('x')", "Unsupported function call 'load_extension(...)'");
    expect_error("SELECT count(1, 2) FROM events",
                 "Function 'count' expects 0 to 1 arguments, found 2");
    expect_error("SELECT lower() FROM events", "Function 'lower' expects 1 argument, found 0");
    expect_error("SELECT {filters}", "only {variables.<code_name>} placeholders are supported");
    expect_error("SELECT event.foo FROM events", "Field 'event' has no property 'foo'");
    expect_error("SELECT a FROM (SELECT 1 AS a) x, (SELECT 2 AS a) y",
                 "Ambiguous field 'a': name its table");
    expect_error("SELECT 1 UNION ALL SELECT 1, 2",
                 "UNION ALL parts have different numbers of columns (1 and 2)");
    expect_error("SELECT b AS a, a AS b", "Alias 'b' refers to itself");
    expect_error("SELECT row_number() FROM events",
                 "Window function 'row_number' needs OVER (...)");
    expect_error("SELECT 1 LIMIT -1", "LIMIT and OFFSET cannot be negative");
    expect_error("SELECT 99999999999999999999", "the number 99999999999999999999 is out of range");
    expect_error("SELECT e.event FROM events e JOIN events e ON 1", "Duplicate table alias 'e'");
}

/* ---- limits: depth, size, the row cap -------------------------------------------------------- */

static void test_deep_and_large(void **state)
{
    (void)state;
    size_t n = 10000;
    cm_buf_t b = CM_BUF_INIT, got = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "SELECT ");
    for (size_t i = 0; i < n; i++)
        cm_buf_putc(&b, '(');
    cm_buf_putc(&b, '1');
    for (size_t i = 0; i < n; i++)
        cm_buf_putc(&b, ')');
    compile(cm_buf_cstr(&b), API_QUERY_SQLITE, false, &got);
    assert_true(got.len > 7 && memcmp(got.p, "error: ", 7) == 0);
    assert_non_null(memmem(got.p, got.len, "nested too deeply", 17));

    /* 1+1+1+...: a shallow parse, a deep tree */
    cm_buf_reset(&b);
    cm_buf_append_cstr(&b, "SELECT 1");
    for (size_t i = 0; i < 30000; i++)
        cm_buf_append_cstr(&b, "+1");
    compile(cm_buf_cstr(&b), API_QUERY_CLICKHOUSE, false, &got);
    assert_non_null(memmem(got.p, got.len, "nested too deeply", 17));

    /* 100 KB of a wide, flat query compiles */
    cm_buf_reset(&b);
    cm_buf_append_cstr(&b, "SELECT count() FROM events WHERE event IN ('x'");
    while (b.len < 100 * 1024)
        cm_buf_append_cstr(&b, ", 'some event name'");
    cm_buf_append_cstr(&b, ")");
    compile(cm_buf_cstr(&b), API_QUERY_SQLITE, false, &got);
    assert_true(got.len > 100 * 1024);
    assert_true(memcmp(got.p, "SELECT", 6) == 0);
    cm_buf_free(&b);
    cm_buf_free(&got);
}

static void test_row_limits(void **state)
{
    (void)state;
    struct {
        const char *q;
        int64_t limit, offset;
        const char *tail;
    } cases[] = {
        {"SELECT 1", 0, 0, " LIMIT 101"},
        {"SELECT 1", 10, 0, " LIMIT 11"},
        {"SELECT 1", 1000000, 0, " LIMIT 50001"},
        {"SELECT 1", 10, 20, " LIMIT 11 OFFSET 20"},
        {"SELECT 1 LIMIT 5", 10, 0, " LIMIT 5"},
        {"SELECT 1 LIMIT 50 OFFSET 3", 10, 20, " LIMIT 11 OFFSET 23"},
        {"SELECT 1 LIMIT 25", 10, 20, " LIMIT 5 OFFSET 20"},
        {"SELECT 1 LIMIT 5", 10, 20, " LIMIT 0 OFFSET 20"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_buf_t err = CM_BUF_INIT;
        api_query_t *q;
        assert_int_equal(api_query_parse(cases[i].q, strlen(cases[i].q), &q, &err), 0);
        api_query_print_opts_t o = {.dialect = API_QUERY_SQLITE,
                                    .project_id = 1,
                                    .limit = cases[i].limit,
                                    .offset = cases[i].offset};
        api_query_sql_t s;
        assert_int_equal(api_query_print(q, &o, &s, &err), 0);
        size_t tl = strlen(cases[i].tail);
        if (s.sql.len < tl || memcmp(s.sql.p + s.sql.len - tl, cases[i].tail, tl) != 0)
            fail_msg("%s (limit %lld offset %lld): %.*s", cases[i].q, (long long)cases[i].limit,
                     (long long)cases[i].offset, (int)s.sql.len, s.sql.p);
        api_query_sql_free(&s);
        api_query_free(q);
        cm_buf_free(&err);
    }
}

/* ---- variables
 * ----------------------------------------------------------------------------------- */

static void test_variables(void **state)
{
    (void)state;
    const char *text = "SELECT {variables.b} FROM events WHERE event = {variables.a} "
                       "AND distinct_id IN {variables.a} OR {variables.b} = 1";
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q;
    assert_int_equal(api_query_parse(text, strlen(text), &q, &err), 0);
    assert_int_equal(api_query_nvariables(q), 2);
    assert_string_equal(api_query_variable(q, 0), "b");
    assert_string_equal(api_query_variable(q, 1), "a");
    assert_null(api_query_variable(q, 2));

    /* SQLite binds each use as a parameter, never as text */
    const char *names[] = {"a", "b"};
    api_query_value_t vals[] = {{.kind = API_QV_STRING, .s = "'; DROP TABLE x; --", .len = 19},
                                {.kind = API_QV_INT, .i = 1}};
    api_query_print_opts_t o = {.dialect = API_QUERY_SQLITE,
                                .project_id = 3,
                                .var_names = names,
                                .var_values = vals,
                                .nvars = 2};
    api_query_sql_t s;
    assert_int_equal(api_query_print(q, &o, &s, &err), 0);
    assert_null(memmem(s.sql.p, s.sql.len, "DROP", 4));
    assert_int_equal(s.nparams, 4);
    assert_ptr_equal(s.params[0], &vals[1]);
    assert_ptr_equal(s.params[1], &vals[0]);
    api_query_sql_free(&s);

    /* ClickHouse: an escaped literal printed from the value */
    o.dialect = API_QUERY_CLICKHOUSE;
    assert_int_equal(api_query_print(q, &o, &s, &err), 0);
    assert_non_null(memmem(s.sql.p, s.sql.len, "'\\'; DROP TABLE x; --'", 22));
    api_query_sql_free(&s);

    /* a variable without a value */
    o.nvars = 1;
    assert_int_equal(api_query_print(q, &o, &s, &err), CM_EINVAL);
    assert_string_equal(cm_buf_cstr(&err), "Variable 'b' has no value");
    api_query_sql_free(&s);
    api_query_free(q);
    cm_buf_free(&err);
}

/* Materialization: the rule of docs/endpoints.md (Materialization), one case per row (the
 * reason a query is refused), and the transform's text for what passes;
 * every transform compiles for both stores. */
static void expect_mat(const char *query, const char *want)
{
    cm_buf_t err = CM_BUF_INIT, got = CM_BUF_INIT;
    api_query_t *q = NULL;
    if (api_query_parse(query, strlen(query), &q, &err) != 0)
        fail_msg("%s: %s", query, cm_buf_cstr(&err));
    api_query_mat_t m;
    if (api_query_materialize(q, &m, &err) != 0) {
        cm_buf_appendf(&got, "refused: %.*s", (int)err.len, err.p);
    } else {
        cm_buf_append(&got, m.hogql.p, m.hogql.len);
        for (size_t i = 0; i < m.nvars; i++)
            cm_buf_appendf(&got, " [%s%s%s]", m.vars[i].code_name,
                           m.vars[i].range ? " by day " : "", m.vars[i].range ? m.vars[i].ops : "");
        if (m.limit_dropped)
            cm_buf_append_cstr(&got, " [limit at read]");
        if (m.reaggregate)
            cm_buf_appendf(&got, " [read: %s]", m.reagg);
        else if (m.one_row) /* a value without rows: the query answers */
            cm_buf_append_cstr(&got, " [one row: the query where none]");
        cm_buf_t sql = CM_BUF_INIT;
        for (int d = 0; d < 2; d++) {
            compile(cm_buf_cstr(&m.hogql), d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE, false,
                    &sql);
            if (strncmp(cm_buf_cstr(&sql), "error:", 6) == 0)
                fail_msg("%s: the table's query does not compile: %s", query, cm_buf_cstr(&sql));
        }
        cm_buf_free(&sql);
    }
    if (strcmp(cm_buf_cstr(&got), want) != 0)
        fail_msg("%s\n  want: %s\n  got:  %s", query, want, cm_buf_cstr(&got));
    if (err.len == 0)
        api_query_mat_free(&m);
    api_query_free(q);
    cm_buf_free(&err);
    cm_buf_free(&got);
}

static void test_materialize(void **state)
{
    (void)state;
    /* what passes: the transform */
    expect_mat("SELECT count() FROM events WHERE event = {variables.event_name}",
               "SELECT count(), event AS `event_name` FROM events WHERE true GROUP BY event "
               "[event_name] [read: c]");
    /* uniqExact is not aggregated again: the row is read as stored, and a
     * value without events (no row) is answered by the query itself */
    expect_mat("SELECT uniqExact(distinct_id) FROM events WHERE event = {variables.e}",
               "SELECT uniqExact(distinct_id), event AS `e` FROM events WHERE true GROUP BY event "
               "[e] [one row: the query where none]");
    expect_mat("SELECT count() FROM events WHERE timestamp >= {variables.start_hour} AND "
               "timestamp < {variables.end_hour}",
               "SELECT count(), toStartOfDay(timestamp) AS `start_hour`, toStartOfDay(timestamp) "
               "AS `end_hour` FROM events WHERE true AND true GROUP BY toStartOfDay(timestamp) "
               "[start_hour by day >=] [end_hour by day <] [read: c]");
    expect_mat("SELECT event, count() AS c FROM events WHERE timestamp > '2024-01-01' AND "
               "distinct_id = {variables.user} GROUP BY event ORDER BY c DESC LIMIT 5",
               "SELECT event, count() AS c, distinct_id AS `user` FROM events WHERE timestamp > "
               "'2024-01-01' AND true GROUP BY event, distinct_id ORDER BY c DESC [user] "
               "[limit at read]");
    expect_mat("SELECT event, timestamp FROM events WHERE {variables.u} = distinct_id",
               "SELECT event, timestamp, distinct_id AS `u` FROM events WHERE true [u]");
    expect_mat("SELECT sumIf(1, event = 'a'), max(timestamp) FROM events WHERE "
               "toDate(timestamp) >= {variables.d}",
               "SELECT sumIf(1, event = 'a'), max(timestamp), toStartOfDay(toDate(timestamp)) AS "
               "`d` FROM events WHERE true GROUP BY toStartOfDay(toDate(timestamp)) [d by day >=] "
               "[read: sx]");
    expect_mat("SELECT count() FROM events WHERE event = 'x' LIMIT 3",
               "SELECT count() FROM events WHERE event = 'x' LIMIT 3");
    /* what does not: one case per reason */
    expect_mat("SELECT event, count() AS c FROM events GROUP BY event HAVING c > {variables.n}",
               "refused: Variable used in HAVING clause are not supported for materialization.");
    expect_mat("SELECT {variables.s}, count() FROM events",
               "refused: Variable not used in WHERE clause");
    expect_mat("SELECT count() FROM events WHERE event = 'a' ORDER BY {variables.s}",
               "refused: Variable not used in WHERE clause");
    expect_mat("SELECT count() FROM events WHERE event = {variables.s} OR distinct_id = 'x'",
               "refused: Variables in OR conditions are not supported for materialization");
    expect_mat("SELECT count() FROM events WHERE event = {variables.s} AND distinct_id = "
               "{variables.s}",
               "refused: Variable compared against multiple columns is not supported for "
               "materialization");
    expect_mat("SELECT count() FROM events WHERE event LIKE {variables.s}",
               "refused: Unsupported operator LIKE, supported: =, >=, >, <, <=");
    /* the table keeps a range variable's days: a number's range would be
     * answered from toStartOfDay(n), so it is refused, as is a property */
    expect_mat("SELECT count() FROM events WHERE toInt(properties.n) >= {variables.min_n}",
               "refused: Variable 'min_n' is compared by range with a column that is not a date: "
               "only date ranges can be materialized");
    expect_mat("SELECT count() FROM events WHERE properties.seen_at < {variables.d}",
               "refused: Variable 'd' is compared by range with a column that is not a date: "
               "only date ranges can be materialized");
    expect_mat("SELECT count() FROM events WHERE toInt(properties.n) = {variables.n}",
               "SELECT count(), toInt(properties.n) AS `n` FROM events WHERE true GROUP BY "
               "toInt(properties.n) [n] [read: c]");
    expect_mat("SELECT count() FROM events WHERE event != {variables.s}",
               "refused: Unsupported operator !=, supported: =, >=, >, <, <=");
    expect_mat("SELECT count() FROM events WHERE event IN {variables.l}",
               "refused: Unsupported operator IN, supported: =, >=, >, <, <=");
    expect_mat("SELECT avg(toFloat(properties.price)) FROM events WHERE timestamp >= "
               "{variables.d}",
               "refused: Aggregate function 'avg' cannot be re-aggregated for range variable "
               "materialization");
    expect_mat("SELECT uniq(person_id) FROM events WHERE timestamp < {variables.d}",
               "refused: Aggregate function 'uniq' cannot be re-aggregated for range variable "
               "materialization");
    expect_mat("SELECT count(DISTINCT event) FROM events WHERE timestamp < {variables.d}",
               "refused: Aggregate function 'count' cannot be re-aggregated for range variable "
               "materialization");
    expect_mat("SELECT event AS e, count() FROM events WHERE distinct_id = {variables.e} GROUP "
               "BY event",
               "refused: Variable 'e' conflicts with an existing SELECT alias for a different "
               "expression. Rename the column or the variable.");
    expect_mat("WITH x AS (SELECT event FROM events WHERE event = {variables.s}) SELECT count() "
               "FROM x",
               "refused: Variables in CTEs are not yet supported for materialization");
    expect_mat("SELECT count() FROM (SELECT event FROM events WHERE event = {variables.s})",
               "refused: Variables in subqueries are not supported for materialization");
    expect_mat("SELECT count() FROM events WHERE lower(event) = lower({variables.s})",
               "refused: Variable not used in WHERE clause");
    expect_mat("SELECT event, count() * 2 FROM events WHERE timestamp >= {variables.d} GROUP BY "
               "event",
               "refused: Column 2 cannot be re-aggregated for range variable materialization: an "
               "aggregate inside an expression");
    expect_mat("SELECT event, min(timestamp) AS first FROM events WHERE timestamp >= {variables.d} "
               "GROUP BY event",
               "SELECT event, min(timestamp) AS first, toStartOfDay(timestamp) AS `d` FROM events "
               "WHERE true GROUP BY event, toStartOfDay(timestamp) [d by day >=] [read: gn]");
    expect_mat("SELECT count() FROM events WHERE {variables.a} < toDate(timestamp) AND "
               "toDate(timestamp) <= {variables.b}",
               "SELECT count(), toStartOfDay(toDate(timestamp)) AS `a`, "
               "toStartOfDay(toDate(timestamp)) AS `b` FROM events WHERE true AND true GROUP BY "
               "toStartOfDay(toDate(timestamp)) [a by day >] [b by day <=] [read: c]");
    expect_mat("SELECT count() FROM events WHERE timestamp >= {variables.d} AND timestamp >= "
               "{variables.d} AND timestamp >= {variables.d} AND timestamp >= {variables.d} AND "
               "timestamp >= {variables.d} AND timestamp >= {variables.d} AND timestamp >= "
               "{variables.d} AND timestamp >= {variables.d} AND timestamp >= {variables.d} AND "
               "timestamp >= {variables.d} AND timestamp >= {variables.d}",
               "refused: Variable 'd' is compared too many times for materialization");
    expect_mat("SELECT count() FROM events WHERE {variables.s} = {variables.n}",
               "refused: Variable 's' must be compared with a column for materialization");
    expect_mat("SELECT event FROM events WHERE event = {variables.s} UNION ALL SELECT event FROM "
               "events",
               "refused: Variables in UNION queries are not supported for materialization");
}

/* Issue 28: only what a table answers exactly is materialized. Every
 * operator the rule has, on each kind of column: equality on any column
 * (the table keeps its values as they are); a range on a date column (the
 * day is the value: every operator); on a date-time column only the two
 * operators that find whole days (>= day, < day), either side; a range on
 * anything else refused. */
static void test_materialize_exact(void **state)
{
    (void)state;
    static const char *const ops[] = {"=", ">=", ">", "<", "<="};
    static const struct {
        const char *column;
        const char *exact; /* the operators (column op value) that pass */
    } cols[] = {
        {"event", "="},
        {"toInt(properties.n)", "="},
        {"toFloat(properties.price)", "="},
        {"properties.flag", "="},
        {"toDate(timestamp)", "= >= > < <="},
        {"timestamp", "= >= <"},
        {"toStartOfDay(timestamp)", "= >= <"},
    };
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            for (int flipped = 0; flipped < 2; flipped++) {
                /* value op column is column (mirrored op) value */
                static const char *const mirror[] = {"=", "<=", "<", ">", ">="};
                char q[256];
                if (flipped)
                    snprintf(q, sizeof(q), "SELECT count() FROM events WHERE {variables.v} %s %s",
                             mirror[o], cols[c].column);
                else
                    snprintf(q, sizeof(q), "SELECT count() FROM events WHERE %s %s {variables.v}",
                             cols[c].column, ops[o]);
                char want_ops[32];
                snprintf(want_ops, sizeof(want_ops), " %s ", ops[o]);
                char have[40];
                snprintf(have, sizeof(have), " %s ", cols[c].exact);
                bool pass = strstr(have, want_ops) != NULL;
                cm_buf_t err = CM_BUF_INIT;
                api_query_t *qq = NULL;
                if (api_query_parse(q, strlen(q), &qq, &err) != 0)
                    fail_msg("%s: %s", q, cm_buf_cstr(&err));
                api_query_mat_t m;
                int rc = api_query_materialize(qq, &m, &err);
                if ((rc == 0) != pass)
                    fail_msg("%s: %s (%s)", q, pass ? "refused" : "materialized",
                             cm_buf_cstr(&err));
                if (rc == 0) {
                    assert_int_equal(m.nvars, 1);
                    assert_true(m.vars[0].range == (o != 0));
                    api_query_mat_free(&m);
                } else {
                    assert_true(err.len > 0); /* a reason, always */
                }
                api_query_free(qq);
                cm_buf_free(&err);
            }
        }
    }
    expect_mat("SELECT count() FROM events WHERE timestamp > {variables.d}",
               "refused: Variable 'd' is compared with > or <= to a date-time column: its table "
               "keeps days, so only >= and < can be materialized (or compare toDate(column))");
    expect_mat("SELECT count() FROM events WHERE {variables.d} >= timestamp",
               "refused: Variable 'd' is compared with > or <= to a date-time column: its table "
               "keeps days, so only >= and < can be materialized (or compare toDate(column))");
}

/* Part N: a call lowered from a match operator (e->op_form, which the
 * parser sets for a =~ b) prints two-valued as the operator: a NULL side
 * gives 0, two NULL sides 1, the pattern read from under concat('(?i)', b);
 * a call whose sides cannot be NULL prints as the call. startsWith stands in
 * for match here. */
static void test_null_op_form(void **state)
{
    (void)state;
    static const char text[] = "SELECT startsWith(a, 'x'), startsWith(c, concat('(?i)', c)), "
                               "startsWith(b, 'x'), startsWith(b, concat('(?i)', c)) "
                               "FROM (SELECT NULL AS a, 'x' AS b, NULL AS c)";
    static const char *const want[2][4] = {
        {"('x' IS NULL) AS c1_0", "1 AS c1_1", " AS c1_2", "(s0.c2_1 IS NULL) AS c1_3"},
        {"('x' IS NULL) AS c1_0", "1 AS c1_1", "startsWith(s0.c2_1, 'x') AS c1_2",
         "(s0.c2_1 IS NULL) AS c1_3"},
    };
    for (int d = 0; d < 2; d++) {
        cm_buf_t err = CM_BUF_INIT;
        api_query_t *q = NULL;
        assert_int_equal(api_query_parse(text, strlen(text), &q, &err), 0);
        assert_int_equal(q->root->ncols, 4);
        for (size_t i = 0; i < 4; i++)
            q->root->cols[i].expr->op_form = true;
        api_query_print_opts_t o = {.dialect = d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                    .project_id = 7};
        api_query_sql_t sql;
        assert_int_equal(api_query_print(q, &o, &sql, &err), 0);
        cm_buf_t got = CM_BUF_INIT;
        cm_buf_append(&got, sql.sql.p, sql.sql.len);
        cm_buf_append(&got, "", 1);
        for (int k = 0; k < 4; k++)
            if (strstr(got.p, want[d][k]) == NULL)
                fail_msg("%s: no \"%s\" in %s", d ? "clickhouse" : "sqlite", want[d][k], got.p);
        /* the plain call keeps its form: no ifNull around it */
        assert_null(strstr(got.p, "ifNull"));
        cm_buf_free(&got);
        api_query_sql_free(&sql);
        api_query_free(q);
        cm_buf_free(&err);
    }
}

/* Part N: a variable's value is known when printing: NULL as a value (a
 * list item, say) gets HogQL's rules; values that are not NULL print as
 * before (a bound parameter on SQLite, a literal on ClickHouse). */
static void test_null_variables(void **state)
{
    (void)state;
    static const api_query_value_t items[] = {{.kind = API_QV_STRING, .s = "a", .len = 1},
                                              {.kind = API_QV_NULL}};
    static const char *const names[] = {"l", "v", "s"};
    static const api_query_value_t values[] = {
        {.kind = API_QV_LIST, .items = items, .nitems = 2},
        {.kind = API_QV_NULL},
        {.kind = API_QV_STRING, .s = "x", .len = 1},
    };
    static const char text[] =
        "SELECT properties.$browser IN {variables.l}, event IN {variables.l}, "
        "event = {variables.v}, properties.$browser != {variables.v}, "
        "event = {variables.s} FROM events";
    static const char *const want[2][5] = {
        {"IN ($1)), 0) OR (", "((s0.event IN ($2))) AS c1_1", "(s0.event IS NULL) AS c1_2",
         "END) IS NOT NULL) AS c1_3", "(s0.event = $3) AS c1_4"},
        {"IN ('a')), 0) OR (", "((s0.event IN ('a'))) AS c1_1", "(s0.event IS NULL) AS c1_2",
         "NULL) IS NOT NULL) AS c1_3", "(s0.event = 'x') AS c1_4"},
    };
    for (int d = 0; d < 2; d++) {
        cm_buf_t err = CM_BUF_INIT;
        api_query_t *q = NULL;
        assert_int_equal(api_query_parse(text, strlen(text), &q, &err), 0);
        api_query_print_opts_t o = {.dialect = d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                    .project_id = 7,
                                    .var_names = names,
                                    .var_values = values,
                                    .nvars = 3};
        api_query_sql_t sql;
        assert_int_equal(api_query_print(q, &o, &sql, &err), 0);
        cm_buf_t got = CM_BUF_INIT;
        cm_buf_append(&got, sql.sql.p, sql.sql.len);
        cm_buf_append(&got, "", 1);
        for (int k = 0; k < 5; k++)
            if (strstr(got.p, want[d][k]) == NULL)
                fail_msg("%s: no \"%s\" in %s", d ? "clickhouse" : "sqlite", want[d][k], got.p);
        /* SQLite binds the values that are not NULL, and only those */
        if (!d)
            assert_int_equal(sql.nparams, 3);
        cm_buf_free(&got);
        api_query_sql_free(&sql);
        api_query_free(q);
        cm_buf_free(&err);
    }
}

/* Part S: the strictness PostHog has (its words), and the refusals of
 * syntax one store cannot answer as PostHog does. */
static void test_errors_syntax(void **state)
{
    (void)state;
    expect_error("SELECT tostring(1)",
                 "Unsupported function call 'tostring(...)'. Perhaps you meant 'toString(...)'?");
    expect_error("SELECT TODATE(timestamp) FROM events",
                 "Unsupported function call 'TODATE(...)'. Perhaps you meant 'toDate(...)'?");
    expect_error("SELECT EQUALS(1, 1)", "Unsupported function call 'EQUALS(...)'");
    expect_error("SELECT hamburger(1)", "Unsupported function call 'hamburger(...)'");
    expect_error("SELECT avg(avg(toInt(properties.n))) FROM events",
                 "Aggregation 'avg' cannot be nested inside another aggregation 'avg'.");
    expect_error("SELECT sum(1 + count()) FROM events",
                 "Aggregation 'count' cannot be nested inside another aggregation 'sum'.");
    expect_error("SELECT count() AS c, sum(countIf(event = 'a')) FROM events",
                 "Aggregation 'countIf' cannot be nested inside another aggregation 'sum'.");
    expect_error("SELECT [1, 2][0]", "SQL indexes start from one, not from zero. E.g: array[1]");
    expect_error("SELECT equals(1)", "Function 'equals' expects 2 arguments, found 1");
    expect_error("SELECT negate(1, 2)", "Function 'negate' expects 1 argument, found 2");
    expect_error("SELECT or(1)", "Function 'or' expects at least 2 arguments, found 1");
    expect_error("SELECT equals(1, 2) OVER ()", "OVER follows a window or aggregate function only");
    expect_error("SELECT 1 UNION SELECT 2",
                 "UNION needs ALL or DISTINCT: UNION ALL keeps duplicate rows, UNION DISTINCT "
                 "drops them");
    expect_error("SELECT 1 UNION ALL SELECT 2 INTERSECT SELECT 1",
                 "INTERSECT mixed with UNION or EXCEPT needs parentheses around the parts it "
                 "joins");
    expect_error("SELECT 1 INTERSECT SELECT 1, 2",
                 "INTERSECT parts have different numbers of columns (1 and 2)");
    expect_error("SELECT count() OVER w FROM events",
                 "Window 'w' is not defined (WINDOW w AS (...))");
    expect_error("SELECT 1 FROM events WINDOW w AS (), w AS ()", "Window 'w' is defined twice");
    expect_error("SELECT count() OVER (ORDER BY timestamp ROWS BETWEEN 1 FOLLOWING AND CURRENT "
                 "ROW) FROM events",
                 "A window frame must not end before it starts");
    expect_error("SELECT count() OVER (ORDER BY timestamp ROWS UNBOUNDED FOLLOWING) FROM events",
                 "A window frame starts before it ends: UNBOUNDED PRECEDING starts it, UNBOUNDED "
                 "FOLLOWING ends it");
    expect_error("SELECT count() OVER (ORDER BY timestamp RANGE BETWEEN 1 PRECEDING AND CURRENT "
                 "ROW) FROM events",
                 "RANGE frames take UNBOUNDED and CURRENT ROW bounds only; use ROWS for a number "
                 "of rows");
    expect_error("SELECT lagInFrame(event, toInt(properties.n)) OVER () FROM events",
                 "lagInFrame takes a whole number of rows as its offset on the SQLite store");
    expect_error("SELECT number FROM numbers(1000001)", "numbers() yields at most 100000 rows");
    expect_error("SELECT number FROM numbers(-1)",
                 "numbers() takes whole numbers, 0 or more, as in numbers(10) or numbers(5, 10)");
    expect_error("SELECT number FROM numbers(1, 2, 3)",
                 "Table function 'numbers' expects 1 or 2 arguments, found 3");
    expect_error("SELECT 1 FROM url('http://x')",
                 "Unknown table function 'url'. Table functions: numbers");
    expect_error("SELECT event FROM events LIMIT 2 WITH TIES",
                 "LIMIT ... WITH TIES needs an ORDER BY");
    expect_error("SELECT 1 FROM events WHERE person_id IN COHORT 2",
                 "cohorts are not available in HogQL endpoints yet (IN COHORT, inCohort)");
    expect_error("SELECT 1 FROM events WHERE person_id NOT IN COHORT 'x'",
                 "cohorts are not available in HogQL endpoints yet (IN COHORT, inCohort)");
    expect_error("SELECT inCohort(2)",
                 "cohorts are not available in HogQL endpoints yet (IN COHORT, inCohort)");
    expect_error("SELECT lower(LEADING 'x' FROM event) FROM events",
                 "LEADING, TRAILING and BOTH belong to trim(... FROM ...) only");
    /* a keyword only where the grammar wants it: window is a keyword, range() a name */
    expect_error("SELECT 1 AS window", "Syntax error at line 1, column 13: unexpected 'window'");
}

/* Result column names: an operator written as a call keeps its spelling
 * (PostHog names the column by the text), the operator its own. */
static void expect_names(const char *text, const char *want)
{
    cm_buf_t err = CM_BUF_INIT, got = CM_BUF_INIT;
    api_query_t *q = NULL;
    assert_int_equal(api_query_parse(text, strlen(text), &q, &err), 0);
    api_query_print_opts_t o = {.dialect = API_QUERY_SQLITE, .project_id = 7};
    api_query_sql_t sql;
    assert_int_equal(api_query_print(q, &o, &sql, &err), 0);
    for (size_t i = 0; i < sql.ncols; i++)
        cm_buf_appendf(&got, "%s%s", i ? "; " : "", sql.cols[i].name);
    if (strcmp(cm_buf_cstr(&got), want) != 0)
        fail_msg("%s\n  want: %s\n  got:  %s", text, want, cm_buf_cstr(&got));
    api_query_sql_free(&sql);
    api_query_free(q);
    cm_buf_free(&err);
    cm_buf_free(&got);
}

static void test_names_syntax(void **state)
{
    (void)state;
    expect_names(
        "SELECT equals(event, 'a'), event = 'a', and(1, 2, 3), or(1, and(1, 0)), "
        "negate(5), negate(toInt(properties.n)), plus(1, 2) AS p, notIn(event, ('x', 'y')) "
        "FROM events",
        "equals(event, 'a'); event = 'a'; and(1, 2, 3); or(1, and(1, 0)); -5; "
        "negate(toInt(properties.n)); p; notIn(event, ('x', 'y'))");
    expect_names("SELECT event ?? 'x', properties?.$browser FROM events",
                 "ifNull(event, 'x'); $browser");
    expect_names("SELECT number FROM numbers(2)", "number");
    expect_names("(SELECT 1 AS a) UNION ALL (SELECT 2) ORDER BY 1", "a");
}

/* Part F (issue 28): what the function family refuses, and why. */
static void test_errors_fns(void **state)
{
    (void)state;
    expect_error("SELECT argMax(event) FROM events",
                 "Function 'argMax' expects 2 arguments, found 1");
    expect_error("SELECT countIf(event, event = 'a', 1) FROM events",
                 "Function 'countIf' expects 1 to 2 arguments, found 3");
    expect_error("SELECT match(event, '(?<=a)b') FROM events",
                 "Regular expressions use RE2's syntax, which has no lookahead, lookbehind, or "
                 "(?<name>...) (write (?P<name>...)): rewrite the pattern without them");
    expect_error("SELECT match(event, '(?x)a b') FROM events",
                 "Regular expressions use RE2's syntax, which has no flags other than i, m, s "
                 "and U: rewrite the pattern without them");
    expect_error("SELECT extract(event, 'a\\\\Z') FROM events",
                 "Regular expressions use RE2's syntax, which has no PCRE-only escapes (\\Z, "
                 "\\h, \\v, \\K, ...): rewrite the pattern without them");
    expect_error("SELECT replaceRegexpAll(event, 'a|', 'x') FROM events",
                 "replaceRegexpAll needs a pattern that cannot match the empty string "
                 "(ClickHouse versions replace empty matches differently)");
    expect_error("SELECT replaceRegexpOne(event, '(a)', '\\\\2') FROM events",
                 "The replacement names group \\2, but the pattern has 1");
}

/* Arrays and lambdas (part A of issue 28): what is refused, and why. */
static void test_array_errors(void **state)
{
    (void)state;
    expect_error("SELECT [1, 2][0]", "SQL indexes start from one, not from zero. E.g: array[1]");
    expect_error("SELECT [1, 'a']", "An array's items must have one type (as in ClickHouse)");
    expect_error("SELECT event[1] FROM events", "Only an array can be indexed with [...]");
    expect_error("SELECT [1][1.5]", "An array index must be a whole number");
    expect_error("SELECT x -> x + 1",
                 "A lambda (x -> ...) can only be the first argument of an array function such as "
                 "arrayMap");
    expect_error("SELECT arrayMap(1 -> 1, [1])",
                 "a lambda's parameters must be names, as in x -> x + 1");
    expect_error("SELECT arrayMap((x, x) -> 1, [1], [2])",
                 "a lambda's parameters must have different names");
    expect_error("SELECT arrayMap((x, y) -> x, [1])",
                 "The lambda of arrayMap takes 1 parameter, one per array");
    expect_error("SELECT arrayMap(x -> x, 'abc')", "arrayMap takes arrays after its lambda");
    expect_error("SELECT arrayMap([1], [2])",
                 "arrayMap takes a lambda first, as in arrayMap(x -> x + 1, arr)");
    expect_error("SELECT has(x -> x, [1])", "has does not take a lambda");
    expect_error("SELECT arrayMap(x -> x.a, [1])", "'x' is a lambda's parameter: it has no fields");
    expect_error("SELECT arrayMap(x -> (SELECT x), [1])", "Unable to resolve field: x");
    expect_error("SELECT has('abc', 'a')", "has takes an array");
    expect_error("SELECT has([1], 'a')",
                 "has compares the array's elements with a value of their type");
    expect_error("SELECT arraySum(['a'])", "arraySum adds numbers");
    expect_error("SELECT arrayStringConcat([1])",
                 "arrayStringConcat takes an array of strings (map it with toString first)");
    expect_error("SELECT arrayStringConcat(['a'], event) FROM events",
                 "arrayStringConcat takes a string constant as its separator");
    expect_error("SELECT topK(0)(event) FROM events",
                 "topK takes a count from 1 to 1000, as in topK(10)(x)");
    expect_error("SELECT groupArray([1]) FROM events",
                 "groupArray takes numbers, strings or dates");
    expect_error("SELECT quantiles(2)(1) FROM events",
                 "The level of quantiles must be a number from 0 to 1, as in quantiles(0.9)(x)");
    expect_error("SELECT range(0, 5, 0)",
                 "range's step must be a positive whole number constant on the SQLite store");
    expect_error("SELECT arrayMap((x, y) -> x + y, [1], [2])",
                 "A lambda over several arrays is not supported on the SQLite store");
    expect_error("SELECT (1, 'a').3", "The tuple has 2 members: .3 is not one");
    expect_error("SELECT event.1 FROM events", ".n and tupleElement read a tuple's members");
    expect_error("SELECT tupleElement((1, 2), event) FROM events",
                 "A tuple's member is a whole number constant, as in t.1");
    expect_error("SELECT [(1, [2])]",
                 "An array's items must be numbers, strings, dates, arrays or tuples");
    expect_error("SELECT tuple(1, [2])", "A tuple's members must be numbers, strings or dates");
    expect_error("SELECT x FROM events ARRAY JOIN event AS x", "ARRAY JOIN takes an array");
    expect_error("SELECT [1] + [2]",
                 "Arithmetic on arrays and tuples is not supported (arrayMap works element by "
                 "element)");
    expect_error("SELECT 1 FROM events ARRAY JOIN [1] + [2]",
                 "ARRAY JOIN needs a name for the element: ARRAY JOIN <array> AS <name>");
    expect_error("SELECT [event] AS a FROM events ORDER BY a",
                 "Ordering by an array or a tuple is not supported on the SQLite store");
    expect_mat("SELECT event, groupArray(distinct_id) FROM events WHERE event = {variables.e} "
               "GROUP BY event",
               "refused: Queries answering arrays or tuples are not supported for materialization");
    expect_mat("SELECT (event, 1) FROM events",
               "refused: Queries answering arrays or tuples are not supported for materialization");
    expect_error(
        "SELECT arrayFilter(x -> x = 'a', groupArray(event)) FROM events",
        "arrayFilter over an aggregate's array is not supported on the SQLite store: "
        "compute the array in a subquery (SELECT ... FROM (SELECT groupArray(x) AS a ...))");
}

/* splitByChar / splitByString: ClickHouse's rules for the separator and
 * for a string that may be NULL (an array cannot be NULL). */
static void test_split_errors(void **state)
{
    (void)state;
    expect_error("SELECT splitByChar('', event) FROM events",
                 "splitByChar takes a one-byte string constant as its separator");
    expect_error("SELECT splitByChar('ab', event) FROM events",
                 "splitByChar takes a one-byte string constant as its separator");
    expect_error("SELECT splitByString('', event) FROM events",
                 "splitByString takes a non-empty string constant as its separator");
    expect_error("SELECT splitByString(event, 'a,b') FROM events",
                 "splitByString takes a non-empty string constant as its separator");
    expect_error("SELECT splitByChar(',', properties.tags) FROM events",
                 "splitByChar needs a string that is never NULL (an array cannot be NULL): wrap "
                 "it in ifNull(x, '')");
    expect_error("SELECT splitByChar(',', 1)",
                 "splitByChar splits a string (convert it with toString first)");
}

/* Part W: answers the stores gave differently, refused on both. */
static void test_errors_wrong(void **state)
{
    (void)state;
    expect_error("SELECT if(event = 'a', 'a', 1) FROM events",
                 "The values of if have no common type: there is no supertype for types String "
                 "and Int64. Convert them to one type first (toString, toFloat, ...)");
    expect_error("SELECT multiIf(event = 'a', NULL, event = 'b', timestamp, 2) FROM events",
                 "The values of multiIf have no common type: there is no supertype for types "
                 "DateTime and Int64. Convert them to one type first (toString, toFloat, ...)");
    expect_error("SELECT CASE WHEN event = 'a' THEN properties.x ELSE event = 'b' END FROM events",
                 "The values of CASE have no common type: there is no supertype for types String "
                 "and UInt8. Convert them to one type first (toString, toFloat, ...)");
    expect_error("SELECT coalesce(properties.x, 0) FROM events",
                 "The values of coalesce have no common type: there is no supertype for types "
                 "String and Int64. Convert them to one type first (toString, toFloat, ...)");
    expect_error("SELECT if(event = 'a', toInt(properties.n), 2.5) FROM events",
                 "The values of if have no common type: there is no supertype for types Int64 and "
                 "Float64 (no float holds every Int64). Convert them to one type first (toFloat)");
    expect_error("SELECT substring(event, 0) FROM events",
                 "Indices in strings are 1-based: the offset of substring must not be 0");
    expect_error("SELECT substring(event, 1, -2) FROM events",
                 "The length of substring must not be negative");
}

/* ---- part X: PostHog inputs refused on purpose ------------------------------------------ */

static void test_errors_breadth(void **state)
{
    (void)state;
    /* a random pick of rows has no one answer to compare or cache */
    expect_error("SELECT groupArraySample(5)(event) FROM events",
                 "groupArraySample is not supported: it picks rows at random, so the answer would "
                 "differ from run to run (groupArray with LIMIT in a subquery gives a stable one)");
    expect_error(
        "SELECT groupArraySampleIf(5)(event, event = 'a') FROM events",
        "groupArraySampleIf is not supported: it picks rows at random, so the answer would "
        "differ from run to run (groupArray with LIMIT in a subquery gives a stable one)");
    /* only these two names are refused this way */
    expect_error("SELECT groupArraySamples(event) FROM events",
                 "Unsupported function call 'groupArraySamples(...)'");
}

/* ---- what ClickHouse 18.16 refuses ------------------------------------------------------- */

/* A query SQLite and ClickHouse 21+ run but 18.16 cannot is refused there
 * with a message that says so ("... needs ClickHouse ..."): the differential
 * test recognizes such refusals by those words, and a user learns that the
 * query is fine and the store is old. */
static void expect_ch18_refusal(const char *text)
{
    cm_buf_t lite = CM_BUF_INIT, ch18 = CM_BUF_INIT, modern = CM_BUF_INIT;
    compile(text, API_QUERY_SQLITE, false, &lite);
    compile(text, API_QUERY_CLICKHOUSE, false, &ch18);
    compile(text, API_QUERY_CLICKHOUSE, true, &modern);
    bool runs = strncmp(cm_buf_cstr(&lite), "error: ", 7) != 0 &&
                strncmp(cm_buf_cstr(&modern), "error: ", 7) != 0;
    bool refused = strncmp(cm_buf_cstr(&ch18), "error: ", 7) == 0;
    if (runs && refused && strstr(cm_buf_cstr(&ch18), "needs ClickHouse") == NULL)
        fail_msg("%s\n  18.16 refuses it without saying what needs ClickHouse: %s", text,
                 cm_buf_cstr(&ch18));
    cm_buf_free(&lite);
    cm_buf_free(&ch18);
    cm_buf_free(&modern);
}

static void test_clickhouse18_refusals(void **state)
{
    (void)state;
    static const char *const refused[] = {
        "SELECT properties.a.b FROM events",
        "SELECT event, row_number() OVER (ORDER BY timestamp) FROM events",
        "SELECT e.event FROM events e JOIN persons p ON p.id = e.person_id "
        "JOIN groups g ON g.key = e.event",
        "SELECT JSONExtractString(properties, 'a') FROM events",
        "SELECT event FROM events LIMIT 1 OFFSET 1 BY event",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        cm_buf_t ch18 = CM_BUF_INIT;
        compile(refused[i], API_QUERY_CLICKHOUSE, false, &ch18);
        assert_non_null(strstr(cm_buf_cstr(&ch18), "needs ClickHouse")); /* refused, and why */
        cm_buf_free(&ch18);
        expect_ch18_refusal(refused[i]);
    }
    /* and every golden case: what 18.16 alone refuses says so */
    glob_t g;
    assert_int_equal(glob(GOLDEN_GLOB, 0, NULL, &g), 0);
    int cases = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (strstr(g.gl_pathv[i], "_modern") != NULL)
            continue;
        char *text = slurp(g.gl_pathv[i]);
        assert_non_null(text);
        for (char *p = strstr(text, "== "); p != NULL; p = strstr(p + 1, "\n== ")) {
            char *q = strchr(p + (p[0] == '\n'), '\n');
            char *lite = q ? strstr(q, "\n-- sqlite\n") : NULL;
            assert_non_null(lite);
            char *query = strndup(q + 1, (size_t)(lite - q - 1));
            expect_ch18_refusal(query);
            free(query);
            cases++;
        }
        free(text);
    }
    globfree(&g);
    assert_true(cases >= 40);
}

/* ---- ClickHouse versions ------------------------------------------------------------------ */

/* What ClickHouse 21.8+ prints, 24 prints too (maybe otherwise): the new
 * analyzer's rules never cost a query. Over every golden case. (18.16 to
 * 21.8+ is not such a rule: a sumMap read through a subquery prints on
 * 18.16, whose keys are never strings, and is refused from 21.8 on.) */
static void test_versions_only_grow(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob(GOLDEN_GLOB, 0, NULL, &g), 0);
    int cases = 0;
    cm_buf_t older = CM_BUF_INIT, newer = CM_BUF_INIT;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = slurp(g.gl_pathv[i]);
        assert_non_null(text);
        size_t first = strstr(g.gl_pathv[i], "_modern") != NULL ? FIRST_MODERN : 0;
        for (char *p = strstr(text, "== "); p != NULL; p = strstr(p + 1, "\n== ")) {
            char *q = strchr(p + (p[0] == '\n'), '\n');
            char *sec = q ? strstr(q, sections[first].mark) : NULL;
            assert_non_null(sec);
            char *query = strndup(q + 1, (size_t)(sec - q - 1));
            case_options(p + (p[0] == '\n'), (size_t)(q - p - (p[0] == '\n')));
            for (api_query_ch_version_t v = API_QUERY_CH_21; v < API_QUERY_CH_24; v++) {
                compile_v(query, API_QUERY_CLICKHOUSE, v, &older);
                compile_v(query, API_QUERY_CLICKHOUSE, v + 1, &newer);
                if (strncmp(cm_buf_cstr(&older), "error: ", 7) != 0 &&
                    strncmp(cm_buf_cstr(&newer), "error: ", 7) == 0)
                    fail_msg("%s\n  version %d prints it, version %d refuses it: %s", query, (int)v,
                             (int)v + 1, cm_buf_cstr(&newer));
            }
            free(query);
            cases++;
        }
        free(text);
    }
    case_options("", 0);
    globfree(&g);
    cm_buf_free(&older);
    cm_buf_free(&newer);
    assert_true(cases >= 280);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_golden_modern),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_deep_and_large),
        cmocka_unit_test(test_row_limits),
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_materialize),
        cmocka_unit_test(test_materialize_exact),
        cmocka_unit_test(test_null_op_form),
        cmocka_unit_test(test_null_variables),
        cmocka_unit_test(test_errors_syntax),
        cmocka_unit_test(test_names_syntax),
        cmocka_unit_test(test_errors_fns),
        cmocka_unit_test(test_array_errors),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_errors_wrong),
        cmocka_unit_test(test_clickhouse18_refusals),
        cmocka_unit_test(test_errors_breadth),
        cmocka_unit_test(test_versions_only_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
