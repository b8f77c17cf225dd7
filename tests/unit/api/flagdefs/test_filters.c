/*
 * test_filters.c - the api's flag filter checks: what PostHog refuses is
 * refused with a detail naming the place, what it accepts passes, the
 * references come out, and the operator list is proto/flag.schema.json's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "flagdefs/flagdefs.h"

static int check(const char *json, api_flagdefs_refs_t *refs, cm_api_error_t *e)
{
    cm_json_doc_t *doc = NULL;
    assert_int_equal(cm_json_parse(json, strlen(json), NULL, &doc, NULL), 0);
    int rc = api_flagdefs_check(cm_json_root(doc), refs, e);
    cm_json_doc_free(doc);
    return rc;
}

static void test_accepts(void **state)
{
    (void)state;
    api_flagdefs_refs_t refs;
    cm_api_error_t e;
    const char *ok[] = {
        "{}",
        "{\"groups\":[]}",
        "{\"groups\":[{\"properties\":[],\"rollout_percentage\":null}]}",
        "{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\"}],\"rollout_percentage\":"
        "37.5}],\"payloads\":{\"true\":\"1\"}}",
        "{\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":33.34},{\"key\":"
        "\"b\",\"rollout_percentage\":33.33},{\"key\":\"c\",\"rollout_percentage\":33.33}]},"
        "\"groups\":[{\"variant\":\"b\"}]}",
        "{\"aggregation_group_type_index\":0,\"groups\":[{\"properties\":[{\"key\":\"size\","
        "\"type\":\"group\",\"group_type_index\":0,\"operator\":\"gt\",\"value\":10}]}]}",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
        assert_int_equal(check(ok[i], &refs, &e), 0);
}

static void test_refuses(void **state)
{
    (void)state;
    api_flagdefs_refs_t refs;
    cm_api_error_t e;
    const struct {
        const char *json, *detail;
    } bad[] = {
        {"[]", "must be an object"},
        {"{\"groups\":{}}", "groups must be a list"},
        {"{\"groups\":[{\"rollout_percentage\":-1}]}", "0 to 100"},
        {"{\"groups\":[{\"rollout_percentage\":\"50\"}]}", "0 to 100"},
        {"{\"groups\":[{\"properties\":[{\"key\":\"a\",\"operator\":\"near\"}]}]}",
         "unknown operator"},
        {"{\"groups\":[{\"properties\":[{\"key\":\"a\",\"type\":\"planet\"}]}]}",
         "unknown property type"},
        {"{\"groups\":[{\"properties\":[{\"value\":1}]}]}", "key is required"},
        {"{\"groups\":[{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":\"x\"}]}]}",
         "cohort id"},
        {"{\"groups\":[{\"properties\":[{\"key\":\"a\",\"type\":\"group\"}]}]}",
         "group_type_index"},
        {"{\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":60}]}}",
         "sum to 100"},
        {"{\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":50},{\"key\":"
         "\"a\",\"rollout_percentage\":50}]}}",
         "duplicate key"},
        {"{\"groups\":[{\"variant\":\"x\"}]}", "variant"},
        {"{\"aggregation_group_type_index\":9}", "aggregation_group_type_index"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        memset(&e, 0, sizeof(e));
        assert_int_equal(check(bad[i].json, &refs, &e), -1);
        assert_int_equal(e.status, 400);
        assert_string_equal(e.attr, "filters");
        if (strstr(e.detail, bad[i].detail) == NULL)
            fail_msg("%s: detail \"%s\" lacks \"%s\"", bad[i].json, e.detail, bad[i].detail);
    }
}

static void test_refs(void **state)
{
    (void)state;
    api_flagdefs_refs_t refs;
    cm_api_error_t e;
    assert_int_equal(
        check("{\"groups\":[{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":7},"
              "{\"key\":\"12\",\"type\":\"flag\",\"value\":true,\"operator\":"
              "\"flag_evaluates_to\"},{\"key\":12,\"type\":\"flag\",\"value\":true}]},"
              "{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":\"8\"}]}]}",
              &refs, &e),
        0);
    assert_int_equal(refs.ncohorts, 2);
    assert_int_equal(refs.cohorts[0], 7);
    assert_int_equal(refs.cohorts[1], 8);
    assert_int_equal(refs.nflags, 1); /* the same flag twice: once */
    assert_int_equal(refs.flags[0], 12);
    api_flagdefs_refs_of("not json", &refs);
    assert_int_equal(refs.nflags + refs.ncohorts, 0);
}

/* Every name in the schema's operator enum is known here, and no other. */
static void test_operators_match_schema(void **state)
{
    (void)state;
    FILE *f = fopen("proto/flag.schema.json", "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cm_json_doc_t *doc = NULL;
    assert_int_equal(cm_json_parse(text, n, NULL, &doc, NULL), 0);
    cm_json_t ops = cm_json_get(
        cm_json_get(cm_json_get(cm_json_get(cm_json_get(cm_json_root(doc), "definitions"),
                                            "propertyFilter"),
                                "properties"),
                    "operator"),
        "enum");
    assert_int_equal(cm_json_type(ops), CM_JSON_ARRAY);
    size_t in_schema = 0, here = 0;
    cm_json_iter_t it = cm_json_iter(ops);
    cm_json_t v;
    while (cm_json_next(&it, NULL, &v)) {
        if (cm_json_is_null(v))
            continue;
        in_schema++;
        bool found = false;
        for (size_t i = 0; api_flagdefs_operators[i] && !found; i++)
            found = cm_json_str_eq(v, cm_slice_from_cstr(api_flagdefs_operators[i]));
        if (!found)
            fail_msg("schema operator %.*s unknown to the api", (int)cm_json_raw(v).len,
                     cm_json_raw(v).p);
    }
    while (api_flagdefs_operators[here])
        here++;
    assert_int_equal(here, in_schema);
    cm_json_doc_free(doc);
}

/* Reach and chains over a diamond, a missing node and a loop; a long
 * shared ladder stays linear (it would be 2^40 paths walked naively). */
static void test_graph(void **state)
{
    (void)state;
    api_flagdefs_graph_t *g = api_flagdefs_graph_new(1);
    api_flagdefs_graph_add(g, 4, "d", (long long[]){2, 3}, 2);
    api_flagdefs_graph_add(g, 1, "a", NULL, 0);
    api_flagdefs_graph_add(g, 2, "b", (long long[]){1}, 1);
    api_flagdefs_graph_add(g, 3, "c", (long long[]){1}, 1);
    api_flagdefs_graph_add(g, 5, "e", (long long[]){99}, 1);
    api_flagdefs_graph_add(g, 6, "f", (long long[]){7}, 1);
    api_flagdefs_graph_add(g, 7, "g", (long long[]){6}, 1);
    assert_true(api_flagdefs_graph_reaches(g, 4, 1));
    assert_false(api_flagdefs_graph_reaches(g, 1, 4));
    assert_true(api_flagdefs_graph_reaches(g, 6, 6));
    assert_false(api_flagdefs_graph_reaches(g, 6, 1));
    const char *chain[8];
    assert_int_equal(api_flagdefs_graph_chain(g, 4, chain, 8), 4);
    assert_string_equal(chain[0], "a");
    assert_string_equal(chain[3], "d");
    assert_int_equal(api_flagdefs_graph_chain(g, 5, chain, 8), 0); /* 99 is missing */
    assert_int_equal(api_flagdefs_graph_chain(g, 6, chain, 8), 0); /* a loop */
    assert_string_equal(api_flagdefs_graph_key(g, 3), "c");
    assert_null(api_flagdefs_graph_key(g, 42));
    api_flagdefs_graph_free(g);

    g = api_flagdefs_graph_new(0);
    for (long long i = 1; i <= 80; i++)
        api_flagdefs_graph_add(g, 100 + i, "x", (long long[]){100 + i + 1, 100 + i + 2},
                               i < 79 ? 2 : 0);
    assert_false(api_flagdefs_graph_reaches(g, 101, 5));
    api_flagdefs_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts), cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_refs),    cmocka_unit_test(test_operators_match_schema),
        cmocka_unit_test(test_graph),
    };
    return cmocka_run_group_tests_name("flagdefs", tests, NULL, NULL);
}
