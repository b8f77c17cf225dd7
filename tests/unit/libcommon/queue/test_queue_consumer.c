/*
 * test_queue_consumer.c - the queue consumer against a real Kafka broker:
 * tests/support/kafka_broker (librdkafka's mock cluster in its own process,
 * found next to this binary so the sanitizer tree uses its own), started
 * once for the group and killed by PID at the end. Messages are produced
 * with the queue's own Kafka producer. Each test has its own loop, its own
 * consumer group and topics, and checks that the loop closes with no
 * handle left.
 *
 *   - priority and bytes: 5,000 keyed messages on 4 partitions of "main"
 *     and 500 on "historical", one consumer: every message exactly once,
 *     byte for byte (binary values, empty keys, header order and empty
 *     header values), each batch from one topic, every main batch before
 *     the first historical one;
 *   - commit then close: batches capped by bytes lose, double and reorder
 *     nothing; a new member of the group gets nothing old, and then what is
 *     produced next;
 *   - retry: the same messages again, first and in order, on one partition
 *     (what librdkafka had prefetched behind the batch is re-read, never
 *     skipped nor doubled); on four partitions each partition starts again
 *     at the batch's offset; an uncommitted batch goes to the next member
 *     after a close;
 *   - two members: together every message; one closes holding an
 *     uncommitted batch, the other takes over its partitions and gets the
 *     rest, that batch included: nothing lost, and only that batch twice;
 *   - readiness: not ready before the broker is up, ready once the group is
 *     joined, not ready while the broker is down (SIGUSR1), ready again
 *     after SIGUSR2.
 *
 * librdkafka's mock group coordinator waits 3 s for the first members of a
 * group and session.timeout.ms - 1 s for the members of any later
 * rebalance, and it drops members whose session ran out meanwhile: the
 * consumers here use a 4 s session (longer than the 3 s, shorter than
 * librdkafka's default), so a rebalance takes 3 s. TEST_QUEUE_VERBOSE=1
 * shows the logs; TEST_FILTER='*retry*' runs some tests only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/metrics.h"
#include "cm/queue.h"
#include "cm/queue_consumer.h"
#include "servers.h"

#define PARTITIONS 4
#define MAX_INDEX  6000 /* messages per topic at most */

static pid_t broker_pid;
static char bootstrap[128];

#define now_ms srv_now_ms

static int group_setup(void **state)
{
    (void)state;
    cm_log_init("test_queue_consumer", getenv("TEST_QUEUE_VERBOSE") ? CM_LOG_DEBUG : CM_LOG_ERROR);
    return srv_start_broker(
        "main,historical,t_commit,t_retry1,t_retry4,t_redeliver,t_pair,t_ready,t_backlog,t_late",
        "4", &broker_pid, bootstrap, sizeof(bootstrap), "TEST_QUEUE_VERBOSE");
}

static int group_teardown(void **state)
{
    (void)state;
    int st = 0;
    if (broker_pid > 0) {
        kill(broker_pid, SIGCONT);
        kill(broker_pid, SIGTERM);
        waitpid(broker_pid, &st, 0);
        broker_pid = 0;
    }
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

static bool never(void *arg)
{
    (void)arg;
    return false;
}

static void run_for(uv_loop_t *loop, uint64_t ms)
{
    run_until(loop, never, NULL, ms);
}

static bool flag_set(void *arg)
{
    return *(bool *)arg;
}

static void set_flag(void *ud)
{
    *(bool *)ud = true;
}

static void finish_loop(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* ---- messages ---------------------------------------------------------------------- */

typedef struct {
    char key[32];
    char value[160];
    size_t value_len;
    char uuid[16];
    cm_queue_header_t headers[3];
    cm_queue_msg_t msg;
} test_msg_t;

static const char bin_header[] = {'\0', '\x01', '\xff'};

/* Message i of topic: every tenth has no key and the rest share 37 keys
 * (all "same" when one_key, so they share a partition); the value names
 * the topic and carries NUL, 0xff and a tail of varying length; headers
 * "uuid" (the index), a binary one and an empty one. */
static void make_msg(test_msg_t *m, const char *topic, int i, bool one_key)
{
    size_t klen = one_key       ? (size_t)snprintf(m->key, sizeof(m->key), "same")
                  : i % 10 == 0 ? 0
                                : (size_t)snprintf(m->key, sizeof(m->key), "user-%d", i % 37);
    int n = snprintf(m->value, sizeof(m->value), "{\"t\":\"%s\",\"i\":%d}", topic, i);
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

static bool one_key_topic(const char *topic)
{
    return strcmp(topic, "t_retry1") == 0 || strcmp(topic, "t_depth1") == 0;
}

typedef struct {
    int sent, done, failed;
} produced_t;

static void on_produced(int status, const char *err, void *ud)
{
    produced_t *p = ud;
    (void)err;
    p->done++;
    p->failed += status != 0;
}

static bool all_produced(void *arg)
{
    produced_t *p = arg;
    return p->done == p->sent;
}

static cm_queue_t *producer(uv_loop_t *loop)
{
    cm_queue_kafka_opts_t o = {.brokers = bootstrap};
    cm_queue_t *q = NULL;
    assert_int_equal(cm_queue_kafka_new(loop, &o, &q), 0);
    return q;
}

/* Messages from..to-1 of topic, acknowledged. */
static void produce(uv_loop_t *loop, cm_queue_t *q, const char *topic, int from, int to)
{
    produced_t p = {0};
    test_msg_t m;
    for (int i = from; i < to; i++) {
        make_msg(&m, topic, i, one_key_topic(topic));
        assert_int_equal(cm_queue_produce(q, &m.msg, on_produced, &p), 0);
        p.sent++;
    }
    assert_true(run_until(loop, all_produced, &p, 20000));
    assert_int_equal(p.failed, 0);
}

static void close_producer(uv_loop_t *loop, cm_queue_t *q)
{
    bool closed = false;
    cm_queue_close(q, 1000, set_flag, &closed);
    assert_true(run_until(loop, flag_set, &closed, 10000));
}

/* ---- a recording consumer -------------------------------------------------------- */

typedef struct {
    int source; /* topic index in the consumer's opts */
    int index;  /* the message's number (its uuid header) */
    int32_t partition;
    int64_t offset;
    int batch; /* ordinal of its batch at this consumer */
} got_t;

typedef enum {
    COMMIT,     /* every batch */
    RETRY_AT,   /* batch number retry_at is retried (retry_delay), the others committed */
    HOLD_AFTER, /* commit hold_after batches, then keep the next one (held) */
    HOLD_ALL,   /* keep every batch (held2), for the test to end */
} policy_t;

typedef struct {
    cm_consumer_t *c;
    const char *const *topics;
    size_t ntopics;
    size_t max_batch;
    size_t max_bytes; /* max_batch_bytes; 0: the default */
    policy_t policy;
    int hold_after;
    int retry_at; /* 1: the first batch */
    uint64_t retry_delay;
    /* what came */
    got_t *got;
    size_t ngot, cap;
    int batches;
    int *batch_source; /* per batch */
    size_t *batch_len;
    int committed, retried;
    cm_consumer_batch_t *held;
    cm_consumer_batch_t *held2[4]; /* HOLD_ALL: oldest first */
    size_t nheld2;
    size_t depth;
    bool in_api; /* the test is inside a call of the consumer API */
    bool closed;
} rec_t;

static int parse_index(const cm_consumed_t *m)
{
    if (m->nheaders < 1 || !cm_slice_eq_cstr(m->headers[0].name, "uuid") ||
        m->headers[0].value.len != 8)
        return -1;
    char num[9];
    memcpy(num, m->headers[0].value.p, 8);
    num[8] = '\0';
    return atoi(num);
}

/* Byte for byte what make_msg() produced. */
static void check_message(const cm_consumed_t *m, int i)
{
    test_msg_t want;
    make_msg(&want, m->topic, i, one_key_topic(m->topic));
    assert_int_equal(m->key.len, want.msg.key.len);
    assert_non_null(m->key.p); /* no key: an empty slice, not NULL */
    if (m->key.len > 0)
        assert_memory_equal(m->key.p, want.key, m->key.len);
    assert_int_equal(m->value.len, want.value_len);
    assert_memory_equal(m->value.p, want.value, want.value_len);
    assert_int_equal(m->nheaders, 3);
    for (size_t j = 0; j < 3; j++) {
        assert_true(cm_slice_eq(m->headers[j].name, want.headers[j].name));
        assert_int_equal(m->headers[j].value.len, want.headers[j].value.len);
        if (want.headers[j].value.len > 0)
            assert_memory_equal(m->headers[j].value.p, want.headers[j].value.p,
                                want.headers[j].value.len);
    }
    assert_false(m->redelivered);
}

static void on_batch(cm_consumer_batch_t *b, void *ud)
{
    rec_t *r = ud;
    size_t n = cm_consumer_batch_len(b);

    assert_false(r->in_api); /* never from inside an API call */
    assert_true(n > 0 && n <= r->max_batch);
    if (r->max_bytes > 0 && n > 1) { /* one message always goes, however big */
        size_t bytes = 0;
        for (size_t i = 0; i < n; i++)
            bytes += cm_consumer_batch_msg(b, i)->value.len;
        assert_true(bytes <= r->max_bytes);
    }
    const cm_consumed_t *first = cm_consumer_batch_msg(b, 0);
    assert_true(first->source < r->ntopics);
    r->batch_source = realloc(r->batch_source, (size_t)(r->batches + 1) * sizeof(int));
    r->batch_len = realloc(r->batch_len, (size_t)(r->batches + 1) * sizeof(size_t));
    r->batch_source[r->batches] = (int)first->source;
    r->batch_len[r->batches] = n;
    for (size_t i = 0; i < n; i++) {
        const cm_consumed_t *m = cm_consumer_batch_msg(b, i);
        /* One topic per batch. */
        assert_int_equal(m->source, first->source);
        assert_string_equal(m->topic, r->topics[first->source]);
        int index = parse_index(m);
        assert_true(index >= 0 && index < MAX_INDEX);
        check_message(m, index);
        int32_t p;
        int64_t off;
        assert_int_equal(sscanf(m->id, "%" SCNd32 ":%" SCNd64, &p, &off), 2);
        assert_true(p >= 0 && p < PARTITIONS && off >= 0);
        if (r->ngot == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 1024;
            r->got = realloc(r->got, r->cap * sizeof(*r->got));
        }
        r->got[r->ngot++] = (got_t){(int)m->source, index, p, off, r->batches};
    }
    r->batches++;
    if (r->policy == RETRY_AT && r->batches == r->retry_at) {
        r->retried++;
        cm_consumer_retry(b, r->retry_delay);
    } else if (r->policy == HOLD_AFTER && r->committed >= r->hold_after && r->held == NULL) {
        r->held = b;
    } else if (r->policy == HOLD_ALL) {
        assert_true(r->nheld2 < 4);
        r->held2[r->nheld2++] = b;
    } else {
        r->committed++;
        cm_consumer_commit(b);
    }
}

static const char *const test_extra[] = {"session.timeout.ms=4000", "heartbeat.interval.ms=300",
                                         "fetch.wait.max.ms=50"};

static cm_consumer_t *consumer(uv_loop_t *loop, rec_t *r, const char *group,
                               const char *const *topics, size_t ntopics, size_t max_batch,
                               cm_metrics_t *metrics)
{
    r->topics = topics;
    r->ntopics = ntopics;
    r->max_batch = max_batch;
    cm_consumer_opts_t o = {.topics = topics,
                            .ntopics = ntopics,
                            .group = group,
                            .max_batch = max_batch,
                            .max_batch_bytes = r->max_bytes,
                            .depth = r->depth,
                            .metrics = metrics};
    cm_consumer_kafka_opts_t ko = {.brokers = bootstrap, .extra = test_extra, .nextra = 3};
    r->in_api = true;
    assert_int_equal(cm_consumer_kafka_new(loop, &o, &ko, on_batch, r, &r->c), 0);
    r->in_api = false;
    assert_string_equal(cm_consumer_backend(r->c), "kafka");
    return r->c;
}

static void close_consumer(uv_loop_t *loop, rec_t *r)
{
    r->in_api = true;
    cm_consumer_close(r->c, set_flag, &r->closed);
    r->in_api = false;
    assert_false(r->closed); /* never from inside close */
    assert_true(run_until(loop, flag_set, &r->closed, 15000));
}

static void rec_free(rec_t *r)
{
    free(r->got);
    free(r->batch_source);
    free(r->batch_len);
}

typedef struct {
    rec_t *r;
    size_t n;
} want_t;

static bool got_at_least(void *arg)
{
    want_t *w = arg;
    return w->r->ngot >= w->n;
}

/* w->n distinct messages came, besides the retried batch's first delivery. */
static bool retried_all(void *arg)
{
    want_t *w = arg;
    const rec_t *r = w->r;
    return r->batches >= r->retry_at && r->ngot >= w->n + r->batch_len[r->retry_at - 1];
}

static bool has_held(void *arg)
{
    return ((rec_t *)arg)->held != NULL;
}

static bool is_ready(void *arg)
{
    return cm_consumer_ready(arg, NULL);
}

static bool not_ready(void *arg)
{
    return !cm_consumer_ready(arg, NULL);
}

/* How often each index of source came. */
static void count_indexes(const rec_t *r, int source, int *counts, int n)
{
    memset(counts, 0, (size_t)n * sizeof(int));
    for (size_t i = 0; i < r->ngot; i++)
        if (r->got[i].source == source) {
            assert_true(r->got[i].index < n);
            counts[r->got[i].index]++;
        }
}

/* Says where index of source came (for a failure's diagnosis). */
static void show_index(const rec_t *r, int source, int index)
{
    fprintf(stderr, "source %d index %d:", source, index);
    for (size_t i = 0; i < r->ngot; i++)
        if (r->got[i].source == source && r->got[i].index == index)
            fprintf(stderr, " [%" PRId32 ":%" PRId64 " batch %d]", r->got[i].partition,
                    r->got[i].offset, r->got[i].batch);
    fprintf(stderr, "\n");
}

/* Every index of source below n came exactly once. */
static void check_once(const rec_t *r, int source, int n)
{
    static int counts[MAX_INDEX];
    int bad = 0;
    count_indexes(r, source, counts, n);
    for (int i = 0; i < n; i++)
        if (counts[i] != 1 && bad++ < 5)
            show_index(r, source, i);
    assert_int_equal(bad, 0);
}

static uint64_t metric(cm_metrics_t *m, const char *name)
{
    return cm_counter_value(cm_metrics_counter(m, name, "", "backend=\"kafka\""));
}

/* ---- tests ------------------------------------------------------------------------- */

/* Every main and historical message came at least once. */
static bool priority_all_seen(void *arg)
{
    const rec_t *r = arg;
    static bool seen[2][MAX_INDEX];
    size_t distinct = 0;
    if (r->ngot < 5500)
        return false;
    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < r->ngot; i++)
        if (!seen[r->got[i].source][r->got[i].index]) {
            seen[r->got[i].source][r->got[i].index] = true;
            distinct++;
        }
    return distinct == 5500;
}

static void test_kafka_priority_and_bytes(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_metrics_t *metrics = cm_metrics_new();
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "main", 0, 5000);
    produce(&loop, q, "historical", 0, 500);
    close_producer(&loop, q);

    static const char *const topics[] = {"main", "historical"};
    static rec_t r;
    memset(&r, 0, sizeof(r));
    consumer(&loop, &r, "g_priority", topics, 2, 700, metrics);
    assert_true(run_until(&loop, priority_all_seen, &r, 30000));
    run_for(&loop, 300); /* anything more would be a duplicate */
    assert_true(cm_consumer_ready(r.c, NULL));

    uint64_t refused = metric(metrics, "queue_consumer_commit_failures_total");
    if (refused == 0 || r.ngot == 5500) {
        /* Exactly once, and every main batch before the first historical
         * one. (Commits the mock refused during a rebalance are harmless
         * as long as no partition moves: the next commit covers them.) */
        check_once(&r, 0, 5000);
        check_once(&r, 1, 500);
        assert_int_equal(r.ngot, 5500);
        size_t main_before = 0;
        int b = 0;
        for (; b < r.batches && r.batch_source[b] == 0; b++)
            main_before += r.batch_len[b];
        assert_int_equal(main_before, 5000);
        for (; b < r.batches; b++)
            assert_int_equal(r.batch_source[b], 1);
        assert_true(r.batches >= 5000 / 700 + 500 / 700 + 1);
    } else {
        /* Commits refused AND messages twice: seen only on a starved
         * machine. The mock coordinator refuses commits while it
         * rebalances (which it often does once more right after the first
         * generation: a follower's SyncGroup that comes after the leader's
         * is answered "invalid request" and it joins again); a member
         * that then lost its assignment (heartbeats late) read its
         * partitions again from the committed offsets. At least once
         * still holds. */
        fprintf(stderr, "note: %" PRIu64 " commit(s) refused by a rebalance: at least once only\n",
                refused);
        static int counts[MAX_INDEX];
        count_indexes(&r, 0, counts, 5000);
        for (int i = 0; i < 5000; i++)
            assert_true(counts[i] >= 1);
        count_indexes(&r, 1, counts, 500);
        for (int i = 0; i < 500; i++)
            assert_true(counts[i] >= 1);
    }

    close_consumer(&loop, &r);
    assert_int_equal(metric(metrics, "queue_consumer_messages_total"), r.ngot);
    assert_int_equal(metric(metrics, "queue_consumer_batches_total"), (uint64_t)r.batches);
    assert_int_equal(metric(metrics, "queue_consumer_commits_total"), (uint64_t)r.batches);
    assert_int_equal(metric(metrics, "queue_consumer_redelivered_total"), 0);
    finish_loop(&loop);
    cm_metrics_free(metrics);
    rec_free(&r);
}

/* Per partition, the offsets delivered from got[from..] are exactly
 * start[p], start[p]+1, ... end[p]-1, in that order. */
static void check_contiguous(const rec_t *r, size_t from, const int64_t *start, const int64_t *end)
{
    int64_t next[PARTITIONS];
    memcpy(next, start, sizeof(next));
    for (size_t i = from; i < r->ngot; i++) {
        const got_t *g = &r->got[i];
        assert_int_equal(g->offset, next[g->partition]);
        next[g->partition]++;
    }
    for (int p = 0; p < PARTITIONS; p++)
        assert_int_equal(next[p], end[p]);
}

static void test_kafka_commit_then_close(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_commit", 0, 1000);

    static const char *const topics[] = {"t_commit"};
    static rec_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    /* a's batches are capped by bytes (about 60 messages of these): a
     * message past the cap opens the next batch, nothing is lost, doubled
     * or reordered, and the commits cover what was delivered. */
    a.max_bytes = 4000;
    consumer(&loop, &a, "g_commit", topics, 1, 300, NULL);
    want_t w = {&a, 1000};
    assert_true(run_until(&loop, got_at_least, &w, 20000));
    close_consumer(&loop, &a);
    assert_int_equal(a.ngot, 1000);
    check_once(&a, 0, 1000);
    assert_true(a.batches >= 10);
    int64_t from[PARTITIONS] = {0}, to[PARTITIONS] = {0};
    for (size_t i = 0; i < a.ngot; i++)
        if (a.got[i].offset + 1 > to[a.got[i].partition])
            to[a.got[i].partition] = a.got[i].offset + 1;
    check_contiguous(&a, 0, from, to);

    /* The next member starts where the first one committed: nothing old. */
    consumer(&loop, &b, "g_commit", topics, 1, 300, NULL);
    assert_true(run_until(&loop, is_ready, b.c, 15000));
    run_for(&loop, 1500);
    assert_int_equal(b.ngot, 0);
    produce(&loop, q, "t_commit", 1000, 1010);
    w = (want_t){&b, 10};
    assert_true(run_until(&loop, got_at_least, &w, 10000));
    run_for(&loop, 200);
    assert_int_equal(b.ngot, 10);
    for (size_t i = 0; i < b.ngot; i++)
        assert_true(b.got[i].index >= 1000);
    close_consumer(&loop, &b);
    close_producer(&loop, q);
    finish_loop(&loop);
    rec_free(&a);
    rec_free(&b);
}

static void test_kafka_retry(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_retry1", 0, 1000);
    produce(&loop, q, "t_retry4", 0, 2000);

    /* Two consumers at once (their groups' 3 s joins overlap). */
    static const char *const topics1[] = {"t_retry1"}, *const topics4[] = {"t_retry4"};
    static rec_t one, four;
    memset(&one, 0, sizeof(one));
    memset(&four, 0, sizeof(four));
    one.policy = four.policy = RETRY_AT;
    one.retry_at = 1;
    one.retry_delay = 100;
    four.retry_at = 2; /* the second batch: its partitions start again mid-way */
    consumer(&loop, &one, "g_retry1", topics1, 1, 200, NULL);
    consumer(&loop, &four, "g_retry4", topics4, 1, 300, NULL);
    want_t w1 = {&one, 1000}, w4 = {&four, 2000};
    assert_true(run_until(&loop, retried_all, &w1, 20000));
    assert_true(run_until(&loop, retried_all, &w4, 20000));
    run_for(&loop, 300);

    /* One partition: the batch (the first n, with more of the partition
     * prefetched behind it), the same n again, then the rest: nothing
     * skipped, nothing twice. */
    assert_int_equal(one.retried, 1);
    size_t n1 = one.batch_len[0];
    assert_int_equal(one.ngot, 1000 + n1);
    for (size_t i = 0; i < n1; i++) {
        assert_int_equal(one.got[i].index, (int)i);
        assert_int_equal(one.got[n1 + i].offset, one.got[i].offset);
        assert_int_equal(one.got[n1 + i].partition, one.got[i].partition);
    }
    for (size_t i = n1; i < one.ngot; i++)
        assert_int_equal(one.got[i].index, (int)(i - n1));

    /* Four partitions, the second batch retried: each of its partitions
     * starts again at the batch's offset there, the others go on where the
     * first batch left them; from then on nothing skipped nor repeated. */
    assert_int_equal(four.retried, 1);
    size_t b1 = four.batch_len[0], b2 = four.batch_len[1];
    int64_t start[PARTITIONS] = {0}, end[PARTITIONS] = {0};
    for (size_t i = 0; i < b1; i++)
        start[four.got[i].partition] = four.got[i].offset + 1;
    bool in_b2[PARTITIONS] = {false};
    for (size_t i = b1; i < b1 + b2; i++) {
        const got_t *g = &four.got[i];
        if (!in_b2[g->partition] || g->offset < start[g->partition])
            start[g->partition] = g->offset;
        in_b2[g->partition] = true;
    }
    static int counts[MAX_INDEX];
    memset(counts, 0, sizeof(counts));
    for (size_t i = 0; i < four.ngot; i++) {
        const got_t *g = &four.got[i];
        if (g->offset + 1 > end[g->partition])
            end[g->partition] = g->offset + 1;
        if (i < b1 || i >= b1 + b2)
            counts[g->index]++;
    }
    for (int i = 0; i < 2000; i++)
        assert_int_equal(counts[i], 1);
    assert_int_equal(four.ngot, 2000 + b2);
    check_contiguous(&four, b1 + b2, start, end);

    close_consumer(&loop, &one);
    close_consumer(&loop, &four);

    /* A batch never committed goes to the next member after a close. */
    produce(&loop, q, "t_redeliver", 0, 500);
    static const char *const topicsr[] = {"t_redeliver"};
    static rec_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.policy = HOLD_AFTER;
    a.hold_after = 1;
    consumer(&loop, &a, "g_redeliver", topicsr, 1, 100, NULL);
    assert_true(run_until(&loop, has_held, &a, 15000));
    size_t committed = a.batch_len[0], held = a.batch_len[1];
    assert_int_equal(a.ngot, committed + held);
    bool closed = false;
    a.in_api = true;
    cm_consumer_close(a.c, set_flag, &closed);
    cm_consumer_retry(a.held, 0); /* ends it, uncommitted; no batch comes after close */
    a.in_api = false;
    assert_true(run_until(&loop, flag_set, &closed, 15000));
    assert_int_equal(a.batches, 2);

    consumer(&loop, &b, "g_redeliver", topicsr, 1, 100, NULL);
    want_t wb = {&b, 500 - committed};
    assert_true(run_until(&loop, got_at_least, &wb, 15000));
    run_for(&loop, 300);
    assert_int_equal(b.ngot, 500 - committed);
    memset(counts, 0, sizeof(counts));
    for (size_t i = 0; i < b.ngot; i++)
        counts[b.got[i].index]++;
    for (size_t i = 0; i < a.ngot; i++) /* the committed batch: not again; the held one: again */
        assert_int_equal(counts[a.got[i].index], i < committed ? 0 : 1);
    /* Per partition, b starts where a committed. */
    int64_t from[PARTITIONS] = {0}, to[PARTITIONS] = {0};
    for (size_t i = 0; i < committed; i++)
        from[a.got[i].partition] = a.got[i].offset + 1;
    for (size_t i = 0; i < b.ngot; i++)
        if (b.got[i].offset + 1 > to[b.got[i].partition])
            to[b.got[i].partition] = b.got[i].offset + 1;
    for (int p = 0; p < PARTITIONS; p++)
        if (to[p] == 0)
            to[p] = from[p]; /* nothing left there */
    check_contiguous(&b, 0, from, to);
    close_consumer(&loop, &b);
    close_producer(&loop, q);
    finish_loop(&loop);
    rec_free(&one);
    rec_free(&four);
    rec_free(&a);
    rec_free(&b);
}

typedef struct {
    rec_t *a, *b;
    int n;
} pair_t;

static bool pair_has_all(void *arg)
{
    pair_t *p = arg;
    static int seen[MAX_INDEX];
    memset(seen, 0, sizeof(seen));
    int distinct = 0;
    rec_t *rs[2] = {p->a, p->b};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < rs[k]->ngot; i++)
            if (seen[rs[k]->got[i].index]++ == 0)
                distinct++;
    return distinct == p->n;
}

static bool two_held(void *arg)
{
    return ((rec_t *)arg)->nheld2 == 2;
}

/* Depth 2 on one partition: a second batch while the first is held, never a
 * third; committing the oldest lets the third come; the two held handed
 * back, newest first, come again from the older one's first offset, in
 * order, each message once more, then the rest. */
static void test_kafka_depth_two(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_depth1", 0, 1000);
    static const char *const topics[] = {"t_depth1"};
    static rec_t r;
    memset(&r, 0, sizeof(r));
    r.policy = HOLD_ALL;
    r.depth = 2;
    consumer(&loop, &r, "g_depth1", topics, 1, 100, NULL);
    assert_true(run_until(&loop, two_held, &r, 20000));
    run_for(&loop, 300);
    assert_int_equal(r.batches, 2);

    r.in_api = true;
    cm_consumer_commit(r.held2[0]);
    r.in_api = false;
    r.held2[0] = r.held2[1];
    r.nheld2 = 1;
    assert_true(run_until(&loop, two_held, &r, 10000));
    run_for(&loop, 200);
    assert_int_equal(r.batches, 3);
    size_t n1 = r.batch_len[0], n23 = r.batch_len[1] + r.batch_len[2];

    r.policy = COMMIT;
    r.in_api = true;
    cm_consumer_retry(r.held2[1], 0);
    cm_consumer_retry(r.held2[0], 0);
    r.in_api = false;
    r.nheld2 = 0;
    want_t w = {&r, 1000 + n23};
    assert_true(run_until(&loop, got_at_least, &w, 20000));
    run_for(&loop, 300);
    assert_int_equal(r.ngot, 1000 + n23);
    for (size_t i = 0; i < n1 + n23; i++)
        assert_int_equal(r.got[i].index, (int)i);
    for (size_t i = n1 + n23; i < r.ngot; i++) /* from the second batch's first, in order */
        assert_int_equal(r.got[i].index, (int)(i - n23));
    close_consumer(&loop, &r);
    rec_free(&r);
    close_producer(&loop, q);
    finish_loop(&loop);
}

static void test_kafka_two_members(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const char *const topics[] = {"t_pair"};
    static rec_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.policy = HOLD_AFTER;
    a.hold_after = 3;
    /* Created together: both join the group's first generation. */
    consumer(&loop, &a, "g_pair", topics, 1, 100, NULL);
    consumer(&loop, &b, "g_pair", topics, 1, 100, NULL);
    assert_true(run_until(&loop, is_ready, a.c, 15000));
    assert_true(run_until(&loop, is_ready, b.c, 15000));
    /* Should b's join have missed the first generation (a loaded machine),
     * the partitions move in a second cooperative round, during which the
     * mock coordinator refuses commits: a refused commit of a batch whose
     * partition then moves to b would come twice. Let it settle. */
    run_for(&loop, 3500);

    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_pair", 0, 4000);
    assert_true(run_until(&loop, has_held, &a, 15000));
    /* Both took part: the partitions were shared. */
    want_t wb = {&b, 1};
    assert_true(run_until(&loop, got_at_least, &wb, 10000));
    size_t a_ngot = a.ngot;
    size_t held_from = a_ngot - a.batch_len[a.batches - 1];

    /* a leaves holding a batch it never commits; b takes over. */
    bool closed = false;
    a.in_api = true;
    cm_consumer_close(a.c, set_flag, &closed);
    cm_consumer_retry(a.held, 0);
    a.in_api = false;
    assert_true(run_until(&loop, flag_set, &closed, 15000));
    assert_int_equal(a.ngot, a_ngot);

    pair_t p = {&a, &b, 4000};
    assert_true(run_until(&loop, pair_has_all, &p, 20000));
    run_for(&loop, 500);

    /* Nothing lost; everything a held reached b. With the eager protocol
     * every member gives its partitions up on each rebalance and re-reads
     * from the committed offsets what it delivered while the rebalance ran
     * (the coordinator refuses commits meanwhile): copies, many on a slow
     * (sanitizer) run. At least once, as the writer expects: its store
     * drops the copies. */
    static int ca[MAX_INDEX], cb[MAX_INDEX];
    count_indexes(&a, 0, ca, 4000);
    count_indexes(&b, 0, cb, 4000);
    static bool held[MAX_INDEX];
    memset(held, 0, sizeof(held));
    for (size_t i = held_from; i < a.ngot; i++)
        held[a.got[i].index] = true;
    size_t twice = 0;
    for (int i = 0; i < 4000; i++) {
        assert_true(ca[i] + cb[i] >= 1);
        if (held[i]) {
            assert_true(cb[i] >= 1); /* the held batch reached b */
            twice++;
        }
    }
    assert_int_equal(twice, a.ngot - held_from);
    assert_true(a.ngot > 0 && b.ngot > 0);

    close_consumer(&loop, &b);
    close_producer(&loop, q);
    finish_loop(&loop);
    rec_free(&a);
    rec_free(&b);
}

/* The writer's case that lost messages with the cooperative protocol on
 * librdkafka 2.0: a member is working through a backlog (librdkafka's
 * prefetch full) when another member of the group joins for another topic
 * (a writer's historical consumer). Every message must still come. */
static void test_kafka_member_joins_during_backlog(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const char *const backlog[] = {"t_backlog"};
    static const char *const late[] = {"t_late"};
    static rec_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    enum { N = 5000 };
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_backlog", 0, N);
    consumer(&loop, &a, "g_backlog", backlog, 1, 20, NULL);
    want_t some = {&a, 400};
    assert_true(run_until(&loop, got_at_least, &some, 20000));
    consumer(&loop, &b, "g_backlog", late, 1, 20, NULL); /* the group rebalances now */
    int seen = 0;
    static int counts[MAX_INDEX];
    for (int round = 0; round < 400 && seen < N; round++) {
        run_for(&loop, 100);
        count_indexes(&a, 0, counts, N);
        seen = 0;
        for (int i = 0; i < N; i++)
            seen += counts[i] > 0;
    }
    for (int i = 0; i < N; i++)
        if (counts[i] == 0)
            fail_msg("message %d never came (%d of %d did)", i, seen, N);
    close_consumer(&loop, &a);
    close_consumer(&loop, &b);
    close_producer(&loop, q);
    finish_loop(&loop);
    rec_free(&a);
    rec_free(&b);
}

static void test_kafka_ready(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const char *const topics[] = {"t_ready"};
    static rec_t r;
    memset(&r, 0, sizeof(r));
    cm_buf_t why = CM_BUF_INIT;

    /* Not ready before the broker is up. */
    kill(broker_pid, SIGUSR1);
    usleep(100000);
    consumer(&loop, &r, "g_ready", topics, 1, 100, NULL);
    run_for(&loop, 1500);
    assert_false(cm_consumer_ready(r.c, &why));
    assert_true(why.len > 0);
    cm_buf_free(&why);

    /* Ready once it is, and consuming. */
    kill(broker_pid, SIGUSR2);
    assert_true(run_until(&loop, is_ready, r.c, 15000));
    cm_queue_t *q = producer(&loop);
    produce(&loop, q, "t_ready", 0, 20);
    want_t w = {&r, 20};
    assert_true(run_until(&loop, got_at_least, &w, 10000));

    /* Not ready while it is down; ready again after. */
    kill(broker_pid, SIGUSR1);
    assert_true(run_until(&loop, not_ready, r.c, 5000));
    why = CM_BUF_INIT;
    assert_false(cm_consumer_ready(r.c, &why));
    assert_true(why.len > 0);
    cm_buf_free(&why);
    kill(broker_pid, SIGUSR2);
    assert_true(run_until(&loop, is_ready, r.c, 10000));
    produce(&loop, q, "t_ready", 20, 30);
    w.n = 30;
    assert_true(run_until(&loop, got_at_least, &w, 15000));

    close_consumer(&loop, &r);
    close_producer(&loop, q);
    finish_loop(&loop);
    rec_free(&r);
}

static void test_kafka_bad_options(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const char *const topics[] = {"t_ready"};
    static const char *const bad[] = {"no.such.property=1"};
    static const char *const noeq[] = {"novalue"};
    rec_t r = {0};
    cm_consumer_t *c = NULL;
    cm_consumer_opts_t o = {.topics = topics, .ntopics = 1, .group = "g_bad"};
    cm_consumer_kafka_opts_t ko = {.brokers = bootstrap, .extra = bad, .nextra = 1};
    assert_int_equal(cm_consumer_kafka_new(&loop, &o, &ko, on_batch, &r, &c), CM_EINVAL);
    ko.extra = noeq;
    assert_int_equal(cm_consumer_kafka_new(&loop, &o, &ko, on_batch, &r, &c), CM_EINVAL);
    ko = (cm_consumer_kafka_opts_t){.brokers = NULL};
    assert_int_equal(cm_consumer_kafka_new(&loop, &o, &ko, on_batch, &r, &c), CM_EINVAL);
    ko.brokers = bootstrap;
    o.group = NULL;
    assert_int_equal(cm_consumer_kafka_new(&loop, &o, &ko, on_batch, &r, &c), CM_EINVAL);
    assert_null(c);
    finish_loop(&loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kafka_bad_options),
        cmocka_unit_test(test_kafka_priority_and_bytes),
        cmocka_unit_test(test_kafka_commit_then_close),
        cmocka_unit_test(test_kafka_retry),
        cmocka_unit_test(test_kafka_depth_two),
        cmocka_unit_test(test_kafka_two_members),
        cmocka_unit_test(test_kafka_member_joins_during_backlog),
        cmocka_unit_test(test_kafka_ready),
    };
    if (getenv("TEST_FILTER") != NULL) /* e.g. TEST_FILTER='*retry*' */
        cmocka_set_test_filter(getenv("TEST_FILTER"));
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
