/*
 * test_evstore_value.c - an answer's values written by their column's type
 * (evstore_value.c): both stores' text gives the same JSON, ClickHouse
 * 18.16's zero dates read as the epoch, Nullable(...) as its inner type,
 * floats a client cannot read (nan, inf) as null.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cm/event_store.h"
#include "cm/tzone.h"

/* The JSON of one value of type written from text (NULL: a SQL NULL). */
static char *write1(const char *type, const char *text, char out[128])
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_evstore_write_value(&w, type, text);
    snprintf(out, 128, "%s", cm_buf_cstr(&b));
    cm_buf_free(&b);
    return out;
}

static void test_values_by_type(void **state)
{
    (void)state;
    static const struct {
        const char *type, *text, *want;
    } cases[] = {
        {"Int64", "42", "42"},
        {"Int64", "-7", "-7"},
        {"Int64", "18446744073709551615", "18446744073709551615"}, /* cityHash64: a UInt64 */
        {"Int64", "9223372036854775808", "9223372036854775808"},
        {"Int64", "-9223372036854775809", "\"-9223372036854775809\""},
        {"Nullable(Int64)", "42", "42"},
        {"Int64", NULL, "null"},
        {"Int64", "2.5", "2.5"},     /* a float the store kept in an integer column */
        {"Int64", "abc", "\"abc\""}, /* never a broken number */
        {"Int64", "", "\"\""},
        {"UInt8", "1", "1"},
        {"Float64", "0.1", "0.1"},
        {"Float64", "nan", "null"}, /* ClickHouse's avg of nothing */
        {"Float64", "inf", "null"},
        {"Float64", "-inf", "null"},
        {"Float64", "1x", "null"},
        {"Nullable(Float64)", "3", "3"},
        {"DateTime", "2026-11-28 06:24:30", "\"2026-11-28T06:24:30Z\""},
        {"DateTime", "0000-00-00 00:00:00", "\"1970-01-01T00:00:00Z\""}, /* 18.16's epoch */
        {"Nullable(DateTime)", "0000-00-00 00:00:00", "\"1970-01-01T00:00:00Z\""},
        {"DateTime", "2026-11-28T06:24:30Z", "\"2026-11-28T06:24:30Z\""},
        {"Date", "0000-00-00", "\"1970-01-01\""},
        {"Date", "2026-11-28", "\"2026-11-28\""},
        {"String", "a \"q\" \\", "\"a \\\"q\\\" \\\\\""},
        {"String", "0000-00-00", "\"0000-00-00\""}, /* only dates are read as dates */
        {"String", NULL, "null"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[128];
        write1(cases[i].type, cases[i].text, out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%s %s: %s, want %s", cases[i].type, cases[i].text ? cases[i].text : "NULL",
                     out, cases[i].want);
    }
}

/* A DateTime in a zone: the instant with that zone's offset at it (New
 * York's either side of 2024-03-10 07:00 UTC, Kolkata's half hour). */
static void test_values_in_a_zone(void **state)
{
    (void)state;
    static const struct {
        const char *type, *text, *want;
    } cases[] = {
        {"DateTime('America/New_York')", "2024-03-10 06:59:59", "\"2024-03-10T01:59:59-05:00\""},
        {"DateTime('America/New_York')", "2024-03-10 07:00:00", "\"2024-03-10T03:00:00-04:00\""},
        {"Nullable(DateTime('America/New_York'))", NULL, "null"},
        {"DateTime('Asia/Kolkata')", "2024-01-01 00:00:00", "\"2024-01-01T05:30:00+05:30\""},
        {"DateTime('Europe/London')", "2024-01-01 00:00:00", "\"2024-01-01T00:00:00Z\""},
        {"DateTime('Asia/Kolkata')", "0000-00-00 00:00:00", "\"1970-01-01T05:30:00+05:30\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char name[64];
        assert_true(cm_evstore_type_zone(cases[i].type, name, sizeof(name)));
        cm_tzone_t *z = cm_tzone_open(cm_slice_from_cstr(name));
        assert_non_null(z);
        cm_buf_t b = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &b);
        cm_evstore_write_value_tz(&w, cases[i].type, cases[i].text, z);
        if (strcmp(cm_buf_cstr(&b), cases[i].want) != 0)
            fail_msg("%s %s: %s, want %s", cases[i].type, cases[i].text ? cases[i].text : "NULL",
                     cm_buf_cstr(&b), cases[i].want);
        cm_buf_free(&b);
        cm_tzone_free(z);
    }
    char name[64];
    assert_false(cm_evstore_type_zone("DateTime", name, sizeof(name)));
    assert_false(cm_evstore_type_zone("DateTime('unterminated", name, sizeof(name)));
    assert_false(cm_evstore_type_zone("String", name, sizeof(name)));
}

/* Array(T): SQLite's JSON and ClickHouse's literal text give one JSON
 * array, each element by T (evstore_array.c); text that does not parse
 * stays a string. */
static void test_arrays(void **state)
{
    (void)state;
    static const struct {
        const char *type, *text, *want;
    } cases[] = {
        {"Array(Int64)", "[1,2,3]", "[1,2,3]"},
        {"Array(Int64)", "[]", "[]"},
        {"Array(Int64)", "[NULL,1]", "[null,1]"},
        {"Array(Float64)", "[1,2.5]", "[1,2.5]"},
        {"Array(Float64)", "[1.0,2.5]", "[1,2.5]"}, /* SQLite keeps the .0 */
        {"Array(String)", "[\"a\",\"it's \\\"q\\\"\"]", "[\"a\",\"it's \\\"q\\\"\"]"},
        {"Array(String)", "['a','it\\'s','b\\\\']", "[\"a\",\"it's\",\"b\\\\\"]"},
        {"Array(String)", "[\"\\u00e9\\ud83d\\ude00\"]", "[\"\xc3\xa9\xf0\x9f\x98\x80\"]"},
        {"Array(String)", "['1','2']", "[\"1\",\"2\"]"},
        {"Array(DateTime)", "['2026-11-28 06:24:30']", "[\"2026-11-28T06:24:30Z\"]"},
        {"Array(Date)", "[\"2026-11-28\"]", "[\"2026-11-28\"]"},
        {"Array(Array)", "[[1],[2,3]]", "[[1],[2,3]]"},
        {"Array(Array)", "[['a'],[]]", "[[\"a\"],[]]"},
        {"Array(UInt8)", "[true,false,1]", "[1,0,1]"},
        {"Array(String)", "['a", "\"['a\""}, /* unterminated: the text as it came */
        {"Array(Int64)", "[1,2] x", "\"[1,2] x\""},
        {"Array(Int64)", "oops", "\"oops\""},
        {"Array(Int64)", NULL, "null"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[128];
        write1(cases[i].type, cases[i].text, out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%s %s: %s, want %s", cases[i].type, cases[i].text ? cases[i].text : "NULL",
                     out, cases[i].want);
    }
    /* nested past the limit: a string, not a crash */
    char deep[200], out[128];
    memset(deep, '[', 90);
    memset(deep + 90, ']', 90);
    deep[180] = '\0';
    write1("Array(Array)", deep, out);
    assert_int_equal(out[0], '"');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_by_type),
        cmocka_unit_test(test_values_in_a_zone),
        cmocka_unit_test(test_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
