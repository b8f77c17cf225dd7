/*
 * test_sink.c - where a settled batch ends up (services/writer/sink.c),
 * against a real SQLite event store in a fresh directory and a real
 * redis-server: the events stored once (a redelivered batch inserts
 * nothing and still answers 0), the person's Redis copy written with its
 * version and never replaced by an older one, and a Redis that cannot be
 * reached reported as the batch's failure (so the batch is retried, not
 * acknowledged).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cm/err.h"
#include "cm/event_store.h"
#include "cm/log.h"
#include "cm/redis.h"
#include "cm/rediskeys.h"
#include "event.h"
#include "persons.h"
#include "servers.h"
#include "sink.h"

#define MAX_EVENTS 8

static int redis_port;
static pid_t redis_pid;

typedef struct {
    wr_ctx_t ctx;
    uv_loop_t loop;
    char dir[64];
    wr_state_t st;
    wr_event_t ev[MAX_EVENTS];
    size_t n;
} fx_t;

typedef struct {
    bool done;
    int status;
    size_t inserted;
    char err[256];
    char text[512]; /* a query's first value, a GET's reply */
    long long rows;
} result_t;

/* One queue message as ingest writes it, for project 1. */
static void add(fx_t *fx, const char *distinct_id, const char *props)
{
    char uuid[40], data[1024], msg[4096];
    snprintf(uuid, sizeof(uuid), "0190bbbb-0000-7000-8000-%012zu", fx->n + 1);
    snprintf(data, sizeof(data), "{\"uuid\":\"%s\",\"event\":\"page\",\"properties\":%s}", uuid,
             props);
    cm_buf_t quoted = CM_BUF_INIT;
    cm_json_quote(&quoted, cm_slice_from_cstr(data));
    snprintf(msg, sizeof(msg),
             "{\"uuid\":\"%s\",\"distinct_id\":\"%s\",\"ip\":\"10.0.0.1\",\"data\":%s,"
             "\"now\":\"2026-01-01T00:00:10.000000Z\",\"token\":\"phc_t\",\"event\":\"page\","
             "\"timestamp\":\"2026-01-01T00:00:%02zu.000Z\"}",
             uuid, distinct_id, cm_buf_cstr(&quoted), fx->n);
    cm_buf_free(&quoted);
    wr_event_t *e = &fx->ev[fx->n++];
    wr_event_parse(e, msg, strlen(msg), 1 << 20);
    assert_int_equal(e->fate, WR_EVENT_OK);
    e->project_id = 1;
    wr_persons_apply(&fx->st, e, false);
}

static void open_redis(fx_t *fx, int port, int timeout_ms)
{
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d/0", port);
    cm_redis_opts_t o = {
        .url = url, .command_timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms};
    assert_int_equal(cm_redis_new(&fx->loop, &o, &fx->ctx.redis), 0);
}

static void wait_connected(fx_t *fx)
{
    while (!cm_redis_connected(fx->ctx.redis))
        uv_run(&fx->loop, UV_RUN_ONCE);
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    assert_int_equal(uv_loop_init(&fx->loop), 0);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/cm-test-sink.XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    char url[128];
    snprintf(url, sizeof(url), "sqlite:%s/events.db", fx->dir);
    assert_int_equal(cm_evstore_open(&fx->loop, &(cm_evstore_opts_t){.url = url}, &fx->ctx.events),
                     CM_OK);
    fx->ctx.loop = &fx->loop;
    wr_state_init(&fx->st);
    *state = fx;
    return 0;
}

static void on_closed(void *ud)
{
    --*(int *)ud;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    int left = 2;
    cm_redis_close(fx->ctx.redis, on_closed, &left);
    cm_evstore_close(fx->ctx.events, on_closed, &left);
    while (left > 0)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    for (size_t i = 0; i < fx->n; i++)
        wr_event_free(&fx->ev[i]);
    wr_state_free(&fx->st);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

static void on_sunk(int status, const char *err, size_t inserted, void *ud)
{
    result_t *r = ud;
    r->done = true;
    r->status = status;
    r->inserted = inserted;
    snprintf(r->err, sizeof(r->err), "%s", err ? err : "");
}

static result_t sink(fx_t *fx)
{
    result_t r = {0};
    wr_sink_write(&fx->ctx, fx->ev, fx->n, &fx->st, 1767225600000, on_sunk, &r);
    while (!r.done)
        uv_run(&fx->loop, UV_RUN_ONCE);
    return r;
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    result_t *r = ud;
    r->done = true;
    r->status = status;
    snprintf(r->err, sizeof(r->err), "%s", err ? err : "");
    if (status == 0 && cm_evstore_nrows(rows) > 0)
        r->rows = atoll(cm_evstore_value(rows, 0, 0));
}

static long long count_events(fx_t *fx)
{
    result_t r = {0};
    cm_evstore_query(fx->ctx.events, "SELECT count(*) FROM events WHERE project_id = 1", on_rows,
                     &r);
    while (!r.done)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(r.status, 0);
    return r.rows;
}

static void on_reply(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    result_t *r = ud;
    r->done = true;
    r->status = err ? CM_EUNAVAIL : 0;
    if (reply && reply->type == REDIS_REPLY_STRING)
        snprintf(r->text, sizeof(r->text), "%s", reply->str);
}

/* GET or SET key of the person u of project 1. */
static result_t person_key(fx_t *fx, const char *distinct_id, const char *set_value)
{
    cm_buf_t key = CM_BUF_INIT;
    cm_rediskeys_person(&key, CM_SLICE_LIT("1"), cm_slice_from_cstr(distinct_id));
    result_t r = {0};
    if (set_value)
        cm_redis_command(fx->ctx.redis, on_reply, &r, "SET %b %s", key.p, key.len, set_value);
    else
        cm_redis_command(fx->ctx.redis, on_reply, &r, "GET %b", key.p, key.len);
    cm_buf_free(&key);
    while (!r.done)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(r.status, 0);
    return r;
}

static void test_events_once_and_mirror(void **state)
{
    fx_t *fx = *state;
    open_redis(fx, redis_port, 2000);
    wait_connected(fx);
    add(fx, "sink-u1", "{\"$set\":{\"plan\":\"pro\"}}");
    add(fx, "sink-u1", "{\"x\":1}");
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.inserted, 2);
    assert_int_equal(count_events(fx), 2);
    r = person_key(fx, "sink-u1", NULL);
    assert_non_null(strstr(r.text, "\"plan\":\"pro\""));
    assert_non_null(strstr(r.text, "\"version\":"));
    /* the same batch again (a redelivery): nothing new, still a success */
    r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.inserted, 0);
    assert_int_equal(count_events(fx), 2);
}

static void test_newer_copy_kept(void **state)
{
    fx_t *fx = *state;
    open_redis(fx, redis_port, 2000);
    wait_connected(fx);
    static const char newer[] = "{\"properties\":{\"plan\":\"newer\"},\"version\":99}";
    person_key(fx, "sink-u2", newer);
    add(fx, "sink-u2", "{\"$set\":{\"plan\":\"older\"}}");
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.inserted, 1);
    r = person_key(fx, "sink-u2", NULL);
    assert_string_equal(r.text, newer); /* a writer that finished late changes nothing */
}

static void test_redis_away_fails_the_batch(void **state)
{
    fx_t *fx = *state;
    /* port 1 of the loopback: privileged, nothing listens there */
    open_redis(fx, 1, 200);
    add(fx, "sink-u3", "{\"$set\":{\"plan\":\"pro\"}}");
    result_t r = sink(fx);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "redis"));
    assert_int_equal(count_events(fx), 1); /* stored: a retry inserts nothing more */
}

int main(void)
{
    cm_log_init("test_sink", CM_LOG_ERROR);
    signal(SIGPIPE, SIG_IGN);
    if (srv_start_redis(&redis_port, &redis_pid, NULL) != 0) {
        fprintf(stderr, "redis-server did not start\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events_once_and_mirror, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_copy_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redis_away_fails_the_batch, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    srv_reap(&redis_pid, SIGTERM);
    return rc;
}
