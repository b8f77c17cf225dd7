/*
 * test_evstore_ch_migrations.c - the "-- migration N" sections of a
 * ClickHouse DDL text cut into statements (evstore_ch_migrations.c): a
 * "-- done if code N" line belongs to the statement after it only; a mark
 * with no statement after it is an error; and the error code read out of
 * ClickHouse's error text, one server's and an ON CLUSTER DDL's (as 18.16
 * answers a second ADD COLUMN of one column, code 44).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cm/err.h"
/* the store's own parser (not public) */
#include "../../../../libcommon/src/evstore/evstore_internal.h"

static void test_done_marks(void **state)
{
    (void)state;
    cm__ch_ddl_t d;
    assert_int_equal(cm__ch_ddl_parse("-- migration 1: tables\n"
                                      "CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = Log;\n"
                                      "-- migration 2: a column\n"
                                      "-- done if code 44\n"
                                      "ALTER TABLE t ADD COLUMN b UInt8;\n"
                                      "ALTER TABLE t MODIFY COLUMN b UInt16;\n",
                                      &d),
                     CM_OK);
    assert_int_equal(d.latest, 2);
    /* each migration's statements, then its version row */
    assert_int_equal(d.n, 5);
    assert_string_equal(d.stmts[0].sql, "CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = Log");
    assert_int_equal(d.stmts[0].done_code, 0);
    assert_string_equal(d.stmts[1].sql, "INSERT INTO schema_migrations (version) VALUES (1)");
    assert_string_equal(d.stmts[2].sql, "ALTER TABLE t ADD COLUMN b UInt8");
    assert_int_equal(d.stmts[2].done_code, 44);
    assert_int_equal(d.stmts[2].version, 2);
    assert_string_equal(d.stmts[3].sql, "ALTER TABLE t MODIFY COLUMN b UInt16");
    assert_int_equal(d.stmts[3].done_code, 0);
    assert_string_equal(d.stmts[4].sql, "INSERT INTO schema_migrations (version) VALUES (2)");
    cm__ch_ddl_free(&d);
}

static void test_bad_marks(void **state)
{
    (void)state;
    cm__ch_ddl_t d;
    /* a mark at the end of the text, or before the next migration */
    assert_int_equal(cm__ch_ddl_parse("-- migration 1: x\nCREATE TABLE t (a UInt8) ENGINE = Log;\n"
                                      "-- done if code 44\n",
                                      &d),
                     CM_EINVAL);
    assert_int_equal(cm__ch_ddl_parse("-- migration 1: x\n-- done if code 44\n"
                                      "-- migration 2: y\nCREATE TABLE t (a UInt8) ENGINE = Log;\n",
                                      &d),
                     CM_EINVAL);
    /* before any migration */
    assert_int_equal(cm__ch_ddl_parse("-- done if code 44\n-- migration 1: x\nSELECT 1;\n", &d),
                     CM_EINVAL);
}

static void test_error_codes(void **state)
{
    (void)state;
    assert_true(cm__ch_error_is("clickhouse HTTP 500: Code: 44, e.displayText() = DB::Exception: "
                                "Cannot add column b: column with this name already exists",
                                44));
    assert_true(cm__ch_error_is("clickhouse HTTP 500: Code: 44, e.displayText() = DB::Exception: "
                                "There was an error on [127.0.0.1:9000]: Code: 44, ...",
                                44));
    assert_false(cm__ch_error_is("clickhouse HTTP 500: Code: 15, e.displayText() = ...", 44));
    assert_false(cm__ch_error_is("clickhouse HTTP 500: Code: 440, ...", 44));
    assert_false(cm__ch_error_is("connection refused", 44));
    assert_false(cm__ch_error_is(NULL, 44));
    assert_false(cm__ch_error_is("Code: 0, ...", 0)); /* no mark: never */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_marks),
        cmocka_unit_test(test_bad_marks),
        cmocka_unit_test(test_error_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
