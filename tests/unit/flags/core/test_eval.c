/*
 * test_eval.c - whole-flag evaluation, data-driven: each case is a set of
 * definitions, a request context and the expected rendering of every flag
 * in the response, "key:T|F[:variant]:reason:index" (index "-" for null),
 * "key:ERR" for a flag that failed, and a trailing "!" when
 * errorsWhileComputingFlags is set. JSON is written with single quotes.
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
#include "core/hash.h"
#include "serve/response.h"
#include "cm/timefmt.h"

static char *q(const char *s)
{
    char *c = strdup(s);
    for (char *p = c; *p; p++)
        if (*p == '\'')
            *p = '"';
    return c;
}

static int32_t fixed_offset(const flg_tz_t *tz, int64_t utc_s)
{
    (void)utc_s;
    return (int32_t)(intptr_t)tz->ud;
}

static const char *short_reason(flg_reason_t r)
{
    return flg_reason_code(r);
}

/* Evaluates and renders; the caller frees the string. */
static char *run(const char *defs_q, const char *ctx_q)
{
    char *defs = q(defs_q), *ctxs = q(ctx_q);
    flg_snapshot_t *s = NULL;
    cm_json_doc_t *cd = NULL;
    if (flg_snapshot_load(defs, strlen(defs), &s, NULL) != 0)
        fail_msg("definitions rejected: %s", defs);
    if (cm_json_parse(ctxs, strlen(ctxs), NULL, &cd, NULL) != 0)
        fail_msg("context is not JSON: %s", ctxs);
    cm_json_t c = cm_json_root(cd);
    flg_context_t ctx = {0};
    ctx.distinct_id = cm_json_str_inner(cm_json_get(c, "distinct_id"));
    ctx.device_id = cm_json_str_inner(cm_json_get(c, "device_id"));
    ctx.anon_distinct_id = cm_json_str_inner(cm_json_get(c, "anon_distinct_id"));
    ctx.person_properties = cm_json_get(c, "person_properties");
    ctx.geoip_properties = cm_json_get(c, "geoip_properties");
    ctx.stored_person_properties = cm_json_get(c, "stored_person_properties");
    /* "stored_groups": [[type, {properties}], ...], as the route reads them from Redis. */
    flg_group_props_t stored_groups[8];
    cm_json_t sg = cm_json_get(c, "stored_groups");
    for (size_t i = 0; i < cm_json_len(sg) && i < 8; i++) {
        stored_groups[i].type = cm_json_str_inner(cm_json_at(cm_json_at(sg, i), 0));
        stored_groups[i].properties = cm_json_at(cm_json_at(sg, i), 1);
        ctx.stored_groups = stored_groups;
        ctx.nstored_groups = (uint32_t)i + 1;
    }
    ctx.groups = cm_json_get(c, "groups");
    ctx.group_properties = cm_json_get(c, "group_properties");
    ctx.hash_key_overrides = cm_json_get(c, "hash_key_overrides");
    ctx.static_cohorts = cm_json_get(c, "static_cohorts");
    ctx.flag_keys = cm_json_get(c, "flag_keys");
    ctx.evaluation_contexts = cm_json_get(c, "evaluation_contexts");
    cm_json_t rt = cm_json_get(c, "runtime");
    ctx.runtime = cm_json_str_eq(rt, CM_SLICE_LIT("client"))    ? FLG_RUNTIME_CLIENT
                  : cm_json_str_eq(rt, CM_SLICE_LIT("server"))  ? FLG_RUNTIME_SERVER
                  : cm_json_str_eq(rt, CM_SLICE_LIT("unknown")) ? FLG_RUNTIME_UNKNOWN
                                                                : FLG_RUNTIME_ALL;
    cm_slice_t now = cm_json_str_inner(cm_json_get(c, "now"));
    if (!now.p)
        now = CM_SLICE_LIT("2024-06-15T12:00:00Z");
    cm_iso8601_parse(now.p, now.len, &ctx.now_us);
    int64_t off = 0;
    flg_tz_t tz = {fixed_offset, NULL};
    if (cm_json_as_int64(cm_json_get(c, "tz_offset_minutes"), &off) == 0) {
        tz.ud = (const void *)(intptr_t)(off * 60);
        ctx.tz = &tz;
    }
    flg_eval_t e;
    flg_evaluate(s, &ctx, &e);
    cm_buf_t out = CM_BUF_INIT;
    for (uint32_t i = 0; i < e.n; i++) {
        const flg_result_t *r = &e.results[i];
        const flg_flag_t *f = flg_snapshot_flag(s, i);
        if (r->state == FLG_RES_SKIPPED)
            continue;
        if (out.len)
            cm_buf_putc(&out, ' ');
        if (r->state == FLG_RES_ERROR) {
            cm_buf_appendf(&out, "%.*s:ERR", (int)f->key.len, f->key.p);
            continue;
        }
        cm_buf_appendf(&out, "%.*s:%c", (int)f->key.len, f->key.p, r->enabled ? 'T' : 'F');
        if (r->variant.p)
            cm_buf_appendf(&out, ":%.*s", (int)r->variant.len, r->variant.p);
        cm_buf_appendf(&out, ":%s:", short_reason(r->reason));
        if (r->condition_index >= 0)
            cm_buf_appendf(&out, "%d", (int)r->condition_index);
        else
            cm_buf_putc(&out, '-');
    }
    if (e.errors)
        cm_buf_putc(&out, '!');
    flg_eval_free(&e);
    flg_snapshot_unref(s);
    cm_json_doc_free(cd);
    free(defs);
    free(ctxs);
    char *text = strdup(out.p ? cm_buf_cstr(&out) : "");
    cm_buf_free(&out);
    return text;
}

static void expect(const char *defs, const char *ctx, const char *want, int line)
{
    char *got = run(defs, ctx);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "case at line %d:\n  got  %s\n  want %s\n", line, got, want);
        free(got);
        fail();
    }
    free(got);
}
#define EXPECT(defs, ctx, want) expect(defs, ctx, want, __LINE__)

/* ---- hashing consistency (PostHog's published SDK test data) ------------------------------- */

static const char *MV_DEFS =
    "{'flags':[{'id':2,'key':'multivariate-flag','active':true,'filters':{'groups':"
    "[{'properties':[],'rollout_percentage':55}],'multivariate':{'variants':["
    "{'key':'first-variant','rollout_percentage':50},{'key':'second-variant','rollout_percentage':"
    "20},"
    "{'key':'third-variant','rollout_percentage':20},{'key':'fourth-variant','rollout_percentage':"
    "5},"
    "{'key':'fifth-variant','rollout_percentage':5}]}}}]}";

static void test_simple_flag_consistency(void **state)
{
    (void)state;
    const char *defs = "{'flags':[{'id':1,'key':'simple-flag','active':true,'filters':"
                       "{'groups':[{'properties':[],'rollout_percentage':45}]}}]}";
    const char *first = "TTFTFFTFTFTTFTFFFTT"; /* ids 1..19; id 0 is false */
    int trues = 0;
    for (int i = 0; i < 1000; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "{'distinct_id':'distinct_id_%d'}", i);
        char *got = run(defs, ctx);
        bool on = strncmp(got, "simple-flag:T", 13) == 0;
        if (i == 0)
            assert_false(on);
        else if (i < 20)
            assert_int_equal(on, first[i - 1] == 'T');
        trues += on;
        free(got);
    }
    assert_int_equal(trues, 446);
}

static void test_multivariate_consistency(void **state)
{
    (void)state;
    const char *first20[] = {"second", "second", "first", NULL,    NULL,     "second", "first",
                             NULL,     NULL,     NULL,    "first", "third",  NULL,     "first",
                             "second", "first",  NULL,    NULL,    "fourth", "first"};
    int counts[6] = {0}; /* first..fifth, false */
    const char *names[5] = {"first", "second", "third", "fourth", "fifth"};
    for (int i = 0; i < 1000; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "{'distinct_id':'distinct_id_%d'}", i);
        char *got = run(MV_DEFS, ctx);
        const char *v = strncmp(got, "multivariate-flag:T:", 20) == 0 ? got + 20 : NULL;
        int k = 5;
        for (int j = 0; v && j < 5; j++)
            if (strncmp(v, names[j], strlen(names[j])) == 0 && v[strlen(names[j])] == '-')
                k = j;
        if (i < 20 && !first20[i])
            assert_int_equal(k, 5);
        if (i < 20 && first20[i]) {
            assert_true(k < 5);
            assert_string_equal(names[k], first20[i]);
        }
        counts[k]++;
        free(got);
    }
    assert_int_equal(counts[0], 290);
    assert_int_equal(counts[1], 110);
    assert_int_equal(counts[2], 111);
    assert_int_equal(counts[3], 24);
    assert_int_equal(counts[4], 21);
    assert_int_equal(counts[5], 444);
}

/* ---- conditions, variants, reasons ---------------------------------------------------------- */

static const char *BETA =
    "{'flags':[{'key':'beta-feature','active':true,'filters':{'groups':["
    "{'properties':[{'key':'email','type':'person','value':'test@posthog.com','operator':'exact'}],"
    "'rollout_percentage':100,'variant':'second-variant'},"
    "{'rollout_percentage':50,'variant':'first-variant'}],"
    "'multivariate':{'variants':[{'key':'first-variant','rollout_percentage':50},"
    "{'key':'second-variant','rollout_percentage':25},{'key':'third-variant','rollout_percentage':"
    "25}]}}}]}";

static void test_variant_overrides(void **state)
{
    (void)state;
    EXPECT(BETA, "{'distinct_id':'test_id','person_properties':{'email':'test@posthog.com'}}",
           "beta-feature:T:second-variant:condition_match:0");
    /* The first condition cannot be checked without an email; the second still decides. */
    EXPECT(BETA, "{'distinct_id':'example_id'}", "beta-feature:T:first-variant:condition_match:1");
    /* Stored order: a later, conflicting override does not win. */
    EXPECT("{'flags':[{'key':'b','active':true,'filters':{'groups':["
           "{'properties':[{'key':'email','value':'x@y.z'}],'variant':'second'},"
           "{'properties':[{'key':'email','value':'x@y.z'}],'variant':'first'}],"
           "'multivariate':{'variants':[{'key':'first','rollout_percentage':50},"
           "{'key':'second','rollout_percentage':50}]}}}]}",
           "{'distinct_id':'u','person_properties':{'email':'x@y.z'}}",
           "b:T:second:condition_match:0");
    /* An override that names no variant is ignored: the hashed variant is used. */
    EXPECT("{'flags':[{'key':'my-flag','active':true,'filters':{'groups':[{'variant':'nope'}],"
           "'multivariate':{'variants':[{'key':'a','rollout_percentage':50},"
           "{'key':'b','rollout_percentage':50}]}}}]}",
           "{'distinct_id':'user-123'}", "my-flag:T:b:condition_match:0"); /* variant hash 0.666 */
    /* Percentages short of 100: past the last one there is no variant, just true. */
    EXPECT("{'flags':[{'key':'my-flag','active':true,'filters':{'groups':[{}],"
           "'multivariate':{'variants':[{'key':'a','rollout_percentage':60}]}}}]}",
           "{'distinct_id':'user-123'}", "my-flag:T:condition_match:0");
}

static void test_reasons(void **state)
{
    (void)state;
    const char *three =
        "{'flags':[{'key':'r','active':true,'filters':{'groups':["
        "{'properties':[{'key':'a','value':'x'}]},{'properties':[{'key':'a','value':'y'}]},"
        "{'properties':[{'key':'a','value':'z'}]}]}}]}";
    EXPECT(three, "{'distinct_id':'u','person_properties':{'a':'q'}}", "r:F:no_condition_match:2");
    EXPECT(three, "{'distinct_id':'u','person_properties':{'a':'y'}}", "r:T:condition_match:1");
    EXPECT("{'flags':[{'key':'r','active':true,'filters':{'groups':[]}}]}", "{'distinct_id':'u'}",
           "r:F:no_group_type:-");
    EXPECT("{'flags':[{'key':'r','active':true}]}", "{'distinct_id':'u'}", "r:F:no_group_type:-");
    /* out_of_rollout_bound outranks a later no_condition_match. */
    EXPECT("{'flags':[{'key':'r','active':true,'filters':{'groups':["
           "{'properties':[{'key':'a','value':'q'}],'rollout_percentage':0},"
           "{'properties':[{'key':'a','value':'z'}]}]}}]}",
           "{'distinct_id':'u','person_properties':{'a':'q'}}", "r:F:out_of_rollout_bound:0");
    EXPECT("{'flags':[{'key':'off','active':false,'filters':{'groups':[{}]}},"
           "{'key':'gone','active':true,'deleted':true,'filters':{'groups':[{}]}}]}",
           "{'distinct_id':'u'}", "off:F:flag_disabled:-");
    /* early_exit: a rollout miss ends the flag. */
#define EE_FMT                                                                                     \
    "{'flags':[{'key':'e','active':true,'filters':{%s'groups':["                                   \
    "{'rollout_percentage':0},{'rollout_percentage':100}]}}]}"
    char with[512], without[512];
    snprintf(with, sizeof with, EE_FMT, "'early_exit':true,");
    snprintf(without, sizeof without, EE_FMT, "");
    EXPECT(with, "{'distinct_id':'u'}", "e:F:out_of_rollout_bound:0");
    EXPECT(without, "{'distinct_id':'u'}", "e:T:condition_match:1");
}

static void test_descriptions(void **state)
{
    (void)state;
    char buf[48];
    flg_result_t r = {.reason = FLG_REASON_CONDITION_MATCH, .condition_index = 1};
    assert_string_equal(flg_reason_description(&r, buf), "Matched condition set 2");
    r.condition_index = INT32_MAX; /* the widest number fits the buffer */
    assert_string_equal(flg_reason_description(&r, buf), "Matched condition set 2147483648");
    r.reason = FLG_REASON_NO_CONDITION_MATCH;
    assert_string_equal(flg_reason_description(&r, buf), "No matching condition set");
    r.groups_skipped = true;
    assert_string_equal(flg_reason_description(&r, buf),
                        "No matching condition set (group conditions were not evaluated because "
                        "no group type was provided)");
    r.reason = FLG_REASON_OUT_OF_ROLLOUT_BOUND;
    assert_string_equal(flg_reason_description(&r, buf), "Out of rollout bound");
    r.reason = FLG_REASON_NO_GROUP_TYPE;
    assert_string_equal(flg_reason_description(&r, buf), "No group type");
    r.reason = FLG_REASON_SUPER_CONDITION_VALUE;
    assert_string_equal(flg_reason_description(&r, buf), "Super condition value");
    r.reason = FLG_REASON_HOLDOUT_CONDITION_VALUE;
    assert_string_equal(flg_reason_description(&r, buf), "Holdout condition value");
    r.reason = FLG_REASON_FLAG_DISABLED;
    assert_string_equal(flg_reason_description(&r, buf), "Feature flag is disabled");
    r.reason = FLG_REASON_MISSING_DEPENDENCY;
    assert_string_equal(flg_reason_description(&r, buf),
                        "Flag cannot be evaluated due to missing dependency");
    assert_string_equal(flg_reason_code(FLG_REASON_OUT_OF_ROLLOUT_BOUND), "out_of_rollout_bound");
}

/* ---- holdouts, groups ------------------------------------------------------------------------ */

static void test_holdout(void **state)
{
    (void)state;
#define HOLD_FMT                                                                                   \
    "{'flags':[{'key':'h','active':true,'filters':{'groups':[{'rollout_percentage':100}],"         \
    "'holdout':{'id':42,'exclusion_percentage':%d}}}]}"
    char d50[256], d75[256], d100[256], d0[256];
    snprintf(d50, sizeof d50, HOLD_FMT, 50);
    snprintf(d75, sizeof d75, HOLD_FMT, 75);
    snprintf(d100, sizeof d100, HOLD_FMT, 100);
    snprintf(d0, sizeof d0, HOLD_FMT, 0);
    EXPECT(d50, "{'distinct_id':'test-identifier'}", "h:T:holdout-42:holdout_condition_value:-");
    EXPECT(d50, "{'distinct_id':'some_distinct_id'}", "h:T:condition_match:0");
    EXPECT(d50, "{'distinct_id':'example_id2'}", "h:T:condition_match:0");
    EXPECT(d75, "{'distinct_id':'some_distinct_id'}", "h:T:holdout-42:holdout_condition_value:-");
    EXPECT(d75, "{'distinct_id':'example_id2'}", "h:T:holdout-42:holdout_condition_value:-");
    EXPECT(d75, "{'distinct_id':'example_id'}", "h:T:condition_match:0");
    EXPECT(d100, "{'distinct_id':'example_id'}", "h:T:holdout-42:holdout_condition_value:-");
    EXPECT(d0, "{'distinct_id':'test-identifier'}", "h:T:condition_match:0");
    /* A null id or percentage means no holdout. */
    EXPECT("{'flags':[{'key':'h','active':true,'filters':{'groups':[{}],"
           "'holdout':{'id':null,'exclusion_percentage':100}}}]}",
           "{'distinct_id':'x'}", "h:T:condition_match:0");
}

static const char *GROUP =
    "{'flags':[{'key':'group-flag','active':true,'filters':{'aggregation_group_type_index':0,"
    "'groups':[{'properties':[{'key':'name','type':'group','group_type_index':0,"
    "'value':['Project Name 1'],'operator':'exact'}],'rollout_percentage':35}]}}],"
    "'group_type_mapping':{'0':'company','1':'project'}}";

static void test_group_flags(void **state)
{
    (void)state;
    EXPECT(GROUP,
           "{'distinct_id':'u','groups':{'company':'amazon_without_rollout'},"
           "'group_properties':{'company':{'name':'Project Name 1'}}}",
           "group-flag:T:condition_match:0");
    EXPECT(GROUP,
           "{'distinct_id':'u','groups':{'company':'amazon'},"
           "'group_properties':{'company':{'name':'Project Name 1'}}}",
           "group-flag:F:out_of_rollout_bound:0");
    EXPECT(GROUP, "{'distinct_id':'u'}", "group-flag:F:no_group_type:0");
    /* Group passed without its properties: absent, so no match (server reading). */
    EXPECT(GROUP, "{'distinct_id':'u','groups':{'company':'amazon_without_rollout'}}",
           "group-flag:F:no_condition_match:0");
    /* $group_key answers from the group key itself. */
    EXPECT("{'flags':[{'key':'g','active':true,'filters':{'aggregation_group_type_index':1,"
           "'groups':[{'properties':[{'key':'$group_key','type':'group','value':'p1'}]}]}}],"
           "'group_type_mapping':{'1':'project'}}",
           "{'distinct_id':'u','groups':{'project':'p1'}}", "g:T:condition_match:0");
    /* An unknown group type index: no group type. */
    EXPECT("{'flags':[{'key':'g','active':true,'filters':{'aggregation_group_type_index':7,"
           "'groups':[{}]}}],'group_type_mapping':{'0':'company'}}",
           "{'distinct_id':'u','groups':{'company':'x'}}", "g:F:no_group_type:0");
}

static const char *MIXED =
    "{'flags':[{'key':'mixed','active':true,'filters':{'groups':["
    "{'aggregation_group_type_index':0,'properties':[{'key':'plan','type':'group',"
    "'group_type_index':0,'value':'enterprise'}]},"
    "{'aggregation_group_type_index':null,'properties':[{'key':'email','value':'a@b.c'}]}]}}],"
    "'group_type_mapping':{'0':'company'}}";

static void test_mixed_targeting(void **state)
{
    (void)state;
    EXPECT(MIXED, "{'distinct_id':'u','person_properties':{'email':'a@b.c'}}",
           "mixed:T:condition_match:1");
    EXPECT(MIXED, "{'distinct_id':'u','person_properties':{'email':'x'}}",
           "mixed:F:no_condition_match:1");
    EXPECT(MIXED,
           "{'distinct_id':'u','groups':{'company':'acme'},"
           "'group_properties':{'company':{'plan':'enterprise'}}}",
           "mixed:T:condition_match:0");
    /* The skipped group condition is mentioned in the description. */
    char *defs = q(MIXED);
    flg_snapshot_t *s;
    assert_int_equal(flg_snapshot_load(defs, strlen(defs), &s, NULL), 0);
    cm_json_doc_t *pd;
    assert_int_equal(cm_json_parse("{\"email\":\"x\"}", 13, NULL, &pd, NULL), 0);
    flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u"), .person_properties = cm_json_root(pd)};
    flg_eval_t e;
    flg_evaluate(s, &ctx, &e);
    char buf[48];
    assert_true(e.results[0].groups_skipped);
    assert_string_equal(flg_reason_description(&e.results[0], buf),
                        "No matching condition set (group conditions were not evaluated because "
                        "no group type was provided)");
    flg_eval_free(&e);
    cm_json_doc_free(pd);
    flg_snapshot_unref(s);
    free(defs);
}

/* ---- flag dependencies -------------------------------------------------------------------------
 */

static const char *DEPS =
    "{'flags':["
    "{'key':'base','active':true,'filters':{'groups':[{'properties':[{'key':'plan','value':'pro'}]}"
    "]}},"
    "{'key':'needs-base','active':true,'filters':{'groups':[{'properties':[{'key':'base',"
    "'type':'flag','operator':'flag_evaluates_to','value':true,'dependency_chain':['base']}]}]}},"
    "{'key':'needs-not-base','active':true,'filters':{'groups':[{'properties':[{'key':'base',"
    "'type':'flag','operator':'flag_evaluates_to','value':false,'dependency_chain':['base']}]}]}},"
    "{'key':'needs-ghost','active':true,'filters':{'groups':[{'properties':[{'key':'ghost',"
    "'type':'flag','operator':'flag_evaluates_to','value':true,'dependency_chain':[]}]}]}},"
    "{'key':'off','active':false,'filters':{'groups':[{}]}},"
    "{'key':'needs-off','active':true,'filters':{'groups':[{'properties':[{'key':'off',"
    "'type':'flag','operator':'flag_evaluates_to','value':false,'dependency_chain':['off']}]}]}},"
    "{'key':'colour','active':true,'filters':{'groups':[{'variant':'blue'}],'multivariate':"
    "{'variants':[{'key':'blue','rollout_percentage':50},{'key':'red','rollout_percentage':50}]}}},"
    "{'key':'needs-blue','active':true,'filters':{'groups':[{'properties':[{'key':'colour',"
    "'type':'flag','operator':'flag_evaluates_to','value':'blue','dependency_chain':['colour']}]}]}"
    "},"
    "{'key':'needs-red','active':true,'filters':{'groups':[{'properties':[{'key':'colour',"
    "'type':'flag','operator':'flag_evaluates_to','value':'red','dependency_chain':['colour']}]}]}}"
    "]}";

static void test_dependencies(void **state)
{
    (void)state;
    EXPECT(DEPS, "{'distinct_id':'u','person_properties':{'plan':'pro'}}",
           "base:T:condition_match:0 needs-base:T:condition_match:0 "
           "needs-not-base:F:no_condition_match:0 needs-ghost:F:missing_dependency:- "
           "off:F:flag_disabled:- needs-off:T:condition_match:0 "
           "colour:T:blue:condition_match:0 needs-blue:T:condition_match:0 "
           "needs-red:F:no_condition_match:0");
    EXPECT(DEPS,
           "{'distinct_id':'u','person_properties':{'plan':'free'},"
           "'flag_keys':['needs-base','needs-not-base']}",
           "needs-base:F:no_condition_match:0 needs-not-base:T:condition_match:0");
}

static void test_dependency_cycle(void **state)
{
    (void)state;
    EXPECT("{'flags':["
           "{'key':'a','active':true,'filters':{'groups':[{'properties':[{'key':'b','type':'flag',"
           "'value':true,'operator':'flag_evaluates_to','dependency_chain':[]}]}]}},"
           "{'key':'b','active':true,'filters':{'groups':[{'properties':[{'key':'a','type':'flag',"
           "'value':true,'operator':'flag_evaluates_to','dependency_chain':[]}]}]}},"
           "{'key':'self','active':true,'filters':{'groups':[{'properties':[{'key':'self',"
           "'type':'flag','value':true,'dependency_chain':['self']}]}]}},"
           "{'key':'fine','active':true,'filters':{'groups':[{}]}}]}",
           "{'distinct_id':'u'}", "a:ERR b:ERR self:ERR fine:T:condition_match:0!");
}

/* ---- early access, continuity, device bucketing ---------------------------------------------- */

static void test_early_access(void **state)
{
    (void)state;
    const char *ea = "{'flags':[{'key':'ea','active':true,'filters':{'feature_enrollment':true,"
                     "'groups':[{'rollout_percentage':0}]}}]}";
    EXPECT(ea, "{'distinct_id':'u','person_properties':{'$feature_enrollment/ea':true}}",
           "ea:T:super_condition_value:0");
    EXPECT(ea, "{'distinct_id':'u','person_properties':{'$feature_enrollment/ea':'true'}}",
           "ea:T:super_condition_value:0");
    EXPECT(ea, "{'distinct_id':'u','person_properties':{'$feature_enrollment/ea':'false'}}",
           "ea:F:super_condition_value:0");
    EXPECT(ea, "{'distinct_id':'u'}", "ea:F:out_of_rollout_bound:0");
    const char *sg =
        "{'flags':[{'key':'sg','active':true,'filters':{'groups':[{'rollout_percentage':0}],"
        "'super_groups':[{'properties':[{'key':'$feature_enrollment/sg','type':'person',"
        "'operator':'exact','value':['true']}],'rollout_percentage':100}]}}]}";
    EXPECT(sg, "{'distinct_id':'u','person_properties':{'$feature_enrollment/sg':true}}",
           "sg:T:super_condition_value:0");
    EXPECT(sg, "{'distinct_id':'u','person_properties':{'$feature_enrollment/sg':false}}",
           "sg:F:super_condition_value:0");
    EXPECT(sg, "{'distinct_id':'u'}", "sg:F:out_of_rollout_bound:0");
}

/* Two ids, one inside a 50% rollout of `key` and one outside. */
static void split_ids(const char *key, char in[32], char out[32])
{
    in[0] = out[0] = 0;
    for (int i = 0; !in[0] || !out[0]; i++) {
        char id[32];
        snprintf(id, sizeof id, "id-%d", i);
        bool on =
            flg_in_rollout(flg_hash_rollout(cm_slice_from_cstr(key), cm_slice_from_cstr(id)), 50);
        strcpy(on ? in : out, id);
    }
}

static void test_experience_continuity(void **state)
{
    (void)state;
    const char *defs = "{'flags':[{'key':'eec','active':true,'ensure_experience_continuity':true,"
                       "'filters':{'groups':[{'rollout_percentage':50}]}}]}";
    char in[32], out[32], ctx[256];
    split_ids("eec", in, out);
    snprintf(ctx, sizeof ctx, "{'distinct_id':'%s'}", in);
    EXPECT(defs, ctx, "eec:T:condition_match:0");
    snprintf(ctx, sizeof ctx, "{'distinct_id':'%s','hash_key_overrides':{'eec':'%s'}}", in, out);
    EXPECT(defs, ctx, "eec:F:out_of_rollout_bound:0");
    snprintf(ctx, sizeof ctx, "{'distinct_id':'%s','anon_distinct_id':'%s'}", in, out);
    EXPECT(defs, ctx, "eec:F:out_of_rollout_bound:0");
}

static void test_device_bucketing(void **state)
{
    (void)state;
    const char *defs = "{'flags':[{'key':'dev','active':true,'bucketing_identifier':'device_id',"
                       "'filters':{'groups':[{'rollout_percentage':50}]}}]}";
    char in[32], out[32], ctx[256];
    split_ids("dev", in, out);
    snprintf(ctx, sizeof ctx, "{'distinct_id':'%s','person_properties':{'$device_id':'%s'}}", in,
             out);
    EXPECT(defs, ctx, "dev:F:out_of_rollout_bound:0");
    snprintf(ctx, sizeof ctx, "{'distinct_id':'%s','device_id':'%s'}", out, in);
    EXPECT(defs, ctx, "dev:T:condition_match:0");
    EXPECT(defs, "{'distinct_id':'u'}", "dev:F:out_of_rollout_bound:0");
}

/* ---- cohorts ----------------------------------------------------------------------------------
 */

static const char *COHORTS =
    "{'flags':["
    "{'key':'in5','active':true,'filters':{'groups':[{'properties':[{'key':'id','type':'cohort','"
    "value':5,'operator':'in'}]}]}},"
    "{'key':'notin5','active':true,'filters':{'groups':[{'properties':[{'key':'id','type':'cohort',"
    "'value':5,'operator':'not_in'}]}]}},"
    "{'key':'everyone','active':true,'filters':{'groups':[{'properties':[{'key':'id','type':'"
    "cohort','value':6}]}]}},"
    "{'key':'nested','active':true,'filters':{'groups':[{'properties':[{'key':'id','type':'cohort',"
    "'value':7}]}]}}"
    "],'cohorts':{"
    "'5':{'type':'OR','values':[{'type':'AND','values':[{'key':'plan','value':'pro','type':'person'"
    "},"
    "{'key':'country','value':'de','type':'person','negation':true}]},"
    "{'type':'AND','values':[{'key':'vip','value':true,'type':'person'}]}]},"
    "'6':{},"
    "'7':{'type':'AND','values':[{'key':'id','type':'cohort','value':5},{'key':'age','operator':'"
    "gt','value':18}]}"
    "}}";

static void test_cohorts(void **state)
{
    (void)state;
    EXPECT(COHORTS,
           "{'distinct_id':'u','person_properties':{'plan':'pro','country':'us','vip':false,'age':"
           "30}}",
           "in5:T:condition_match:0 notin5:F:no_condition_match:0 everyone:T:condition_match:0 "
           "nested:T:condition_match:0");
    EXPECT(
        COHORTS,
        "{'distinct_id':'u','person_properties':{'plan':'pro','country':'de','vip':true,'age':10}}",
        "in5:T:condition_match:0 notin5:F:no_condition_match:0 everyone:T:condition_match:0 "
        "nested:F:no_condition_match:0");
    EXPECT(COHORTS,
           "{'distinct_id':'u','person_properties':{'plan':'pro','country':'de','vip':false}}",
           "in5:F:no_condition_match:0 notin5:T:condition_match:0 everyone:T:condition_match:0 "
           "nested:F:no_condition_match:0");
    /* Nothing known: the SDK gives up; missing properties are absent, so not in the cohort. */
    EXPECT(COHORTS, "{'distinct_id':'u'}",
           "in5:F:no_condition_match:0 notin5:T:condition_match:0 everyone:T:condition_match:0 "
           "nested:F:no_condition_match:0");
}

static void test_static_cohorts(void **state)
{
    (void)state;
    const char *defs = "{'flags':[{'key':'st','active':true,'filters':{'groups':[{'properties':"
                       "[{'key':'id','type':'cohort','value':99,'operator':'in'}]}]}},"
                       "{'key':'nst','active':true,'filters':{'groups':[{'properties':"
                       "[{'key':'id','type':'cohort','value':99,'operator':'not_in'}]}]}},"
                       "{'key':'bad','active':true,'filters':{'groups':[{'properties':"
                       "[{'key':'id','type':'cohort','value':8}]}]}},"
                       "{'key':'ok','active':true,'filters':{'groups':[{}]}}],"
                       "'cohorts':{'8':{'type':'XOR','values':[]}}}";
    /* Membership unknown: those flags cannot be computed; the others are unaffected. */
    EXPECT(defs, "{'distinct_id':'u'}", "st:ERR nst:ERR bad:ERR ok:T:condition_match:0!");
    EXPECT(defs, "{'distinct_id':'u','static_cohorts':[99]}",
           "st:T:condition_match:0 nst:F:no_condition_match:0 bad:ERR ok:T:condition_match:0!");
    EXPECT(defs, "{'distinct_id':'u','static_cohorts':[1,'2'],'flag_keys':['st','nst','ok']}",
           "st:F:no_condition_match:0 nst:T:condition_match:0 ok:T:condition_match:0");
}

static void test_regex_limit_isolated(void **state)
{
    (void)state;
    EXPECT(
        "{'flags':[{'key':'slow','active':true,'filters':{'groups':[{'properties':"
        "[{'key':'s','operator':'regex','value':'(a|aa)*$'}]}]}},"
        "{'key':'fast','active':true,'filters':{'groups':[{'properties':"
        "[{'key':'s','operator':'regex','value':'^a+b$'}]}]}}]}",
        "{'distinct_id':'u','person_properties':{'s':"
        "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'}}",
        "slow:ERR fast:T:condition_match:0!");
}

/* ---- request filters ----------------------------------------------------------------------------
 */

static const char *FILTERS =
    "{'flags':["
    "{'key':'web','active':true,'evaluation_contexts':['web'],'filters':{'groups':[{}]}},"
    "{'key':'app','active':true,'evaluation_tags':['app'],'filters':{'groups':[{}]}},"
    "{'key':'untagged','active':true,'filters':{'groups':[{}]}},"
    "{'key':'not-app','active':true,'filters':{'groups':[{'properties':[{'key':'app',"
    "'type':'flag','value':false,'operator':'flag_evaluates_to','dependency_chain':['app']}]}]}},"
    "{'key':'client','active':true,'evaluation_runtime':'client','filters':{'groups':[{}]}},"
    "{'key':'server','active':true,'evaluation_runtime':'SERVER','filters':{'groups':[{}]}},"
    "{'key':'all','active':true,'evaluation_runtime':'all','filters':{'groups':[{}]}}"
    "]}";

static void test_request_filters(void **state)
{
    (void)state;
    EXPECT(FILTERS, "{'distinct_id':'u','evaluation_contexts':['web']}",
           "web:T:condition_match:0 untagged:T:condition_match:0 not-app:T:condition_match:0 "
           "client:T:condition_match:0 server:T:condition_match:0 all:T:condition_match:0");
    EXPECT(FILTERS,
           "{'distinct_id':'u','runtime':'server','flag_keys':['client','server','all','app']}",
           "app:T:condition_match:0 server:T:condition_match:0 all:T:condition_match:0");
    EXPECT(FILTERS, "{'distinct_id':'u','runtime':'unknown','flag_keys':['client','server','all']}",
           "all:T:condition_match:0");
    EXPECT(FILTERS, "{'distinct_id':'u','runtime':'client','flag_keys':['client','server']}",
           "client:T:condition_match:0");
}

/* ---- dates and time zones ---------------------------------------------------------------------
 */

static void test_time_zone(void **state)
{
    (void)state;
    const char *defs =
        "{'flags':[{'key':'d','active':true,'filters':{'groups':[{'properties':"
        "[{'key':'t','operator':'is_date_before','value':'2024-01-15 10:00:00'}]}]}}]}";
    EXPECT(defs, "{'distinct_id':'u','person_properties':{'t':'2024-01-15T09:00:00Z'}}",
           "d:T:condition_match:0");
    /* In a UTC+2 project the filter means 08:00Z. */
    EXPECT(defs,
           "{'distinct_id':'u','tz_offset_minutes':120,'person_properties':{'t':'2024-01-15T09:00:"
           "00Z'}}",
           "d:F:no_condition_match:0");
    /* Relative dates count from `now`. */
    const char *rel = "{'flags':[{'key':'r','active':true,'filters':{'groups':[{'properties':"
                      "[{'key':'t','operator':'is_date_after','value':'-1m'}]}]}}]}";
    EXPECT(
        rel,
        "{'distinct_id':'u','now':'2024-03-31T12:00:00Z','person_properties':{'t':'2024-03-01'}}",
        "r:T:condition_match:0");
    EXPECT(
        rel,
        "{'distinct_id':'u','now':'2024-03-31T12:00:00Z','person_properties':{'t':'2024-02-29'}}",
        "r:F:no_condition_match:0");
}

/* ---- property layers: request over GeoIP over stored ------------------------------------------
 */

static const char *LAYERS =
    "{'flags':[{'key':'plan','active':true,'filters':{'groups':[{'properties':["
    "{'key':'plan','type':'person','value':['pro'],'operator':'exact'}],'rollout_percentage':100}]}"
    "},"
    "{'key':'geo','active':true,'filters':{'groups':[{'properties':["
    "{'key':'$geoip_country_code','type':'person','value':['DE'],'operator':'exact'}],"
    "'rollout_percentage':100}]}},"
    "{'key':'co','active':true,'filters':{'aggregation_group_type_index':0,'groups':[{'properties':"
    "["
    "{'key':'tier','type':'group','group_type_index':0,'value':['gold'],'operator':'exact'}],"
    "'rollout_percentage':100}]}}],"
    "'group_type_mapping':{'0':'company'}}";

/* A layer with n filler keys (indexed from EV_INDEX_MIN members on) plus one member. */
static char *layer_of(int n, const char *member)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_putc(&b, '{');
    for (int i = 0; i < n; i++)
        cm_buf_appendf(&b, "'k%d':%d,", i, i);
    cm_buf_appendf(&b, "%s}", member);
    char *s = strdup(cm_buf_cstr(&b));
    cm_buf_free(&b);
    return s;
}

static void test_layers(void **state)
{
    (void)state;
    /* Each key from the highest layer that has it; every size of layer. */
    for (int n = 0; n <= 40; n += 40) {
        char *req = layer_of(n, "'plan':'pro'"), *geo = layer_of(n, "'$geoip_country_code':'DE'"),
             *stored = layer_of(n, "'plan':'free','$geoip_country_code':'US'");
        char ctx[4096];
        /* request > stored for plan; GeoIP > stored for the country */
        snprintf(ctx, sizeof ctx,
                 "{'distinct_id':'u','person_properties':%s,'geoip_properties':%s,"
                 "'stored_person_properties':%s}",
                 req, geo, stored);
        EXPECT(LAYERS, ctx,
               "plan:T:condition_match:0 geo:T:condition_match:0 co:F:no_group_type:0");
        /* stored only: read from the bottom layer */
        snprintf(ctx, sizeof ctx, "{'distinct_id':'u','stored_person_properties':%s}", stored);
        EXPECT(LAYERS, ctx,
               "plan:F:no_condition_match:0 geo:F:no_condition_match:0 co:F:no_group_type:0");
        snprintf(ctx, sizeof ctx,
                 "{'distinct_id':'u','stored_person_properties':{'plan':'pro',"
                 "'$geoip_country_code':'DE'},'geoip_properties':%s}",
                 n ? "{'$geoip_country_code':'FR'}" : "{'$geoip_country_code':'FR','x':1}");
        EXPECT(LAYERS, ctx,
               "plan:T:condition_match:0 geo:F:no_condition_match:0 co:F:no_group_type:0");
        free(req);
        free(geo);
        free(stored);
        /* groups: the request's properties over the stored group's; the last stored wins */
        char *g = layer_of(n, "'tier':'gold'");
        snprintf(ctx, sizeof ctx,
                 "{'distinct_id':'u','groups':{'company':'acme'},"
                 "'stored_groups':[['company',{'tier':'tin'}],['company',%s]]}",
                 g);
        EXPECT(LAYERS, ctx,
               "plan:F:no_condition_match:0 geo:F:no_condition_match:0 co:T:condition_match:0");
        snprintf(ctx, sizeof ctx,
                 "{'distinct_id':'u','groups':{'company':'acme'},"
                 "'group_properties':{'company':{'tier':'tin'}},'stored_groups':[['company',%s]]}",
                 g);
        EXPECT(LAYERS, ctx,
               "plan:F:no_condition_match:0 geo:F:no_condition_match:0 co:F:no_condition_match:0");
        free(g);
    }
}

/* ---- response bodies ------------------------------------------------------------------------- */

static char *write_body(const char *defs_q, bool legacy)
{
    char *defs = q(defs_q);
    flg_snapshot_t *s;
    assert_int_equal(flg_snapshot_load(defs, strlen(defs), &s, NULL), 0);
    flg_context_t ctx = {.distinct_id = CM_SLICE_LIT("u")};
    flg_eval_t e;
    flg_evaluate(s, &ctx, &e);
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    flg_v2_cache_t *cache = flg_v2_cache_new(s); /* as serve/store.c keeps it */
    if (legacy)
        flg_write_legacy(&w, &e);
    else
        flg_write_v2(&w, &e, cache);
    cm_json_end_object(&w);
    flg_v2_cache_free(cache);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    char *text = strdup(cm_buf_cstr(&out));
    cm_buf_free(&out);
    flg_eval_free(&e);
    flg_snapshot_unref(s);
    free(defs);
    return text;
}

static const char *BODY =
    "{'flags':[{'id':7,'version':3,'key':'pay','active':true,'has_experiment':true,"
    "'filters':{'groups':[{}],'payloads':{'true':'{\\\"a\\\":1}'}}},"
    "{'id':8,'key':'no','active':true,'filters':{'groups':[{'rollout_percentage':0}],"
    "'payloads':{'true':'1'}}},"
    "{'id':9,'key':'obj','active':true,'filters':{'groups':[{'variant':'v'}],"
    "'multivariate':{'variants':[{'key':'v','rollout_percentage':100}]},"
    "'payloads':{'v':{'x':[1,2]}}}},"
    "{'key':'broken','active':true,'filters':{'groups':'nope'}}]}";

static void test_v2_body(void **state)
{
    (void)state;
    char *got = write_body(BODY, false);
    assert_string_equal(
        got,
        "{\"errorsWhileComputingFlags\":true,\"flags\":{"
        "\"pay\":{\"key\":\"pay\",\"enabled\":true,\"variant\":null,\"reason\":{\"code\":"
        "\"condition_match\",\"condition_index\":0,\"description\":\"Matched condition set 1\"},"
        "\"metadata\":{\"id\":7,\"version\":3,\"description\":null,\"payload\":\"{\\\"a\\\":1}\","
        "\"has_experiment\":true}},"
        "\"no\":{\"key\":\"no\",\"enabled\":false,\"variant\":null,\"reason\":{\"code\":"
        "\"out_of_rollout_bound\",\"condition_index\":0,\"description\":\"Out of rollout bound\"},"
        "\"metadata\":{\"id\":8,\"version\":0,\"description\":null,\"payload\":null,"
        "\"has_experiment\":false}},"
        "\"obj\":{\"key\":\"obj\",\"enabled\":true,\"variant\":\"v\",\"reason\":{\"code\":"
        "\"condition_match\",\"condition_index\":0,\"description\":\"Matched condition set 1\"},"
        "\"metadata\":{\"id\":9,\"version\":0,\"description\":null,\"payload\":"
        "\"{\\\"x\\\":[1,2]}\",\"has_experiment\":false}}}}");
    free(got);
}

static void test_legacy_body(void **state)
{
    (void)state;
    char *got = write_body(BODY, true);
    assert_string_equal(got, "{\"errorsWhileComputingFlags\":true,\"featureFlags\":{\"pay\":true,"
                             "\"no\":false,\"obj\":\"v\"},\"featureFlagPayloads\":{\"pay\":"
                             "\"{\\\"a\\\":1}\",\"obj\":\"{\\\"x\\\":[1,2]}\"}}");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_flag_consistency),
        cmocka_unit_test(test_multivariate_consistency),
        cmocka_unit_test(test_variant_overrides),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_descriptions),
        cmocka_unit_test(test_holdout),
        cmocka_unit_test(test_group_flags),
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_mixed_targeting),
        cmocka_unit_test(test_dependencies),
        cmocka_unit_test(test_dependency_cycle),
        cmocka_unit_test(test_early_access),
        cmocka_unit_test(test_experience_continuity),
        cmocka_unit_test(test_device_bucketing),
        cmocka_unit_test(test_cohorts),
        cmocka_unit_test(test_static_cohorts),
        cmocka_unit_test(test_regex_limit_isolated),
        cmocka_unit_test(test_request_filters),
        cmocka_unit_test(test_time_zone),
        cmocka_unit_test(test_v2_body),
        cmocka_unit_test(test_legacy_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
