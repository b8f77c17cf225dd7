/*
 * test_eval_stall.c - the two guards against one request holding the flags
 * loop: the property index (same answers as a scan, only faster) and the
 * per-request regex budget (once spent, regex conditions error out and
 * everything else is still evaluated).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval.h"
#include "core/props.h"
#include "cm/buf.h"

/* ---- the index ------------------------------------------------------------------ */

/* Every lookup through a bag with an index answers what the scan answers:
 * last duplicate wins, escaped keys, the synthetic key, $initial_ backfill. */
static void test_indexed_bag_equals_scan(void **state)
{
    (void)state;
    cm_buf_t src = CM_BUF_INIT;
    cm_buf_append_cstr(&src, "{\"dup\":1,\"a\\u0062c\":\"esc\",\"$browser\":\"Firefox\","
                             "\"utm_source\":\"news\",\"$initial_os\":\"Linux\"");
    for (int i = 0; i < 100; i++)
        cm_buf_appendf(&src, ",\"k%d\":%d", i, i);
    cm_buf_append_cstr(&src, ",\"dup\":2}");
    cm_json_doc_t *doc = NULL;
    assert_int_equal(cm_json_parse(src.p, src.len, NULL, &doc, NULL), 0);
    cm_json_t obj = cm_json_root(doc);
    cm_json_index_t *ix = cm_json_index_new(obj);
    assert_non_null(ix);
    cm_json_doc_t *sdoc = NULL;
    assert_int_equal(cm_json_parse("\"me\"", 4, NULL, &sdoc, NULL), 0);
    flg_bag_t scan = {obj, CM_SLICE_LIT("distinct_id"), cm_json_root(sdoc), true, NULL};
    flg_bag_t fast = scan;
    fast.ix = ix;
    static const char *const keys[] = {"dup",
                                       "abc",
                                       "$browser",
                                       "k0",
                                       "k99",
                                       "k100",
                                       "distinct_id",
                                       "$initial_browser",
                                       "$initial_utm_source",
                                       "$initial_os",
                                       "$initial_device_type",
                                       "missing",
                                       ""};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        for (int server = 0; server < 2; server++) {
            cm_slice_t k = cm_slice_from_cstr(keys[i]);
            cm_json_t a = flg_bag_get(&scan, k, server), b = flg_bag_get(&fast, k, server);
            assert_true(a.doc == b.doc && a.i == b.i);
        }
    }
    int64_t v = 0;
    assert_int_equal(cm_json_as_int64(flg_bag_get(&fast, CM_SLICE_LIT("dup"), false), &v), 0);
    assert_int_equal(v, 2); /* the last duplicate */
    assert_true(
        cm_json_str_eq(flg_bag_get(&fast, CM_SLICE_LIT("abc"), false), CM_SLICE_LIT("esc")));
    assert_true(cm_json_str_eq(flg_bag_get(&fast, CM_SLICE_LIT("$initial_browser"), true),
                               CM_SLICE_LIT("Firefox")));
    assert_false(cm_json_exists(flg_bag_get(&fast, CM_SLICE_LIT("$initial_browser"), false)));
    assert_null(cm_json_index_new(cm_json_get(obj, "k1"))); /* not an object */
    cm_json_index_free(ix);
    cm_json_doc_free(sdoc);
    cm_json_doc_free(doc);
    cm_buf_free(&src);
}

/* ---- the regex budget ------------------------------------------------------------- */

typedef struct {
    flg_snapshot_t *snap;
    cm_json_doc_t *props;
    flg_eval_t ev;
} run_t;

/* nregex flags "r<i>" (regex ^foo on person property s) and one flag
 * "plain" (exact match on plan), evaluated with the given budget. */
static void run_budget(run_t *r, int nregex, uint64_t budget_ns)
{
    cm_buf_t d = CM_BUF_INIT;
    cm_buf_append_cstr(&d, "{\"flags\":[");
    for (int i = 0; i < nregex; i++)
        cm_buf_appendf(
            &d,
            "{\"id\":%d,\"team_id\":1,\"key\":\"r%d\",\"active\":true,\"filters\":"
            "{\"groups\":[{\"properties\":[{\"key\":\"s\",\"type\":\"person\","
            "\"value\":\"^foo\",\"operator\":\"regex\"}],\"rollout_percentage\":100}]}},",
            i + 2, i);
    cm_buf_append_cstr(&d,
                       "{\"id\":1,\"team_id\":1,\"key\":\"plain\",\"active\":true,\"filters\":"
                       "{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"type\":\"person\","
                       "\"value\":\"pro\",\"operator\":\"exact\"}],\"rollout_percentage\":100}]}}"
                       "],\"group_type_mapping\":{},\"cohorts\":{}}");
    assert_int_equal(flg_snapshot_load(d.p, d.len, &r->snap, NULL), 0);
    cm_buf_free(&d);
    const char *props = "{\"s\":\"foobar\",\"plan\":\"pro\"}";
    assert_int_equal(cm_json_parse(props, strlen(props), NULL, &r->props, NULL), 0);
    flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u1"),
                         .person_properties = cm_json_root(r->props),
                         .now_us = 1718452800000000,
                         .regex_budget_ns = budget_ns};
    flg_evaluate(r->snap, &ctx, &r->ev);
}

static void run_free(run_t *r)
{
    flg_eval_free(&r->ev);
    flg_snapshot_unref(r->snap);
    cm_json_doc_free(r->props);
}

static const flg_result_t *result(const run_t *r, const char *key)
{
    for (uint32_t i = 0; i < r->ev.n; i++)
        if (cm_slice_eq_cstr(flg_snapshot_flag(r->snap, i)->key, key))
            return &r->ev.results[i];
    fail_msg("no flag %s", key);
    return NULL;
}

static void test_regex_budget(void **state)
{
    (void)state;
    run_t r;
    /* No budget: every regex flag matches. */
    run_budget(&r, 50, 0);
    assert_false(r.ev.errors);
    assert_false(r.ev.regex_budget_spent);
    for (int i = 0; i < 50; i++) {
        char k[16];
        snprintf(k, sizeof(k), "r%d", i);
        assert_int_equal(result(&r, k)->state, FLG_RES_OK);
        assert_true(result(&r, k)->enabled);
    }
    run_free(&r);

    /* A budget of one nanosecond: the first match spends it, every later
     * regex condition errors out, the exact flag is still evaluated. */
    run_budget(&r, 50, 1);
    assert_true(r.ev.errors);
    assert_true(r.ev.regex_budget_spent);
    int ok = 0, failed = 0;
    for (int i = 0; i < 50; i++) {
        char k[16];
        snprintf(k, sizeof(k), "r%d", i);
        const flg_result_t *res = result(&r, k);
        ok += res->state == FLG_RES_OK && res->enabled;
        failed += res->state == FLG_RES_ERROR;
    }
    assert_true(ok >= 1 && ok <= 2); /* the match(es) that ran before it was spent */
    assert_int_equal(ok + failed, 50);
    assert_int_equal(result(&r, "plain")->state, FLG_RES_OK);
    assert_true(result(&r, "plain")->enabled);
    run_free(&r);

    /* A generous budget changes nothing. */
    run_budget(&r, 50, 10ull * 1000 * 1000 * 1000);
    assert_false(r.ev.errors);
    assert_false(r.ev.regex_budget_spent);
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexed_bag_equals_scan),
        cmocka_unit_test(test_regex_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
