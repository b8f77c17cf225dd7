/*
 * fuzz_defs.c - libFuzzer target for the flags service's definitions
 * loader and evaluator.
 *
 * The input is taken as a project's definitions JSON. If it loads, every
 * flag is evaluated for a fixed person (properties of every JSON type,
 * groups, a static cohort list, a time zone), and both response shapes are
 * written; the writer must succeed and its output must parse. Anything else
 * (a crash, a sanitizer report, a leak, a hang) is a bug.
 *
 * Linked with the flags service's code (tests/fuzz/<svc>/, see the
 * Makefile), so moving or adding a service file needs no edit here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval.h"
#include "serve/response.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_defs: check failed: %s (line %d)\n", #cond, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static const char CONTEXT[] =
    "{\"person\":{\"email\":\"Someone@Example.com\",\"plan\":\"pro\",\"age\":42,\"score\":3.5,"
    "\"beta\":true,\"none\":null,\"tags\":[\"a\",1.5],\"meta\":{\"k\":\"v\"},\"version\":\"1.2.3\","
    "\"signup\":\"2024-01-15T10:00:00Z\",\"when\":1700000000000,\"$device_id\":\"dev-1\","
    "\"$feature_enrollment/beta\":\"true\"},"
    "\"groups\":{\"company\":\"acme\",\"project\":7},"
    "\"group_props\":{\"company\":{\"name\":\"Acme\",\"size\":10}},"
    "\"static\":[1,2,\"3\"],\"contexts\":[\"web\"]}";

static int32_t plus_two_hours(const flg_tz_t *tz, int64_t utc_s)
{
    (void)tz;
    (void)utc_s;
    return 7200;
}

static void write_and_check(const flg_eval_t *e, bool legacy)
{
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    if (legacy)
        flg_write_legacy(&w, e);
    else
        flg_write_v2(&w, e, NULL);
    cm_json_end_object(&w);
    CHECK(cm_json_writer_finish(&w) == 0);
    cm_json_doc_t *doc = NULL;
    CHECK(cm_json_parse(out.p, out.len, NULL, &doc, NULL) == 0);
    cm_json_doc_free(doc);
    cm_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    flg_snapshot_t *s = NULL;
    if (flg_snapshot_load(data, size, &s, NULL) != 0)
        return 0;
    cm_json_doc_t *cd = NULL;
    CHECK(cm_json_parse(CONTEXT, sizeof CONTEXT - 1, NULL, &cd, NULL) == 0);
    cm_json_t c = cm_json_root(cd);
    flg_tz_t tz = {plus_two_hours, NULL};
    flg_context_t ctx = {
        .distinct_id = CM_SLICE_LIT("user-1"),
        .anon_distinct_id = CM_SLICE_LIT("anon-1"),
        .groups = cm_json_get(c, "groups"),
        .person_properties = cm_json_get(c, "person"),
        .group_properties = cm_json_get(c, "group_props"),
        .static_cohorts = cm_json_get(c, "static"),
        .now_us = INT64_C(1718452800000000),
    };
    for (int round = 0; round < 2; round++) {
        flg_eval_t e;
        flg_evaluate(s, &ctx, &e);
        CHECK(e.n == flg_snapshot_nflags(s));
        write_and_check(&e, round == 1);
        flg_eval_free(&e);
        /* Second round: other request filters, a time zone. */
        ctx.runtime = FLG_RUNTIME_UNKNOWN;
        ctx.evaluation_contexts = cm_json_get(c, "contexts");
        ctx.tz = &tz;
    }
    cm_json_doc_free(cd);
    flg_snapshot_unref(s);
    return 0;
}
