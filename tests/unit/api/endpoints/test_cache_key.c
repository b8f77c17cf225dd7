/*
 * test_cache_key.c - the endpoint runs' cache key encoding
 * (services/api/endpoints/cache.c): fields are length-prefixed, so that two
 * different lists of variable values never share one cached answer (a
 * newline-joined key made {"va": "x\ntq", "vb": "z"} and
 * {"va": "x", "vb": "q\ntz"} one key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "endpoints/endpoints_int.h"

/* The fields of a run with two text parameters, as endpoints/run.c adds them. */
static void encode(cm_buf_t *b, const char *va, const char *vb)
{
    cm_buf_reset(b);
    api_endpoints__key_field_c(b, "hogql");
    api_endpoints__key_field_c(b, "SELECT $1, $2");
    api_endpoints__key_field(b, "t", 1);
    api_endpoints__key_field_c(b, va);
    api_endpoints__key_field(b, "t", 1);
    api_endpoints__key_field_c(b, vb);
}

static void test_newlines_do_not_collide(void **state)
{
    (void)state;
    cm_buf_t a = CM_BUF_INIT, b = CM_BUF_INIT;
    encode(&a, "x\ntq", "z");
    encode(&b, "x", "q\ntz");
    assert_false(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
    char ka[96], kb[96];
    api_endpoints__key_name(&a, "7", ka);
    api_endpoints__key_name(&b, "7", kb);
    assert_string_not_equal(ka, kb);
    /* the same values: the same key */
    encode(&b, "x\ntq", "z");
    api_endpoints__key_name(&b, "7", kb);
    assert_string_equal(ka, kb);
    cm_buf_free(&a);
    cm_buf_free(&b);
}

static void test_separators_inside_values(void **state)
{
    (void)state;
    cm_buf_t a = CM_BUF_INIT, b = CM_BUF_INIT;
    /* a value holding what looks like the next field's encoding */
    encode(&a, "a;1:t;1:b", "c");
    encode(&b, "a", "b;1:t;1:c");
    assert_false(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
    encode(&a, "a;", "b");
    encode(&b, "a", ";b");
    assert_false(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
    cm_buf_free(&a);
    cm_buf_free(&b);
}

static void test_null_empty_dash(void **state)
{
    (void)state;
    cm_buf_t a = CM_BUF_INIT, b = CM_BUF_INIT, c = CM_BUF_INIT;
    encode(&a, NULL, "z");
    encode(&b, "", "z");
    encode(&c, "-", "z");
    assert_false(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
    assert_false(a.len == c.len && memcmp(a.p, c.p, a.len) == 0);
    assert_false(b.len == c.len && memcmp(b.p, c.p, b.len) == 0);
    cm_buf_free(&a);
    cm_buf_free(&b);
    cm_buf_free(&c);
}

static void test_exact_encoding_and_name(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    api_endpoints__key_field(&b, "ab\n", 3);
    api_endpoints__key_field(&b, NULL, 0);
    api_endpoints__key_field(&b, "", 0);
    assert_int_equal(b.len, strlen("3:ab\n;-;0:;"));
    assert_memory_equal(b.p, "3:ab\n;-;0:;", b.len);
    char key[96];
    api_endpoints__key_name(&b, "42", key);
    assert_int_equal(strncmp(key, "endpoint_cache:42:", 18), 0);
    assert_int_equal(strlen(key), 18 + 40);
    /* the project is part of the name: another project, another key */
    char other[96];
    api_endpoints__key_name(&b, "43", other);
    assert_string_not_equal(key, other);
    cm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newlines_do_not_collide),
        cmocka_unit_test(test_separators_inside_values),
        cmocka_unit_test(test_null_empty_dash),
        cmocka_unit_test(test_exact_encoding_and_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
