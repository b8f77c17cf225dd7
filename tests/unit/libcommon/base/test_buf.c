/* test_buf.c - cm_buf_t growth, consume, formatting; slice helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cm/buf.h"

static void test_append_and_grow(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    for (int i = 0; i < 1000; i++)
        cm_buf_append(&b, "abc", 3);
    assert_int_equal(b.len, 3000);
    assert_true(b.cap >= 3001);
    assert_memory_equal(b.p + 2997, "abc", 3);
    cm_buf_free(&b);
    assert_null(b.p);
}

static void test_appendf_large(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    char big[500];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    cm_buf_appendf(&b, "[%s|%d]", big, 42);
    assert_int_equal(b.len, 499 + 5);
    assert_string_equal(cm_buf_cstr(&b) + 500, "|42]");
    cm_buf_free(&b);
}

static void test_consume_and_detach(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "hello world");
    cm_buf_consume(&b, 6);
    assert_string_equal(cm_buf_cstr(&b), "world");
    cm_buf_consume(&b, 100);
    assert_int_equal(b.len, 0);
    cm_buf_append_cstr(&b, "x");
    size_t n;
    char *p = cm_buf_detach(&b, &n);
    assert_int_equal(n, 1);
    assert_string_equal(p, "x");
    assert_null(b.p);
    free(p);
}

static void test_slices(void **state)
{
    (void)state;
    cm_slice_t s = cm_slice_trim(CM_SLICE_LIT(" \tContent-Type \t"));
    assert_true(cm_slice_eq_cstr(s, "Content-Type"));
    assert_true(cm_slice_eq_nocase(s, "content-type"));
    assert_false(cm_slice_eq_nocase(s, "content-typ"));
    assert_true(cm_slice_starts_with(s, "Content"));
    assert_false(cm_slice_starts_with(CM_SLICE_LIT("Co"), "Content"));
}

static void test_fmt_int(void **state)
{
    (void)state;
    char b[24];
    assert_int_equal(cm_fmt_uint64(b, 0), 1);
    assert_string_equal(b, "0");
    assert_int_equal(cm_fmt_uint64(b, UINT64_MAX), 20);
    assert_string_equal(b, "18446744073709551615");
    assert_int_equal(cm_fmt_int64(b, -1795262400123), 14);
    assert_string_equal(b, "-1795262400123");
    cm_fmt_int64(b, INT64_MIN);
    assert_string_equal(b, "-9223372036854775808");
    cm_fmt_int64(b, INT64_MAX);
    assert_string_equal(b, "9223372036854775807");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_grow),
        cmocka_unit_test(test_appendf_large),
        cmocka_unit_test(test_consume_and_detach),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_fmt_int),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
