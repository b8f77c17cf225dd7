/* test_base64.c - strict base64 decoding, both encoders, the heuristic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cm/base64.h"
#include "cm/err.h"

static int dec(const char *s, unsigned flags, cm_buf_t *out)
{
    return cm_base64_decode(s, strlen(s), flags, 1 << 20, out);
}

/* Decodes s and checks the result is exactly want (a C string). */
static void expect(const char *s, unsigned flags, const char *want)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc = dec(s, flags, &out);
    if (rc != CM_OK || out.len != strlen(want) || (out.len && memcmp(out.p, want, out.len) != 0))
        fail_msg("decode(\"%s\"): rc %d len %zu", s, rc, out.len);
    cm_buf_free(&out);
}

static void expect_invalid(const char *s, unsigned flags)
{
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_append(&out, "x", 1);
    int rc = dec(s, flags, &out);
    if (rc != CM_EINVAL || out.len != 1)
        fail_msg("decode(\"%s\"): rc %d, wanted CM_EINVAL", s, rc);
    cm_buf_free(&out);
}

static void test_rfc4648_vectors(void **state)
{
    (void)state;
    static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    static const char *nopad[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        cm_buf_t b = CM_BUF_INIT, u = CM_BUF_INIT;
        cm_base64_encode(plain[i], strlen(plain[i]), &b);
        assert_int_equal(b.len, CM_BASE64_ENCODED_LEN(strlen(plain[i])));
        assert_string_equal(cm_buf_cstr(&b), coded[i]);
        cm_base64url_encode(plain[i], strlen(plain[i]), &u);
        assert_string_equal(cm_buf_cstr(&u), nopad[i]);
        expect(coded[i], 0, plain[i]);
        expect(nopad[i], 0, plain[i]);
        expect(nopad[i], CM_B64_URL, plain[i]);
        cm_buf_free(&b);
        cm_buf_free(&u);
    }
}

static void test_alphabets(void **state)
{
    (void)state;
    static const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
    cm_buf_t b = CM_BUF_INIT;
    cm_base64_encode(bytes, 3, &b);
    assert_string_equal(cm_buf_cstr(&b), "+/+/");
    b.len = 0;
    cm_base64url_encode(bytes, 3, &b);
    assert_string_equal(cm_buf_cstr(&b), "-_-_");
    b.len = 0;
    cm_base64url_encode(bytes, 2, &b);
    assert_string_equal(cm_buf_cstr(&b), "-_8");
    expect("+/+/", CM_B64_STD, "\xfb\xff\xbf");
    expect("-_-_", CM_B64_URL, "\xfb\xff\xbf");
    expect("-_8=", CM_B64_URL, "\xfb\xff"); /* URL-safe may be padded */
    expect("+_-/", CM_B64_STD | CM_B64_URL, "\xfb\xff\xbf");
    expect_invalid("-_-_", CM_B64_STD);
    expect_invalid("+/+/", CM_B64_URL);
    cm_buf_free(&b);
}

static void test_bad_padding(void **state)
{
    (void)state;
    static const char *bad[] = {
        "Zg=",                                      /* padded but not a multiple of 4 */
        "Zg===",                                    /* too much padding */
        "Z===",                                     /* one data char is not a byte */
        "Zm9v=",                                    /* padding after a full quantum */
        "Zm9v====",                                 /* ditto */
        "Zg==Zg==",                                 /* data after padding */
        "=Zg=",     "Zm8==",  "====", "=", "Zm9vY", /* unpadded, one char left over */
        "Zh==",                                     /* leftover bits not zero */
        "Zm9=",     "Zm9vYh",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_invalid(bad[i], 0);
}

static void test_invalid_chars_and_space(void **state)
{
    (void)state;
    expect_invalid("Zm9v!", 0);
    expect_invalid("Zm 9v", 0);
    expect_invalid("Zm9v\n", 0);
    expect_invalid("Zm9\xc3\xa9", 0);
    cm_buf_t out = CM_BUF_INIT;
    assert_int_equal(cm_base64_decode("Zm9v\0Zm9v", 9, 0, 100, &out), CM_EINVAL);
    expect("Zm 9v\r\nYm\tFy\n", CM_B64_SPACE, "foobar");
    expect(" Zg = = ", CM_B64_SPACE, "f");
    expect("  ", CM_B64_SPACE, "");
    cm_buf_free(&out);
}

static void test_limits(void **state)
{
    (void)state;
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_append(&out, "ab", 2);
    assert_int_equal(cm_base64_decode("Zm9vYmFy", 8, 0, 5, &out), CM_ETOOBIG);
    assert_int_equal(out.len, 2);
    assert_int_equal(cm_base64_decode("Zm9vYmFy", 8, 0, 6, &out), CM_OK);
    assert_int_equal(out.len, 8);
    assert_memory_equal(out.p, "abfoobar", 8);
    assert_int_equal(cm_base64_decode("Zm9vYmE", 7, 0, 4, &out), CM_ETOOBIG);
    assert_int_equal(cm_base64_decode("Zm9vYmE", 7, 0, 5, &out), CM_OK);
    assert_int_equal(cm_base64_decode("", 0, 0, 0, &out), CM_OK);
    assert_int_equal(cm_base64_decode(NULL, 0, 0, 0, &out), CM_OK);
    assert_int_equal(out.len, 13);
    cm_buf_free(&out);
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    srand(4242);
    unsigned char data[300];
    for (size_t len = 0; len <= sizeof(data); len++) {
        for (size_t i = 0; i < len; i++)
            data[i] = (unsigned char)rand();
        cm_buf_t e = CM_BUF_INIT, u = CM_BUF_INIT, d = CM_BUF_INIT;
        cm_base64_encode(data, len, &e);
        cm_base64url_encode(data, len, &u);
        assert_int_equal(cm_base64_decode(e.p, e.len, CM_B64_STD, len, &d), CM_OK);
        assert_int_equal(cm_base64_decode(u.p, u.len, CM_B64_URL, len, &d), CM_OK);
        assert_int_equal(d.len, 2 * len);
        if (len) {
            assert_memory_equal(d.p, data, len);
            assert_memory_equal(d.p + len, data, len);
        }
        assert_true(cm_base64_looks_like(e.p, e.len) == (len > 0));
        cm_buf_free(&e);
        cm_buf_free(&u);
        cm_buf_free(&d);
    }
}

static void test_looks_like(void **state)
{
    (void)state;
    assert_false(cm_base64_looks_like("", 0));
    assert_false(cm_base64_looks_like("abc", 3));
    assert_true(cm_base64_looks_like("abcd", 4));
    assert_true(cm_base64_looks_like("a+/=", 4));
    assert_true(cm_base64_looks_like("====", 4)); /* only a heuristic */
    assert_false(cm_base64_looks_like("ab-d", 4));
    assert_false(cm_base64_looks_like("{\"a\":1}", 7));
    /* A form body can pass: capture tests for "data=" etc. first. */
    assert_true(cm_base64_looks_like("data=abc", 8));
    char s[136];
    memset(s, 'Q', sizeof(s));
    s[130] = '!'; /* past the 128 bytes looked at */
    assert_true(cm_base64_looks_like(s, sizeof(s)));
    s[127] = '!';
    assert_false(cm_base64_looks_like(s, sizeof(s)));
    assert_false(cm_base64_looks_like(s, 130));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc4648_vectors), cmocka_unit_test(test_alphabets),
        cmocka_unit_test(test_bad_padding),     cmocka_unit_test(test_invalid_chars_and_space),
        cmocka_unit_test(test_limits),          cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_looks_like),
    };
    return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
