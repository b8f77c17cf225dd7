/*
 * test_evstore_retention.c - cm_evstore_delete_events and
 * cm_evstore_delete_person (evstore_retention.c) on a real SQLite store in
 * a fresh directory: by age in slices (a batch of 2 over 7 rows runs four
 * statements and counts all 7), by person and its distinct ids within one
 * project only, a condition matching nothing, and a person's rows and
 * distinct ids. ClickHouse's mutations are covered by the integration
 * tests (retention.test.mjs, persons_delete.test.mjs, on a cluster
 * clickhouse_cluster_retention.test.mjs); here their SQL for one server
 * and for a cluster is pinned (golden), the cluster's being the only one
 * 18.16 takes there (a Distributed table refuses a mutation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/event_store.h"
/* the store's own SQL builders (not public) */
#include "../../../../libcommon/src/evstore/evstore_internal.h"

typedef struct {
    uv_loop_t loop;
    cm_evstore_t *es;
    char dir[64];
} fx_t;

typedef struct {
    bool answered, pending;
    int status;
    uint64_t deleted;
    long long n;
} answer_t;

static void on_count(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    (void)err;
    answer_t *a = ud;
    a->answered = true;
    a->status = status;
    a->n = status == 0 ? atoll(cm_evstore_value(rows, 0, 0)) : -1;
}

static void on_deleted(int status, const char *err, uint64_t deleted, bool pending, void *ud)
{
    (void)err;
    answer_t *a = ud;
    a->answered = true;
    a->status = status;
    a->deleted = deleted;
    a->pending = pending;
}

static void on_written(int status, const char *err, size_t inserted, void *ud)
{
    (void)err;
    (void)inserted;
    answer_t *a = ud;
    a->answered = true;
    a->status = status;
}

static void wait_for(fx_t *fx, answer_t *a)
{
    assert_false(a->answered); /* never from inside the call */
    while (!a->answered)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(a->status, 0);
}

static int fx_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/cm-test-evretain.XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    char url[128];
    snprintf(url, sizeof(url), "sqlite:%s/events.db", fx->dir);
    assert_int_equal(uv_loop_init(&fx->loop), 0);
    assert_int_equal(cm_evstore_open(&fx->loop, &(cm_evstore_opts_t){.url = url}, &fx->es), CM_OK);
    *state = fx;
    return 0;
}

static void on_closed(void *ud)
{
    *(bool *)ud = true;
}

static int fx_teardown(void **state)
{
    fx_t *fx = *state;
    bool closed = false;
    cm_evstore_close(fx->es, on_closed, &closed);
    while (!closed)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

static long long count(fx_t *fx, const char *sql)
{
    answer_t a = {0};
    cm_evstore_query(fx->es, sql, on_count, &a);
    wait_for(fx, &a);
    return a.n;
}

#define S(s) ((cm_slice_t){s, sizeof(s) - 1})
#define DAY  86400000LL
#define NOW  1764288000000LL /* 2025-11-28 */
#define P1   "0190e5a0-0000-7000-8000-0000000000aa"
#define P2   "0190e5a0-0000-7000-8000-0000000000bb"

/* n events of project, person and distinct id, one a day back from NOW - from_days. */
static void write_events(fx_t *fx, long long project, const char *person, cm_slice_t distinct_id,
                         int n, int from_days, const char *tag)
{
    cm_evstore_event_t ev[16];
    char uuids[16][40];
    assert_true(n <= 16);
    for (int i = 0; i < n; i++) {
        snprintf(uuids[i], sizeof(uuids[i]), "0190e5a0-0000-7000-8000-%s%010d", tag, i);
        ev[i] = (cm_evstore_event_t){.uuid = uuids[i],
                                     .project_id = project,
                                     .event = S("e"),
                                     .distinct_id = distinct_id,
                                     .person_id = person,
                                     .properties = S("{}"),
                                     .person_properties = S("{}"),
                                     .timestamp_ms = NOW - (from_days + i) * DAY,
                                     .created_at_ms = NOW};
    }
    answer_t a = {0};
    cm_evstore_write(fx->es, &(cm_evstore_rows_in_t){.events = ev, .nevents = (size_t)n},
                     on_written, &a);
    wait_for(fx, &a);
}

static void test_by_age_in_slices(void **state)
{
    fx_t *fx = *state;
    write_events(fx, 1, P1, S("u1"), 7, 40, "01"); /* 40..46 days old */
    write_events(fx, 2, P2, S("u2"), 3, 0, "02");  /* 0..2 days old */
    answer_t a = {0};
    cm_evstore_delete_events(
        fx->es, &(cm_evstore_delete_t){.before_ms = NOW - 30 * DAY, .batch = 2}, on_deleted, &a);
    wait_for(fx, &a);
    assert_int_equal(a.deleted, 7);
    assert_false(a.pending);
    assert_int_equal(count(fx, "SELECT count(*) FROM events"), 3);
    /* nothing left to match: a clean answer of 0 */
    memset(&a, 0, sizeof(a));
    cm_evstore_delete_events(fx->es, &(cm_evstore_delete_t){.before_ms = NOW - 30 * DAY},
                             on_deleted, &a);
    wait_for(fx, &a);
    assert_int_equal(a.deleted, 0);
    assert_int_equal(count(fx, "SELECT count(*) FROM events"), 3);
}

static void test_by_person_in_one_project(void **state)
{
    fx_t *fx = *state;
    write_events(fx, 1, P1, S("u1"), 3, 0, "03");
    write_events(fx, 1, P2, S("anon"), 2, 0, "04"); /* before a merge: another person */
    write_events(fx, 1, P2, S("other"), 2, 0, "05");
    write_events(fx, 2, P1, S("u1"), 4, 0, "06"); /* the same ids in project 2 */
    const char *ids[] = {"u1", "anon", "it's"};
    answer_t a = {0};
    cm_evstore_delete_events(
        fx->es,
        &(cm_evstore_delete_t){
            .project_id = 1, .person_id = P1, .distinct_ids = ids, .ndistinct_ids = 3},
        on_deleted, &a);
    wait_for(fx, &a);
    assert_int_equal(a.deleted, 5);
    assert_int_equal(count(fx, "SELECT count(*) FROM events WHERE project_id = 1"), 2);
    assert_int_equal(count(fx, "SELECT count(*) FROM events WHERE distinct_id = 'other'"), 2);
    assert_int_equal(count(fx, "SELECT count(*) FROM events WHERE project_id = 2"), 4);
}

static void test_person_rows(void **state)
{
    fx_t *fx = *state;
    cm_evstore_person_t persons[] = {
        {.id = P1, .project_id = 1, .properties = S("{\"email\":\"a@b\"}"), .version = 3},
        {.id = P2, .project_id = 1, .properties = S("{}"), .version = 0}};
    cm_evstore_distinct_id_t ids[] = {
        {.project_id = 1, .distinct_id = S("u1"), .person_id = P1},
        {.project_id = 1, .distinct_id = S("anon"), .person_id = P1, .version = 1},
        {.project_id = 1, .distinct_id = S("other"), .person_id = P2}};
    answer_t a = {0};
    cm_evstore_write(
        fx->es,
        &(cm_evstore_rows_in_t){
            .persons = persons, .npersons = 2, .distinct_ids = ids, .ndistinct_ids = 3},
        on_written, &a);
    wait_for(fx, &a);
    /* another project's id: nothing */
    memset(&a, 0, sizeof(a));
    cm_evstore_delete_person(fx->es, 2, P1, on_deleted, &a);
    wait_for(fx, &a);
    assert_int_equal(count(fx, "SELECT count(*) FROM persons"), 2);
    memset(&a, 0, sizeof(a));
    cm_evstore_delete_person(fx->es, 1, P1, on_deleted, &a);
    wait_for(fx, &a);
    assert_false(a.pending);
    assert_int_equal(count(fx, "SELECT count(*) FROM persons WHERE id = '" P1 "'"), 0);
    assert_int_equal(
        count(fx, "SELECT count(*) FROM person_distinct_ids WHERE person_id = '" P1 "'"), 0);
    assert_int_equal(count(fx, "SELECT count(*) FROM persons"), 1);
    assert_int_equal(count(fx, "SELECT count(*) FROM person_distinct_ids"), 1);
}

static void test_clickhouse_sql_golden(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm__ch_delete_events_sql(&b, NULL, "default", "timestamp_ms < 5");
    assert_string_equal(cm_buf_cstr(&b), "ALTER TABLE events DELETE WHERE timestamp_ms < 5");
    cm_buf_reset(&b);
    cm__ch_delete_events_sql(&b, "cm_cluster", "analytics", "timestamp_ms < 5");
    assert_string_equal(cm_buf_cstr(&b), "ALTER TABLE analytics.events_local ON CLUSTER cm_cluster"
                                         " DELETE WHERE timestamp_ms < 5");
    cm_buf_reset(&b);
    cm__ch_pending_deletes_sql(&b, NULL, "default");
    assert_string_equal(cm_buf_cstr(&b), "SELECT count() FROM system.mutations WHERE database = "
                                         "currentDatabase() AND table = 'events' AND is_done = 0");
    cm_buf_reset(&b);
    cm__ch_pending_deletes_sql(&b, "cm_cluster", "analytics");
    assert_string_equal(cm_buf_cstr(&b),
                        "SELECT count() FROM cluster('cm_cluster', system, mutations) WHERE "
                        "database = 'analytics' AND table = 'events_local' AND is_done = 0");
    cm_buf_free(&b);
}

/* The retention prune's statement per server version: the TTL from 19.6
 * on, the mutation before (18.16, the only one running here). */
static void test_retention_by_version_golden(void **state)
{
    (void)state;
    assert_false(cm__ch_has_ttl("18.16.1"));
    assert_false(cm__ch_has_ttl("19.5.4.22"));
    assert_true(cm__ch_has_ttl("19.6.2.11"));
    assert_true(cm__ch_has_ttl("19.17.1"));
    assert_true(cm__ch_has_ttl("21.8.15.7"));
    assert_true(cm__ch_has_ttl("24.3.1.2672"));
    assert_false(cm__ch_has_ttl(""));
    assert_false(cm__ch_has_ttl(NULL));
    static const struct {
        const char *version, *cluster;
        bool ttl;
        const char *sql;
    } cases[] = {
        {"18.16.1", NULL, false, "ALTER TABLE events DELETE WHERE timestamp_ms < 9"},
        {"18.16.1", "c1", false,
         "ALTER TABLE db1.events_local ON CLUSTER c1 DELETE WHERE timestamp_ms < 9"},
        {"19.6.2.11", NULL, true, "ALTER TABLE events MODIFY TTL timestamp + INTERVAL 30 DAY"},
        {"24.3.1", "c1", true,
         "ALTER TABLE db1.events_local ON CLUSTER c1 MODIFY TTL timestamp + INTERVAL 30 DAY"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_buf_t b = CM_BUF_INIT;
        assert_int_equal(cm__ch_retention_sql(&b, cases[i].version, cases[i].cluster, "db1", 30,
                                              "timestamp_ms < 9"),
                         cases[i].ttl);
        assert_string_equal(cm_buf_cstr(&b), cases[i].sql);
        cm_buf_free(&b);
    }
    /* no days: never a TTL */
    cm_buf_t b = CM_BUF_INIT;
    assert_false(cm__ch_retention_sql(&b, "24.3.1", NULL, "db1", 0, "x"));
    assert_string_equal(cm_buf_cstr(&b), "ALTER TABLE events DELETE WHERE x");
    cm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_by_age_in_slices, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_by_person_in_one_project, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_person_rows, fx_setup, fx_teardown),
        cmocka_unit_test(test_clickhouse_sql_golden),
        cmocka_unit_test(test_retention_by_version_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
