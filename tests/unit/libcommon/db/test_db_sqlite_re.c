/*
 * test_db_sqlite_re.c - cm_match, cm_extract, cm_replace_one and
 * cm_replace_all answer as ClickHouse 18.16 does (values read from one):
 * '.' and newlines, '$' at the very end, UTF-8, groups, replacements; a
 * catastrophic pattern fails the query instead of running on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sqlite_ch_support.h"

static void test_match_extract(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_match('abc', 'b')", "1");
    EXPECT_ONE(db, "SELECT cm_match('abc', '^b')", "0");
    EXPECT_ONE(db, "SELECT cm_match('a' || char(10) || 'b', 'a.b')", "1");
    EXPECT_ONE(db, "SELECT cm_match('ab' || char(10), 'b$')", "0");
    EXPECT_ONE(db, "SELECT cm_match('é', '^.$')", "1");
    EXPECT_ONE(db, "SELECT cm_match('É', '(?i)é')", "1");
    EXPECT_ONE(db, "SELECT cm_match('abc', '')", "1");
    EXPECT_ONE(db, "SELECT cm_match(NULL, 'a')", "NULL");
    EXPECT_ONE(db, "SELECT cm_match(CAST(x'61ff62' AS TEXT), 'a.b')", "0");
    EXPECT_ONE(db, "SELECT cm_extract('abc123', '\\d+')", "123");
    EXPECT_ONE(db, "SELECT cm_extract('abc', 'z')", "");
    EXPECT_ONE(db, "SELECT cm_extract('abc', '(z)?b')", "");
    EXPECT_ONE(db, "SELECT cm_extract('abc', 'a(b)(c)')", "b");
    EXPECT_ONE(db, "SELECT cm_extract('a' || char(10) || 'b', 'a.b')", "a\nb");
    sqlite3_close(db);
}

static void test_replace(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_replace_one('abcb', 'b', 'X')", "aXcb");
    EXPECT_ONE(db, "SELECT cm_replace_all('abcb', 'b', 'X')", "aXcX");
    EXPECT_ONE(db, "SELECT cm_replace_one('abc', '(b)', '[\\1\\0\\\\]')", "a[bb\\]c");
    EXPECT_ONE(db, "SELECT cm_replace_all('a' || char(10) || 'b', 'a.b', 'X')", "a\nb");
    EXPECT_ONE(db, "SELECT cm_replace_all('aaa', '^a', 'X')", "Xaa");
    EXPECT_ONE(db, "SELECT cm_replace_one('abc', 'x*', '-')", "-abc");
    EXPECT_ONE(db, "SELECT cm_replace_all('abc', 'x*', '-')", "-abc"); /* 18.16's */
    EXPECT_ONE(db, "SELECT cm_replace_all('hello', 'l', '$0')", "he$0$0o");
    EXPECT_ONE(db, "SELECT cm_replace_all('hello', 'z', 'y')", "hello");
    EXPECT_ONE(db, "SELECT cm_replace_all(NULL, 'z', 'y')", "NULL");
    sqlite3_close(db);
}

static void test_bounded(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    char got[512];
    ch_one(db, "SELECT cm_match(printf('%.*c', 40, 'a') || '!', '^(a+)+$')", got, sizeof(got));
    assert_non_null(strstr(got, "error: regular expression too costly"));
    ch_one(db, "SELECT cm_match('a', 'a(')", got, sizeof(got));
    assert_non_null(strstr(got, "error: invalid regular expression"));
    ch_one(db, "SELECT cm_match('a', x) FROM (SELECT 'a' AS x UNION ALL SELECT 'b')", got,
           sizeof(got));
    assert_string_equal(got, "1"); /* a column pattern compiles per row */
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_extract),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
