/* test_strset.c - the string set: add, has, growth, binary keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/strset.h"

static void test_add_has(void **state)
{
    (void)state;
    cm_strset_t *s = cm_strset_new(0);
    assert_true(cm_strset_add(s, CM_SLICE_LIT("phc_a")));
    assert_false(cm_strset_add(s, CM_SLICE_LIT("phc_a")));
    assert_true(cm_strset_has(s, CM_SLICE_LIT("phc_a")));
    assert_false(cm_strset_has(s, CM_SLICE_LIT("phc_b")));
    assert_false(cm_strset_has(s, CM_SLICE_LIT("phc_")));
    assert_true(cm_strset_add(s, CM_SLICE_LIT("")));
    assert_true(cm_strset_has(s, CM_SLICE_LIT("")));
    assert_int_equal(cm_strset_count(s), 2);
    cm_strset_free(s);
    assert_false(cm_strset_has(NULL, CM_SLICE_LIT("x")));
}

static void test_growth(void **state)
{
    (void)state;
    cm_strset_t *s = cm_strset_new(4);
    char k[32];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(k, sizeof(k), "token-%d", i);
        assert_true(cm_strset_add(s, (cm_slice_t){k, (size_t)n}));
    }
    assert_int_equal(cm_strset_count(s), 10000);
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(k, sizeof(k), "token-%d", i);
        assert_true(cm_strset_has(s, (cm_slice_t){k, (size_t)n}));
        n = snprintf(k, sizeof(k), "other-%d", i);
        assert_false(cm_strset_has(s, (cm_slice_t){k, (size_t)n}));
    }
    cm_strset_free(s);
}

static void test_binary_keys(void **state)
{
    (void)state;
    cm_strset_t *s = cm_strset_new(0);
    assert_true(cm_strset_add(s, (cm_slice_t){"a\0b", 3}));
    assert_true(cm_strset_has(s, (cm_slice_t){"a\0b", 3}));
    assert_false(cm_strset_has(s, (cm_slice_t){"a\0c", 3}));
    assert_false(cm_strset_has(s, (cm_slice_t){"a", 1}));
    cm_strset_free(s);
}

static int freed;
static void count_free(void *v)
{
    freed++;
    free(v);
}

static void sum_lengths(cm_slice_t key, void *value, void *ud)
{
    (void)value;
    *(size_t *)ud += key.len;
}

static void test_map(void **state)
{
    (void)state;
    cm_strset_t *m = cm_strset_new(0);
    assert_null(cm_strset_put(m, CM_SLICE_LIT("a"), strdup("1")));
    void *old = cm_strset_put(m, CM_SLICE_LIT("a"), strdup("2"));
    assert_string_equal(old, "1");
    free(old);
    assert_string_equal(cm_strset_get(m, CM_SLICE_LIT("a")), "2");
    assert_null(cm_strset_get(m, CM_SLICE_LIT("b")));
    assert_true(cm_strset_add(m, CM_SLICE_LIT("bb"))); /* a key without a value */
    assert_null(cm_strset_get(m, CM_SLICE_LIT("bb")));
    for (int i = 0; i < 100; i++) {
        char k[16];
        int n = snprintf(k, sizeof(k), "k%d", i);
        cm_strset_put(m, (cm_slice_t){k, (size_t)n}, strdup(k));
    }
    assert_string_equal(cm_strset_get(m, CM_SLICE_LIT("k57")), "k57");
    size_t total = 0;
    cm_strset_each(m, sum_lengths, &total);
    assert_int_equal(total, 1 + 2 + 10 * 2 + 90 * 3);
    freed = 0;
    cm_strset_free_with(m, count_free);
    assert_int_equal(freed, 101);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_has),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_binary_keys),
        cmocka_unit_test(test_map),
    };
    return cmocka_run_group_tests_name("strset", tests, NULL, NULL);
}
