/* test_uuid.c - UUID v7/v4 format, v7 ordering and timestamps, validation, randomness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cm/timefmt.h"
#include "cm/err.h"
#include "cm/uuid.h"

static int hexval(char c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* Checks lowercase 8-4-4-4-12, the version nibble and variant 10xx. */
static void check_format(const char *u, int version)
{
    assert_int_equal(strlen(u), CM_UUID_STR_LEN);
    assert_true(cm_uuid_valid(u, strlen(u)));
    for (const char *p = u; *p; p++)
        assert_true((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-');
    assert_int_equal(hexval(u[14]), version);
    assert_int_equal(hexval(u[19]) & 0xc, 0x8);
}

/* The 48-bit millisecond timestamp of a v7 id. */
static int64_t v7_ms(const char *u)
{
    int64_t ms = 0;
    for (int i = 0; i < 13; i++)
        if (u[i] != '-')
            ms = ms * 16 + hexval(u[i]);
    return ms;
}

static void test_v7_format(void **state)
{
    (void)state;
    char u[CM_UUID_STR_LEN + 1];
    for (int i = 0; i < 1000; i++) {
        cm_uuid_v7(u);
        check_format(u, 7);
    }
}

static void test_v4_format(void **state)
{
    (void)state;
    char a[CM_UUID_STR_LEN + 1], b[CM_UUID_STR_LEN + 1];
    for (int i = 0; i < 1000; i++) {
        cm_uuid_v4(a);
        check_format(a, 4);
    }
    cm_uuid_v4(b);
    assert_string_not_equal(a, b);
}

static void test_v7_monotonic(void **state)
{
    (void)state;
    enum { N = 100000 };
    char prev[CM_UUID_STR_LEN + 1], cur[CM_UUID_STR_LEN + 1];
    int64_t start = cm_now_us() / 1000;
    cm_uuid_v7(prev);
    for (int i = 0; i < N; i++) {
        cm_uuid_v7(cur);
        /* Fixed-width lowercase hex: string order is byte order. */
        assert_true(strcmp(prev, cur) < 0);
        memcpy(prev, cur, sizeof(cur));
    }
    int64_t end = cm_now_us() / 1000;
    /* Borrowed milliseconds may run ahead of the clock, but not by much:
     * each borrow needs >= 2048 ids, so at most N / 2048 of them. */
    assert_true(v7_ms(prev) >= start);
    assert_true(v7_ms(prev) <= end + N / 2048 + 1);
}

static void test_v7_uses_clock(void **state)
{
    (void)state;
    char u[CM_UUID_STR_LEN + 1];
    int64_t before = cm_now_us() / 1000;
    cm_uuid_v7(u);
    int64_t after = cm_now_us() / 1000;
    /* Earlier tests may have borrowed a few ms ahead. */
    assert_true(v7_ms(u) >= before && v7_ms(u) <= after + 64);
}

static void test_v7_at(void **state)
{
    (void)state;
    char u[CM_UUID_STR_LEN + 1];
    const int64_t cases[] = {0, 1, 1700000000123, 0xffffffffffff};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_uuid_v7_at(cases[i], u);
        check_format(u, 7);
        assert_int_equal(v7_ms(u), cases[i]);
    }
    cm_uuid_v7_at(1700000000123, u);
    assert_memory_equal(u, "018bcfe5-687b-7", 15);
    /* Out of range clamps to the representable span. */
    cm_uuid_v7_at(-5, u);
    assert_int_equal(v7_ms(u), 0);
    cm_uuid_v7_at(INT64_MAX, u);
    assert_int_equal(v7_ms(u), 0xffffffffffff);
}

static void test_valid(void **state)
{
    (void)state;
    const char *good[] = {
        "00000000-0000-0000-0000-000000000000",
        "018BCFE5-687B-7ABC-8DEF-0123456789AB",
        "018bcfe5-687b-7abc-8def-0123456789ab",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    };
    const char *bad[] = {
        "",
        "018bcfe5-687b-7abc-8def-0123456789a",   /* 35 chars */
        "018bcfe5-687b-7abc-8def-0123456789abc", /* 37 chars */
        "018bcfe5687b-7abc-8def-0123456789abcd", /* dash missing */
        "018bcfe5-687b-7abc-8def_0123456789ab",  /* wrong separator */
        "018bcfe5-687b-7abc-8deg-0123456789ab",  /* not hex */
        "{18bcfe5-687b-7abc-8def-0123456789ab",
        "018bcfe5-687b-7abc-8def-0123456789a ",
        "018bcfe5--87b-7abc-8def-0123456789ab",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(cm_uuid_valid(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(cm_uuid_valid(bad[i], strlen(bad[i])));
    assert_false(cm_uuid_valid(NULL, 0));
    /* The length argument wins over the NUL. */
    assert_true(cm_uuid_valid("00000000-0000-0000-0000-000000000000xyz", 36));
    char nul[37];
    memcpy(nul, good[0], 37);
    nul[10] = '\0';
    assert_false(cm_uuid_valid(nul, 36));
}

static void test_random_bytes(void **state)
{
    (void)state;
    /* Sizes around the pool size exercise refills and the direct path. */
    static const size_t sizes[] = {0, 1, 7, 16, 511, 512, 513, 4096};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        unsigned char *a = calloc(1, n + 1), *b = calloc(1, n + 1);
        cm_random_bytes(a, n);
        cm_random_bytes(b, n);
        if (n >= 16)
            assert_memory_not_equal(a, b, n);
        free(a);
        free(b);
    }
    /* Every byte value should show up in 64 KiB of output. */
    static unsigned char big[65536];
    int seen[256] = {0};
    for (size_t off = 0; off < sizeof(big); off += 100)
        cm_random_bytes(big + off, (sizeof(big) - off < 100 ? sizeof(big) - off : 100));
    for (size_t i = 0; i < sizeof(big); i++)
        seen[big[i]] = 1;
    for (int i = 0; i < 256; i++)
        assert_true(seen[i]);
}

/* A child must not replay random bytes the parent had already buffered. */
static void test_fork_does_not_share_pool(void **state)
{
    (void)state;
    char parent[CM_UUID_STR_LEN + 1], child[CM_UUID_STR_LEN + 1];
    cm_uuid_v4(parent); /* make sure the pool is filled and partly used */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cm_uuid_v4(child);
        ssize_t w = write(fds[1], child, CM_UUID_STR_LEN);
        _exit(w == CM_UUID_STR_LEN ? 0 : 1);
    }
    cm_uuid_v4(parent);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(read(fds[0], child, CM_UUID_STR_LEN), CM_UUID_STR_LEN);
    child[CM_UUID_STR_LEN] = '\0';
    close(fds[0]);
    close(fds[1]);
    check_format(child, 4);
    assert_string_not_equal(parent, child);
}

/* RFC 9562 appendix A.4's vector, and PostHog's person namespace. */
static void test_bytes(void **state)
{
    (void)state;
    unsigned char b[16], want[16];
    for (int i = 0; i < 16; i++)
        want[i] = (unsigned char)(i * 0x11);
    const char *lower = "00112233-4455-6677-8899-aabbccddeeff";
    assert_true(cm_uuid_bytes(lower, strlen(lower), b));
    assert_memory_equal(b, want, 16);
    const char *upper = "00112233-4455-6677-8899-AABBCCDDEEFF";
    memset(b, 0, sizeof(b));
    assert_true(cm_uuid_bytes(upper, strlen(upper), b));
    assert_memory_equal(b, want, 16);
    /* anything else: refused, out untouched */
    const char *bad[] = {"00112233445566778899aabbccddeeff", "00112233-4455-6677-8899-aabbccddeefg",
                         "00112233-4455-6677-8899-aabbccddeef",
                         "{00112233-4455-6677-8899-aabbccddeeff}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(b, 0x5a, sizeof(b));
        assert_false(cm_uuid_bytes(bad[i], strlen(bad[i]), b));
        assert_int_equal(b[0], 0x5a);
    }
}

static void test_v5(void **state)
{
    (void)state;
    char out[CM_UUID_STR_LEN + 1];
    assert_int_equal(cm_uuid_v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com", 15, out),
                     0);
    assert_string_equal(out, "2ed6657d-e927-568b-95e1-2665a8aea6a2");
    assert_int_equal(cm_uuid_v5("not-a-uuid", "x", 1, out), CM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),        cmocka_unit_test(test_v5),
        cmocka_unit_test(test_v7_format),    cmocka_unit_test(test_v4_format),
        cmocka_unit_test(test_v7_monotonic), cmocka_unit_test(test_v7_uses_clock),
        cmocka_unit_test(test_v7_at),        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_random_bytes), cmocka_unit_test(test_fork_does_not_share_pool),
    };
    return cmocka_run_group_tests_name("uuid", tests, NULL, NULL);
}
