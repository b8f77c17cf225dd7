/*
 * test_db_sqlite_ch.c - cm_argmax, cm_argmin and cm_finite on a SQLite
 * connection: NULLs skipped, ties broken by x whatever the row order,
 * numbers before text, NULL over no rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sqlite_ch_support.h"

#define ROWS(v) "(SELECT column1 AS x, column2 AS y FROM (VALUES " v "))"

static void test_argmax_argmin(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('a', 1), ('b', 3), ('c', 2)"), "b");
    EXPECT_ONE(db, "SELECT cm_argmin(x, y) FROM " ROWS("('a', 1), ('b', 3), ('c', 2)"), "a");
    /* a tie on y: the largest x for argMax, the smallest for argMin, in any order */
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('b', 3), ('z', 3), ('a', 3)"), "z");
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('z', 3), ('b', 3), ('a', 3)"), "z");
    EXPECT_ONE(db, "SELECT cm_argmin(x, y) FROM " ROWS("('b', 1), ('a', 1), ('z', 1)"), "a");
    /* rows where either is NULL do not count */
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("(NULL, 9), ('b', NULL), ('c', 2)"), "c");
    EXPECT_ONE(db, "SELECT cm_argmin(x, y) FROM " ROWS("('a', NULL), (NULL, 0), ('c', 5)"), "c");
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("(NULL, 1), ('b', NULL)"), "NULL");
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('a', 1)") " WHERE y > 5", "NULL");
    /* numbers by value (integers and reals mixed), text byte by byte */
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('i', 10), ('r', 9.5), ('s', 2)"), "i");
    EXPECT_ONE(db, "SELECT cm_argmin(x, y) FROM " ROWS("('i', 10), ('r', 9.5), ('s', 2.25)"), "s");
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("('a', 'B'), ('b', 'a'), ('c', 'ab')"), "c");
    EXPECT_ONE(db, "SELECT cm_argmax(x, y) FROM " ROWS("(1, 'a'), (2, 'ab'), (3, 'a')"), "2");
    /* per group */
    EXPECT_ONE(db,
               "SELECT group_concat(m, ',') FROM (SELECT cm_argmax(x, y) AS m FROM " ROWS(
                   "('a', 1), ('b', 2), ('c', 7), ('d', 3)") " GROUP BY y % 2 ORDER BY y % 2)",
               "b,c");
    sqlite3_close(db);
}

static void test_finite(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_finite(1.5)", "1.5");
    EXPECT_ONE(db, "SELECT cm_finite(7)", "7");
    EXPECT_ONE(db, "SELECT cm_finite('x')", "x");
    EXPECT_ONE(db, "SELECT cm_finite(1e308 * 10)", "NULL");
    EXPECT_ONE(db, "SELECT cm_finite(-1e308 * 10)", "NULL");
    EXPECT_ONE(db, "SELECT cm_finite(NULL)", "NULL");
    sqlite3_close(db);
}

/* intDiv's and modulo's divisor: a 0 fails the statement in ClickHouse's
 * words, anything else passes through */
static void test_divisor(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT 7 % cm_divisor(2)", "1");
    EXPECT_ONE(db, "SELECT cm_divisor(-0.5)", "-0.5");
    EXPECT_ONE(db, "SELECT cm_divisor(NULL)", "NULL");
    EXPECT_ONE(db, "SELECT cm_divisor('x')", "x");
    EXPECT_ONE(db, "SELECT 7 % cm_divisor(0)", "error: Division by zero");
    EXPECT_ONE(db, "SELECT 7 / cm_divisor(0.0)", "error: Division by zero");
    EXPECT_ONE(db, "SELECT sum(cm_divisor(x - 1)) FROM (SELECT 2 AS x UNION ALL SELECT 1)",
               "error: Division by zero");
    sqlite3_close(db);
}

/* leftPad/rightPad/repeat as ClickHouse 21.8+ documents them, in bytes */
static void test_pad_repeat(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_pad('abc', 7, '*', 1)", "****abc");
    EXPECT_ONE(db, "SELECT cm_pad('abc', 7, '*', 0)", "abc****");
    EXPECT_ONE(db, "SELECT cm_pad('abc', 6, 'xy', 1)", "xyxabc");
    EXPECT_ONE(db, "SELECT cm_pad('abc', 7, 'xy', 0)", "abcxyxy");
    EXPECT_ONE(db, "SELECT cm_pad('abcdef', 3, '*', 1)", "abc"); /* cut to n */
    EXPECT_ONE(db, "SELECT cm_pad('abcdef', 3, '*', 0)", "abc");
    EXPECT_ONE(db, "SELECT cm_pad('ab', 5, '', 1)", "ab");
    EXPECT_ONE(db, "SELECT cm_pad('7', 2, '0', 1)", "07");
    EXPECT_ONE(db, "SELECT cm_pad(NULL, 2, '0', 1)", "NULL");
    EXPECT_ONE(db, "SELECT cm_pad('a', -1, '0', 1)",
               "error: leftPad/rightPad: the length must be 0 to 1048576");
    EXPECT_ONE(db, "SELECT cm_repeat('ab', 3)", "ababab");
    EXPECT_ONE(db, "SELECT cm_repeat('ab', 0)", "");
    EXPECT_ONE(db, "SELECT cm_repeat('', 5)", "");
    EXPECT_ONE(db, "SELECT cm_repeat('ab', 10000000)",
               "error: repeat: the count must be from 0 and the result at most 1 MiB");
    sqlite3_close(db);
}

/* base64 as RFC 4648's standard alphabet, padded */
static void test_base64(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_base64_encode('abc')", "YWJj");
    EXPECT_ONE(db, "SELECT cm_base64_encode('ab')", "YWI=");
    EXPECT_ONE(db, "SELECT cm_base64_encode('')", "");
    EXPECT_ONE(db, "SELECT cm_base64_decode('YWJj', 1)", "abc");
    EXPECT_ONE(db, "SELECT cm_base64_decode('YWI=', 1)", "ab");
    EXPECT_ONE(db, "SELECT cm_base64_decode('', 1)", "");
    EXPECT_ONE(db, "SELECT cm_base64_decode('YW*j', 1)",
               "error: base64Decode: the text is not base64");
    EXPECT_ONE(db, "SELECT cm_base64_decode('YWI', 1)",
               "error: base64Decode: the text is not base64");
    EXPECT_ONE(db, "SELECT cm_base64_decode('YW*j', 0)", "");
    EXPECT_ONE(db, "SELECT cm_base64_decode(NULL, 1)", "NULL");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argmax_argmin), cmocka_unit_test(test_finite),
        cmocka_unit_test(test_divisor),       cmocka_unit_test(test_pad_repeat),
        cmocka_unit_test(test_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
