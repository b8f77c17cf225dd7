/*
 * test_print_s.c - part S's SQLite printing (print_s.c) answers as
 * ClickHouse does: the queries run on an SQLite event store (its real
 * schema, proto/event_store/sqlite.sql) and give the rows ClickHouse's
 * semantics give, stated here by hand. ClickHouse 18.16 refuses these
 * constructs, so the differential corpus cannot compare them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cm/buf.h"
#include "query/query.h"

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

/* Six events of project 7 (and one of project 8 that no answer may show):
 * u5 and u6 share a timestamp. */
static sqlite3 *store(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    char *ddl = slurp("proto/event_store/sqlite.sql");
    assert_non_null(ddl);
    assert_int_equal(sqlite3_exec(db, ddl, NULL, NULL, NULL), SQLITE_OK);
    free(ddl);
    static const char *const rows[][4] = {
        {"u1", "a", "d1", "00:01"}, {"u2", "a", "d1", "00:02"}, {"u3", "b", "d2", "00:03"},
        {"u4", "c", "d2", "00:04"}, {"u5", "c", "d3", "00:05"}, {"u6", "a", "d3", "00:05"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char sql[512];
        snprintf(sql, sizeof(sql),
                 "INSERT INTO events VALUES ('%s', 7, '%s', '%s', 'p', '{}', '{}', "
                 "'2024-01-01 00:%s', %zu, '2024-01-01 00:00:00', '')",
                 rows[i][0], rows[i][1], rows[i][2], rows[i][3], i);
        assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO events VALUES ('x1', 8, 'a', 'd1', 'p', '{}', '{}', "
                                  "'2024-01-01 00:00:00', 9, '2024-01-01 00:00:00', '')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    return db;
}

/* The rows of text on SQLite: "v|v,v|v" (NULL as NULL), or "error: ...". */
static void answer(sqlite3 *db, const char *text, cm_buf_t *out)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *q = NULL;
    cm_buf_reset(out);
    if (api_query_parse(text, strlen(text), &q, &err) != 0) {
        cm_buf_appendf(out, "error: %.*s", (int)err.len, err.p);
        cm_buf_free(&err);
        return;
    }
    api_query_print_opts_t o = {.dialect = API_QUERY_SQLITE, .project_id = 7};
    api_query_sql_t sql;
    if (api_query_print(q, &o, &sql, &err) != 0) {
        cm_buf_appendf(out, "error: %.*s", (int)err.len, err.p);
    } else {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, cm_buf_cstr(&sql.sql), -1, &st, NULL) != SQLITE_OK) {
            cm_buf_appendf(out, "error: %s", sqlite3_errmsg(db));
        } else {
            for (int r = 0; sqlite3_step(st) == SQLITE_ROW; r++) {
                if (r)
                    cm_buf_append_cstr(out, ",");
                for (int c = 0; c < sqlite3_column_count(st); c++) {
                    const unsigned char *v = sqlite3_column_text(st, c);
                    cm_buf_appendf(out, "%s%s", c ? "|" : "", v ? (const char *)v : "NULL");
                }
            }
        }
        sqlite3_finalize(st);
    }
    api_query_sql_free(&sql);
    api_query_free(q);
    cm_buf_free(&err);
}

static void expect(sqlite3 *db, const char *text, const char *want)
{
    cm_buf_t got = CM_BUF_INIT;
    answer(db, text, &got);
    if (strcmp(cm_buf_cstr(&got), want) != 0)
        fail_msg("%s\n  want: %s\n  got:  %s", text, want, cm_buf_cstr(&got));
    cm_buf_free(&got);
}

/* INTERSECT and EXCEPT keep the left side's duplicates (ClickHouse's ALL
 * mode); the DISTINCT forms drop them; NULLs are equal. */
static void test_set_operators(void **state)
{
    (void)state;
    sqlite3 *db = store();
    expect(db,
           "(SELECT event FROM events) INTERSECT (SELECT 'a' UNION ALL SELECT 'c') ORDER BY event",
           "a,a,a,c,c");
    expect(db, "(SELECT event FROM events) EXCEPT (SELECT 'a') ORDER BY event", "b,c,c");
    expect(db, "(SELECT event FROM events) EXCEPT DISTINCT (SELECT 'a') ORDER BY event", "b,c");
    expect(db, "(SELECT event FROM events) INTERSECT DISTINCT (SELECT 'c') ORDER BY event", "c");
    expect(db, "(SELECT distinct_id FROM events) UNION DISTINCT (SELECT 'd9') ORDER BY distinct_id",
           "d1,d2,d3,d9");
    expect(db,
           "(SELECT nullIf(event, 'a') AS x FROM events) INTERSECT (SELECT nullIf('a', 'a')) ORDER "
           "BY x",
           "NULL,NULL,NULL");
    /* left to right: (a UNION ALL b) EXCEPT c, then UNION ALL d */
    expect(db, "(SELECT 1 AS n UNION ALL SELECT 2 EXCEPT SELECT 2 UNION ALL SELECT 2) ORDER BY n",
           "1,2");
    expect(db, "(SELECT event, distinct_id FROM events) INTERSECT (SELECT 'c', 'd3') ORDER BY 1",
           "c|d3");
    sqlite3_close(db);
}

/* lagInFrame / leadInFrame read inside the frame only (the default one
 * with an ORDER BY ends at the current row's peers), else the default. */
static void test_lag_lead(void **state)
{
    (void)state;
    sqlite3 *db = store();
    expect(db,
           "SELECT uuid, lagInFrame(event) OVER (ORDER BY uuid), leadInFrame(event) OVER (ORDER BY "
           "uuid) FROM events ORDER BY uuid",
           "u1||,u2|a|,u3|a|,u4|b|,u5|c|,u6|c|");
    expect(db,
           "SELECT lead(event, 1, 'end') OVER (ORDER BY uuid ROWS BETWEEN UNBOUNDED PRECEDING AND "
           "UNBOUNDED FOLLOWING) FROM events ORDER BY uuid",
           "a,b,c,c,a,end");
    expect(
        db,
        "SELECT lag(uuid, 2) OVER (PARTITION BY event ORDER BY uuid ROWS BETWEEN 2 PRECEDING AND "
        "1 PRECEDING) FROM events ORDER BY uuid",
        "00000000-0000-0000-0000-000000000000,00000000-0000-0000-0000-000000000000,"
        "00000000-0000-0000-0000-000000000000,00000000-0000-0000-0000-000000000000,"
        "00000000-0000-0000-0000-000000000000,u1");
    expect(db,
           "SELECT lagInFrame(uuid, 2, 'none') OVER (ORDER BY uuid ROWS BETWEEN 1 PRECEDING AND "
           "CURRENT ROW) FROM events ORDER BY uuid",
           "none,none,none,none,none,none");
    /* a peer is in the default frame: u5 and u6 share a timestamp */
    expect(
        db,
        "SELECT uuid, leadInFrame(event) OVER (PARTITION BY distinct_id ORDER BY timestamp) FROM "
        "events WHERE uuid != 'u6' OR 1 ORDER BY uuid",
        "u1|,u2|,u3|,u4|,u5|a,u6|");
    sqlite3_close(db);
}

static void test_windows_ties_numbers(void **state)
{
    (void)state;
    sqlite3 *db = store();
    expect(
        db,
        "SELECT sum(1) OVER (ORDER BY uuid ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM events "
        "ORDER BY uuid",
        "2,3,3,3,3,2");
    expect(db,
           "SELECT count() OVER w, first_value(event) OVER w FROM events WINDOW w AS (PARTITION BY "
           "distinct_id ORDER BY uuid) ORDER BY uuid",
           "1|a,2|a,1|b,2|b,1|c,2|c");
    expect(db, "SELECT timestamp FROM events ORDER BY timestamp LIMIT 5 WITH TIES",
           "2024-01-01 00:00:01,2024-01-01 00:00:02,2024-01-01 00:00:03,2024-01-01 "
           "00:00:04,2024-01-01 00:00:05,2024-01-01 00:00:05");
    expect(db, "SELECT event FROM events ORDER BY event LIMIT 1 WITH TIES", "a,a,a");
    expect(db, "SELECT number FROM numbers(2, 3)", "2,3,4");
    expect(db, "SELECT count() FROM numbers(0)", "0");
    expect(db, "SELECT count() FROM numbers(100000)", "100000");
    expect(db, "SELECT plus(number, 1) FROM numbers(2) WHERE and(greaterOrEquals(number, 0), 1)",
           "1,2");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_operators),
        cmocka_unit_test(test_lag_lead),
        cmocka_unit_test(test_windows_ties_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
