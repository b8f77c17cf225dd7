/*
 * test_sink.c - where a settled batch ends up (services/writer/sink.c): the
 * rows it writes to a real SQLite event store in a temp dir (events, only
 * those fit to store; persons, distinct ids and groups that changed), a
 * repeated batch inserting nothing, the Redis copies a real redis-server
 * (tests/unit/servers.h) holds afterwards and the newer copy they never
 * replace, and the error a dead Redis gives. ClickHouse takes the same rows
 * through cm_evstore_write; it is covered by the writer's integration suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/json.h"
#include "cm/rediskeys.h"
#include "event.h"
#include "persons.h"
#include "servers.h"
#include "sink.h"

#define MAX_EVENTS 8

typedef struct {
    uv_loop_t loop;
    wr_ctx_t ctx;
    char dir[64];
    int redis_port;
    pid_t redis_pid;
    wr_state_t st;
    wr_event_t ev[MAX_EVENTS];
    size_t n;
} fx_t;

typedef struct {
    bool done;
    int status;
    char err[256];
    size_t inserted;
} result_t;

/* One queue message as ingest writes it, parsed; project 1 unless told. */
static wr_event_t *add(fx_t *fx, const char *event, const char *distinct_id, const char *props)
{
    char uuid[40], data[1024], msg[4096];
    snprintf(uuid, sizeof(uuid), "0190bbbb-0000-7000-8000-%012zu", fx->n + 1);
    snprintf(data, sizeof(data), "{\"uuid\":\"%s\",\"event\":\"%s\",\"properties\":%s}", uuid,
             event, props);
    cm_buf_t quoted = CM_BUF_INIT;
    cm_json_quote(&quoted, cm_slice_from_cstr(data));
    snprintf(msg, sizeof(msg),
             "{\"uuid\":\"%s\",\"distinct_id\":\"%s\",\"ip\":\"10.0.0.1\",\"data\":%s,"
             "\"now\":\"2026-01-01T00:00:10.000000Z\",\"token\":\"phc_t\",\"event\":\"%s\","
             "\"timestamp\":\"2026-01-01T00:00:%02zu.000Z\"}",
             uuid, distinct_id, cm_buf_cstr(&quoted), event, fx->n);
    cm_buf_free(&quoted);
    wr_event_t *e = &fx->ev[fx->n++];
    wr_event_parse(e, msg, strlen(msg), 1 << 20);
    assert_int_equal(e->fate, WR_EVENT_OK);
    e->project_id = 1;
    return e;
}

static void apply(fx_t *fx)
{
    for (size_t i = 0; i < fx->n; i++)
        if (fx->ev[i].fate == WR_EVENT_OK && fx->ev[i].project_id > 0)
            wr_persons_apply(&fx->st, &fx->ev[i], false);
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

/* ---- reading back ------------------------------------------------------------ */

typedef struct {
    bool done;
    int status;
    char value[512];
} read_t;

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    read_t *r = ud;
    (void)err;
    r->done = true;
    r->status = status;
    const char *v = status == 0 && cm_evstore_nrows(rows) ? cm_evstore_value(rows, 0, 0) : NULL;
    snprintf(r->value, sizeof(r->value), "%s", v ? v : "");
}

/* The first column of the first row of sql, as text. */
static void store_value(fx_t *fx, const char *sql, char *out, size_t cap)
{
    read_t r = {0};
    cm_evstore_query(fx->ctx.events, sql, on_rows, &r);
    while (!r.done)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(r.status, 0);
    snprintf(out, cap, "%s", r.value);
}

static void on_reply(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    read_t *r = ud;
    (void)c;
    r->done = true;
    r->status = err ? -1 : 0;
    snprintf(r->value, sizeof(r->value), "%s",
             !err && reply->type == REDIS_REPLY_STRING ? reply->str : "");
}

/* A Redis command's string answer ("" for nil). */
static void redis_value(fx_t *fx, char *out, size_t cap, const char *fmt, const char *arg,
                        const char *arg2)
{
    read_t r = {0};
    cm_redis_command(fx->ctx.redis, on_reply, &r, fmt, arg, arg2);
    while (!r.done)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(r.status, 0);
    snprintf(out, cap, "%s", r.value);
}

static void person_key(char *out, size_t cap, const char *distinct_id)
{
    cm_buf_t key = CM_BUF_INIT;
    cm_rediskeys_person(&key, cm_slice_from_cstr("1"), cm_slice_from_cstr(distinct_id));
    snprintf(out, cap, "%s", cm_buf_cstr(&key));
    cm_buf_free(&key);
}

/* ---- fixture ----------------------------------------------------------------- */

static void open_redis(fx_t *fx, int port)
{
    cm_redis_opts_t o = {.host = "127.0.0.1",
                         .port = port,
                         .connect_timeout_ms = 500,
                         .command_timeout_ms = 2000,
                         .backoff_max_ms = 200};
    assert_int_equal(cm_redis_new(&fx->loop, &o, &fx->ctx.redis), CM_OK);
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/wr-test-sink.XXXXXX");
    if (!mkdtemp(fx->dir) || uv_loop_init(&fx->loop) != 0)
        return -1;
    char url[128];
    snprintf(url, sizeof(url), "sqlite:%s/events.db", fx->dir);
    cm_evstore_opts_t o = {.url = url};
    if (cm_evstore_open(&fx->loop, &o, &fx->ctx.events) != CM_OK)
        return -1;
    if (srv_start_redis(&fx->redis_port, &fx->redis_pid, NULL) != 0)
        return -1;
    open_redis(fx, fx->redis_port);
    wr_state_init(&fx->st);
    /* Both ready before a test starts: its own Redis commands fail fast
     * while the client is still connecting. */
    cm_buf_t why = CM_BUF_INIT;
    for (uint64_t end = srv_now_ms() + 5000;
         !(cm_redis_connected(fx->ctx.redis) && cm_evstore_ready(fx->ctx.events, &why));
         usleep(5000)) {
        cm_buf_reset(&why);
        if (srv_now_ms() > end)
            break;
        uv_run(&fx->loop, UV_RUN_NOWAIT);
    }
    cm_buf_free(&why);
    *state = fx;
    return 0;
}

static void on_closed(void *ud)
{
    (*(int *)ud)++;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    int closed = 0;
    cm_redis_close(fx->ctx.redis, on_closed, &closed);
    cm_evstore_close(fx->ctx.events, on_closed, &closed);
    while (closed < 2)
        uv_run(&fx->loop, UV_RUN_ONCE);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&fx->loop);
    srv_reap(&fx->redis_pid, SIGTERM);
    for (size_t i = 0; i < fx->n; i++)
        wr_event_free(&fx->ev[i]);
    wr_state_free(&fx->st);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    if (system(cmd) != 0)
        rc = -1;
    free(fx);
    return rc == 0 ? 0 : -1;
}

/* ---- tests ------------------------------------------------------------------- */

/* The events fit to store, their person and its distinct id land in the
 * store; an event dropped earlier in the pipeline, or without a project,
 * does not. */
static void test_writes_rows(void **state)
{
    fx_t *fx = *state;
    add(fx, "pageview", "alice", "{\"$set\":{\"plan\":\"pro\"}}");
    add(fx, "click", "alice", "{}");
    add(fx, "lost", "bob", "{}")->project_id = 0;
    add(fx, "dropped", "carol", "{}")->fate = WR_EVENT_DROP;
    apply(fx);
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_int_equal(r.inserted, 2);

    char v[512];
    store_value(fx,
                "SELECT group_concat(event, ',') FROM (SELECT event FROM events ORDER BY event)", v,
                sizeof(v));
    assert_string_equal(v, "click,pageview");
    store_value(fx, "SELECT count(*) FROM persons", v, sizeof(v));
    assert_string_equal(v, "1");
    store_value(fx, "SELECT properties FROM persons", v, sizeof(v));
    assert_non_null(strstr(v, "\"plan\":\"pro\""));
    store_value(fx, "SELECT distinct_id FROM person_distinct_ids", v, sizeof(v));
    assert_string_equal(v, "alice");
    store_value(fx,
                "SELECT count(*) FROM events e JOIN persons p ON p.id = e.person_id"
                " WHERE e.distinct_id = 'alice'",
                v, sizeof(v));
    assert_string_equal(v, "2");
}

/* A batch delivered again stores no event twice and still succeeds. */
static void test_repeat_inserts_nothing(void **state)
{
    fx_t *fx = *state;
    add(fx, "pageview", "alice", "{}");
    add(fx, "pageview", "bob", "{}");
    apply(fx);
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.inserted, 2);
    r = sink(fx);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.inserted, 0);
    char v[64];
    store_value(fx, "SELECT count(*) FROM events", v, sizeof(v));
    assert_string_equal(v, "2");
}

/* Each distinct id of a changed person gets the person's copy, with its
 * version; a changed group gets its bare properties. */
static void test_mirrors_to_redis(void **state)
{
    fx_t *fx = *state;
    add(fx, "$identify", "alice", "{\"$anon_distinct_id\":\"anon-1\",\"$set\":{\"plan\":\"pro\"}}");
    add(fx, "$groupidentify", "alice",
        "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"size\":5}}");
    apply(fx);
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);

    char key[128], v[512];
    const char *ids[] = {"alice", "anon-1"};
    for (size_t i = 0; i < 2; i++) {
        person_key(key, sizeof(key), ids[i]);
        redis_value(fx, v, sizeof(v), "GET %s", key, NULL);
        assert_non_null(strstr(v, "\"plan\":\"pro\""));
        assert_non_null(strstr(v, "\"version\":"));
    }
    cm_buf_t gkey = CM_BUF_INIT;
    cm_rediskeys_group(&gkey, cm_slice_from_cstr("1"), cm_slice_from_cstr("company"),
                       cm_slice_from_cstr("acme"));
    redis_value(fx, v, sizeof(v), "GET %s", cm_buf_cstr(&gkey), NULL);
    assert_non_null(strstr(v, "\"size\":5"));
    redis_value(fx, v, sizeof(v), "HGET %s %s", CM_REDISKEY_GROUP_VERSIONS, cm_buf_cstr(&gkey));
    assert_true(v[0] != '\0');
    cm_buf_free(&gkey);
}

/* A copy with a higher version (another writer, later) stays. */
static void test_newer_copy_stays(void **state)
{
    fx_t *fx = *state;
    char key[128], v[512];
    person_key(key, sizeof(key), "alice");
    const char *newer = "{\"properties\":{\"plan\":\"later\"},\"version\":1000000}";
    redis_value(fx, v, sizeof(v), "SET %s %s", key, newer);
    add(fx, "pageview", "alice", "{\"$set\":{\"plan\":\"pro\"}}");
    apply(fx);
    result_t r = sink(fx);
    assert_int_equal(r.status, 0);
    redis_value(fx, v, sizeof(v), "GET %s", key, NULL);
    assert_string_equal(v, newer);
}

/* Redis gone: the events are stored, the batch reports CM_EUNAVAIL with the
 * cause, so the consumer retries it (the store skips what it has). */
static void test_redis_down(void **state)
{
    fx_t *fx = *state;
    srv_reap(&fx->redis_pid, SIGKILL);
    add(fx, "pageview", "alice", "{\"$set\":{\"plan\":\"pro\"}}");
    apply(fx);
    result_t r = sink(fx);
    assert_int_equal(r.status, CM_EUNAVAIL);
    assert_memory_equal(r.err, "redis: ", 7);
    assert_int_equal(r.inserted, 1);
    char v[64];
    store_value(fx, "SELECT count(*) FROM events", v, sizeof(v));
    assert_string_equal(v, "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_writes_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeat_inserts_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mirrors_to_redis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_copy_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redis_down, setup, teardown),
    };
    return cmocka_run_group_tests_name("writer_sink", tests, NULL, NULL);
}
