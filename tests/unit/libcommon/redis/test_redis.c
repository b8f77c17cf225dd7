/*
 * test_redis.c - cm_redis against a real redis-server started by the test.
 *
 * The redis-server process helper (rsrv.h, shared with test_redis_tls.c)
 * picks a random high port (two concurrent runs, e.g. the normal and the
 * sanitizer trees, must not collide), retries on another port when the
 * server does not come up, checks through INFO that the process answering is
 * really ours, and always kills the server by pid: group teardown, atexit,
 * and PR_SET_PDEATHSIG for the cases where the test process dies hard.
 *
 * Each test owns a fresh uv loop and ends with uv_loop_close() == 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/redis.h"

#include "rsrv.h"

/* ==== loop and callback helpers ============================================= */

static rsrv_t srv;
static uv_loop_t loop;
static uv_timer_t deadline;
static bool deadline_hit;
static bool loop_open;

static void on_deadline(uv_timer_t *t)
{
    (void)t;
    deadline_hit = true;
}

/* Runs the loop until cond holds or ms elapse; the caller asserts cond. */
#define RUN_UNTIL(cond, ms)                                                                        \
    do {                                                                                           \
        deadline_hit = false;                                                                      \
        uv_timer_start(&deadline, on_deadline, (ms), 0);                                           \
        while (!(cond) && !deadline_hit)                                                           \
            uv_run(&loop, UV_RUN_ONCE);                                                            \
        uv_timer_stop(&deadline);                                                                  \
    } while (0)

#define RUN_FOR(ms) RUN_UNTIL(false, ms)

static void ensure_server(void)
{
    if (srv.pid == 0 && rsrv_restart(&srv) != 0)
        fail_msg("cannot restart redis-server on port %d", srv.port);
}

static int test_setup(void **state)
{
    (void)state;
    ensure_server();
    if (uv_loop_init(&loop) != 0)
        return -1;
    uv_timer_init(&loop, &deadline);
    loop_open = true;
    return 0;
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* Closes the loop: every client must have been closed. */
static void finish_loop(void)
{
    uv_close((uv_handle_t *)&deadline, NULL);
    for (int i = 0; i < 5000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; i++)
        usleep(1000);
    loop_open = false;
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* After a failed test: force the loop closed so the next test can run. */
static int test_teardown(void **state)
{
    (void)state;
    if (!loop_open)
        return 0;
    uv_walk(&loop, close_any, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    loop_open = false;
    return 0;
}

typedef struct {
    int calls;
    int type; /* reply type, -1 for an error */
    long long integer;
    char str[512];
    size_t len;
    const char *err;
} result_t;

static void on_result(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    result_t *res = ud;
    (void)r;
    res->calls++;
    res->err = err;
    res->type = reply ? reply->type : -1;
    if (reply == NULL)
        return;
    res->integer = reply->integer;
    if (reply->str != NULL) {
        res->len = reply->len;
        memcpy(res->str, reply->str, CM_MIN(reply->len, sizeof(res->str) - 1));
        res->str[CM_MIN(reply->len, sizeof(res->str) - 1)] = '\0';
    }
}

typedef struct {
    int connects, disconnects;
} hooks_t;

static void on_up(cm_redis_t *r, void *ud)
{
    (void)r;
    ((hooks_t *)ud)->connects++;
}

static void on_down(cm_redis_t *r, void *ud)
{
    (void)r;
    ((hooks_t *)ud)->disconnects++;
}

static void on_closed(void *ud)
{
    (*(int *)ud)++;
}

static cm_redis_opts_t base_opts(hooks_t *h)
{
    return (cm_redis_opts_t){.host = "127.0.0.1",
                             .port = srv.port,
                             .connect_timeout_ms = 500,
                             .command_timeout_ms = 2000,
                             .backoff_min_ms = 20,
                             .backoff_max_ms = 200,
                             .on_connect = h ? on_up : NULL,
                             .on_disconnect = h ? on_down : NULL,
                             .ud = h};
}

static cm_redis_t *new_client(const cm_redis_opts_t *o)
{
    cm_redis_t *r = NULL;
    assert_int_equal(cm_redis_new(&loop, o, &r), CM_OK);
    assert_non_null(r);
    return r;
}

static cm_redis_t *connected_client(const cm_redis_opts_t *o)
{
    cm_redis_t *r = new_client(o);
    RUN_UNTIL(cm_redis_connected(r), 3000);
    assert_true(cm_redis_connected(r));
    return r;
}

static void close_client(cm_redis_t *r)
{
    int closed = 0;
    cm_redis_close(r, on_closed, &closed);
    RUN_UNTIL(closed == 1, 2000);
    assert_int_equal(closed, 1);
}

/* Runs one command to completion. */
static result_t sync_cmd(cm_redis_t *r, const char *fmt, const char *arg)
{
    result_t res = {0};
    cm_redis_command(r, on_result, &res, fmt, arg);
    RUN_UNTIL(res.calls > 0, 3000);
    assert_int_equal(res.calls, 1);
    return res;
}

/* ==== tests ================================================================== */

static void test_url_parse(void **state)
{
    cm_redis_url_t u;
    (void)state;

    assert_int_equal(cm_redis_url_parse("redis://127.0.0.1:6380/2", &u), CM_OK);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);
    assert_null(u.password);
    assert_null(u.username);
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("redis://:s3cret@cache.internal:1234/15", &u), CM_OK);
    assert_string_equal(u.host, "cache.internal");
    assert_int_equal(u.port, 1234);
    assert_int_equal(u.db, 15);
    assert_string_equal(u.password, "s3cret");
    assert_null(u.username);
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("REDIS://app:p%40ss%2fw@redis", &u), CM_OK);
    assert_string_equal(u.host, "redis");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, 0);
    assert_string_equal(u.username, "app");
    assert_string_equal(u.password, "p@ss/w");
    cm_redis_url_free(&u);

    /* Raw '@' and '/' in a password: userinfo ends at the last '@'. */
    assert_int_equal(cm_redis_url_parse("redis://:a@b/c@h/1", &u), CM_OK);
    assert_string_equal(u.password, "a@b/c");
    assert_string_equal(u.host, "h");
    assert_int_equal(u.db, 1);
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("redis://[::1]:7000/", &u), CM_OK);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, 0);
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("redis://:@h", &u), CM_OK); /* empty: no AUTH */
    assert_null(u.password);
    cm_redis_url_free(&u);

    static const char *const bad[] = {
        NULL,
        "",
        "http://h",
        "redis://",
        "redis://:6379",
        "redis://h:",
        "redis://h:0",
        "redis://h:70000",
        "redis://h:12x",
        "redis://h/abc",
        "redis://h/1/2",
        "redis://h/1?timeout=1",
        "redis://user@h",
        "redis://user:@h",
        "redis://:p%4@h",
        "redis://:p%00@h",
        "redis://h h",
        "redis://[::1",
        "redis://[::1]x",
        "redis://[zz]",
        "unix://redis.sock",
    };
    for (size_t i = 0; i < CM_ARRAY_LEN(bad); i++) {
        u = (cm_redis_url_t){0};
        if (cm_redis_url_parse(bad[i], &u) != CM_EINVAL)
            fail_msg("accepted bad URL %s", bad[i] ? bad[i] : "(null)");
        assert_null(u.host);
    }

    cm_redis_t *r = NULL;
    cm_redis_opts_t o = {.url = "redis://h:99999"};
    assert_int_equal(cm_redis_new(&loop, &o, &r), CM_EINVAL);
    assert_null(r);
    finish_loop();
}

static void test_set_get(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *r = connected_client(&o);

    result_t res = sync_cmd(r, "SET cm:test:k %s", "hello world");
    assert_null(res.err);
    assert_int_equal(res.type, REDIS_REPLY_STATUS);
    assert_string_equal(res.str, "OK");
    res = sync_cmd(r, "GET cm:test:%s", "k");
    assert_int_equal(res.type, REDIS_REPLY_STRING);
    assert_string_equal(res.str, "hello world");

    /* argv form, binary-safe value. */
    const char *argv[] = {"SET", "cm:test:bin", "a\0b\r\nc"};
    const size_t argvlen[] = {3, 11, 6};
    result_t set = {0}, get = {0};
    assert_int_equal(cm_redis_command_argv(r, on_result, &set, 3, argv, argvlen), CM_OK);
    const char *gargv[] = {"GET", "cm:test:bin"};
    assert_int_equal(cm_redis_command_argv(r, on_result, &get, 2, gargv, NULL), CM_OK);
    RUN_UNTIL(get.calls == 1, 3000);
    assert_int_equal(set.calls, 1);
    assert_int_equal(get.type, REDIS_REPLY_STRING);
    assert_int_equal(get.len, 6);
    assert_memory_equal(get.str, "a\0b\r\nc", 6);

    res = sync_cmd(r, "GET %s", "cm:test:missing");
    assert_int_equal(res.type, REDIS_REPLY_NIL);

    /* Refused commands fail synchronously, exactly once. */
    static const char *const refused[] = {"SUBSCRIBE x", "psubscribe x*", "MONITOR",
                                          "SELECT 1",    "HELLO 3",       "client reply off"};
    for (size_t i = 0; i < CM_ARRAY_LEN(refused); i++) {
        result_t ref = {0};
        assert_int_equal(cm_redis_command(r, on_result, &ref, refused[i]), CM_EINVAL);
        assert_int_equal(ref.calls, 1);
        assert_ptr_equal(ref.err, cm_redis_err_invalid);
    }
    result_t ok = {0};
    assert_int_equal(cm_redis_command(r, on_result, &ok, "CLIENT SETNAME cm-test"), CM_OK);
    RUN_UNTIL(ok.calls == 1, 3000);
    assert_string_equal(ok.str, "OK");
    /* A subscription on a command client is refused. */
    assert_int_equal(cm_redis_subscribe(r, "x", NULL, NULL), CM_EINVAL);

    close_client(r);
    finish_loop();
}

/* ---- large commands: more than the kernel takes in one write ---- */

typedef struct {
    cm_redis_t *r;
    result_t res;
} timed_cmd_t;

static void on_timer_issue(uv_timer_t *t)
{
    /* A command issued from a timer callback, not from I/O: it must still
     * be written before the loop blocks again. */
    timed_cmd_t *tc = t->data;
    cm_redis_command(tc->r, on_result, &tc->res, "STRLEN %s", "cm:test:big0");
}

static void test_large_commands(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *r = connected_client(&o);
    enum { N = 3, SIZE = 6 << 20 };
    char *big = malloc(SIZE);
    assert_non_null(big);
    result_t set[N] = {{0}}, len[N] = {{0}};
    for (int i = 0; i < N; i++) {
        char key[32];
        snprintf(key, sizeof(key), "cm:test:big%d", i);
        for (size_t k = 0; k < SIZE; k++)
            big[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
        const char *argv[] = {"SET", key, big};
        const size_t argvlen[] = {3, strlen(key), SIZE};
        assert_int_equal(cm_redis_command_argv(r, on_result, &set[i], 3, argv, argvlen), CM_OK);
        const char *largv[] = {"GETRANGE", key, "-4", "-1"};
        assert_int_equal(cm_redis_command_argv(r, on_result, &len[i], 4, largv, NULL), CM_OK);
    }
    RUN_UNTIL(len[N - 1].calls == 1, 10000);
    for (int i = 0; i < N; i++) {
        assert_int_equal(set[i].calls, 1);
        assert_string_equal(set[i].str, "OK");
        assert_int_equal(len[i].calls, 1);
        assert_int_equal(len[i].len, 4);
        for (size_t k = 0; k < 4; k++)
            assert_int_equal(len[i].str[k], 'a' + ((SIZE - 4 + k) * 7 + (size_t)i) % 26);
    }
    free(big);

    timed_cmd_t later = {.r = r};
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    t.data = &later;
    uv_timer_start(&t, on_timer_issue, 20, 0);
    RUN_UNTIL(later.res.calls == 1, 3000);
    assert_int_equal(later.res.calls, 1);
    assert_int_equal(later.res.type, REDIS_REPLY_INTEGER);
    assert_int_equal(later.res.integer, SIZE);
    uv_close((uv_handle_t *)&t, NULL);
    close_client(r);
    finish_loop();
}

/* ---- pipelining ---- */

#define NPIPE 1000
static int pipe_next; /* the index of the next expected callback */
static int pipe_calls[NPIPE];
static bool pipe_ok = true;

static void on_incr(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    int i = (int)(intptr_t)ud;
    (void)r;
    pipe_calls[i]++;
    if (i != pipe_next++ || err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER ||
        reply->integer != i + 1)
        pipe_ok = false;
}

static void test_pipeline_1000_incr(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *r = connected_client(&o);
    result_t del = sync_cmd(r, "DEL %s", "cm:test:ctr");
    assert_int_equal(del.type, REDIS_REPLY_INTEGER);

    uint64_t before = cm_redis_stats(r)->commands;
    for (int i = 0; i < NPIPE; i++)
        assert_int_equal(cm_redis_command(r, on_incr, (void *)(intptr_t)i, "INCR cm:test:ctr"),
                         CM_OK);
    assert_int_equal(pipe_next, 0); /* nothing answered before the loop runs */
    RUN_UNTIL(pipe_next == NPIPE, 5000);
    assert_int_equal(pipe_next, NPIPE);
    assert_true(pipe_ok);
    for (int i = 0; i < NPIPE; i++)
        assert_int_equal(pipe_calls[i], 1);
    assert_int_equal(cm_redis_stats(r)->commands - before, NPIPE);
    RUN_FOR(50); /* no stray second callback */
    assert_int_equal(pipe_next, NPIPE);
    close_client(r);
    finish_loop();
}

static void test_error_reply(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *r = connected_client(&o);

    sync_cmd(r, "SET cm:test:str %s", "abc");
    result_t res = sync_cmd(r, "INCR %s", "cm:test:str");
    assert_null(res.err);
    assert_int_equal(res.type, REDIS_REPLY_ERROR);
    assert_non_null(strstr(res.str, "not an integer"));
    res = sync_cmd(r, "NOSUCHCOMMAND %s", "x");
    assert_int_equal(res.type, REDIS_REPLY_ERROR);
    assert_int_equal(cm_redis_stats(r)->error_replies, 2);
    assert_int_equal(cm_redis_stats(r)->errors, 0);
    /* The connection is still fine. */
    res = sync_cmd(r, "PING %s", "again");
    assert_string_equal(res.str, "again");
    close_client(r);
    finish_loop();
}

static void test_fail_fast_when_disconnected(void **state)
{
    (void)state;
    hooks_t h = {0};
    cm_redis_opts_t o = base_opts(&h);
    o.port = rsrv_random_free_port(); /* nothing listens there */
    cm_redis_t *r = new_client(&o);

    /* Not connected yet: the callback runs before the call returns. */
    result_t res = {0};
    assert_int_equal(cm_redis_command(r, on_result, &res, "PING"), CM_EAGAIN);
    assert_int_equal(res.calls, 1);
    assert_ptr_equal(res.err, cm_redis_err_not_connected);

    RUN_FOR(300);
    assert_false(cm_redis_connected(r));
    assert_int_equal(h.connects, 0);
    assert_true(cm_redis_stats(r)->connect_failures >= 2);
    assert_true(cm_redis_stats(r)->reconnects >= 1);
    res = (result_t){0};
    const char *argv[] = {"PING"};
    assert_int_equal(cm_redis_command_argv(r, on_result, &res, 1, argv, NULL), CM_EAGAIN);
    assert_int_equal(res.calls, 1);
    assert_ptr_equal(res.err, cm_redis_err_not_connected);

    /* A subscriber refuses commands. */
    cm_redis_opts_t so = base_opts(NULL);
    so.subscriber = true;
    cm_redis_t *sub = new_client(&so);
    res = (result_t){0};
    assert_int_equal(cm_redis_command(sub, on_result, &res, "PING"), CM_EINVAL);
    assert_ptr_equal(res.err, cm_redis_err_invalid);

    close_client(r); /* closing while retrying */
    close_client(sub);
    finish_loop();
}

static void test_server_killed_then_restarted(void **state)
{
    (void)state;
    hooks_t h = {0};
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d/2", srv.port);
    cm_redis_opts_t o = base_opts(&h);
    o.url = url;
    o.command_timeout_ms = 10000;
    cm_redis_t *r = connected_client(&o);
    assert_int_equal(h.connects, 1);
    result_t info = sync_cmd(r, "CLIENT %s", "INFO");
    assert_non_null(strstr(info.str, " db=2 "));

    /* Two commands pending on the server when it dies. */
    result_t blocked = {0}, behind = {0};
    assert_int_equal(cm_redis_command(r, on_result, &blocked, "BLPOP cm:test:nolist 0"), CM_OK);
    assert_int_equal(cm_redis_command(r, on_result, &behind, "PING"), CM_OK);
    RUN_FOR(50);
    assert_int_equal(blocked.calls, 0);
    rsrv_kill(&srv);
    RUN_UNTIL(behind.calls == 1, 2000);
    assert_int_equal(blocked.calls, 1);
    assert_int_equal(behind.calls, 1);
    assert_ptr_equal(blocked.err, cm_redis_err_connection_lost);
    assert_ptr_equal(behind.err, cm_redis_err_connection_lost);
    assert_false(cm_redis_connected(r));
    assert_int_equal(h.disconnects, 1);
    assert_int_equal(cm_redis_stats(r)->disconnects, 1);

    /* While it is down: fail fast, keep retrying. */
    RUN_FOR(250);
    result_t res = {0};
    assert_int_equal(cm_redis_command(r, on_result, &res, "PING"), CM_EAGAIN);
    assert_ptr_equal(res.err, cm_redis_err_not_connected);
    assert_true(cm_redis_stats(r)->connect_failures >= 1);

    /* Back on the same port: the client reconnects by itself, SELECT again. */
    assert_int_equal(rsrv_restart(&srv), 0);
    RUN_UNTIL(h.connects == 2, 3000);
    assert_int_equal(h.connects, 2);
    assert_true(cm_redis_connected(r));
    info = sync_cmd(r, "CLIENT %s", "INFO");
    assert_non_null(strstr(info.str, " db=2 "));
    sync_cmd(r, "SET cm:test:after %s", "restart");
    res = sync_cmd(r, "GET %s", "cm:test:after");
    assert_string_equal(res.str, "restart");
    assert_true(cm_redis_stats(r)->reconnects >= 1);
    close_client(r);
    assert_int_equal(h.disconnects, 1); /* no hook on close */
    finish_loop();
}

static void test_command_timeout(void **state)
{
    (void)state;
    hooks_t h = {0};
    cm_redis_opts_t o = base_opts(&h);
    o.command_timeout_ms = 200;
    o.connect_timeout_ms = 300;
    cm_redis_t *r = connected_client(&o);

    result_t slow = {0}, behind = {0};
    uint64_t t0 = uv_now(&loop);
    assert_int_equal(cm_redis_command(r, on_result, &slow, "DEBUG SLEEP 2"), CM_OK);
    assert_int_equal(cm_redis_command(r, on_result, &behind, "PING"), CM_OK);
    RUN_UNTIL(slow.calls == 1, 3000);
    uint64_t took = uv_now(&loop) - t0;
    assert_int_equal(slow.calls, 1);
    assert_ptr_equal(slow.err, cm_redis_err_timeout);
    assert_int_equal(behind.calls, 1);
    assert_non_null(behind.err);
    assert_true(took >= 190 && took < 1000);
    assert_false(cm_redis_connected(r));
    assert_int_equal(h.disconnects, 1);
    assert_true(cm_redis_stats(r)->timeouts >= 1);

    /* The server wakes up after ~2 s; the client gets back on its own. */
    RUN_UNTIL(h.connects == 2, 6000);
    assert_int_equal(h.connects, 2);
    result_t res = sync_cmd(r, "PING %s", "back");
    assert_string_equal(res.str, "back");
    close_client(r);
    finish_loop();
}

/* ---- pub/sub ---- */

typedef struct {
    int count;
    char channel[64];
    char msg[64];
    size_t msg_len;
} inbox_t;

static void on_msg(cm_redis_t *r, cm_slice_t channel, cm_slice_t msg, void *ud)
{
    inbox_t *in = ud;
    (void)r;
    in->count++;
    snprintf(in->channel, sizeof(in->channel), "%.*s", (int)channel.len, channel.p);
    in->msg_len = CM_MIN(msg.len, sizeof(in->msg));
    memcpy(in->msg, msg.p, in->msg_len);
}

/* PUBLISH until one subscriber receives it (a SUBSCRIBE sent on another
 * connection may not be processed yet). */
static void publish_to_one(cm_redis_t *pub, const char *channel, const char *msg, size_t len)
{
    for (int i = 0; i < 50; i++) {
        result_t res = {0};
        cm_redis_command(pub, on_result, &res, "PUBLISH %s %b", channel, msg, len);
        RUN_UNTIL(res.calls == 1, 2000);
        assert_int_equal(res.type, REDIS_REPLY_INTEGER);
        if (res.integer == 1)
            return;
        RUN_FOR(20);
    }
    fail_msg("nobody subscribed to %s", channel);
}

static void test_pubsub(void **state)
{
    (void)state;
    hooks_t sh = {0};
    inbox_t in1 = {0}, in2 = {0};
    cm_redis_opts_t so = base_opts(&sh);
    so.subscriber = true;
    cm_redis_t *sub = new_client(&so);
    /* Before connecting: sent on connect. */
    assert_int_equal(cm_redis_subscribe(sub, "cm:test:ch1", on_msg, &in1), CM_OK);
    assert_int_equal(cm_redis_subscribe(sub, "cm:test:ch1", on_msg, &in1), CM_EINVAL);
    RUN_UNTIL(sh.connects == 1, 3000);
    assert_true(cm_redis_connected(sub));

    cm_redis_opts_t po = base_opts(NULL);
    cm_redis_t *pub = connected_client(&po);
    /* on_connect came after the confirmation: the first PUBLISH reaches it. */
    result_t res = {0};
    cm_redis_command(pub, on_result, &res, "PUBLISH cm:test:ch1 %b", "hi\0there", (size_t)8);
    RUN_UNTIL(in1.count == 1, 2000);
    assert_int_equal(res.integer, 1);
    assert_int_equal(in1.count, 1);
    assert_string_equal(in1.channel, "cm:test:ch1");
    assert_int_equal(in1.msg_len, 8);
    assert_memory_equal(in1.msg, "hi\0there", 8);

    /* While connected: subscribed at once. */
    assert_int_equal(cm_redis_subscribe(sub, "cm:test:ch2", on_msg, &in2), CM_OK);
    publish_to_one(pub, "cm:test:ch2", "two", 3);
    RUN_UNTIL(in2.count == 1, 2000);
    assert_int_equal(in2.count, 1);
    assert_string_equal(in2.channel, "cm:test:ch2");
    assert_int_equal(in1.count, 1);
    assert_int_equal(cm_redis_stats(sub)->messages, 2);

    close_client(sub);
    close_client(pub);
    finish_loop();
}

static void test_resubscribe_after_restart(void **state)
{
    (void)state;
    hooks_t sh = {0}, ph = {0};
    inbox_t in = {0};
    cm_redis_opts_t so = base_opts(&sh);
    so.subscriber = true;
    cm_redis_t *sub = new_client(&so);
    cm_redis_subscribe(sub, "cm:test:inval", on_msg, &in);
    cm_redis_opts_t po = base_opts(&ph);
    cm_redis_t *pub = new_client(&po);
    RUN_UNTIL(sh.connects == 1 && ph.connects == 1, 3000);
    publish_to_one(pub, "cm:test:inval", "v1", 2);
    RUN_UNTIL(in.count == 1, 2000);
    assert_int_equal(in.count, 1);

    rsrv_kill(&srv);
    RUN_UNTIL(sh.disconnects == 1 && ph.disconnects == 1, 2000);
    assert_int_equal(sh.disconnects, 1);
    assert_false(cm_redis_connected(sub));
    assert_int_equal(rsrv_restart(&srv), 0);
    RUN_UNTIL(sh.connects == 2 && ph.connects == 2, 3000);
    assert_int_equal(sh.connects, 2);
    assert_int_equal(ph.connects, 2);
    /* Subscribed again before on_connect: the first PUBLISH is delivered. */
    result_t res = sync_cmd(pub, "PUBLISH cm:test:inval %s", "v2");
    assert_int_equal(res.integer, 1);
    RUN_UNTIL(in.count == 2, 2000);
    assert_int_equal(in.count, 2);
    assert_memory_equal(in.msg, "v2", 2);
    close_client(sub);
    close_client(pub);
    finish_loop();
}

/* ---- close ---- */

static void test_close_with_pending(void **state)
{
    (void)state;
    hooks_t h = {0};
    cm_redis_opts_t o = base_opts(&h);
    cm_redis_t *r = connected_client(&o);
    result_t res[5] = {{0}};
    for (int i = 0; i < 5; i++)
        assert_int_equal(cm_redis_command(r, on_result, &res[i], "BLPOP cm:test:nolist 1"), CM_OK);
    int closed = 0;
    cm_redis_close(r, on_closed, &closed);
    /* Outside any callback: failed before cm_redis_close returned. */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(res[i].calls, 1);
        assert_ptr_equal(res[i].err, cm_redis_err_closed);
    }
    assert_int_equal(closed, 0); /* asynchronous */
    RUN_UNTIL(closed == 1, 2000);
    assert_int_equal(closed, 1);
    assert_int_equal(h.disconnects, 0);
    finish_loop();
}

/* Closing from inside a reply callback: the rest fail with "client closed". */
static result_t cb_res[3];
static int cb_closed;

static void on_reply_then_close(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    on_result(r, reply, err, ud);
    cm_redis_close(r, on_closed, &cb_closed);
    /* Still usable for a fail-fast answer, never queued. */
    result_t late = {0};
    assert_int_equal(cm_redis_command(r, on_result, &late, "PING"), CM_ERR);
    assert_ptr_equal(late.err, cm_redis_err_closed);
}

static void test_close_from_callback(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *r = connected_client(&o);
    memset(cb_res, 0, sizeof(cb_res));
    cb_closed = 0;
    cm_redis_command(r, on_reply_then_close, &cb_res[0], "PING");
    cm_redis_command(r, on_result, &cb_res[1], "PING");
    cm_redis_command(r, on_result, &cb_res[2], "PING");
    RUN_UNTIL(cb_closed == 1, 2000);
    assert_int_equal(cb_closed, 1);
    assert_int_equal(cb_res[0].calls, 1);
    assert_null(cb_res[0].err);
    assert_string_equal(cb_res[0].str, "PONG");
    for (int i = 1; i < 3; i++) {
        assert_int_equal(cb_res[i].calls, 1);
        assert_ptr_equal(cb_res[i].err, cm_redis_err_closed);
    }
    finish_loop();
}

/* A name goes through uv_getaddrinfo; the close right after creation hits
 * the RESOLVING state. */
static void test_hostname_resolution(void **state)
{
    (void)state;
    cm_redis_opts_t o = base_opts(NULL);
    o.host = "localhost";
    cm_redis_t *r = connected_client(&o);
    result_t res = sync_cmd(r, "PING %s", "by-name");
    assert_string_equal(res.str, "by-name");
    close_client(r);

    cm_redis_t *early = new_client(&o);
    close_client(early);
    finish_loop();
}

static void test_auth_and_select(void **state)
{
    (void)state;
    char url[96];
    cm_redis_opts_t o = base_opts(NULL);
    cm_redis_t *admin = connected_client(&o);
    result_t res = sync_cmd(admin, "CONFIG SET requirepass %s", "s3 cret");
    assert_string_equal(res.str, "OK");

    snprintf(url, sizeof(url), "redis://:s3%%20cret@127.0.0.1:%d/3", srv.port);
    cm_redis_opts_t ao = base_opts(NULL);
    ao.url = url;
    cm_redis_t *authed = connected_client(&ao);
    res = sync_cmd(authed, "CLIENT %s", "INFO");
    assert_non_null(strstr(res.str, " db=3 "));
    sync_cmd(authed, "SET cm:test:db3 %s", "three");

    snprintf(url, sizeof(url), "redis://default:s3%%20cret@127.0.0.1:%d", srv.port);
    cm_redis_opts_t uo = base_opts(NULL);
    uo.url = url;
    cm_redis_t *user = connected_client(&uo);
    res = sync_cmd(user, "GET %s", "cm:test:db3"); /* db 0 */
    assert_int_equal(res.type, REDIS_REPLY_NIL);

    snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d/3", srv.port);
    cm_redis_opts_t wo = base_opts(NULL);
    wo.url = url;
    cm_redis_t *wrong = new_client(&wo);
    RUN_FOR(300);
    assert_false(cm_redis_connected(wrong));
    assert_true(cm_redis_stats(wrong)->connect_failures >= 1);
    assert_int_equal(cm_redis_stats(wrong)->connects, 0);

    /* The password changes to the one it has: it gets in by itself. */
    res = sync_cmd(admin, "CONFIG SET requirepass %s", "wrong");
    assert_string_equal(res.str, "OK");
    RUN_UNTIL(cm_redis_connected(wrong), 3000);
    assert_true(cm_redis_connected(wrong));
    res = sync_cmd(wrong, "GET %s", "cm:test:db3");
    assert_string_equal(res.str, "three");
    res = sync_cmd(admin, "CONFIG SET requirepass %s", "");
    assert_string_equal(res.str, "OK");

    close_client(admin);
    close_client(authed);
    close_client(user);
    close_client(wrong);
    finish_loop();
}

/* A fake server on a free loopback port: the client connects, the server
 * answers the handshake PING. *lfd is the listener, *fd the accepted socket
 * (reads time out after 1 s). The client has no command timeout, so only a
 * noticed reset can fail its commands. */
static cm_redis_t *fake_server_client(hooks_t *h, int *lfd, int *fd)
{
    int port = rsrv_random_free_port();
    *lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(*lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(*lfd, 4), 0);

    cm_redis_opts_t o = base_opts(h);
    o.port = port;
    o.command_timeout_ms = -1;
    o.connect_timeout_ms = 3000;
    cm_redis_t *r = new_client(&o);
    RUN_FOR(50); /* connected in the kernel backlog, PING written */
    *fd = accept(*lfd, NULL, NULL);
    assert_true(*fd >= 0);
    struct timeval tv = {1, 0};
    setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[64];
    assert_int_equal(read(*fd, buf, sizeof(buf)), 14); /* *1\r\n$4\r\nPING\r\n */
    assert_int_equal(write(*fd, "+PONG\r\n", 7), 7);
    RUN_UNTIL(cm_redis_connected(r), 2000);
    assert_true(cm_redis_connected(r));
    return r;
}

/* Closes fd with a reset (SO_LINGER 0) instead of a FIN. */
static void reset_close(int fd)
{
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
}

/* A reset connection is reported by libuv as a poll error, which hiredis
 * 0.14's own adapter ignores: without our adapter's handling this client
 * (no command timeout) would wait forever. */
static void test_connection_reset_detected(void **state)
{
    (void)state;
    hooks_t h = {0};
    int lfd, fd;
    cm_redis_t *r = fake_server_client(&h, &lfd, &fd);

    result_t res = {0};
    assert_int_equal(cm_redis_command(r, on_result, &res, "GET k"), CM_OK);
    RUN_FOR(30);
    reset_close(fd);
    RUN_UNTIL(res.calls == 1, 2000);
    assert_int_equal(res.calls, 1);
    assert_ptr_equal(res.err, cm_redis_err_connection_lost);
    assert_int_equal(h.disconnects, 1);
    assert_false(cm_redis_connected(r));
    close(lfd);
    close_client(r);
    finish_loop();
}

/* A reply and the reset right behind it, seen in one wake-up: the reply is
 * delivered, and the reset is still noticed (libuv stops a poll handle that
 * reports an error; the adapter must start it again). */
static void test_reply_then_reset(void **state)
{
    (void)state;
    hooks_t h = {0};
    int lfd, fd;
    cm_redis_t *r = fake_server_client(&h, &lfd, &fd);

    result_t first = {0}, second = {0};
    assert_int_equal(cm_redis_command(r, on_result, &first, "GET a"), CM_OK);
    assert_int_equal(cm_redis_command(r, on_result, &second, "GET b"), CM_OK);
    RUN_FOR(30);
    char buf[256];
    assert_true(read(fd, buf, sizeof(buf)) > 0);
    /* Answer the first, then reset, before the client's loop runs again. */
    assert_int_equal(write(fd, "$-1\r\n", 5), 5);
    reset_close(fd);
    RUN_UNTIL(second.calls == 1, 2000);
    assert_int_equal(first.calls, 1);
    assert_null(first.err);
    assert_int_equal(first.type, REDIS_REPLY_NIL);
    assert_int_equal(second.calls, 1);
    assert_ptr_equal(second.err, cm_redis_err_connection_lost);
    assert_int_equal(h.disconnects, 1);
    close(lfd);
    close_client(r);
    finish_loop();
}

/* ==== main ======================================================================= */

static void kill_server_at_exit(void)
{
    rsrv_cleanup(&srv);
}

static int group_setup(void **state)
{
    (void)state;
    return rsrv_start(&srv) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    rsrv_cleanup(&srv);
    return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_url_parse),
        T(test_set_get),
        T(test_large_commands),
        T(test_pipeline_1000_incr),
        T(test_error_reply),
        T(test_fail_fast_when_disconnected),
        T(test_server_killed_then_restarted),
        T(test_command_timeout),
        T(test_pubsub),
        T(test_resubscribe_after_restart),
        T(test_connection_reset_detected),
        T(test_reply_then_reset),
        T(test_close_with_pending),
        T(test_close_from_callback),
        T(test_hostname_resolution),
        T(test_auth_and_select),
    };
    signal(SIGPIPE, SIG_IGN);
    cm_log_init("test_redis", CM_LOG_ERROR);
    atexit(kill_server_at_exit);
    return cmocka_run_group_tests_name("redis", tests, group_setup, group_teardown);
}
