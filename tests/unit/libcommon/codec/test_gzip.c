/* test_gzip.c - bounded gunzip: members, corruption, limits and bombs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/err.h"
#include "cm/gzip.h"

static cm_buf_t gz(const char *s, size_t len, int level)
{
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(cm_gzip(s, len, level, &b), CM_OK);
    return b;
}

static void test_magic(void **state)
{
    (void)state;
    assert_true(cm_gzip_magic("\x1f\x8b\x08\x00", 4));
    assert_true(cm_gzip_magic("\x1f\x8b\x08", 3));
    assert_false(cm_gzip_magic("\x1f\x8b", 2));
    assert_false(cm_gzip_magic("\x1f\x8b\x07", 3));
    assert_false(cm_gzip_magic("{\"a\":1}", 7));
    assert_false(cm_gzip_magic("", 0));
    cm_buf_t b = gz("x", 1, -1);
    assert_true(cm_gzip_magic(b.p, b.len));
    cm_buf_free(&b);
}

static void test_roundtrip(void **state)
{
    (void)state;
    static const char text[] = "{\"api_key\":\"phc_x\",\"batch\":[{\"event\":\"$pageview\"}]}";
    static const int levels[] = {-1, 0, 1, 6, 9};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        cm_buf_t z = gz(text, sizeof(text) - 1, levels[i]);
        cm_buf_t out = CM_BUF_INIT;
        cm_buf_append(&out, "pre:", 4); /* decoding appends */
        assert_int_equal(cm_gunzip(z.p, z.len, sizeof(text) - 1, &out), CM_OK);
        assert_int_equal(out.len, 4 + sizeof(text) - 1);
        assert_memory_equal(out.p, "pre:", 4);
        assert_memory_equal(out.p + 4, text, sizeof(text) - 1);
        cm_buf_free(&z);
        cm_buf_free(&out);
    }
    /* The empty string is a valid member of 20 bytes. */
    cm_buf_t z = gz("", 0, -1), out = CM_BUF_INIT;
    assert_int_equal(z.len, 20);
    assert_int_equal(cm_gunzip(z.p, z.len, 0, &out), CM_OK);
    assert_int_equal(out.len, 0);
    assert_int_equal(cm_gzip("", 0, 10, &z), CM_EINVAL);
    assert_int_equal(cm_gzip("", 0, -2, &z), CM_EINVAL);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

static void test_large_roundtrip(void **state)
{
    (void)state;
    size_t n = 3 << 20; /* several output steps */
    char *data = malloc(n);
    uint32_t x = 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (char)(i % 7 ? 'a' + (x >> 28) : (x >> 24));
    }
    cm_buf_t z = gz(data, n, 6), out = CM_BUF_INIT;
    assert_int_equal(cm_gunzip(z.p, z.len, n, &out), CM_OK);
    assert_int_equal(out.len, n);
    assert_memory_equal(out.p, data, n);
    out.len = 0;
    assert_int_equal(cm_gunzip(z.p, z.len, n - 1, &out), CM_ETOOBIG);
    assert_int_equal(out.len, 0);
    free(data);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

static void test_members(void **state)
{
    (void)state;
    cm_buf_t a = gz("hello ", 6, 9), b = gz("world", 5, 1), e = gz("", 0, -1);
    cm_buf_append(&a, b.p, b.len);
    cm_buf_append(&a, e.p, e.len);
    cm_buf_t out = CM_BUF_INIT;
    assert_int_equal(cm_gunzip(a.p, a.len, 100, &out), CM_OK);
    assert_int_equal(out.len, 11);
    assert_memory_equal(out.p, "hello world", 11);
    /* The limit covers all members together. */
    out.len = 0;
    assert_int_equal(cm_gunzip(a.p, a.len, 10, &out), CM_ETOOBIG);
    assert_int_equal(cm_gunzip(a.p, a.len, 11, &out), CM_OK);
    cm_buf_free(&a);
    cm_buf_free(&b);
    cm_buf_free(&e);
    cm_buf_free(&out);
}

static void test_trailing_and_truncated(void **state)
{
    (void)state;
    static const char *tails[] = {"x", "\x1f", "\x1f\x8b", "\0\0\0\0", "\x1f\x8b\x08"};
    static const size_t tail_len[] = {1, 1, 2, 4, 3};
    cm_buf_t z = gz("some payload", 12, -1), out = CM_BUF_INIT;
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        cm_buf_t t = CM_BUF_INIT;
        cm_buf_append(&t, z.p, z.len);
        cm_buf_append(&t, tails[i], tail_len[i]);
        assert_int_equal(cm_gunzip(t.p, t.len, 100, &out), CM_EINVAL);
        assert_int_equal(out.len, 0);
        cm_buf_free(&t);
    }
    for (size_t cut = 0; cut < z.len; cut++)
        assert_int_equal(cm_gunzip(z.p, cut, 100, &out), CM_EINVAL);
    assert_int_equal(cm_gunzip(NULL, 0, 100, &out), CM_EINVAL);
    assert_int_equal(out.len, 0);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

static void test_corrupt(void **state)
{
    (void)state;
    cm_buf_t z = gz("corruption must be caught", 25, -1), out = CM_BUF_INIT;
    /* The last 8 bytes are CRC-32 and ISIZE; then the header's magic. */
    size_t spots[] = {z.len - 8, z.len - 5, z.len - 4, z.len - 1, 0, 1, 2};
    for (size_t i = 0; i < sizeof(spots) / sizeof(spots[0]); i++) {
        z.p[spots[i]] ^= 0x01;
        assert_int_equal(cm_gunzip(z.p, z.len, 100, &out), CM_EINVAL);
        z.p[spots[i]] ^= 0x01;
    }
    /* Flipping a bit in the body is caught (bad data or bad CRC); the
     * last deflate byte is spared, as its high bits may be padding. */
    for (size_t i = 10; i < z.len - 9; i++) {
        z.p[i] ^= 0x40;
        assert_int_not_equal(cm_gunzip(z.p, z.len, 100, &out), CM_OK);
        z.p[i] ^= 0x40;
        out.len = 0;
    }
    /* zlib and raw deflate wrappers are not gzip. */
    assert_int_equal(cm_gunzip("\x78\x9c\x03\x00\x00\x00\x00\x01", 8, 100, &out), CM_EINVAL);
    assert_int_equal(cm_gunzip(z.p, z.len, 100, &out), CM_OK);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

static void test_bomb(void **state)
{
    (void)state;
    size_t n = (size_t)100 << 20;
    char *zeros = calloc(1, n);
    cm_buf_t z = gz(zeros, n, 9), out = CM_BUF_INIT;
    free(zeros);
    assert_true(z.len < 200 * 1024);
    size_t limit = 1 << 20;
    clock_t t0 = clock();
    assert_int_equal(cm_gunzip(z.p, z.len, limit, &out), CM_ETOOBIG);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
    assert_int_equal(out.len, 0);
    /* Never more than the limit plus the spare byte and the NUL. */
    assert_true(out.cap <= limit + 2);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

static void test_exact_limit(void **state)
{
    (void)state;
    char data[1000];
    memset(data, 'q', sizeof(data));
    cm_buf_t z = gz(data, sizeof(data), -1), out = CM_BUF_INIT;
    assert_int_equal(cm_gunzip(z.p, z.len, 999, &out), CM_ETOOBIG);
    assert_int_equal(out.len, 0);
    assert_int_equal(cm_gunzip(z.p, z.len, 1000, &out), CM_OK);
    assert_int_equal(out.len, 1000);
    out.len = 0;
    assert_int_equal(cm_gunzip(z.p, z.len, 0, &out), CM_ETOOBIG);
    assert_int_equal(cm_gunzip(z.p, z.len, SIZE_MAX, &out), CM_OK);
    assert_int_equal(out.len, 1000);
    cm_buf_free(&z);
    cm_buf_free(&out);
}

/* A head kept once and finished with many different tails: every member
 * inflates to head + tail exactly (zlib checks the combined CRC and length). */
static void test_head_tail(void **state)
{
    (void)state;
    size_t lens[] = {0, 1, 100, 70000, 300000};
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        size_t n = lens[li];
        char *in = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            in[i] = (char)("{\"flag-\":true,"[i % 14] + (i % 97 == 0 ? (int)(i % 7) : 0));
        cm_buf_t head = CM_BUF_INIT;
        assert_int_equal(cm_gzip_head(in, n, 1, &head), CM_OK);
        const char *tails[] = {"", "}", ",\"requestId\":\"0b7e\",\"evaluatedAt\":1764300000000}"};
        for (size_t t = 0; t < 3; t++) {
            size_t tl = strlen(tails[t]);
            cm_buf_t member = CM_BUF_INIT, plain = CM_BUF_INIT;
            assert_int_equal(cm_gzip_tail(cm_buf_slice(&head), tails[t], tl, &member), CM_OK);
            assert_true(cm_gzip_magic(member.p, member.len));
            assert_int_equal(cm_gunzip(member.p, member.len, n + tl, &plain), CM_OK);
            assert_int_equal(plain.len, n + tl);
            assert_memory_equal(plain.p, in, n);
            if (tl > 0)
                assert_memory_equal(plain.p + n, tails[t], tl);
            cm_buf_free(&member);
            cm_buf_free(&plain);
        }
        cm_buf_free(&head);
        free(in);
    }
    cm_buf_t head = CM_BUF_INIT, out = CM_BUF_INIT;
    assert_int_equal(cm_gzip_head("x", 1, 10, &head), CM_EINVAL);
    assert_int_equal(cm_gzip_head("x", 1, 1, &head), CM_OK);
    static char big[0x10000];
    assert_int_equal(cm_gzip_tail(cm_buf_slice(&head), big, sizeof(big), &out), CM_EINVAL);
    assert_int_equal(cm_gzip_tail((cm_slice_t){head.p, 8}, "x", 1, &out), CM_EINVAL);
    assert_int_equal(out.len, 0);
    cm_buf_free(&head);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_magic),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_large_roundtrip),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_trailing_and_truncated),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_bomb),
        cmocka_unit_test(test_exact_limit),
        cmocka_unit_test(test_head_tail),
    };
    return cmocka_run_group_tests_name("gzip", tests, NULL, NULL);
}
