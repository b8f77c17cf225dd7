/*
 * test_db_sqlite_text.c - issue 28's rest (part T) on a SQLite connection:
 * cm_lower_utf8 / cm_upper_utf8 (18.16's mappings, bytes that are no UTF-8
 * copied), cm_encode_url, cm_to_week (MySQL's modes 0 to 7, the answers its
 * manual states), cm_city_hash64 (NULL, several arguments, the padded
 * digits; equality with ClickHouse is endpoints_cityhash.test.mjs's) and
 * cm_same_size (ARRAY JOIN's zipped arrays).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sqlite_ch_support.h"

static void test_case_utf8(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_lower_utf8('ÄÖÜ ABC Σ İ ẞ')", "äöü abc σ İ ẞ");
    EXPECT_ONE(db, "SELECT cm_upper_utf8('äöü abc ß ı ſ')", "ÄÖÜ ABC ß ı ſ");
    EXPECT_ONE(db, "SELECT cm_upper_utf8('μ ς ι')", "µ σ ͅ");  /* 18.16's own upper cases */
    EXPECT_ONE(db, "SELECT cm_lower_utf8('ǅ Ⓐ Ⰰ')", "ǅ Ⓐ Ⰰ"); /* ones 18.16 leaves alone */
    EXPECT_ONE(db, "SELECT cm_lower_utf8('𐐀')", "𐐨");         /* Deseret, past the BMP */
    EXPECT_ONE(db, "SELECT hex(cm_upper_utf8(x'61C3FF62E282'))", "41C3FF42E282"); /* bad bytes */
    EXPECT_ONE(db, "SELECT cm_lower_utf8(NULL)", "NULL");
    EXPECT_ONE(db, "SELECT cm_upper_utf8('')", "");
    sqlite3_close(db);
}

static void test_encode_url(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_encode_url('a b/c?d=é~_-.')", "a%20b%2Fc%3Fd%3D%C3%A9~_-.");
    EXPECT_ONE(db, "SELECT cm_encode_url('')", "");
    EXPECT_ONE(db, "SELECT cm_encode_url(NULL)", "NULL");
    EXPECT_ONE(db, "SELECT cm_encode_url(x'00FF')", "%00%FF");
    sqlite3_close(db);
}

static void test_to_week(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_to_week('2008-02-20', 0)", "7");
    EXPECT_ONE(db, "SELECT cm_to_week('2008-02-20', 1)", "8");
    EXPECT_ONE(db, "SELECT cm_to_week('2008-12-31', 1)", "53");
    EXPECT_ONE(db, "SELECT cm_to_week('2000-01-01', 0)", "0");
    EXPECT_ONE(db, "SELECT cm_to_week('2000-01-01', 2)", "52");
    EXPECT_ONE(db, "SELECT cm_to_week('2016-12-27', 0)", "52");
    EXPECT_ONE(db, "SELECT cm_to_week('2021-01-01', 3)", "53"); /* ISO: 2020's last week */
    EXPECT_ONE(db, "SELECT cm_to_week('2024-12-30', 3)", "1");  /* ISO: 2025's first week */
    EXPECT_ONE(db, "SELECT cm_to_week('2024-12-30', 8)", "NULL");
    EXPECT_ONE(db, "SELECT cm_to_week('not a date', 0)", "NULL");
    EXPECT_ONE(db, "SELECT cm_to_week(NULL, 0)", "NULL");
    sqlite3_close(db);
}

static void test_city_hash(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_city_hash64('')", "11160318154034397263"); /* k2, as ClickHouse */
    EXPECT_ONE(db, "SELECT length(cm_city_hash64('a'))", "20");
    EXPECT_ONE(db, "SELECT cm_city_hash64('a', NULL)", "NULL");
    EXPECT_ONE(db, "SELECT cm_city_hash64('a', 'b') = cm_city_hash64('b', 'a')", "0");
    EXPECT_ONE(db, "SELECT cm_city_hash64(x'00') = cm_city_hash64('')", "0");
    sqlite3_close(db);
}

static void test_same_size(void **state)
{
    (void)state;
    sqlite3 *db = ch_open();
    EXPECT_ONE(db, "SELECT cm_same_size(2, 2)", "1");
    EXPECT_ONE(db, "SELECT cm_same_size(2, 3)",
               "error: Sizes of ARRAY-JOIN-ed arrays do not match");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case_utf8), cmocka_unit_test(test_encode_url),
        cmocka_unit_test(test_to_week),   cmocka_unit_test(test_city_hash),
        cmocka_unit_test(test_same_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
