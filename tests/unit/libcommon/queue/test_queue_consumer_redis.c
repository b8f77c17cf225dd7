/*
 * test_queue_consumer_redis.c - the Redis Streams consumer
 * (libcommon/src/queue/queue_consumer_redis.c) against a real redis-server: the
 * main stream before the historical one, the messages as written (key,
 * value, headers), a retried batch first again, a closed consumer's
 * pending entries found again under its name and taken over by another
 * after the idle time, the read size following max_batch_bytes, the
 * stream trimmed below what is acknowledged, and two batches outstanding
 * at once (depth 2) ended in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cm/err.h"
#include "cm/log.h"
#include "cm/queue_consumer.h"
#include "cm/redis.h"
#include "servers.h"

static int redis_port;
static pid_t redis_pid;

typedef struct {
    uv_loop_t loop;
    cm_redis_t *cmd, *stream;
    cm_consumer_t *c;
    /* what on_batch saw */
    size_t batches, messages, redelivered;
    size_t main_after_hist; /* main-stream batches delivered after a historical one */
    bool saw_hist;
    size_t max_len;
    char first_id[64], last_topic[64];
    char ids[4096][32];
    size_t nids;
    int action; /* what on_batch does: 0 commit, 1 retry once then commit, 2 keep, 3 hold */
    bool retried;
    cm_consumer_batch_t *kept;
    cm_consumer_batch_t *held[8]; /* action 3: every batch, oldest first, for the test to end */
    size_t nheld;
    size_t depth;
    bool closed;
} fx_t;

static const char MAIN[] = "t_main", HIST[] = "t_hist";

static void on_reply(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    (void)r;
    (void)reply;
    (void)err;
    (*(int *)ud)--;
}

/* Runs a command on the fixture's command client and waits for it. */
static void cmd(fx_t *fx, const char *fmt, ...)
{
    int left = 1;
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    while (!cm_redis_connected(fx->cmd))
        uv_run(&fx->loop, UV_RUN_ONCE);
    cm_redis_command(fx->cmd, on_reply, &left, "%s", buf);
    while (left)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

static void xadd(fx_t *fx, const char *stream, int i, size_t value_len)
{
    char *value = malloc(value_len + 1);
    memset(value, 'v', value_len);
    value[value_len] = '\0';
    snprintf(value, value_len + 1, "m%d", i);
    if (strlen(value) < value_len)
        value[strlen(value)] = 'v';
    int left = 1;
    char key[32];
    snprintf(key, sizeof(key), "k%d", i);
    cm_redis_command(fx->cmd, on_reply, &left, "XADD %s * key %s value %b h:uuid u%d", stream, key,
                     value, value_len, i);
    while (left)
        uv_run(&fx->loop, UV_RUN_ONCE);
    free(value);
}

static long long xlen(fx_t *fx, const char *stream);

static void on_batch(cm_consumer_batch_t *b, void *ud)
{
    fx_t *fx = ud;
    size_t n = cm_consumer_batch_len(b);
    const cm_consumed_t *m0 = cm_consumer_batch_msg(b, 0);
    fx->batches++;
    fx->messages += n;
    if (n > fx->max_len)
        fx->max_len = n;
    bool hist = !strcmp(m0->topic, HIST);
    assert_int_equal(m0->source, hist ? 1 : 0);
    if (hist)
        fx->saw_hist = true;
    else if (fx->saw_hist)
        fx->main_after_hist++;
    snprintf(fx->last_topic, sizeof(fx->last_topic), "%s", m0->topic);
    snprintf(fx->first_id, sizeof(fx->first_id), "%s", m0->id);
    for (size_t i = 0; i < n; i++) {
        const cm_consumed_t *m = cm_consumer_batch_msg(b, i);
        assert_string_equal(m->topic, m0->topic); /* one topic per batch */
        fx->redelivered += m->redelivered;
        assert_true(m->key.len >= 2 && m->key.p[0] == 'k');
        assert_int_equal(m->nheaders, 1);
        assert_true(cm_slice_eq_cstr(m->headers[0].name, "uuid"));
        if (fx->nids < 4096)
            snprintf(fx->ids[fx->nids++], sizeof(fx->ids[0]), "%s", m->id);
    }
    if (fx->action == 2) {
        fx->kept = b;
        return;
    }
    if (fx->action == 3) {
        assert_true(fx->nheld < 8);
        fx->held[fx->nheld++] = b;
        return;
    }
    if (fx->action == 1 && !fx->retried) {
        fx->retried = true;
        cm_consumer_retry(b, 10);
        return;
    }
    cm_consumer_commit(b);
}

static void new_consumer(fx_t *fx, const char *name, int claim_idle_ms, size_t max_batch,
                         size_t max_bytes)
{
    const char *topics[] = {MAIN, HIST};
    cm_consumer_opts_t o = {.topics = topics,
                            .ntopics = 2,
                            .group = "g",
                            .consumer = name,
                            .max_batch = max_batch,
                            .max_batch_bytes = max_bytes,
                            .block_ms = 100,
                            .claim_idle_ms = claim_idle_ms,
                            .depth = fx->depth};
    assert_int_equal(cm_consumer_redis_new(&fx->loop, fx->stream, &o, on_batch, fx, &fx->c), 0);
}

static void on_closed(void *ud)
{
    ((fx_t *)ud)->closed = true;
}

static void close_consumer(fx_t *fx)
{
    fx->closed = false;
    cm_consumer_close(fx->c, on_closed, fx);
    while (fx->nheld > 0) /* newest first */
        cm_consumer_retry(fx->held[--fx->nheld], 0);
    if (fx->kept) { /* closing with a batch outstanding: it may still end */
        cm_consumer_batch_t *b = fx->kept;
        fx->kept = NULL;
        cm_consumer_retry(b, 0);
    }
    while (!fx->closed)
        uv_run(&fx->loop, UV_RUN_ONCE);
    fx->c = NULL;
}

static void run_until(fx_t *fx, size_t messages, int timeout_ms)
{
    uint64_t end = srv_now_ms() + (uint64_t)timeout_ms;
    while (fx->messages < messages && srv_now_ms() < end)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

static void run_for(fx_t *fx, int ms)
{
    uint64_t end = srv_now_ms() + (uint64_t)ms;
    while (srv_now_ms() < end)
        uv_run(&fx->loop, UV_RUN_NOWAIT), usleep(1000);
}

static long long xlen_value;
static void on_xlen(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    (void)r;
    (void)err;
    xlen_value = reply && reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
    (*(int *)ud)--;
}

static long long xlen(fx_t *fx, const char *stream)
{
    int left = 1;
    cm_redis_command(fx->cmd, on_xlen, &left, "XLEN %s", stream);
    while (left)
        uv_run(&fx->loop, UV_RUN_ONCE);
    return xlen_value;
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    uv_loop_init(&fx->loop);
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d/0", redis_port);
    assert_int_equal(cm_redis_new(&fx->loop, &(cm_redis_opts_t){.url = url}, &fx->cmd), 0);
    assert_int_equal(cm_redis_new(&fx->loop,
                                  &(cm_redis_opts_t){.url = url, .command_timeout_ms = 5000},
                                  &fx->stream),
                     0);
    cmd(fx, "FLUSHALL");
    *state = fx;
    return 0;
}

static void client_closed(void *ud)
{
    (*(int *)ud)--;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    if (fx->c)
        close_consumer(fx);
    int left = 2;
    cm_redis_close(fx->cmd, client_closed, &left);
    cm_redis_close(fx->stream, client_closed, &left);
    while (left)
        uv_run(&fx->loop, UV_RUN_ONCE);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    free(fx);
    return 0;
}

static void test_main_before_historical(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < 300; i++)
        xadd(fx, HIST, i, 10);
    for (int i = 0; i < 300; i++)
        xadd(fx, MAIN, i, 10);
    new_consumer(fx, "a", 30000, 100, 0);
    run_until(fx, 400, 5000);
    assert_int_equal(fx->messages, 400); /* main's 300 and one historical batch */
    assert_true(fx->saw_hist);
    assert_int_equal(fx->main_after_hist, 0);
    /* new main entries while the historical backlog remains: main first */
    for (int i = 300; i < 310; i++)
        xadd(fx, MAIN, i, 10);
    run_until(fx, 410, 5000);
    assert_true(fx->main_after_hist >= 1);
    run_until(fx, 610, 5000);
    assert_int_equal(fx->messages, 610);
    assert_int_equal(fx->redelivered, 0);
}

static void test_retry_comes_first(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < 50; i++)
        xadd(fx, MAIN, i, 10);
    fx->action = 1;
    new_consumer(fx, "a", 30000, 20, 0);
    run_until(fx, 70, 5000);
    /* the first batch (20) came twice, the second time redelivered, then the rest */
    assert_int_equal(fx->messages, 70);
    assert_int_equal(fx->redelivered, 20);
    assert_string_equal(fx->ids[0], fx->ids[20]);
    assert_string_equal(fx->ids[19], fx->ids[39]);
}

static void test_pending_after_close_and_claim(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < 30; i++)
        xadd(fx, MAIN, i, 10);
    fx->action = 2; /* keep the batch: never acknowledged */
    new_consumer(fx, "a", 30000, 30, 0);
    run_until(fx, 30, 5000);
    assert_int_equal(fx->messages, 30);
    close_consumer(fx);
    /* the same name finds them pending */
    fx->action = 0;
    fx->messages = fx->redelivered = 0;
    new_consumer(fx, "a", 30000, 30, 0);
    run_until(fx, 30, 5000);
    assert_int_equal(fx->redelivered, 30);
    close_consumer(fx);
    /* another name takes over what "b" left pending, once idle */
    for (int i = 30; i < 40; i++)
        xadd(fx, MAIN, i, 10);
    fx->action = 2;
    fx->messages = fx->redelivered = 0;
    new_consumer(fx, "b", 30000, 30, 0);
    run_until(fx, 10, 5000);
    /* "b" goes away holding its batch: closing hands it back unacknowledged,
     * and b never comes back to read its pending entries */
    fx->action = 0;
    fx->messages = fx->redelivered = 0;
    close_consumer(fx);
    new_consumer(fx, "c", 200, 30, 0);
    run_until(fx, 10, 5000);
    assert_int_equal(fx->messages, 10);
    assert_int_equal(fx->redelivered, 10);
}

static void test_bytes_and_trim(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < 300; i++)
        xadd(fx, MAIN, i, 20000);
    new_consumer(fx, "a", 30000, 1000, 200000); /* about 10 messages of 20 kB */
    run_until(fx, 300, 10000);
    assert_int_equal(fx->messages, 300);
    assert_true(fx->batches > 10);
    assert_true(fx->max_len <= 64); /* the first read is 64, later ones follow the size */
    run_for(fx, 300);
    assert_true(xlen(fx, MAIN) < 300); /* acknowledged entries were trimmed */
}

/* Redis ids "ms-seq" in stream order: <0, 0, >0. */
static int id_cmp(const char *a, const char *b)
{
    unsigned long long am = 0, as = 0, bm = 0, bs = 0;
    sscanf(a, "%llu-%llu", &am, &as);
    sscanf(b, "%llu-%llu", &bm, &bs);
    return am != bm ? (am < bm ? -1 : 1) : as != bs ? (as < bs ? -1 : 1) : 0;
}

/* Depth 2: a second batch comes while the first is held, never a third; a
 * commit of the oldest lets the next come; a batch handed back while the
 * next read is on its way comes again before what that read brought (it is
 * dropped and read again from the pending list); two handed back newest
 * first come again in their order. The pending list is read only while
 * nothing is outstanding, so that is one batch at a time. */
static void test_depth_two(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < 100; i++)
        xadd(fx, MAIN, i, 10);
    char want[40][32];
    fx->action = 3;
    fx->depth = 2;
    new_consumer(fx, "a", 30000, 20, 0);
    run_until(fx, 40, 5000);
    run_for(fx, 300);
    assert_int_equal(fx->batches, 2);
    assert_int_equal(fx->nheld, 2);
    for (size_t i = 0; i < 40; i++)
        snprintf(want[i], sizeof(want[i]), "%s", fx->ids[i]);

    /* commit the oldest; the next read goes out; hand the other back */
    cm_consumer_commit(fx->held[0]);
    fx->held[0] = fx->held[1];
    fx->nheld = 1;
    uv_run(&fx->loop, UV_RUN_NOWAIT);
    cm_consumer_retry(fx->held[--fx->nheld], 0);
    run_until(fx, 60, 5000);
    run_for(fx, 300); /* held, and the pending list waits for it */
    assert_int_equal(fx->messages, 60);
    for (size_t i = 0; i < 20; i++)
        assert_string_equal(fx->ids[40 + i], want[20 + i]);
    cm_consumer_commit(fx->held[--fx->nheld]);
    run_until(fx, 80, 5000); /* 40-59 from the pending list */
    cm_consumer_commit(fx->held[--fx->nheld]);
    run_until(fx, 100, 5000); /* then 60-79, new */
    assert_int_equal(fx->redelivered, 40);
    for (size_t i = 60; i < 100; i++)
        assert_true(id_cmp(fx->ids[i], fx->ids[i - 1]) > 0);
    assert_true(id_cmp(fx->ids[60], want[39]) > 0);
    run_until(fx, 120, 5000); /* and 80-99 beside them */
    assert_int_equal(fx->nheld, 2);
    char again[40][32];
    for (size_t i = 0; i < 40; i++)
        snprintf(again[i], sizeof(again[i]), "%s", fx->ids[80 + i]);

    /* both handed back, newest first: they come again in order */
    cm_consumer_retry(fx->held[--fx->nheld], 0);
    cm_consumer_retry(fx->held[--fx->nheld], 0);
    fx->action = 0;
    run_until(fx, 160, 5000);
    assert_int_equal(fx->messages, 160);
    for (size_t i = 0; i < 40; i++)
        assert_string_equal(fx->ids[120 + i], again[i]);
    run_for(fx, 300);
    assert_int_equal(fx->messages, 160);
}

int main(void)
{
    cm_log_init("test_queue_consumer_redis", CM_LOG_ERROR);
    signal(SIGPIPE, SIG_IGN);
    static const char *const extra[] = {"--stream-node-max-entries", "10", NULL};
    if (srv_start_redis(&redis_port, &redis_pid, extra) != 0) {
        fprintf(stderr, "redis-server did not start\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_main_before_historical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_comes_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_after_close_and_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_and_trim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_two, setup, teardown),
    };
    int rc = cmocka_run_group_tests_name("queue_consumer_redis", tests, NULL, NULL);
    srv_reap(&redis_pid, SIGTERM);
    return rc;
}
