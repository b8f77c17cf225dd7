/*
 * test_table_ident.c - the identifiers of a materialized read
 * (query/table.c): ClickHouse's backquoted names escape
 * backslash and backquote, SQLite's double-quoted names double the quote;
 * the SQLite spelling is read back by SQLite itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "query/table.h"

static void expect(bool ch, const char *name, const char *want)
{
    cm_buf_t b = CM_BUF_INIT;
    api_query_table_ident(&b, ch ? CM_EVSTORE_SQL_CLICKHOUSE_1816 : CM_EVSTORE_SQL_SQLITE, name);
    assert_string_equal(cm_buf_cstr(&b), want);
    cm_buf_free(&b);
}

static void test_clickhouse(void **state)
{
    (void)state;
    expect(true, "plain", "`plain`");
    expect(true, "a`b", "`a\\`b`");
    expect(true, "a\\", "`a\\\\`");       /* a trailing backslash no longer eats the quote */
    expect(true, "a\\`b", "`a\\\\\\`b`"); /* each escaped on its own */
    expect(true, "a\"b", "`a\"b`");
}

static void test_sqlite(void **state)
{
    (void)state;
    expect(false, "a\"b", "\"a\"\"b\"");
    expect(false, "a\\", "\"a\\\"");
    expect(false, "a`b", "\"a`b\"");
    /* and SQLite reads each back as the same name */
    const char *names[] = {"a\"b", "a\\", "x\"\"", "a`b"};
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        cm_buf_t sql = CM_BUF_INIT;
        cm_buf_appendf(&sql, "CREATE TABLE t%zu (", i);
        api_query_table_ident(&sql, CM_EVSTORE_SQL_SQLITE, names[i]);
        cm_buf_append_cstr(&sql, " INTEGER)");
        assert_int_equal(sqlite3_exec(db, cm_buf_cstr(&sql), NULL, NULL, NULL), SQLITE_OK);
        cm_buf_reset(&sql);
        cm_buf_appendf(&sql, "SELECT name FROM pragma_table_info('t%zu')", i);
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(db, cm_buf_cstr(&sql), -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), names[i]);
        sqlite3_finalize(st);
        cm_buf_free(&sql);
    }
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clickhouse),
        cmocka_unit_test(test_sqlite),
    };
    return cmocka_run_group_tests_name("table_ident", tests, NULL, NULL);
}
