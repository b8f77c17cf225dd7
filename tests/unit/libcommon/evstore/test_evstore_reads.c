/*
 * test_evstore_reads.c - the SQLite event store's reads (evstore_sqlite.c):
 * a long query holds one reader, not the store (another read answers
 * before it); with every reader busy a read waits, and one whose time
 * limit passed while waiting fails with CM_ETIMEDOUT without running; and
 * cm/worker.h's pool runs its jobs at once on its threads. Each test owns
 * a fresh loop and ends with uv_loop_close() == 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm/err.h"
#include "cm/event_store.h"
#include "cm/worker.h"

/* Several seconds of work for SQLite, stopped by its time limit: the
 * pairs of a 1,000,000-row series, counted. */
#define HEAVY                                                                                      \
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000)"            \
    " SELECT count(*) FROM n a, n b"
#define TRIVIAL "SELECT count(*) FROM events"

typedef struct {
    uv_loop_t loop;
    cm_evstore_t *es;
    char dir[64];
    int order; /* answers so far */
} fx_t;

typedef struct {
    fx_t *fx;
    int status;
    int answered_as; /* 1 for the first answer, ...; 0 until answered */
    char value[32];
    char err[128];
} answer_t;

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    answer_t *a = ud;
    snprintf(a->err, sizeof(a->err), "%s", err ? err : "");
    a->status = status;
    a->answered_as = ++a->fx->order;
    const char *v = status == 0 ? cm_evstore_value(rows, 0, 0) : NULL;
    snprintf(a->value, sizeof(a->value), "%s", v ? v : "");
}

static void open_store(fx_t *fx, unsigned readers)
{
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/cm-test-evstore.XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    char url[128];
    snprintf(url, sizeof(url), "sqlite:%s/events.db", fx->dir);
    assert_int_equal(uv_loop_init(&fx->loop), 0);
    cm_evstore_opts_t o = {.url = url, .readers = readers};
    assert_int_equal(cm_evstore_open(&fx->loop, &o, &fx->es), CM_OK);
}

static void on_closed(void *ud)
{
    *(bool *)ud = true;
}

static void close_store(fx_t *fx)
{
    bool closed = false;
    cm_evstore_close(fx->es, on_closed, &closed);
    while (!closed)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
}

static void select_(fx_t *fx, const char *sql, unsigned timeout_ms, answer_t *a)
{
    a->fx = fx;
    cm_evstore_select(fx->es, &(cm_evstore_select_t){.sql = sql, .timeout_ms = timeout_ms}, on_rows,
                      a);
}

static void run_until(fx_t *fx, const answer_t *a)
{
    while (a->answered_as == 0)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

/* Two readers: the trivial read runs beside the heavy one and answers
 * first (before the change, reads ran one at a time: it came second). */
static void test_long_read_holds_one_reader(void **state)
{
    (void)state;
    fx_t fx = {0};
    open_store(&fx, 2);
    answer_t heavy = {0}, trivial = {0};
    select_(&fx, HEAVY, 3000, &heavy);
    select_(&fx, TRIVIAL, 3000, &trivial);
    run_until(&fx, &heavy);
    assert_int_equal(trivial.status, 0);
    assert_string_equal(trivial.value, "0");
    assert_int_equal(trivial.answered_as, 1);
    assert_int_equal(heavy.status, CM_ETIMEDOUT); /* the limit still stops it */
    close_store(&fx);
}

/* One reader: the second read waits behind the heavy one; its own limit,
 * counted from its submission, passes while it waits: it fails without
 * running. A third with room left runs once the reader is free. */
static void test_waiting_read_times_out_unrun(void **state)
{
    (void)state;
    fx_t fx = {0};
    open_store(&fx, 1);
    answer_t heavy = {0}, late = {0}, patient = {0};
    select_(&fx, HEAVY, 1500, &heavy);
    select_(&fx, TRIVIAL, 200, &late);
    select_(&fx, TRIVIAL, 60000, &patient);
    run_until(&fx, &patient);
    assert_int_equal(heavy.status, CM_ETIMEDOUT);
    assert_int_equal(late.status, CM_ETIMEDOUT);
    assert_int_equal(patient.status, 0);
    assert_string_equal(patient.value, "0");
    /* answered from the queue, not stopped by SQLite */
    assert_non_null(strstr(late.err, "waiting"));
    assert_null(strstr(heavy.err, "waiting"));
    close_store(&fx);
}

/* ---- cm/worker.h ---- */

#define NJOBS 3

typedef struct {
    cm_worker_job_t job;
    uv_mutex_t *mu;
    uv_cond_t *cond;
    int *started;
    bool met; /* saw all NJOBS started at once */
    bool done;
} wjob_t;

/* Waits (at most 10 s, so a pool that ran them one by one fails rather
 * than hangs) until every job has started. */
static void wjob_work(cm_worker_job_t *j)
{
    wjob_t *w = j->data;
    uv_mutex_lock(w->mu);
    ++*w->started;
    uv_cond_broadcast(w->cond);
    for (int i = 0; i < 100 && *w->started < NJOBS; i++)
        (void)uv_cond_timedwait(w->cond, w->mu, 100 * 1000000ull);
    w->met = *w->started == NJOBS;
    uv_mutex_unlock(w->mu);
}

static void wjob_done(cm_worker_job_t *j)
{
    ((wjob_t *)j->data)->done = true;
}

/* The one answer to "which dialect": SQLite for SQLite; ClickHouse's SQL
 * as 18.16 reads it while the server's version is not known (here: never,
 * nothing listens), which current servers read too. */
static void test_dialect(void **state)
{
    (void)state;
    fx_t fx = {0};
    open_store(&fx, 1);
    assert_int_equal(cm_evstore_dialect(fx.es), CM_EVSTORE_SQL_SQLITE);
    close_store(&fx);

    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    cm_evstore_t *ch = NULL;
    cm_evstore_opts_t o = {.url = "http://127.0.0.1:1/?database=none"};
    assert_int_equal(cm_evstore_open(&loop, &o, &ch), CM_OK);
    assert_int_equal(cm_evstore_kind(ch), CM_EVSTORE_CLICKHOUSE);
    assert_string_equal(cm_evstore_server_version(ch), "");
    assert_int_equal(cm_evstore_dialect(ch), CM_EVSTORE_SQL_CLICKHOUSE_1816);
    bool closed = false;
    cm_evstore_close(ch, on_closed, &closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_worker_runs_jobs_at_once(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_mutex_t mu;
    uv_cond_t cond;
    int started = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(uv_mutex_init(&mu), 0);
    assert_int_equal(uv_cond_init(&cond), 0);
    cm_worker_t *w;
    assert_int_equal(cm_worker_open(&loop, "test", NJOBS, &w), CM_OK);
    wjob_t jobs[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        jobs[i] = (wjob_t){.mu = &mu, .cond = &cond, .started = &started};
        jobs[i].job = (cm_worker_job_t){.work = wjob_work, .done = wjob_done, .data = &jobs[i]};
        cm_worker_submit(w, &jobs[i].job);
        assert_false(jobs[i].done); /* never from inside the submit */
    }
    bool closed = false;
    cm_worker_close(w, on_closed, &closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    for (int i = 0; i < NJOBS; i++) {
        assert_true(jobs[i].done);
        assert_true(jobs[i].met);
    }
    uv_cond_destroy(&cond);
    uv_mutex_destroy(&mu);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_read_holds_one_reader),
        cmocka_unit_test(test_waiting_read_times_out_unrun),
        cmocka_unit_test(test_worker_runs_jobs_at_once),
        cmocka_unit_test(test_dialect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
