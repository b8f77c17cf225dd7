/* test_form.c - urlencoded forms: iteration, percent-decoding, lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/form.h"

static void test_iterate(void **state)
{
    (void)state;
    static const char body[] = "a=1&b=2&&c&=x&d=&e=f=g;h=i&";
    static const char *want[][2] = {
        {"a", "1"}, {"b", "2"}, {"c", ""}, {"", "x"}, {"d", ""}, {"e", "f=g;h=i"},
    };
    cm_form_iter_t it;
    cm_slice_t k, v;
    size_t n = 0;
    cm_form_iter_init(&it, body, sizeof(body) - 1);
    while (cm_form_next(&it, &k, &v)) {
        assert_true(n < sizeof(want) / sizeof(want[0]));
        assert_true(cm_slice_eq_cstr(k, want[n][0]));
        assert_true(cm_slice_eq_cstr(v, want[n][1]));
        n++;
    }
    assert_int_equal(n, sizeof(want) / sizeof(want[0]));
    assert_false(cm_form_next(&it, &k, &v));

    cm_form_iter_init(&it, NULL, 0);
    assert_false(cm_form_next(&it, &k, &v));
    cm_form_iter_init(&it, "&&&", 3);
    assert_false(cm_form_next(&it, &k, &v));
}

static void expect_decode_n(const char *s, bool plus, const char *want, size_t n)
{
    cm_buf_t out = CM_BUF_INIT;
    assert_int_equal(cm_url_decode(s, strlen(s), plus, &out), CM_OK);
    assert_int_equal(out.len, n);
    if (out.len)
        assert_memory_equal(out.p, want, out.len);
    cm_buf_free(&out);
}

static void expect_decode(const char *s, bool plus, const char *want)
{
    expect_decode_n(s, plus, want, strlen(want));
}

static void test_url_decode(void **state)
{
    (void)state;
    expect_decode("", true, "");
    expect_decode("a%20b+c", true, "a b c");
    expect_decode("a%20b+c", false, "a b+c");
    expect_decode("%2B%2b%3D%26", true, "++=&");
    expect_decode("%e2%82%AC", true, "\xe2\x82\xac");
    expect_decode_n("%00x", true, "\0x", 2);
    expect_decode("100%25", true, "100%");

    static const char *bad[] = {"%", "%2", "a%", "%zz", "%2g", "%g2", "ok%2", "%%41"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cm_buf_t out = CM_BUF_INIT;
        cm_buf_append(&out, "keep", 4);
        assert_int_equal(cm_url_decode(bad[i], strlen(bad[i]), true, &out), CM_EINVAL);
        assert_int_equal(out.len, 4);
        cm_buf_free(&out);
    }
}

static int get(const char *body, const char *name, cm_buf_t *out)
{
    out->len = 0;
    return cm_form_get(body, strlen(body), name, out);
}

static void test_form_get(void **state)
{
    (void)state;
    cm_buf_t out = CM_BUF_INIT;
    const char *body = "data=eyJldmVudCI6IngifQ%3D%3D&compression=lz64&ver=1.2.3";
    assert_int_equal(get(body, "data", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "eyJldmVudCI6IngifQ==");
    assert_int_equal(get(body, "compression", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "lz64");
    assert_int_equal(get(body, "ver", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "1.2.3");
    assert_int_equal(get(body, "lib_version", &out), CM_ENOTFOUND);
    assert_int_equal(get(body, "dat", &out), CM_ENOTFOUND);
    assert_int_equal(get(body, "datas", &out), CM_ENOTFOUND);
    assert_int_equal(get("", "data", &out), CM_ENOTFOUND);
    assert_int_equal(cm_form_get(NULL, 0, "data", &out), CM_ENOTFOUND);

    /* Names are decoded too; the first match wins; '+' is a space. */
    assert_int_equal(get("d%61ta=a+b&data=second", "data", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "a b");
    assert_int_equal(get("x+y=1", "x y", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "1");
    assert_int_equal(get("flag&data", "data", &out), CM_OK);
    assert_int_equal(out.len, 0);
    assert_int_equal(get("a=1;data=2", "data", &out), CM_ENOTFOUND);

    /* Bad escapes: in the value found, or in any name looked at. */
    assert_int_equal(get("data=%zz", "data", &out), CM_EINVAL);
    assert_int_equal(get("a%zz=1&data=2", "data", &out), CM_EINVAL);
    assert_int_equal(get("d%zz=1&data=2", "data", &out), CM_EINVAL);
    assert_int_equal(get("other=%zz&data=2", "data", &out), CM_OK); /* never decoded */
    assert_int_equal(get("data=2&a%zz=1", "data", &out), CM_OK);    /* never reached */
    assert_int_equal(out.len, 1);
    cm_buf_free(&out);
}

/* Encoded, then decoded: the same bytes; only unreserved bytes stay bare. */
static void test_url_encode(void **state)
{
    (void)state;
    cm_buf_t e = CM_BUF_INIT, d = CM_BUF_INIT;
    const char in[] = "a b&c=d/é?#%+~._-\x01";
    cm_url_encode(in, sizeof(in) - 1, &e);
    assert_string_equal(cm_buf_cstr(&e), "a%20b%26c%3Dd%2F%C3%A9%3F%23%25%2B~._-%01");
    assert_int_equal(cm_url_decode(e.p, e.len, false, &d), 0);
    assert_int_equal(d.len, sizeof(in) - 1);
    assert_memory_equal(d.p, in, d.len);
    cm_buf_free(&e);
    cm_buf_free(&d);
}

/* A present empty value ("?a=", "?a") is a C string, never a NULL pointer:
 * the api passed {NULL, 0} to memchr for "?is_active=" (undefined). */
static void test_empty_value_not_null(void **state)
{
    (void)state;
    const char *forms[] = {"is_active=", "is_active", "x=1&is_active=&y=2", "is_active=&"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        cm_buf_t out = CM_BUF_INIT;
        assert_int_equal(cm_form_get(forms[i], strlen(forms[i]), "is_active", &out), CM_OK);
        assert_int_equal(out.len, 0);
        assert_non_null(out.p);
        assert_int_equal(out.p[0], '\0');
        cm_buf_free(&out);
    }
}

static void test_decoded_never_larger(void **state)
{
    (void)state;
    static const char body[] = "data=%7B%22event%22%3A%22x%22%7D+++&z=1";
    cm_buf_t out = CM_BUF_INIT;
    assert_int_equal(cm_form_get(body, sizeof(body) - 1, "data", &out), CM_OK);
    assert_string_equal(cm_buf_cstr(&out), "{\"event\":\"x\"}   ");
    assert_true(out.len <= sizeof(body) - 1);
    cm_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iterate),    cmocka_unit_test(test_url_decode),
        cmocka_unit_test(test_form_get),   cmocka_unit_test(test_decoded_never_larger),
        cmocka_unit_test(test_url_encode), cmocka_unit_test(test_empty_value_not_null),
    };
    return cmocka_run_group_tests_name("form", tests, NULL, NULL);
}
