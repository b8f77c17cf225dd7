/*
 * test_queue.c - the event queue against real servers: a Kafka broker
 * (tests/support/kafka_broker, librdkafka's mock cluster in its own
 * process, found next to this binary so the sanitizer tree uses its own)
 * and a redis-server on a random high port. Both are started once for the
 * group and killed by PID at the end; each test has its own loop and checks
 * that the loop closes with no handle left.
 *
 * For both backends: 1,000 messages with keys and headers, every callback
 * exactly once and never from inside produce, read back byte for byte;
 * size limits; outages (Kafka broker down/up through SIGUSR1/SIGUSR2, Redis
 * stopped and killed); close with messages outstanding. Kafka only: the
 * first message to a new topic is not held for librdkafka's 1 s topic scan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/metrics.h"
#include "cm/queue.h"
#include "cm/redis.h"
#include "servers.h"

#define N_MSGS     1000
#define PARTITIONS 4

static char support_dir[PATH_MAX];
static pid_t broker_pid, redis_pid;
static char bootstrap[128];
static int redis_port;

#define VERBOSE "TEST_QUEUE_VERBOSE"
#define now_ms  srv_now_ms
#define reap    srv_reap

static pid_t spawn(char *const argv[], const char *const env[], int *out_fd)
{
    return srv_spawn(argv, env, out_fd, VERBOSE);
}

static bool read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
    return srv_read_line(fd, buf, cap, timeout_ms);
}

static int start_broker(void)
{
    return srv_start_broker("events,down,closing,big,first,bwin", "4", &broker_pid, bootstrap,
                            sizeof(bootstrap), VERBOSE);
}

static int start_redis(void)
{
    return srv_start_redis(&redis_port, &redis_pid, NULL);
}

static int group_setup(void **state)
{
    (void)state;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    snprintf(support_dir, sizeof(support_dir), "%s/support", dirname(exe));
    signal(SIGPIPE, SIG_IGN); /* writes to a killed redis-server */
    cm_log_init("test_queue", getenv("TEST_QUEUE_VERBOSE") ? CM_LOG_DEBUG : CM_LOG_ERROR);
    return start_broker() == 0 && start_redis() == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    int st = 0;
    if (broker_pid > 0) {
        kill(broker_pid, SIGTERM);
        waitpid(broker_pid, &st, 0);
        broker_pid = 0;
    }
    reap(&redis_pid, SIGTERM);
    /* The broker is expected to shut down cleanly on SIGTERM. */
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- the loop ---------------------------------------------------------------------- */

typedef bool (*cond_fn)(void *arg);

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

/* Runs the loop until cond(arg) or timeout_ms; a ticking timer makes sure
 * the condition is looked at even when nothing else happens. */
static bool run_until(uv_loop_t *loop, cond_fn cond, void *arg, uint64_t timeout_ms)
{
    uv_timer_t tick;
    uint64_t end = now_ms() + timeout_ms;
    uv_timer_init(loop, &tick);
    uv_timer_start(&tick, on_tick, 10, 10);
    bool ok;
    while (!(ok = cond(arg)) && now_ms() < end)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return ok;
}

static bool flag_set(void *arg)
{
    return *(bool *)arg;
}

static void set_flag(void *ud)
{
    *(bool *)ud = true;
}

static bool is_ready(void *arg)
{
    return cm_queue_ready(arg, NULL);
}

static bool not_ready(void *arg)
{
    return !cm_queue_ready(arg, NULL);
}

/* Closes q, waits for done, then checks that the loop holds no handle. */
static void close_queue_and_loop(uv_loop_t *loop, cm_queue_t *q, uint64_t timeout_ms)
{
    bool closed = false;
    cm_queue_close(q, timeout_ms, set_flag, &closed);
    assert_false(closed); /* never from inside close */
    assert_true(run_until(loop, flag_set, &closed, timeout_ms + 10000));
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* ---- messages ---------------------------------------------------------------------- */

typedef struct batch batch_t;
typedef struct {
    batch_t *b;
    int calls;
    int status;
    bool sync; /* called from inside cm_queue_produce */
} rec_t;

struct batch {
    rec_t recs[N_MSGS];
    int n;        /* produced */
    int done;     /* callbacks run */
    int failures; /* of which with an error */
    bool producing;
};

typedef struct {
    char key[32];
    char value[128];
    size_t value_len;
    char uuid[16];
    cm_queue_header_t headers[3];
    cm_queue_msg_t msg;
} test_msg_t;

static const char bin_header[] = {'\0', '\x01', '\xff'};

/* Message i: every tenth has no key; the rest share 37 keys (so keyed
 * partitioning is exercised); values and headers carry NUL and 0xff. */
static void make_msg(test_msg_t *m, const char *topic, int i)
{
    size_t klen = i % 10 == 0 ? 0 : (size_t)snprintf(m->key, sizeof(m->key), "user-%d", i % 37);
    int n = snprintf(m->value, sizeof(m->value), "{\"i\":%d}", i);
    memcpy(m->value + n, "\0\xff\n\"", 4);
    m->value_len = (size_t)n + 4;
    for (int j = 0; j < i % 50; j++)
        m->value[m->value_len++] = (char)('a' + j % 26);
    snprintf(m->uuid, sizeof(m->uuid), "%08d", i);
    m->headers[0] = (cm_queue_header_t){CM_SLICE_LIT("uuid"), cm_slice_from_cstr(m->uuid)};
    m->headers[1] = (cm_queue_header_t){CM_SLICE_LIT("bin"), {bin_header, sizeof(bin_header)}};
    m->headers[2] = (cm_queue_header_t){CM_SLICE_LIT("empty"), CM_SLICE_NULL};
    m->msg = (cm_queue_msg_t){.topic = topic,
                              .key = {m->key, klen},
                              .value = {m->value, m->value_len},
                              .headers = m->headers,
                              .nheaders = 3};
}

static void on_done(int status, const char *err, void *ud)
{
    rec_t *r = ud;
    r->calls++;
    r->status = status;
    r->sync = r->b->producing;
    r->b->done++;
    r->b->failures += status != 0;
    if (status != 0)
        assert_non_null(err);
}

/* A callback that closes its own queue (the second call is ignored). */
typedef struct {
    cm_queue_t *q;
    int calls, failures;
    bool closed;
} closer_t;

static void close_from_cb(int status, const char *err, void *ud)
{
    closer_t *c = ud;
    (void)err;
    c->calls++;
    c->failures += status != 0;
    cm_queue_close(c->q, 5000, set_flag, &c->closed);
}

static void produce_n(cm_queue_t *q, batch_t *b, const char *topic, int n)
{
    test_msg_t m;
    memset(b, 0, sizeof(*b));
    for (int i = 0; i < n; i++) {
        make_msg(&m, topic, i);
        b->recs[i].b = b;
        b->producing = true;
        int rc = cm_queue_produce(q, &m.msg, on_done, &b->recs[i]);
        b->producing = false;
        assert_int_equal(rc, 0);
        b->n++;
    }
}

static bool batch_done(void *arg)
{
    batch_t *b = arg;
    return b->done >= b->n;
}

/* Every callback exactly once, never synchronously; returns the failures. */
static int check_batch(const batch_t *b)
{
    for (int i = 0; i < b->n; i++) {
        assert_int_equal(b->recs[i].calls, 1);
        assert_false(b->recs[i].sync);
    }
    return b->failures;
}

/* ---- Kafka --------------------------------------------------------------------------- */

static cm_queue_t *kafka_queue(uv_loop_t *loop, int timeout_ms, cm_metrics_t *metrics)
{
    static const char *const extra[] = {"topic.metadata.refresh.interval.ms=1000"};
    cm_queue_kafka_opts_t o = {.brokers = bootstrap,
                               .message_timeout_ms = timeout_ms,
                               .extra = extra,
                               .nextra = 1,
                               .metrics = metrics};
    cm_queue_t *q = NULL;
    assert_int_equal(cm_queue_kafka_new(loop, &o, &q), 0);
    assert_string_equal(cm_queue_backend(q), "kafka");
    return q;
}

/* Kafka's (Java client's) default partitioner: murmur2 of the key, sign
 * bit cleared, modulo the partition count. */
static int32_t java_partition(const unsigned char *k, size_t len, int n)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t h = 0x9747b28cu ^ (uint32_t)len;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t w =
            k[i] | (uint32_t)k[i + 1] << 8 | (uint32_t)k[i + 2] << 16 | (uint32_t)k[i + 3] << 24;
        w *= m;
        w ^= w >> 24;
        w *= m;
        h = h * m ^ w;
    }
    switch (len - i) {
    case 3: h ^= (uint32_t)k[i + 2] << 16; /* fall through */
    case 2: h ^= (uint32_t)k[i + 1] << 8;  /* fall through */
    case 1: h ^= k[i]; h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (int32_t)((h & 0x7fffffff) % (uint32_t)n);
}

static int header_index(const rd_kafka_message_t *km)
{
    rd_kafka_headers_t *hdrs;
    const void *v;
    size_t size;
    if (rd_kafka_message_headers(km, &hdrs) != 0 ||
        rd_kafka_header_get_last(hdrs, "uuid", &v, &size) != 0 || size != 8)
        return -1;
    return atoi((const char *)v);
}

/* Checks one consumed message against what make_msg() produced. */
static void check_kafka_message(const rd_kafka_message_t *km, bool *seen)
{
    int i = header_index(km);
    assert_true(i >= 0 && i < N_MSGS);
    assert_false(seen[i]);
    seen[i] = true;
    test_msg_t m;
    make_msg(&m, "events", i);
    assert_int_equal(km->len, m.value_len);
    assert_memory_equal(km->payload, m.value, m.value_len);
    if (m.msg.key.len == 0) {
        assert_null(km->key);
    } else {
        assert_int_equal(km->key_len, m.msg.key.len);
        assert_memory_equal(km->key, m.key, m.msg.key.len);
        assert_int_equal(km->partition,
                         java_partition((const unsigned char *)m.key, m.msg.key.len, PARTITIONS));
    }
    rd_kafka_headers_t *hdrs;
    assert_int_equal(rd_kafka_message_headers(km, &hdrs), 0);
    assert_int_equal(rd_kafka_header_cnt(hdrs), 3);
    for (size_t j = 0; j < 3; j++) {
        const char *name;
        const void *v;
        size_t size;
        assert_int_equal(rd_kafka_header_get_all(hdrs, j, &name, &v, &size), 0);
        assert_true(cm_slice_eq_cstr(m.headers[j].name, name));
        assert_int_equal(size, m.headers[j].value.len);
        if (size > 0)
            assert_memory_equal(v, m.headers[j].value.p, size);
    }
}

/* A plain consumer (blocking is fine here: the loop is not running). */
static void kafka_read_back(const char *topic, int want, bool *seen)
{
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "group.id", "test_queue", errstr, sizeof(errstr)); /* a name only */
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    assert_non_null(rk);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(PARTITIONS);
    for (int p = 0; p < PARTITIONS; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    assert_int_equal(rd_kafka_assign(rk, parts), 0);
    int got = 0;
    for (uint64_t end = now_ms() + 20000; got < want && now_ms() < end;) {
        rd_kafka_message_t *km = rd_kafka_consumer_poll(rk, 100);
        if (km == NULL)
            continue;
        if (km->err == 0) {
            check_kafka_message(km, seen);
            got++;
        }
        rd_kafka_message_destroy(km);
    }
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    assert_int_equal(got, want);
}

/* The test tool Node tests use: one JSON line per message. */
static void kafka_dump_check(const char *topic, int want)
{
    char path[PATH_MAX + 32], count[16];
    snprintf(path, sizeof(path), "%s/kafka_dump", support_dir);
    snprintf(count, sizeof(count), "%d", want);
    char *argv[] = {path, NULL};
    const char *env[] = {"BOOTSTRAP", bootstrap, "TOPICS", topic, "COUNT", count, NULL};
    int fd = -1, lines = 0, st;
    pid_t pid = spawn(argv, env, &fd);
    char line[1024];
    bool seen[N_MSGS] = {false};
    while (read_line(fd, line, sizeof(line), 20000)) {
        cm_json_doc_t *doc = NULL;
        assert_int_equal(cm_json_parse(line, strlen(line), NULL, &doc, NULL), 0);
        cm_json_t root = cm_json_root(doc);
        assert_true(cm_json_str_eq(cm_json_get(root, "topic"), cm_slice_from_cstr(topic)));
        cm_buf_t s = CM_BUF_INIT;
        cm_slice_t uuid;
        assert_int_equal(cm_json_as_str(cm_json_path(root, "headers", "uuid"), &s, &uuid), 0);
        char num[16];
        snprintf(num, sizeof(num), "%.*s", (int)uuid.len, uuid.p);
        int i = atoi(num);
        assert_true(i >= 0 && i < N_MSGS && !seen[i]);
        seen[i] = true;
        test_msg_t m;
        make_msg(&m, topic, i);
        if (m.msg.key.len > 0)
            assert_true(cm_json_str_eq(cm_json_get(root, "key"), m.msg.key));
        else
            assert_true(cm_json_is_null(cm_json_get(root, "key")));
        assert_true(cm_json_str_eq(cm_json_path(root, "headers", "empty"), CM_SLICE_LIT("")));
        cm_buf_free(&s);
        cm_json_doc_free(doc);
        lines++;
    }
    close(fd);
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(lines, want);
}

static uint64_t metric(cm_metrics_t *m, const char *name, const char *backend)
{
    char labels[32];
    snprintf(labels, sizeof(labels), "backend=\"%s\"", backend);
    return cm_counter_value(cm_metrics_counter(m, name, "", labels));
}

static double in_flight_gauge(cm_metrics_t *m, const char *backend)
{
    char labels[32];
    snprintf(labels, sizeof(labels), "backend=\"%s\"", backend);
    return cm_gauge_value(cm_metrics_gauge(m, "queue_messages_in_flight", "", labels));
}

static void test_kafka_roundtrip(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_metrics_t *metrics = cm_metrics_new();
    cm_queue_t *q = kafka_queue(&loop, 0, metrics);
    static batch_t b;

    produce_n(q, &b, "events", N_MSGS);
    assert_int_equal(b.done, 0);
    assert_int_equal(cm_queue_in_flight(q), N_MSGS);
    assert_true(run_until(&loop, batch_done, &b, 20000));
    assert_int_equal(check_batch(&b), 0);
    assert_true(cm_queue_ready(q, NULL));
    assert_int_equal(metric(metrics, "queue_messages_produced_total", "kafka"), N_MSGS);
    assert_int_equal(metric(metrics, "queue_messages_acked_total", "kafka"), N_MSGS);
    assert_int_equal(metric(metrics, "queue_messages_failed_total", "kafka"), 0);
    assert_true(in_flight_gauge(metrics, "kafka") == 0.0);
    close_queue_and_loop(&loop, q, 1000);
    cm_metrics_free(metrics);

    static bool seen[N_MSGS];
    kafka_read_back("events", N_MSGS, seen);
    kafka_dump_check("events", N_MSGS);
}

/* Once the queue is ready, the first message to a topic it has not used
 * yet is acknowledged after one metadata round trip. A topic created by
 * rd_kafka_produceva() from its name gets no metadata request of its own
 * and waited for librdkafka's 1 s topic scan. */
static void test_kafka_first_message(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = kafka_queue(&loop, 0, NULL);
    static batch_t b;

    assert_true(run_until(&loop, is_ready, q, 10000));
    uint64_t t0 = now_ms();
    produce_n(q, &b, "first", 1);
    assert_true(run_until(&loop, batch_done, &b, 5000));
    assert_int_equal(check_batch(&b), 0);
    uint64_t took = now_ms() - t0;
    if (took >= 500)
        fprintf(stderr, "first message acknowledged after %llu ms\n", (unsigned long long)took);
    assert_true(took < 500);
    close_queue_and_loop(&loop, q, 1000);
}

static void test_kafka_refusals(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = kafka_queue(&loop, 0, NULL);
    static batch_t b;
    char *big = calloc(1, 1000001);
    cm_queue_msg_t msg = {.topic = "big", .value = {big, 1000001}};

    b.recs[0].b = &b;
    assert_int_equal(cm_queue_produce(q, &msg, on_done, &b.recs[0]), CM_ETOOBIG);
    msg.topic = NULL;
    assert_int_equal(cm_queue_produce(q, &msg, on_done, &b.recs[0]), CM_EINVAL);
    msg = (cm_queue_msg_t){.topic = "big", .value = {big, 1000}};
    assert_int_equal(cm_queue_produce(q, &msg, NULL, NULL), CM_EINVAL);

    /* A bad extra property is refused at creation. */
    const char *bad[] = {"no.such.property=1"};
    cm_queue_kafka_opts_t o = {.brokers = bootstrap, .extra = bad, .nextra = 1};
    cm_queue_t *q2 = NULL;
    assert_int_equal(cm_queue_kafka_new(&loop, &o, &q2), CM_EINVAL);
    assert_null(q2);

    /* Messages under the limit go through; the first callback closes the
     * queue, which still waits for the second message. */
    closer_t c = {.q = q};
    assert_int_equal(cm_queue_produce(q, &msg, close_from_cb, &c), 0);
    assert_int_equal(cm_queue_produce(q, &msg, close_from_cb, &c), 0);
    free(big);
    assert_true(run_until(&loop, flag_set, &c.closed, 10000));
    assert_int_equal(c.calls, 2);
    assert_int_equal(c.failures, 0);
    assert_int_equal(b.recs[0].calls, 0); /* refused: never called back */
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static bool all_done(void *arg)
{
    const batch_t *b = arg;
    return b->done == b->n;
}

/* librdkafka's own local queue full: produce still returns 0 (messages are
 * handed over at the end of the loop iteration) and the refusal reaches
 * the callback, later, as CM_EAGAIN; the others are delivered. */
static void test_kafka_local_queue_full(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_kafka_opts_t o = {.brokers = bootstrap, .queue_buffering_max_kbytes = 1};
    cm_queue_t *q = NULL;
    assert_int_equal(cm_queue_kafka_new(&loop, &o, &q), 0);
    assert_true(run_until(&loop, is_ready, q, 10000));
    static batch_t b;
    produce_n(q, &b, "full", 200);
    assert_int_equal(b.done, 0);
    assert_true(run_until(&loop, all_done, &b, 10000));
    int full = 0, ok = 0;
    for (int i = 0; i < b.n; i++) {
        assert_int_equal(b.recs[i].calls, 1);
        assert_false(b.recs[i].sync);
        if (b.recs[i].status == CM_EAGAIN)
            full++;
        else if (b.recs[i].status == 0)
            ok++;
    }
    assert_true(full > 0);
    assert_true(ok > 0);
    assert_int_equal(full + ok, b.n);
    close_queue_and_loop(&loop, q, 1000);
}

static void test_kafka_broker_down(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = kafka_queue(&loop, 1500, NULL);
    static batch_t b;

    assert_true(run_until(&loop, is_ready, q, 10000));
    kill(broker_pid, SIGUSR1);
    assert_true(run_until(&loop, not_ready, q, 5000));
    cm_buf_t why = CM_BUF_INIT;
    assert_false(cm_queue_ready(q, &why));
    assert_true(why.len > 0);
    cm_buf_free(&why);

    uint64_t t0 = now_ms();
    produce_n(q, &b, "down", 50);
    assert_true(run_until(&loop, batch_done, &b, 15000));
    assert_int_equal(check_batch(&b), 50); /* every one failed */
    for (int i = 0; i < 50; i++)
        assert_int_equal(b.recs[i].status, CM_ETIMEDOUT);
    assert_true(now_ms() - t0 >= 1400);

    kill(broker_pid, SIGUSR2);
    assert_true(run_until(&loop, is_ready, q, 10000));
    produce_n(q, &b, "down", 50);
    assert_true(run_until(&loop, batch_done, &b, 10000));
    assert_int_equal(check_batch(&b), 0);
    close_queue_and_loop(&loop, q, 1000);
}

static void test_kafka_close_outstanding(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = kafka_queue(&loop, 10000, NULL);
    static batch_t b;

    /* Deliveries that can complete are waited for. */
    produce_n(q, &b, "closing", 100);
    close_queue_and_loop(&loop, q, 5000);
    assert_int_equal(check_batch(&b), 0);

    /* Deliveries that cannot complete fail at the close deadline, long
     * before message.timeout.ms. */
    uv_loop_init(&loop);
    q = kafka_queue(&loop, 10000, NULL);
    assert_true(run_until(&loop, is_ready, q, 10000));
    kill(broker_pid, SIGUSR1);
    assert_true(run_until(&loop, not_ready, q, 5000));
    produce_n(q, &b, "closing", 20);
    uint64_t t0 = now_ms();
    bool closed = false;
    cm_queue_close(q, 300, set_flag, &closed);
    test_msg_t m;
    make_msg(&m, "closing", 0);
    assert_int_equal(cm_queue_produce(q, &m.msg, on_done, &b.recs[0]), CM_EAGAIN);
    assert_true(run_until(&loop, flag_set, &closed, 5000));
    assert_true(now_ms() - t0 < 3000);
    assert_int_equal(check_batch(&b), 20);
    for (int i = 0; i < 20; i++)
        assert_int_equal(b.recs[i].status, CM_ETIMEDOUT);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    kill(broker_pid, SIGUSR2);
}

/* ---- Redis --------------------------------------------------------------------------- */

static cm_redis_t *redis_client(uv_loop_t *loop, int command_timeout_ms)
{
    cm_redis_opts_t o = {.port = redis_port, .command_timeout_ms = command_timeout_ms};
    cm_redis_t *r = NULL;
    kill(redis_pid, SIGCONT); /* a test that failed may have left it stopped */
    assert_int_equal(cm_redis_new(loop, &o, &r), 0);
    return r;
}

static bool redis_up(void *arg)
{
    return cm_redis_connected(arg);
}

static cm_queue_t *redis_queue(uv_loop_t *loop, cm_redis_t *r, uint64_t maxlen,
                               cm_metrics_t *metrics)
{
    cm_queue_redis_opts_t o = {.maxlen = maxlen, .metrics = metrics};
    cm_queue_t *q = NULL;
    assert_true(run_until(loop, redis_up, r, 5000));
    assert_int_equal(cm_queue_redis_new(loop, r, &o, &q), 0);
    assert_string_equal(cm_queue_backend(q), "redis");
    return q;
}

/* Queues close before their client (queue.h). */
static void close_queue(uv_loop_t *loop, cm_queue_t *q)
{
    bool closed = false;
    cm_queue_close(q, 1000, set_flag, &closed);
    assert_true(run_until(loop, flag_set, &closed, 5000));
}

static void close_redis(uv_loop_t *loop, cm_redis_t *r)
{
    bool closed = false;
    cm_redis_close(r, set_flag, &closed);
    assert_true(run_until(loop, flag_set, &closed, 5000));
}

typedef struct {
    bool done;
    int entries;
    long long integer;
} xrange_t;

static bool field_is(const redisReply *f, const char *p, size_t len)
{
    return f->type == REDIS_REPLY_STRING && f->len == len && memcmp(f->str, p, len) == 0;
}

/* XRANGE reply: entries in XADD order, each [id, [field, value, ...]]. */
static void on_xrange(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    xrange_t *x = ud;
    (void)r;
    x->done = true;
    assert_null(err);
    assert_int_equal(reply->type, REDIS_REPLY_ARRAY);
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *f = reply->element[i]->element[1];
        test_msg_t m;
        make_msg(&m, "events", (int)i);
        assert_int_equal(f->elements, 10);
        assert_true(field_is(f->element[0], "key", 3));
        assert_true(field_is(f->element[1], m.msg.key.p, m.msg.key.len));
        assert_true(field_is(f->element[2], "value", 5));
        assert_true(field_is(f->element[3], m.value, m.value_len));
        assert_true(field_is(f->element[4], "h:uuid", 6));
        assert_true(field_is(f->element[5], m.uuid, 8));
        assert_true(field_is(f->element[6], "h:bin", 5));
        assert_true(field_is(f->element[7], bin_header, 3));
        assert_true(field_is(f->element[8], "h:empty", 7));
        assert_true(field_is(f->element[9], "", 0));
        x->entries++;
    }
}

static void on_integer(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    xrange_t *x = ud;
    (void)r;
    assert_null(err);
    x->integer = reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
    x->done = true;
}

static void test_redis_roundtrip(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_metrics_t *metrics = cm_metrics_new();
    cm_redis_t *r = redis_client(&loop, 0);
    cm_queue_t *q = redis_queue(&loop, r, 0, metrics);
    static batch_t b;

    assert_true(cm_queue_ready(q, NULL));
    produce_n(q, &b, "events", N_MSGS);
    assert_int_equal(b.done, 0);
    assert_true(run_until(&loop, batch_done, &b, 10000));
    assert_int_equal(check_batch(&b), 0);
    assert_int_equal(metric(metrics, "queue_messages_acked_total", "redis"), N_MSGS);
    assert_true(in_flight_gauge(metrics, "redis") == 0.0);

    xrange_t x = {0};
    cm_redis_command(r, on_xrange, &x, "XRANGE events - +");
    assert_true(run_until(&loop, flag_set, &x.done, 5000));
    assert_int_equal(x.entries, N_MSGS);

    /* MAXLEN ~ trims in whole radix-tree nodes (100 entries by default). */
    cm_queue_t *trimmed = redis_queue(&loop, r, 100, NULL);
    produce_n(trimmed, &b, "trimmed", N_MSGS);
    assert_true(run_until(&loop, batch_done, &b, 10000));
    assert_int_equal(check_batch(&b), 0);
    x = (xrange_t){0};
    cm_redis_command(r, on_integer, &x, "XLEN trimmed");
    assert_true(run_until(&loop, flag_set, &x.done, 5000));
    assert_true(x.integer >= 100 && x.integer <= 200);

    close_queue(&loop, trimmed);
    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    cm_metrics_free(metrics);
}

static void test_redis_errors(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 0);
    cm_queue_t *q = redis_queue(&loop, r, 0, NULL);
    static batch_t b;
    char *big = calloc(1, 1000001);
    cm_queue_msg_t msg = {.topic = "big", .value = {big, 1000001}};

    b.recs[0].b = &b;
    assert_int_equal(cm_queue_produce(q, &msg, on_done, &b.recs[0]), CM_ETOOBIG);
    free(big);

    /* An error reply (the key holds a string, not a stream) is an error. */
    xrange_t x = {0};
    cm_redis_command(r, on_integer, &x, "SET notastream x");
    assert_true(run_until(&loop, flag_set, &x.done, 5000));
    produce_n(q, &b, "notastream", 3);
    assert_true(run_until(&loop, batch_done, &b, 5000));
    assert_int_equal(check_batch(&b), 3);
    assert_int_equal(b.recs[0].status, CM_EIO);
    assert_true(cm_queue_ready(q, NULL)); /* the server itself is fine */
    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A stopped server: the client's command timeout fails the messages, and a
 * close deadline shorter than that abandons them to the client. */
static void test_redis_stopped(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 300);
    cm_queue_t *q = redis_queue(&loop, r, 0, NULL);
    static batch_t b;

    kill(redis_pid, SIGSTOP);
    uint64_t t0 = now_ms();
    produce_n(q, &b, "stopped", 10);
    assert_true(run_until(&loop, batch_done, &b, 5000));
    assert_int_equal(check_batch(&b), 10);
    assert_int_equal(b.recs[0].status, CM_ETIMEDOUT);
    assert_true(now_ms() - t0 >= 250);
    kill(redis_pid, SIGCONT);

    cm_redis_t *slow = redis_client(&loop, 3000);
    cm_queue_t *q2 = redis_queue(&loop, slow, 0, NULL);
    kill(redis_pid, SIGSTOP);
    produce_n(q2, &b, "stopped", 20);
    bool closed = false;
    t0 = now_ms();
    cm_queue_close(q2, 200, set_flag, &closed);
    assert_true(run_until(&loop, flag_set, &closed, 5000));
    assert_true(now_ms() - t0 < 1500);
    assert_int_equal(check_batch(&b), 20);
    assert_int_equal(b.recs[19].status, CM_ETIMEDOUT);
    kill(redis_pid, SIGCONT);
    /* The late replies free the abandoned messages (LeakSanitizer checks). */
    assert_true(run_until(&loop, redis_up, r, 5000));
    xrange_t x = {0};
    cm_redis_command(slow, on_integer, &x, "XLEN stopped");
    assert_true(run_until(&loop, flag_set, &x.done, 5000));
    /* The abandoned ones were stored all the same (at-least-once); the
     * timed-out ones probably too, but their connection was dropped. */
    assert_true(x.integer >= 20 && x.integer <= 30);

    close_queue(&loop, q);
    close_redis(&loop, slow);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Last Redis test: the server is gone for good afterwards. */
static void test_redis_killed(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 5000);
    cm_queue_t *q = redis_queue(&loop, r, 0, NULL);
    static batch_t b;

    produce_n(q, &b, "killed", 100);
    reap(&redis_pid, SIGKILL);
    uint64_t t0 = now_ms();
    assert_true(run_until(&loop, batch_done, &b, 5000));
    assert_true(now_ms() - t0 < 1000); /* promptly, not at the 5 s timeout */
    assert_int_equal(check_batch(&b), 100);
    assert_int_equal(b.recs[0].status, CM_EIO);

    assert_false(cm_queue_ready(q, NULL));
    test_msg_t m;
    make_msg(&m, "killed", 0);
    assert_int_equal(cm_queue_produce(q, &m.msg, on_done, &b.recs[0]), CM_EAGAIN);
    assert_int_equal(b.recs[0].calls, 1);

    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- Batches (both backends) ------------------------------------------------------- */

typedef struct {
    cm_queue_t *q;
    const char *topic;
    int calls;
    bool in_call; /* inside cm_queue_batch() */
    bool sync;    /* done ran from inside it */
    size_t emitted, max_in_flight;
    cm_queue_batch_result_t r;
} qbatch_t;

static int emit_test(cm_queue_batch_t *b, size_t i, void *ud)
{
    qbatch_t *t = ud;
    assert_int_equal(i, t->emitted); /* in order, each once */
    t->emitted++;
    if (cm_queue_in_flight(t->q) > t->max_in_flight)
        t->max_in_flight = cm_queue_in_flight(t->q);
    test_msg_t m;
    make_msg(&m, t->topic, (int)(i % N_MSGS));
    return cm_queue_batch_send(b, &m.msg);
}

static void on_qbatch_done(const cm_queue_batch_result_t *r, void *ud)
{
    qbatch_t *t = ud;
    t->calls++;
    t->sync = t->in_call;
    t->r = *r;
}

static int start_batch(cm_queue_t *q, qbatch_t *t, const char *topic, size_t n, const char **why)
{
    memset(t, 0, sizeof(*t));
    t->q = q;
    t->topic = topic;
    t->in_call = true;
    int rc = cm_queue_batch(q, n, emit_test, on_qbatch_done, t, why);
    t->in_call = false;
    return rc;
}

static bool qbatch_done(void *arg)
{
    return ((qbatch_t *)arg)->calls > 0;
}

static bool never(void *arg)
{
    (void)arg;
    return false;
}

static cm_queue_t *redis_queue_window(uv_loop_t *loop, cm_redis_t *r, size_t window)
{
    cm_queue_redis_opts_t o = {.max_in_flight = window, .batch_backlog = window};
    cm_queue_t *q = NULL;
    assert_true(run_until(loop, redis_up, r, 5000));
    assert_int_equal(cm_queue_redis_new(loop, r, &o, &q), 0);
    return q;
}

static long long redis_integer(uv_loop_t *loop, cm_redis_t *r, const char *cmd)
{
    xrange_t x = {0};
    cm_redis_command(r, on_integer, &x, cmd);
    assert_true(run_until(loop, flag_set, &x.done, 5000));
    return x.integer;
}

/* A batch larger than the window goes through in steps, in order, never
 * above the window, and is read back byte for byte. */
static void test_redis_batch_steps(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 0);
    cm_queue_t *q = redis_queue_window(&loop, r, 300);
    static qbatch_t t;

    assert_int_equal(start_batch(q, &t, "bsteps", N_MSGS, NULL), 0);
    assert_int_equal(t.emitted, 0); /* nothing from inside the call */
    assert_int_equal(cm_queue_waiting(q), N_MSGS);
    assert_true(run_until(&loop, qbatch_done, &t, 10000));
    assert_int_equal(t.calls, 1);
    assert_false(t.sync);
    assert_int_equal(t.r.acked, N_MSGS);
    assert_int_equal(t.r.failed + t.r.unsent, 0);
    assert_int_equal(t.r.status, 0);
    assert_true(t.max_in_flight < 300);
    assert_int_equal(cm_queue_waiting(q), 0);
    xrange_t x = {0};
    cm_redis_command(r, on_xrange, &x, "XRANGE bsteps - +");
    assert_true(run_until(&loop, flag_set, &x.done, 5000));
    assert_int_equal(x.entries, N_MSGS);
    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Admission is for the whole batch: with the server stopped, the window
 * fills, the backlog fills, and the next batch is refused before any of
 * it is written; once the server runs again the admitted ones complete. */
static void test_redis_batch_admission(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 20000);
    cm_queue_t *q = redis_queue_window(&loop, r, 100);
    static qbatch_t a, b, c;
    const char *why = NULL;

    kill(redis_pid, SIGSTOP);
    assert_int_equal(start_batch(q, &a, "badm", 150, NULL), 0);
    run_until(&loop, never, NULL, 100);
    assert_int_equal(cm_queue_in_flight(q), 100);
    assert_int_equal(cm_queue_waiting(q), 50);
    assert_int_equal(start_batch(q, &b, "badm", 60, NULL), 0);
    assert_int_equal(cm_queue_waiting(q), 110);
    assert_int_equal(start_batch(q, &c, "badm-refused", 1, &why), CM_EAGAIN);
    assert_non_null(why);
    assert_true(cm_queue_retry_after_ms(q) >= 1000);
    kill(redis_pid, SIGCONT);
    assert_true(run_until(&loop, qbatch_done, &b, 10000));
    assert_true(qbatch_done(&a));
    assert_int_equal(a.r.acked, 150);
    assert_int_equal(b.r.acked, 60);
    assert_int_equal(c.calls, 0);
    assert_int_equal(c.emitted, 0);
    assert_int_equal(redis_integer(&loop, r, "XLEN badm"), 210);
    assert_int_equal(redis_integer(&loop, r, "EXISTS badm-refused"), 0);
    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Consecutive failures open the breaker: batches are refused at once;
 * after the cool-down one probe goes through; a failed probe opens it
 * again, a good one closes it. The failure here is an error reply (the
 * key is not a stream), which the test can switch off. */
static void test_redis_breaker(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_metrics_t *metrics = cm_metrics_new();
    cm_redis_t *r = redis_client(&loop, 0);
    cm_queue_redis_opts_t o = {.metrics = metrics};
    cm_queue_t *q = NULL;
    assert_true(run_until(&loop, redis_up, r, 5000));
    assert_int_equal(cm_queue_redis_new(&loop, r, &o, &q), 0);
    static qbatch_t t, u;
    const char *why = NULL;

    assert_int_equal(redis_integer(&loop, r, "SET bbrk x") == -1, 1); /* +OK, not an integer */
    assert_int_equal(start_batch(q, &t, "bbrk", 10, NULL), 0);
    assert_true(run_until(&loop, qbatch_done, &t, 5000));
    assert_int_equal(t.r.status, CM_EIO);
    assert_int_equal(t.r.acked, 0);
    assert_int_equal(t.r.failed + t.r.unsent, 10);
    assert_int_equal(metric(metrics, "queue_breaker_opened_total", "redis"), 1);
    /* Open: refused at once, whatever the batch. */
    assert_int_equal(start_batch(q, &u, "bbrk-other", 1, &why), CM_EAGAIN);
    assert_non_null(why);
    assert_true(cm_queue_retry_after_ms(q) >= 1000);
    /* After the cool-down, one probe; it fails: open again (longer). */
    run_until(&loop, never, NULL, 1100);
    assert_int_equal(start_batch(q, &t, "bbrk", 3, NULL), 0);
    assert_int_equal(start_batch(q, &u, "bbrk-other", 1, &why), CM_EAGAIN); /* probe out */
    assert_true(run_until(&loop, qbatch_done, &t, 5000));
    assert_int_equal(t.r.status, CM_EIO);
    assert_int_equal(start_batch(q, &u, "bbrk-other", 1, NULL), CM_EAGAIN);
    assert_int_equal(metric(metrics, "queue_breaker_opened_total", "redis"), 2);
    /* The fault is repaired; the next probe succeeds and closes it. */
    assert_int_equal(redis_integer(&loop, r, "DEL bbrk"), 1);
    run_until(&loop, never, NULL, 2100);
    assert_int_equal(start_batch(q, &t, "bbrk", 5, NULL), 0);
    assert_true(run_until(&loop, qbatch_done, &t, 5000));
    assert_int_equal(t.r.acked, 5);
    assert_int_equal(start_batch(q, &u, "bbrk", 7, NULL), 0);
    assert_true(run_until(&loop, qbatch_done, &u, 5000));
    assert_int_equal(u.r.acked, 7);
    assert_int_equal(redis_integer(&loop, r, "XLEN bbrk"), 12);
    assert_true(metric(metrics, "queue_batches_refused_total", "redis") >= 3);
    close_queue(&loop, q);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    cm_metrics_free(metrics);
}

/* Close with a batch half in flight, half waiting: done runs once with
 * the abandoned as failed and the rest unsent; the loop ends clean. */
static void test_redis_batch_close(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_redis_t *r = redis_client(&loop, 20000);
    cm_queue_t *q = redis_queue_window(&loop, r, 100);
    static qbatch_t t;
    bool closed = false;

    kill(redis_pid, SIGSTOP);
    assert_int_equal(start_batch(q, &t, "bclose", 300, NULL), 0);
    run_until(&loop, never, NULL, 50);
    assert_int_equal(cm_queue_in_flight(q), 100);
    cm_queue_close(q, 200, set_flag, &closed);
    assert_true(run_until(&loop, flag_set, &closed, 5000));
    assert_int_equal(t.calls, 1);
    assert_int_equal(t.r.acked, 0);
    assert_int_equal(t.r.failed, 100);
    assert_int_equal(t.r.unsent, 200);
    assert_true(t.r.status == CM_EAGAIN || t.r.status == CM_ETIMEDOUT);
    kill(redis_pid, SIGCONT);
    assert_true(run_until(&loop, redis_up, r, 5000)); /* late replies free the abandoned */
    assert_true(redis_integer(&loop, r, "XLEN bclose") <= 100);
    close_redis(&loop, r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Kafka: the window is librdkafka's own local queue, so a batch three
 * times its size never meets "queue full" (test_kafka_local_queue_full
 * shows what single messages meet instead). */
static void test_kafka_batch_window(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const char *const extra[] = {"queue.buffering.max.messages=300"};
    cm_queue_kafka_opts_t o = {.brokers = bootstrap, .extra = extra, .nextra = 1};
    cm_queue_t *q = NULL;
    assert_int_equal(cm_queue_kafka_new(&loop, &o, &q), 0);
    assert_true(run_until(&loop, is_ready, q, 10000));
    static qbatch_t t;

    assert_int_equal(start_batch(q, &t, "bwin", N_MSGS, NULL), 0);
    assert_true(run_until(&loop, qbatch_done, &t, 20000));
    assert_false(t.sync);
    assert_int_equal(t.r.acked, N_MSGS);
    assert_int_equal(t.r.status, 0);
    assert_true(t.max_in_flight < 300);
    close_queue_and_loop(&loop, q, 1000);
    kafka_dump_check("bwin", N_MSGS);
}

/* Every Kafka broker down: a batch is refused at once, not held for the
 * message timeout. */
static void test_kafka_batch_down(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = kafka_queue(&loop, 10000, NULL);
    static qbatch_t t;
    const char *why = NULL;

    assert_true(run_until(&loop, is_ready, q, 10000));
    kill(broker_pid, SIGUSR1);
    assert_true(run_until(&loop, not_ready, q, 5000));
    assert_int_equal(start_batch(q, &t, "down", 5, &why), CM_EAGAIN);
    assert_non_null(why);
    kill(broker_pid, SIGUSR2);
    assert_true(run_until(&loop, is_ready, q, 10000));
    assert_int_equal(start_batch(q, &t, "down", 5, NULL), 0);
    assert_true(run_until(&loop, qbatch_done, &t, 10000));
    assert_int_equal(t.r.acked, 5);
    close_queue_and_loop(&loop, q, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kafka_roundtrip),    cmocka_unit_test(test_kafka_first_message),
        cmocka_unit_test(test_kafka_refusals),     cmocka_unit_test(test_kafka_local_queue_full),
        cmocka_unit_test(test_kafka_broker_down),  cmocka_unit_test(test_kafka_close_outstanding),
        cmocka_unit_test(test_kafka_batch_window), cmocka_unit_test(test_kafka_batch_down),
        cmocka_unit_test(test_redis_roundtrip),    cmocka_unit_test(test_redis_errors),
        cmocka_unit_test(test_redis_batch_steps),  cmocka_unit_test(test_redis_batch_admission),
        cmocka_unit_test(test_redis_breaker),      cmocka_unit_test(test_redis_batch_close),
        cmocka_unit_test(test_redis_stopped),      cmocka_unit_test(test_redis_killed),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
