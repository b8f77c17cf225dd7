/*
 * test_db_sqlite_url.c - cm_domain, cm_path, cm_url_param and
 * cm_cut_query give ClickHouse 18.16's answers (each expected value here
 * was read from a ClickHouse 18.16 server) on the odd URLs: no scheme,
 * port, userinfo, fragment, repeated parameters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sqlite_ch_support.h"

static void test_domain(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_domain('https://a.b.com:8080/x?y=1#z')", "a.b.com");
    EXPECT_ONE(db, "SELECT cm_domain('a.b.com/x')", "");
    EXPECT_ONE(db, "SELECT cm_domain('//u:p@h.com/x')", "u");
    EXPECT_ONE(db, "SELECT cm_domain('http://user@h.com/x')", "h.com");
    EXPECT_ONE(db, "SELECT cm_domain('http://h.com')", "h.com");
    EXPECT_ONE(db, "SELECT cm_domain('mailto:x@y')", "");
    EXPECT_ONE(db, "SELECT cm_domain('https://h.com?x')", "h.com");
    EXPECT_ONE(db, "SELECT cm_domain('')", "");
    EXPECT_ONE(db, "SELECT cm_domain('/')", "");
    EXPECT_ONE(db, "SELECT cm_domain(NULL)", "NULL");
    sqlite3_close(db);
}

static void test_path(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_path('https://a.b.com:8080/x/y?y=1#z')", "/x/y");
    EXPECT_ONE(db, "SELECT cm_path('a.b.com/x')", "");
    EXPECT_ONE(db, "SELECT cm_path('http://h.com')", "");
    EXPECT_ONE(db, "SELECT cm_path('//h/x')", "/x");
    EXPECT_ONE(db, "SELECT cm_path('/a/b?c')", "");
    EXPECT_ONE(db, "SELECT cm_path('http://h/a#b/c')", "/a");
    EXPECT_ONE(db, "SELECT cm_path('x/')", "");
    sqlite3_close(db);
}

static void test_url_param(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?a=1&b=2&a=3#x', 'a')", "1");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?a=1&b=2&a=3#x', 'b')", "2");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?aa=1&a', 'a')", "");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?aa=1&a=5', 'a')", "5");
    EXPECT_ONE(db, "SELECT cm_url_param('a=5', 'a')", "");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/x#?a=9', 'a')", "9");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?a=%20x', 'a')", "%20x");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?a=', 'a')", "");
    EXPECT_ONE(db, "SELECT cm_url_param('http://h/?a=1', NULL)", "NULL");
    sqlite3_close(db);
}

static void test_cut_query(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_cut_query('http://h/x?a=1#f')", "http://h/x#f");
    EXPECT_ONE(db, "SELECT cm_cut_query('http://h/x#f?a')", "http://h/x#f");
    EXPECT_ONE(db, "SELECT cm_cut_query('x?y')", "x");
    EXPECT_ONE(db, "SELECT cm_cut_query('http://h/x')", "http://h/x");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domain),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_url_param),
        cmocka_unit_test(test_cut_query),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
