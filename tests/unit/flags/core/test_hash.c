/*
 * test_hash.c - the bucketing hash against the golden values PostHog's own
 * test suites use (docs/flags.md, "hashing"). SHA-1 itself is nettle's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

#define S(x) cm_slice_from_cstr(x)

static void expect_hash(double got, double want, const char *what)
{
    if (got != want)
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

static void test_holdout_vectors(void **state)
{
    (void)state;
    expect_hash(flg_hash_holdout(S("some_distinct_id")), 0.7270002403585725, "some_distinct_id");
    expect_hash(flg_hash_holdout(S("test-identifier")), 0.4493881716040236, "test-identifier");
    expect_hash(flg_hash_holdout(S("example_id")), 0.9402003475831224, "example_id");
    expect_hash(flg_hash_holdout(S("example_id2")), 0.6292740389966519, "example_id2");
    /* The generic form with the same parts. */
    expect_hash(flg_hash(S("holdout-"), S("example_id"), S("")), 0.9402003475831224, "generic");
}

static void test_rollout_vectors(void **state)
{
    (void)state;
    expect_hash(flg_hash_rollout(S("simple-flag"), S("distinct_id_0")), 0.7836963764220432, "sf0");
    expect_hash(flg_hash_rollout(S("simple-flag"), S("distinct_id_1")), 0.3397069926995401, "sf1");
    expect_hash(flg_hash_rollout(S("simple-flag"), S("distinct_id_2")), 0.3720434350239052, "sf2");
    expect_hash(flg_hash_rollout(S("simple-flag"), S("distinct_id_3")), 0.9076218027928112, "sf3");
    /* Published as 0.0395849747535925 (16 digits); the exact shortest form is: */
    expect_hash(flg_hash_rollout(S("simple-flag"), S("distinct_id_4")), 0.03958497475359249, "sf4");
    expect_hash(flg_hash_rollout(S("multivariate-flag"), S("distinct_id_3")), 0.701012555518958,
                "mv3");
    expect_hash(flg_hash_variant(S("multivariate-flag"), S("distinct_id_2")), 0.063901062814124832,
                "mv2 variant");
    expect_hash(flg_hash_rollout(S("beta-feature"), S("example_id")), 0.2093039334578348, "beta");
    expect_hash(flg_hash_variant(S("beta-feature"), S("example_id")), 0.6363703338989186,
                "beta variant");
    expect_hash(flg_hash_rollout(S("group-flag"), S("amazon_without_rollout")), 0.30897111071897326,
                "group");
    expect_hash(flg_hash_rollout(S("group-flag"), S("amazon")), 0.5432523073764106, "group 2");
    expect_hash(flg_hash_rollout(S("my-flag"), S("user-123")), 0.38115355844930154, "my-flag");
    expect_hash(flg_hash_variant(S("my-flag"), S("user-123")), 0.6655411097123076, "my-flag v");
    expect_hash(flg_hash_rollout(S("new-checkout"), S("u_42")), 0.6729059414944576, "checkout");
    expect_hash(flg_hash_variant(S("new-checkout"), S("u_42")), 0.18510865603197107, "checkout v");
    /* The empty identifier is hashed (posthog-node), not short-circuited to 0. */
    expect_hash(flg_hash_rollout(S("my-flag"), S("")), 0.8244040992181549, "empty id");
}

static void test_simple_flag_first_20(void **state)
{
    (void)state;
    const char *want = "FTTFTFFTFTFTTFTFFFTT";
    int trues = 0;
    for (int i = 0; i < 1000; i++) {
        char id[32];
        snprintf(id, sizeof id, "distinct_id_%d", i);
        bool in = flg_in_rollout(flg_hash_rollout(S("simple-flag"), S(id)), 45);
        if (i < 20)
            assert_int_equal(in, want[i] == 'T');
        trues += in;
    }
    assert_int_equal(trues, 446);
}

static void test_rollout_edges(void **state)
{
    (void)state;
    assert_true(flg_in_rollout(1.0, 100)); /* 100% takes everyone, even hash 1.0 */
    assert_true(flg_in_rollout(0.0, 0));   /* hash 0 is "<= 0" */
    assert_false(flg_in_rollout(0.5, 0));
    assert_true(flg_in_rollout(0.45, 45)); /* inclusive bound */
    assert_false(flg_in_rollout(0.4500001, 45));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holdout_vectors),
        cmocka_unit_test(test_rollout_vectors),
        cmocka_unit_test(test_simple_flag_first_20),
        cmocka_unit_test(test_rollout_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
