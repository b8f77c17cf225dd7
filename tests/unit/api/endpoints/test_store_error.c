/*
 * test_store_error.c - a store's failure as the user is told it
 * (services/api/endpoints/store_error.c): ClickHouse's exceptions, as
 * 18.16 and newer servers print them, and SQLite's messages of the same
 * failures, to one code and text; a text that is not one of them to
 * none (the generic answer); no answer quotes the store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "endpoints/endpoints_int.h"

static void expect(const char *err, const char *code, int status)
{
    const api_endpoints__store_error_t *e = api_endpoints__store_error(err);
    if (code == NULL) {
        if (e != NULL)
            fail_msg("%s: answered %s, want the generic answer", err ? err : "(null)", e->code);
        return;
    }
    if (e == NULL)
        fail_msg("%s: no answer, want %s", err ? err : "(null)", code);
    assert_string_equal(e->code, code);
    assert_int_equal(e->status, status);
    /* a text of ours, a sentence that fits the envelope's detail
     * after "Query execution failed: " */
    assert_true(strlen(e->detail) > 10 && strlen(e->detail) < 256 - 25);
    assert_true(e->detail[0] >= 'a' && e->detail[0] <= 'z');
    assert_null(strstr(e->detail, "Exception"));
}

static void test_clickhouse(void **state)
{
    (void)state;
    /* 18.16 */
    expect("HTTP 500: Code: 153, e.displayText() = DB::Exception: Division by zero, e.what() = "
           "DB::Exception",
           "illegal_division", 400);
    expect("HTTP 500: Code: 386, e.displayText() = DB::Exception: There is no supertype for types "
           "String, UInt8 because some of them are String/FixedString and some of them are not",
           "no_common_type", 400);
    expect("HTTP 500: Code: 135, e.displayText() = DB::Exception: Indices in strings are 1-based",
           "zero_array_or_tuple_index", 400);
    expect("HTTP 500: Poco::Exception. Code: 1000, e.code() = 0, e.displayText() = Exception: "
           "Cannot load time zone Nowhere/City, e.what() = Exception",
           "bad_arguments", 400);
    /* newer servers */
    expect("HTTP 400: Code: 6. DB::Exception: Cannot parse string 'x' as Int64: syntax error at "
           "begin of string. (CANNOT_PARSE_TEXT)",
           "cannot_parse_text", 400);
    expect("HTTP 500: Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 9.31 "
           "GiB. (MEMORY_LIMIT_EXCEEDED)",
           "memory_limit_exceeded", 400);
    expect("HTTP 500: Code: 202. DB::Exception: Too many simultaneous queries. Maximum: 100.",
           "too_many_simultaneous_queries", 503);
    expect("HTTP 400: Code: 427. DB::Exception: OptimizedRegularExpression: cannot compile re2: (",
           "cannot_compile_regexp", 400);
    expect("HTTP 400: Code: 43. DB::Exception: Illegal type String of argument of function plus",
           "illegal_type_of_argument", 400);
    expect("HTTP 400: Code: 62. DB::Exception: Syntax error: failed at position 262144: Max "
           "query size exceeded",
           "query_size_exceeded", 400);
    /* the compiler's own faults, and what is not an exception: generic */
    expect("HTTP 400: Code: 47. DB::Exception: Missing columns: 'c1_0' while processing query",
           NULL, 0);
    expect("HTTP 400: Code: 62. DB::Exception: Syntax error: failed at position 8", NULL, 0);
    expect("HTTP 400: Bad request: the gateway refused the statement", NULL, 0);
    expect("HTTP 500: Code: ", NULL, 0);
    expect("HTTP 500: Code: 99999999999999999999", NULL, 0);
    expect("", NULL, 0);
    expect(NULL, NULL, 0);
}

static void test_sqlite(void **state)
{
    (void)state;
    expect("events: step: integer overflow", "integer_overflow", 400);
    expect("events: step: string or blob too big", "set_size_limit_exceeded", 400);
    expect("events: prepare: Expression tree is too large (maximum depth 1000)", "too_deep_ast",
           400);
    expect("events: prepare: too many terms in compound SELECT", "too_big_ast", 400);
    expect("events: step: out of memory", "memory_limit_exceeded", 400);
    expect("events: prepare: too many SQL variables", "too_big_ast", 400);
    expect("events: step: database is locked", "too_many_simultaneous_queries", 503);
    expect("events: prepare: no such function: nope", NULL, 0);
    expect("events: prepare: no such column: c1_0", NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clickhouse),
        cmocka_unit_test(test_sqlite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
