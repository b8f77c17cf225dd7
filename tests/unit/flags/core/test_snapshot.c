/*
 * test_snapshot.c - loading definitions: what is rejected as a whole, what
 * marks one flag invalid (and only that flag), key lookup, group types,
 * cohorts, reference counting, and a few thousand mutated documents that
 * must load and evaluate without a crash or a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/snapshot.h"
#include "core/eval.h"
#include "cm/err.h"

static char *q(const char *s)
{
    char *c = strdup(s);
    for (char *p = c; *p; p++)
        if (*p == '\'')
            *p = '"';
    return c;
}

static flg_snapshot_t *load_q(const char *text)
{
    char *t = q(text);
    flg_snapshot_t *s = NULL;
    int rc = flg_snapshot_load(t, strlen(t), &s, NULL);
    free(t);
    if (rc != 0)
        fail_msg("rejected: %s", text);
    return s;
}

static void test_rejected_documents(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "{",
                         "not json",
                         "[]",
                         "1",
                         "null",
                         "{}",
                         "{\"flags\":{}}",
                         "{\"flags\":null}",
                         "{\"flags\":\"x\"}",
                         "\xef\xbb\xbf{\"flags\":[]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        flg_snapshot_t *s = (flg_snapshot_t *)1;
        cm_json_error_t err;
        assert_int_not_equal(flg_snapshot_load(bad[i], strlen(bad[i]), &s, &err), 0);
        assert_null(s);
        assert_non_null(err.msg);
    }
    flg_snapshot_t *s = load_q("{'flags':[]}");
    assert_int_equal(flg_snapshot_nflags(s), 0);
    flg_snapshot_unref(s);
}

/* Each definition breaks one field; the flag is invalid, its neighbour is not. */
static void test_invalid_flag_isolated(void **state)
{
    (void)state;
    const char *broken[] = {
        "1",
        "'x'",
        "null",
        "{}",
        "{'key':5}",
        "{'key':'b','active':'true'}",
        "{'key':'b','active':true,'id':'1'}",
        "{'key':'b','active':true,'bucketing_identifier':1}",
        "{'key':'b','active':true,'filters':[]}",
        "{'key':'b','active':true,'filters':{'groups':'nope'}}",
        "{'key':'b','active':true,'filters':{'groups':[5]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'rollout_percentage':'50'}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'variant':5}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':{}}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[5]}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':1,'value':1}]}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'k','operator':5}]}]}"
        "}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'k','negation':'y'}]}]"
        "}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'k','type':3}]}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'k','group_type_index'"
        ":'0'}]}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'k','type':'flag','"
        "dependency_chain':[1]}]}]}}",
        "{'key':'b','active':true,'filters':{'groups':[{'aggregation_group_type_index':'0'}]}}",
        "{'key':'b','active':true,'filters':{'aggregation_group_type_index':1.5}}",
        "{'key':'b','active':true,'filters':{'multivariate':{'variants':{}}}}",
        "{'key':'b','active':true,'filters':{'multivariate':{'variants':[{'key':1,'rollout_"
        "percentage':50}]}}}",
        "{'key':'b','active':true,'filters':{'multivariate':{'variants':[{'key':'a'}]}}}",
        "{'key':'b','active':true,'filters':{'holdout':{'id':true,'exclusion_percentage':5}}}",
        "{'key':'b','active':true,'filters':{'holdout':{'id':1,'exclusion_percentage':'5'}}}",
        "{'key':'b','active':true,'filters':{'payloads':[]}}",
        "{'key':'b','active':true,'filters':{'super_groups':{}}}",
        "{'key':'b','active':true,'filters':{'super_groups':[5]}}",
        "{'key':'b','active':true,'filters':{'early_exit':'yes'}}",
        "{'key':'b','active':true,'evaluation_contexts':'web'}",
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{'flags':[{'key':'a','active':true,'filters':{'groups':[{}]}},%s,"
                 "{'key':'c','active':true,'filters':{'groups':[{}]}}]}",
                 broken[i]);
        flg_snapshot_t *s = load_q(text);
        assert_int_equal(flg_snapshot_nflags(s), 3);
        if (!flg_snapshot_flag(s, 1)->invalid)
            fail_msg("accepted: %s", broken[i]);
        assert_null(flg_snapshot_flag(s, 0)->invalid);
        assert_null(flg_snapshot_flag(s, 2)->invalid);
        flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u")};
        flg_eval_t e;
        flg_evaluate(s, &ctx, &e);
        assert_true(e.errors);
        assert_int_equal(e.results[0].state, FLG_RES_OK);
        assert_true(e.results[0].enabled);
        assert_int_equal(e.results[2].state, FLG_RES_OK);
        assert_int_not_equal(e.results[1].state, FLG_RES_OK);
        flg_eval_free(&e);
        flg_snapshot_unref(s);
    }
}

static void test_lookup_and_shadowing(void **state)
{
    (void)state;
    flg_snapshot_t *s = load_q(
        "{'flags':[{'key':'x','id':1,'active':true},{'key':'y','id':2,'active':true},"
        "{'key':'x','id':3,'active':false},{'key':'gone','deleted':true,'active':true}],"
        "'groupTypeMapping':{'0':'ignored'},'group_type_mapping':{'0':'company','1':5,'2':'team'},"
        "'cohorts':{'10':{},'11':{'type':'OR','values':[]},'12':{'type':'AND','values':'x'}},"
        "'property_matching_version':2}");
    assert_int_equal(flg_snapshot_nflags(s), 3); /* the deleted flag is gone */
    assert_int_equal(flg_snapshot_find(s, CM_SLICE_LIT("x")), 2);
    assert_int_equal(flg_snapshot_find(s, CM_SLICE_LIT("y")), 1);
    assert_int_equal(flg_snapshot_find(s, CM_SLICE_LIT("gone")), -1);
    assert_int_equal(flg_snapshot_find(s, CM_SLICE_LIT("nope")), -1);
    assert_true(flg_snapshot_flag(s, 0)->shadowed);
    assert_false(flg_snapshot_flag(s, 2)->shadowed);
    assert_true(cm_slice_eq_cstr(flg_snapshot_group_type(s, 0), "company"));
    assert_null(flg_snapshot_group_type(s, 1).p); /* not a string */
    assert_true(cm_slice_eq_cstr(flg_snapshot_group_type(s, 2), "team"));
    assert_null(flg_snapshot_group_type(s, 3).p);
    assert_int_equal(flg_snapshot_group_type_index(s, CM_SLICE_LIT("team")), 2);
    assert_int_equal(flg_snapshot_group_type_index(s, CM_SLICE_LIT("company")), 0);
    assert_int_equal(flg_snapshot_group_type_index(s, CM_SLICE_LIT("nobody")), -1);
    assert_int_equal(flg_snapshot_cohort(s, CM_SLICE_LIT("10"))->kind, FLG_PG_EMPTY);
    assert_int_equal(flg_snapshot_cohort(s, CM_SLICE_LIT("11"))->kind, FLG_PG_OR);
    assert_int_equal(flg_snapshot_cohort(s, CM_SLICE_LIT("12"))->kind, FLG_PG_MALFORMED);
    assert_null(flg_snapshot_cohort(s, CM_SLICE_LIT("99")));
    assert_true(flg_snapshot_explicit_exact(s));

    /* The response holds only the later "x" (inactive) and "y". */
    flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u")};
    flg_eval_t e;
    flg_evaluate(s, &ctx, &e);
    assert_int_equal(e.results[0].state, FLG_RES_SKIPPED);
    assert_int_equal(e.results[1].state, FLG_RES_OK);
    assert_int_equal(e.results[2].state, FLG_RES_OK);
    assert_int_equal(e.results[2].reason, FLG_REASON_FLAG_DISABLED);
    assert_false(e.errors);
    flg_eval_free(&e);

    /* References keep the snapshot alive. */
    flg_snapshot_t *r = flg_snapshot_ref(s);
    flg_snapshot_unref(s);
    assert_int_equal(flg_snapshot_nflags(r), 3);
    flg_snapshot_unref(r);
    flg_snapshot_unref(NULL);
}

static void test_input_copied(void **state)
{
    (void)state;
    char *text = q("{'flags':[{'key':'k','active':true,'filters':{'groups':[{'properties':"
                   "[{'key':'p','value':'v'}]}]}}]}");
    flg_snapshot_t *s;
    assert_int_equal(flg_snapshot_load(text, strlen(text), &s, NULL), 0);
    memset(text, 'X', strlen(text)); /* the snapshot must not read the caller's bytes */
    free(text);
    const flg_flag_t *f = flg_snapshot_flag(s, 0);
    assert_true(cm_slice_eq_cstr(f->key, "k"));
    assert_true(cm_json_str_eq(f->conds[0].filters[0].value, CM_SLICE_LIT("v")));
    flg_snapshot_unref(s);
}

/* Valid definitions with a bit of everything, mutated byte by byte. */
static const char *SEED =
    "{'flags':[{'id':1,'key':'a','active':true,'filters':{'groups':[{'properties':"
    "[{'key':'email','operator':'icontains','value':'@x.com','type':'person'},"
    "{'key':'id','type':'cohort','value':3},{'key':'b','type':'flag','value':true,"
    "'operator':'flag_evaluates_to','dependency_chain':['b']}],'rollout_percentage':50,"
    "'variant':'v1'}],'multivariate':{'variants':[{'key':'v1','rollout_percentage':50},"
    "{'key':'v2','rollout_percentage':50}]},'payloads':{'v1':'1'},'holdout':{'id':4,"
    "'exclusion_percentage':10}}},{'id':2,'key':'b','active':true,'filters':{"
    "'aggregation_group_type_index':0,'groups':[{'properties':[{'key':'v','operator':"
    "'semver_gt','value':'1.2.3','type':'group','group_type_index':0},{'key':'d','operator':"
    "'is_date_after','value':'-7d'},{'key':'r','operator':'regex','value':'^a+$'}]}]}}],"
    "'group_type_mapping':{'0':'company'},'cohorts':{'3':{'type':'OR','values':[{'type':'AND',"
    "'values':[{'key':'plan','value':['pro'],'negation':true}]}]}}}";

static void test_mutations_never_crash(void **state)
{
    (void)state;
    char *base = q(SEED);
    size_t n = strlen(base);
    char *buf = malloc(n + 1);
    uint32_t rng = 12345;
    const char alphabet[] = "{}[]\",:0123456789-.eEtrufalsn \\abxyz";
    cm_json_doc_t *pd;
    const char *props = "{\"email\":\"q@x.com\",\"plan\":\"pro\",\"v\":\"1.3.0\",\"d\":\"2024-06-"
                        "10\",\"r\":\"aaa\"}";
    assert_int_equal(cm_json_parse(props, strlen(props), NULL, &pd, NULL), 0);
    int loaded = 0;
    for (int iter = 0; iter < 4000; iter++) {
        memcpy(buf, base, n + 1);
        int edits = 1 + (int)(rng % 4);
        for (int k = 0; k < edits; k++) {
            rng = rng * 1103515245u + 12345u;
            buf[(rng >> 8) % n] = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
        }
        flg_snapshot_t *s;
        if (flg_snapshot_load(buf, n, &s, NULL) != 0)
            continue;
        loaded++;
        flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u"),
                             .person_properties = cm_json_root(pd),
                             .now_us = INT64_C(1718452800000000)};
        flg_eval_t e;
        flg_evaluate(s, &ctx, &e);
        flg_eval_free(&e);
        flg_snapshot_unref(s);
    }
    assert_true(loaded > 100); /* plenty of mutants still parse and get evaluated */
    cm_json_doc_free(pd);
    free(buf);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rejected_documents),    cmocka_unit_test(test_invalid_flag_isolated),
        cmocka_unit_test(test_lookup_and_shadowing),  cmocka_unit_test(test_input_copied),
        cmocka_unit_test(test_mutations_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
