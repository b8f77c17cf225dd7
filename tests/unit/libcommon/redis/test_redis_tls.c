/*
 * test_redis_tls.c - cm_redis over rediss:// (the relay of redis_tls.c) and
 * unix://, against a real redis-server with TLS enabled (rsrv.h; the
 * certificates are made by the openssl CLI in the server's directory).
 *
 * What the relay must do like a plain connection: replies in order, large
 * values across many TLS records, one callback per command when the server
 * dies under pending commands, a reconnect after a restart, a refused
 * certificate reported and retried, close at any stage (during the
 * handshake too) with the loop closing clean: the sanitizer tree checks
 * that nothing of a relay leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/redis.h"
#include "rsrv.h"

static rsrv_t srv = {.tls = true};
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

static int test_setup(void **state)
{
    (void)state;
    if (srv.pid == 0 && rsrv_restart(&srv) != 0)
        return -1;
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

/* Every client must have been closed: the loop then closes. */
static void finish_loop(void)
{
    uv_close((uv_handle_t *)&deadline, NULL);
    for (int i = 0; i < 5000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; i++)
        usleep(1000);
    loop_open = false;
    assert_int_equal(uv_loop_close(&loop), 0);
}

typedef struct {
    int calls;
    int type; /* reply type, -1 for an error */
    long long integer;
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
    if (reply != NULL) {
        res->integer = reply->integer;
        res->len = reply->len;
    }
}

static void on_closed(void *ud)
{
    (*(int *)ud)++;
}

static void close_client(cm_redis_t *r)
{
    int closed = 0;
    cm_redis_close(r, on_closed, &closed);
    RUN_UNTIL(closed == 1, 2000);
    assert_int_equal(closed, 1);
}

/* rediss://localhost:<tls port> with the CA file named (ca.pem or another). */
static void tls_url(char *out, size_t n, const char *ca)
{
    snprintf(out, n, "rediss://localhost:%d/0?ssl_ca_certs=%s/%s", srv.tls_port, srv.dir, ca);
}

static cm_redis_t *new_client(const char *url)
{
    cm_redis_opts_t o = {.url = url,
                         .connect_timeout_ms = 2000,
                         .command_timeout_ms = 3000,
                         .backoff_min_ms = 20,
                         .backoff_max_ms = 200};
    cm_redis_t *r = NULL;
    assert_int_equal(cm_redis_new(&loop, &o, &r), CM_OK);
    return r;
}

static void test_tls_commands(void **state)
{
    char url[1024];
    (void)state;
    tls_url(url, sizeof(url), "ca.pem");
    cm_redis_t *r = new_client(url);
    RUN_UNTIL(cm_redis_connected(r), 5000);
    assert_true(cm_redis_connected(r));

    /* 1 MiB: some 64 TLS records each way. */
    size_t big = 1 << 20;
    char *value = malloc(big);
    for (size_t i = 0; i < big; i++)
        value[i] = (char)('a' + i % 26);
    result_t set = {0}, len = {0}, incr[200] = {{0}};
    cm_redis_command(r, on_result, &set, "SET %s %b", "cm:tls:big", value, big);
    cm_redis_command(r, on_result, &len, "STRLEN %s", "cm:tls:big");
    cm_redis_command(r, on_result, &incr[0], "DEL %s", "cm:tls:n");
    for (int i = 1; i < 200; i++)
        cm_redis_command(r, on_result, &incr[i], "INCR %s", "cm:tls:n");
    free(value);
    RUN_UNTIL(incr[199].calls == 1, 5000);
    assert_int_equal(set.calls, 1);
    assert_int_equal(set.type, REDIS_REPLY_STATUS);
    assert_int_equal(len.integer, (long long)big);
    for (int i = 1; i < 200; i++) /* in order */
        assert_int_equal(incr[i].integer, i);
    assert_int_equal(cm_redis_stats(r)->connects, 1);
    close_client(r);
    finish_loop();
}

static void test_tls_server_restart(void **state)
{
    char url[1024];
    (void)state;
    tls_url(url, sizeof(url), "ca.pem");
    cm_redis_t *r = new_client(url);
    RUN_UNTIL(cm_redis_connected(r), 5000);
    assert_true(cm_redis_connected(r));

    /* Pending when the server dies: each gets exactly one error. */
    result_t pending[20] = {{0}};
    for (int i = 0; i < 20; i++)
        cm_redis_command(r, on_result, &pending[i], "BLPOP %s %d", "cm:tls:never", 2);
    RUN_UNTIL(false, 100);
    rsrv_kill(&srv);
    RUN_UNTIL(!cm_redis_connected(r), 5000);
    assert_false(cm_redis_connected(r));
    RUN_UNTIL(pending[19].calls == 1, 5000);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(pending[i].calls, 1);
        assert_non_null(pending[i].err);
    }
    /* Retries against a dead port for a while, then the server is back. */
    RUN_UNTIL(false, 300);
    assert_int_equal(rsrv_restart(&srv), 0);
    RUN_UNTIL(cm_redis_connected(r), 5000);
    assert_true(cm_redis_connected(r));
    result_t ping = {0};
    cm_redis_command(r, on_result, &ping, "PING");
    RUN_UNTIL(ping.calls == 1, 3000);
    assert_int_equal(ping.type, REDIS_REPLY_STATUS);
    assert_true(cm_redis_stats(r)->connects >= 2);
    assert_true(cm_redis_stats(r)->connect_failures >= 1);
    close_client(r);
    finish_loop();
}

static void test_tls_wrong_ca(void **state)
{
    char url[1024];
    (void)state;
    tls_url(url, sizeof(url), "other-ca.pem");
    cm_redis_t *r = new_client(url);
    RUN_UNTIL(cm_redis_stats(r)->connect_failures >= 3, 5000);
    assert_true(cm_redis_stats(r)->connect_failures >= 3);
    assert_int_equal(cm_redis_stats(r)->connects, 0);
    assert_false(cm_redis_connected(r));
    result_t res = {0};
    assert_int_equal(cm_redis_command(r, on_result, &res, "PING"), CM_EAGAIN);
    assert_ptr_equal(res.err, cm_redis_err_not_connected);
    close_client(r);
    finish_loop();
}

/* Closed at every step of the way: resolving, TCP connect, handshake... */
static void test_tls_close_at_any_stage(void **state)
{
    char url[1024];
    (void)state;
    tls_url(url, sizeof(url), "ca.pem");
    for (int spins = 0; spins < 12; spins++) {
        cm_redis_t *r = new_client(url);
        for (int i = 0; i < spins; i++)
            uv_run(&loop, UV_RUN_NOWAIT);
        close_client(r);
    }
    finish_loop();
}

static void test_tls_bad_files(void **state)
{
    char url[1024];
    cm_redis_t *r = NULL;
    (void)state;
    snprintf(url, sizeof(url), "rediss://localhost:%d?ssl_ca_certs=%s/missing.pem", srv.tls_port,
             srv.dir);
    cm_redis_opts_t o = {.url = url};
    assert_int_equal(cm_redis_new(&loop, &o, &r), CM_EINVAL);
    assert_null(r);
    snprintf(url, sizeof(url),
             "rediss://localhost:%d?ssl_ca_certs=%s/ca.pem&ssl_certfile=%s/server.pem"
             "&ssl_keyfile=%s/ca.key",
             srv.tls_port, srv.dir, srv.dir, srv.dir);
    assert_int_equal(cm_redis_new(&loop, &o, &r), CM_EINVAL); /* the key is not the cert's */
    assert_null(r);
    finish_loop();
}

static void test_unix_socket(void **state)
{
    char url[1024];
    (void)state;
    snprintf(url, sizeof(url), "unix://%s/redis.sock?db=3", srv.dir);
    cm_redis_t *r = new_client(url);
    RUN_UNTIL(cm_redis_connected(r), 5000);
    assert_true(cm_redis_connected(r));
    result_t set = {0}, get = {0};
    cm_redis_command(r, on_result, &set, "SET %s %s", "cm:unix", "yes");
    cm_redis_command(r, on_result, &get, "GET %s", "cm:unix");
    RUN_UNTIL(get.calls == 1, 3000);
    assert_int_equal(get.type, REDIS_REPLY_STRING);
    assert_int_equal(get.len, 3);
    close_client(r);
    finish_loop();
}

static void kill_server_at_exit(void)
{
    rsrv_cleanup(&srv);
}

static int group_setup(void **state)
{
    (void)state;
    if (rsrv_make_certs(&srv) != 0)
        return -1;
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
        T(test_tls_commands),           T(test_tls_server_restart), T(test_tls_wrong_ca),
        T(test_tls_close_at_any_stage), T(test_tls_bad_files),      T(test_unix_socket),
    };
    signal(SIGPIPE, SIG_IGN);
    cm_log_init("test_redis_tls", CM_LOG_ERROR);
    atexit(kill_server_at_exit);
    return cmocka_run_group_tests_name("redis_tls", tests, group_setup, group_teardown);
}
