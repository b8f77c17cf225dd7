/* test_answer_cache.c - the bounded table of rendered /flags answers
 * (services/flags/serve/answer_cache.h): whole-key matches, replacement,
 * the byte bound and what a full table does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "serve/answer_cache.h"

static cm_slice_t S(const char *s)
{
    return cm_slice_from_cstr(s);
}

static void test_off(void **state)
{
    (void)state;
    assert_null(flg_answer_cache_new(0, NULL));
    flg_answer_cache_put(NULL, S("k"), S("v")); /* every call accepts the off cache */
    assert_null(flg_answer_cache_get(NULL, S("k")).p);
    flg_answer_cache_free(NULL);
}

static void test_get_put(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    flg_answer_cache_t *c = flg_answer_cache_new(1 << 20, m);
    assert_null(flg_answer_cache_get(c, S("a")).p);
    flg_answer_cache_put(c, S("a"), S("{\"x\":1"));
    flg_answer_cache_put(c, S("ab"), S("{\"x\":2"));
    cm_slice_t v = flg_answer_cache_get(c, S("a"));
    assert_int_equal(v.len, 6);
    assert_memory_equal(v.p, "{\"x\":1", 6);
    /* a key that is a prefix of another is a different key */
    v = flg_answer_cache_get(c, S("ab"));
    assert_memory_equal(v.p, "{\"x\":2", 6);
    assert_null(flg_answer_cache_get(c, S("b")).p);
    /* the same key again: the newer answer */
    flg_answer_cache_put(c, S("a"), S("{\"x\":3,\"y\":4"));
    v = flg_answer_cache_get(c, S("a"));
    assert_int_equal(v.len, 12);
    assert_memory_equal(v.p, "{\"x\":3,\"y\":4", 12);
    flg_answer_cache_free(c);
    cm_metrics_free(m);
}

/* Length-prefixed fields: ("ab", "c") and ("a", "bc") are different keys. */
static void test_key_fields(void **state)
{
    (void)state;
    cm_buf_t k1 = CM_BUF_INIT, k2 = CM_BUF_INIT;
    flg_answer_key_add(&k1, S("ab"));
    flg_answer_key_add(&k1, S("c"));
    flg_answer_key_add(&k2, S("a"));
    flg_answer_key_add(&k2, S("bc"));
    assert_int_equal(k1.len, k2.len);
    assert_memory_not_equal(k1.p, k2.p, k1.len);
    flg_answer_key_add(&k1, CM_SLICE_NULL); /* an absent field is an empty one */
    assert_int_equal(k1.len, k2.len + 4);
    cm_buf_free(&k1);
    cm_buf_free(&k2);
}

/* Many answers into a small table: memory stays under the bound (the table
 * is emptied when the next answer would pass it), the latest answer is
 * always there, and an answer over a quarter of the bound is not kept. */
static void test_bound(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    flg_answer_cache_t *c = flg_answer_cache_new(64 * 1024, m);
    char answer[1000];
    memset(answer, 'x', sizeof(answer));
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "person-%d", i);
        flg_answer_cache_put(c, S(key), (cm_slice_t){answer, sizeof(answer)});
        assert_non_null(flg_answer_cache_get(c, S(key)).p);
    }
    int kept = 0;
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "person-%d", i);
        kept += flg_answer_cache_get(c, S(key)).p != NULL;
    }
    assert_true(kept > 0 && kept <= 64); /* at most 64 KiB of 1 KB answers */
    static char big[20 * 1024];
    flg_answer_cache_put(c, S("big"), (cm_slice_t){big, sizeof(big)});
    assert_null(flg_answer_cache_get(c, S("big")).p);
    flg_answer_cache_free(c);
    cm_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_get_put),
        cmocka_unit_test(test_key_fields),
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
