/*
 * queue_kafka.c - the Kafka backend of the event queue (librdkafka 2.0).
 *
 * Threads. librdkafka runs its own threads and reports everything it has to
 * say (delivery reports, errors, statistics, and, with log.queue=true, its
 * logs) as ops on its main queue. Nothing of ours ever runs on its threads:
 *   - the main queue is given an eventfd with rd_kafka_queue_io_event_enable:
 *     librdkafka writes to it when an op arrives in the empty queue (newer
 *     versions: on the first op after each serve), not for every op;
 *   - a uv_poll_t watches the eventfd; its callback drains the counter and
 *     then calls rd_kafka_poll(rk, 0), which serves every queued op and so
 *     runs our callbacks on the loop thread without ever waiting.
 * Draining BEFORE polling matters: an op that arrives after the poll finds
 * the queue empty (served) again and writes a new wake-up; one that arrives
 * between the drain and the poll is served now and at worst costs a
 * spurious wake. No wake-up is lost: under load no delivery waits longer
 * than a few ms, where a lost one would wait for the next op (the
 * statistics, up to 1 s later).
 * An eventfd rather than a pipe, because a pipe can fill up, and librdkafka
 * turns the IO event off for good after a failed write. (That glue, the
 * settings helpers and the log levels are shared with the consumer:
 * kafka_loop.h.)
 *
 * The poll handle is referenced only while messages are in flight, so an
 * idle queue does not keep the loop alive; waiting deliveries do.
 *
 * Readiness means "the producer is usable": a broker connection is up and
 * the idempotent producer has its producer id (before that it can send
 * nothing). It is tracked without any blocking call: the statistics
 * (statistics.interval.ms, 1 s) list every broker connection with its state
 * and the producer id state (eos.idemp_state), a successful delivery proves
 * both, and the _ALL_BROKERS_DOWN error says the opposite at once. So a new
 * queue is ready within a second, or at its first acknowledgement. librdkafka
 * itself connects and asks for the producer id as soon as the producer is
 * created (both done within a millisecond of start on loopback); topic
 * metadata is asked for on each topic's first message (see topic_of()). A
 * fatal error (the idempotent producer lost its guarantees) is permanent:
 * the queue stays not ready and the service should be restarted.
 *
 * Batching without linger. A message is not handed to librdkafka at once:
 * cm_queue_produce() copies it into k->pending, and a uv_idle handle
 * produces everything pending early in the next loop iteration, after all
 * the I/O callbacks of this one (an active idle handle also keeps the loop
 * from blocking meanwhile). Each first message into an empty
 * partition queue wakes librdkafka's broker thread; produced one by one,
 * spread over an iteration, they woke it several times per iteration and
 * each wake-up sent a small ProduceRequest (about 4 messages at 32
 * concurrent single-event requests, measured). Produced together they go
 * out in one request, the broker thread and the mock broker do a fraction
 * of the work, and no message waits for a timer (linger.ms stays 0).
 * Refusals that only librdkafka can make (its local queue is full) then
 * reach the callback instead of the return value.
 *
 * Settings and their reasons (Nagle, linger...) are in proto/queue.md.
 *
 * Shutdown. rd_kafka_destroy() joins librdkafka's threads and can take a
 * while, so it runs on the libuv thread pool. By then the common code has
 * run the callback of every unfinished message; librdkafka never reports
 * messages it drops on destruction, which is why their ops (still its
 * opaques) are freed only after rd_kafka_destroy() has returned. Any
 * callback librdkafka might still run during destruction (logs) sees
 * `destroying` and returns without touching the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/strset.h"
#include "kafka_loop.h"
#include "queue_internal.h"

#define DEFAULT_MESSAGE_TIMEOUT_MS 10000
#define DEFAULT_MESSAGE_MAX_BYTES  1000000
#define STATS_INTERVAL_MS          "1000"
#define RECONNECT_BACKOFF_MAX_MS   "1000"
#define REFUSAL_LOG_INTERVAL_MS    1000
#define WHO                        "queue kafka"

typedef struct {
    cm_queue_t base; /* first: the ops receive &base */
    rd_kafka_t *rk;
    rd_kafka_queue_t *mainq;
    int efd;
    uv_poll_t poll;
    cm_strset_t *topics; /* name -> rd_kafka_topic_t *, see topic_of() */
    uv_work_t destroy_work;
    bool destroying;        /* set before the destroy work is queued */
    uint64_t destroy_start; /* uv_hrtime(), for the log */
    bool up;                /* usable at the last news: see on_stats() */
    bool brokers_down;      /* the last news: no broker connection is up */
    const char *down_why;   /* static text: why not, for cm_queue_ready() */
    bool idempotent;        /* enable.idempotence as finally configured */
    bool fatal;
    char fatal_reason[256];
    uint64_t last_refusal_log; /* uv_now() of the last logged refusal */
    size_t max_bytes;          /* message.max.bytes as finally configured */
    /* Messages waiting for the end of the loop iteration (see the top). */
    struct pending *pending;
    size_t npending, cap;
    uv_idle_t flush;
    cm__kafka_closing_t handles; /* poll + flush, closed at shutdown */
} kq_t;

/* A copied message: value and key live in one block, value first, which
 * librdkafka frees (RD_KAFKA_MSG_F_FREE) once it has sent it. */
typedef struct pending {
    cm__queue_op_t *op;
    rd_kafka_topic_t *rkt;
    rd_kafka_headers_t *hdrs; /* NULL: none */
    char *block;
    size_t vlen, klen;
} pending_t;

/* ---- librdkafka callbacks (loop thread, from rd_kafka_poll) ---------------- */

static int status_of(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR: return 0;
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE: return CM_ETOOBIG;
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT: return CM_ETIMEDOUT;
    default: return CM_EIO;
    }
}

/* why: static text, kept for cm_queue_ready(). */
static void set_up(kq_t *k, bool up, const char *why)
{
    if (!up)
        k->down_why = why;
    if (up == k->up)
        return;
    k->up = up;
    if (up)
        cm_log(CM_LOG_INFO, NULL, "queue kafka: producer usable (broker reachable%s)",
               k->idempotent ? ", producer id assigned" : "");
    else
        cm_log(CM_LOG_WARN, NULL, "queue kafka: not usable: %s", why);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    kq_t *k = opaque;

    (void)rk;
    if (k->destroying)
        return;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        k->brokers_down = false;
        set_up(k, true, NULL);
    }
    /* rd_kafka_err2str() is static text for every code librdkafka knows. */
    cm__queue_complete(m->_private, status_of(m->err), m->err ? rd_kafka_err2str(m->err) : NULL);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    kq_t *k = opaque;

    if (k->destroying)
        return;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char why[160];
        rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof(why));
        k->fatal = true;
        snprintf(k->fatal_reason, sizeof(k->fatal_reason), "%.64s: %s", rd_kafka_err2name(orig),
                 why);
        cm_log(CM_LOG_ERROR, NULL, "queue kafka: fatal producer error: %s", k->fatal_reason);
        return;
    }
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
        k->brokers_down = true;
        set_up(k, false, "all brokers are down");
    }
    cm_log(CM_LOG_WARN, NULL, "queue kafka: %s: %s", rd_kafka_err2name(err), reason);
}

/* Usable: some broker connection is in state UP and, for the idempotent
 * producer, the producer id is assigned (eos.idemp_state "Assigned"; until
 * then nothing can be sent). A statistics JSON without "eos" (a librdkafka
 * that does not report it) is judged on the brokers alone. */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    kq_t *k = opaque;
    cm_json_doc_t *doc = NULL;

    (void)rk;
    if (k->destroying || cm_json_parse(json, len, NULL, &doc, NULL) != 0)
        return 0;
    cm_json_t root = cm_json_root(doc);
    bool any_up = cm__kafka_stats_broker_up(root);
    cm_json_t eos = cm_json_get(root, "eos");
    bool pid = !k->idempotent || cm_json_type(eos) != CM_JSON_OBJECT ||
               cm_json_str_eq(cm_json_get(eos, "idemp_state"), CM_SLICE_LIT("Assigned"));
    cm_json_doc_free(doc);
    k->brokers_down = !any_up;
    if (!any_up)
        set_up(k, false, "no broker connection is up");
    else if (!pid)
        set_up(k, false, "the idempotent producer has no producer id yet");
    else
        set_up(k, true, NULL);
    return 0; /* librdkafka frees json */
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    kq_t *k = rd_kafka_opaque(rk);

    /* Only queued logs are expected (log.queue=true), but anything emitted
     * while destroying would come from a foreign thread: cm_log is not
     * thread-safe, so those go to stderr as they are. */
    if (k == NULL || k->destroying) {
        fprintf(stderr, "librdkafka %s: %s\n", fac, buf);
        return;
    }
    cm_log(cm__kafka_log_level(level), NULL, "queue kafka: %s: %s", fac, buf);
}

/* ---- the loop side ---------------------------------------------------------- */

static void on_poll(uv_poll_t *h, int status, int events)
{
    kq_t *k = h->data;

    (void)events;
    if (status < 0)
        cm_log(CM_LOG_ERROR, NULL, "queue kafka: eventfd poll: %s", uv_strerror(status));
    cm__kafka_wake_drain(k->efd);
    rd_kafka_poll(k->rk, 0);
    if (k->base.in_flight == 0 && !k->destroying)
        uv_unref((uv_handle_t *)&k->poll);
}

static int sync_status(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE: return CM_ETOOBIG;
    case RD_KAFKA_RESP_ERR__QUEUE_FULL: return CM_EAGAIN;
    case RD_KAFKA_RESP_ERR__INVALID_ARG: return CM_EINVAL;
    default: return CM_EIO;
    }
}

/*
 * The handle of a topic: created on the topic's first message, kept until
 * the producer is destroyed (a service uses a handful of topics).
 *
 * Creating it with rd_kafka_topic_new() instead of letting
 * rd_kafka_produceva() create the topic from its name is what makes the
 * first messages fast: rd_kafka_topic_new() asks the cluster for the new
 * topic's metadata at once, while a topic that produceva creates (after
 * the connection's first metadata request) waits for librdkafka's 1 s
 * topic scan, and so did every first request to a topic (measured: first
 * acknowledgement 950 ms after produce, 0.3 ms with the handle). Producing
 * through the handle also spares each message a lookup by name under
 * librdkafka's handle-wide lock.
 */
static rd_kafka_topic_t *topic_of(kq_t *k, const char *name, rd_kafka_resp_err_t *err)
{
    cm_slice_t key = cm_slice_from_cstr(name);
    rd_kafka_topic_t *rkt = cm_strset_get(k->topics, key);

    if (rkt != NULL)
        return rkt;
    rkt = rd_kafka_topic_new(k->rk, name, NULL); /* NULL: the producer's topic settings */
    if (rkt == NULL) {
        *err = rd_kafka_last_error();
        return NULL;
    }
    cm_strset_put(k->topics, key, rkt);
    return rkt;
}

/* The refusal's reason is logged at most once a second: every message
 * fails alike (unknown topic, fatal error...). */
static void log_refusal(kq_t *k, int rc, const char *topic, const char *reason)
{
    if (uv_now(k->base.loop) - k->last_refusal_log < REFUSAL_LOG_INTERVAL_MS)
        return;
    k->last_refusal_log = uv_now(k->base.loop);
    cm_log(rc == CM_ETOOBIG ? CM_LOG_DEBUG : CM_LOG_WARN, NULL,
           "queue kafka: cannot produce to %s: %s", topic, reason);
}

/* librdkafka tells a NULL pointer (a null key/value/header) apart from an
 * empty one; the queue has no nulls, so empty slices become "". */
static void *mem_of(cm_slice_t s)
{
    return s.len > 0 ? (void *)s.p : (void *)"";
}

/* Hands one pending message to librdkafka; on refusal completes its op. */
static void produce_pending(kq_t *k, pending_t p)
{
    rd_kafka_vu_t vu[6];
    size_t n = 0;
    vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_RKT, .u.rkt = p.rkt};
    vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_VALUE, .u.mem = {p.block, p.vlen}};
    if (p.klen > 0) /* no key: the partitioner picks a random partition */
        vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_KEY, .u.mem = {p.block + p.vlen, p.klen}};
    if (p.hdrs != NULL)
        vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_HEADERS, .u.headers = p.hdrs};
    vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_MSGFLAGS, .u.i = RD_KAFKA_MSG_F_FREE};
    vu[n++] = (rd_kafka_vu_t){.vtype = RD_KAFKA_VTYPE_OPAQUE, .u.ptr = p.op};

    rd_kafka_error_t *e = rd_kafka_produceva(k->rk, vu, n);
    if (e == NULL) {
        uv_ref((uv_handle_t *)&k->poll); /* a delivery report will come */
        return;
    }
    /* Ownership of the block and the headers passes only on success. */
    rd_kafka_resp_err_t code = rd_kafka_error_code(e);
    int rc = sync_status(code);
    log_refusal(k, rc, rd_kafka_topic_name(p.rkt), rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    free(p.block);
    if (p.hdrs != NULL)
        rd_kafka_headers_destroy(p.hdrs);
    cm__queue_complete(p.op, rc, rd_kafka_err2str(code));
}

static void on_flush(uv_idle_t *h)
{
    kq_t *k = h->data;
    uv_idle_stop(h);
    /* By index and by value: a refusal's callback may produce again, which
     * appends (and may move the array); those are sent in this pass too. */
    for (size_t i = 0; i < k->npending; i++)
        produce_pending(k, k->pending[i]);
    k->npending = 0;
}

static int kq_produce(cm_queue_t *q, const cm_queue_msg_t *msg, cm__queue_op_t *op)
{
    kq_t *k = (kq_t *)q;
    rd_kafka_resp_err_t terr = RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_topic_t *rkt = topic_of(k, msg->topic, &terr);

    if (rkt == NULL) {
        int rc = sync_status(terr);
        log_refusal(k, rc, msg->topic, rd_kafka_err2str(terr));
        return rc;
    }
    /* What librdkafka would refuse as too large, refused now (it counts a
     * little framing on top, so a message just under the limit may still
     * be refused later, through the callback, with the same status). */
    size_t total = msg->value.len + msg->key.len;
    for (size_t i = 0; i < msg->nheaders; i++)
        total += msg->headers[i].name.len + msg->headers[i].value.len;
    if (total > k->max_bytes) {
        log_refusal(k, CM_ETOOBIG, msg->topic, "message larger than message.max.bytes");
        return CM_ETOOBIG;
    }
    pending_t p = {.op = op, .rkt = rkt, .vlen = msg->value.len, .klen = msg->key.len};
    p.block = cm_xmalloc(p.vlen + p.klen + 1);
    if (p.vlen > 0)
        memcpy(p.block, msg->value.p, p.vlen);
    if (p.klen > 0)
        memcpy(p.block + p.vlen, msg->key.p, p.klen);
    if (msg->nheaders > 0) {
        p.hdrs = rd_kafka_headers_new(msg->nheaders);
        for (size_t i = 0; i < msg->nheaders; i++) {
            const cm_queue_header_t *h = &msg->headers[i];
            rd_kafka_header_add(p.hdrs, mem_of(h->name), (ssize_t)h->name.len, mem_of(h->value),
                                (ssize_t)h->value.len);
        }
    }
    if (k->npending == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 64;
        k->pending = cm_xrealloc(k->pending, k->cap * sizeof(*k->pending));
    }
    k->pending[k->npending++] = p;
    if (k->npending == 1)
        uv_idle_start(&k->flush, on_flush); /* active: keeps the loop alive */
    return 0;
}

/* Known down: a fatal error, or the last news said no broker is reachable
 * (before any news, librdkafka is still connecting: not down). */
static bool kq_down(cm_queue_t *q)
{
    kq_t *k = (kq_t *)q;
    return k->fatal || k->brokers_down;
}

/* The batch pump's slice is complete: hand it to librdkafka now. */
static void kq_flush(cm_queue_t *q)
{
    kq_t *k = (kq_t *)q;
    if (k->npending > 0)
        on_flush(&k->flush);
}

static bool kq_ready(cm_queue_t *q, cm_buf_t *why)
{
    kq_t *k = (kq_t *)q;

    if (k->fatal) {
        if (why != NULL)
            cm_buf_appendf(why, "kafka: fatal producer error: %s", k->fatal_reason);
        return false;
    }
    if (!k->up && why != NULL)
        cm_buf_appendf(why, "kafka: %s", k->down_why);
    return k->up;
}

/* ---- shutdown (see the top comment) ----------------------------------------- */

static void destroy_topic(cm_slice_t name, void *rkt, void *ud)
{
    (void)name;
    (void)ud;
    rd_kafka_topic_destroy(rkt);
}

/* Thread pool. Nothing on the loop thread touches k->topics any more:
 * produce is refused once the queue is closing. */
static void destroy_work(uv_work_t *w)
{
    kq_t *k = w->data;

    cm_strset_each(k->topics, destroy_topic, NULL);
    rd_kafka_queue_destroy(k->mainq);
    rd_kafka_destroy(k->rk);
}

static void shutdown_done(void *ud)
{
    kq_t *k = ud;
    cm__queue_shutdown_done(&k->base);
}

static void after_destroy(uv_work_t *w, int status)
{
    kq_t *k = w->data;

    (void)status; /* cannot be cancelled: it is never passed to uv_cancel */
    k->rk = NULL;
    cm_log(CM_LOG_DEBUG, NULL, "queue kafka: producer destroyed in %.1f ms",
           (double)(uv_hrtime() - k->destroy_start) / 1e6);
    cm__queue_free_abandoned(&k->base);
    cm__kafka_close(&k->handles, k->efd, &k->poll, (uv_handle_t *)&k->flush, shutdown_done, k);
}

static void kq_shutdown(cm_queue_t *q)
{
    kq_t *k = (kq_t *)q;

    uv_poll_stop(&k->poll);
    /* Messages never handed over: their ops were abandoned by the close
     * (and are freed with the others after the destroy); drop the copies. */
    uv_idle_stop(&k->flush);
    for (size_t i = 0; i < k->npending; i++) {
        free(k->pending[i].block);
        if (k->pending[i].hdrs != NULL)
            rd_kafka_headers_destroy(k->pending[i].hdrs);
    }
    k->npending = 0;
    cm__kafka_wake_detach(k->mainq);
    k->destroying = true;
    k->destroy_start = uv_hrtime();
    k->destroy_work.data = k;
    uv_queue_work(q->loop, &k->destroy_work, destroy_work, after_destroy);
}

static void kq_free(cm_queue_t *q)
{
    kq_t *k = (kq_t *)q;
    cm_strset_free(k->topics);
    free(k->pending);
    free(k);
}

static const cm__queue_ops_t kafka_ops = {
    .name = "kafka",
    .produce = kq_produce,
    .ready = kq_ready,
    .down = kq_down,
    .flush = kq_flush,
    .shutdown = kq_shutdown,
    .free = kq_free,
};

/* ---- construction ----------------------------------------------------------- */

/* The settings and their reasons are in proto/queue.md. */
static int build_conf(rd_kafka_conf_t *conf, const cm_queue_kafka_opts_t *o)
{
    cm__kafka_conf_t kc = cm__kafka_conf_begin(conf, WHO, o->brokers);

    cm__kafka_set(&kc, "client.id", o->client_id ? o->client_id : "cm-queue");
    cm__kafka_set(&kc, "acks", "all");
    cm__kafka_set(&kc, "enable.idempotence", "true");
    cm__kafka_set_int(&kc, "linger.ms", o->linger_ms > 0 ? o->linger_ms : 0);
    cm__kafka_set_int(&kc, "message.timeout.ms",
                      o->message_timeout_ms > 0 ? o->message_timeout_ms
                                                : DEFAULT_MESSAGE_TIMEOUT_MS);
    cm__kafka_set_int(&kc, "message.max.bytes",
                      o->message_max_bytes > 0 ? o->message_max_bytes : DEFAULT_MESSAGE_MAX_BYTES);
    cm__kafka_set(&kc, "partitioner", "murmur2_random");
    if (o->queue_buffering_max_kbytes > 0)
        cm__kafka_set_int(&kc, "queue.buffering.max.kbytes", o->queue_buffering_max_kbytes);
    cm__kafka_set(&kc, "socket.nagle.disable", "true");
    cm__kafka_set(&kc, "reconnect.backoff.max.ms", RECONNECT_BACKOFF_MAX_MS);
    cm__kafka_set(&kc, "statistics.interval.ms", STATS_INTERVAL_MS);
    cm__kafka_set(&kc, "log.queue", "true");
    cm__kafka_set_extra(&kc, o->extra, o->nextra);
    return kc.rc != 0 ? CM_EINVAL : 0;
}

/* The eventfd, the poll handle and the wake-up plumbing of the main queue. */
static int attach_loop(kq_t *k, uv_loop_t *loop)
{
    k->efd = cm__kafka_wake_open(WHO);
    if (k->efd < 0)
        return CM_EIO;
    int rc = uv_poll_init(loop, &k->poll, k->efd);
    if (rc != 0) {
        cm_log(CM_LOG_ERROR, NULL, "queue kafka: uv_poll_init: %s", uv_strerror(rc));
        close(k->efd);
        return CM_EIO;
    }
    k->poll.data = k;
    uv_idle_init(loop, &k->flush);
    k->flush.data = k;
    uv_poll_start(&k->poll, UV_READABLE, on_poll);
    uv_unref((uv_handle_t *)&k->poll);
    rd_kafka_set_log_queue(k->rk, NULL); /* logs join the main queue */
    k->mainq = rd_kafka_queue_get_main(k->rk);
    cm__kafka_wake_attach(k->mainq, k->efd, WHO);
    return 0;
}

static size_t conf_size(kq_t *k, const char *name, size_t dflt)
{
    char v[32];
    size_t len = sizeof(v);
    if (rd_kafka_conf_get(rd_kafka_conf(k->rk), name, v, &len) != RD_KAFKA_CONF_OK)
        return dflt;
    size_t n = (size_t)strtoull(v, NULL, 10);
    return n > 0 ? n : dflt;
}

/* Batches stay within librdkafka's local queue, so it never refuses one of
 * their messages as "queue full" halfway: its message count, and its size
 * less one largest message (the window is checked before a message of
 * unknown size is produced). */
static void set_window(kq_t *k, size_t batch_window, size_t batch_backlog)
{
    size_t kbytes = conf_size(k, "queue.buffering.max.kbytes", 1048576);
    size_t bytes = kbytes * 1024;
    cm__queue_set_window(&k->base, conf_size(k, "queue.buffering.max.messages", 100000),
                         batch_window, batch_backlog);
    k->base.window_bytes = bytes > 2 * k->max_bytes ? bytes - k->max_bytes : bytes / 2;
}

int cm_queue_kafka_new(uv_loop_t *loop, const cm_queue_kafka_opts_t *opts, cm_queue_t **out)
{
    char errstr[512];

    if (loop == NULL || opts == NULL || opts->brokers == NULL || opts->brokers[0] == '\0' ||
        (opts->nextra > 0 && opts->extra == NULL) || out == NULL)
        return CM_EINVAL;
    kq_t *k = cm_xcalloc(1, sizeof(*k));
    k->down_why = "no broker reached yet";
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (build_conf(conf, opts) != 0) {
        rd_kafka_conf_destroy(conf);
        free(k);
        return CM_EINVAL;
    }
    rd_kafka_conf_set_opaque(conf, k);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_stats_cb(conf, on_stats);
    rd_kafka_conf_set_log_cb(conf, on_log);
    k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (k->rk == NULL) { /* conf is still ours on failure */
        cm_log(CM_LOG_ERROR, NULL, "queue kafka: cannot create the producer: %s", errstr);
        rd_kafka_conf_destroy(conf);
        free(k);
        return CM_EINVAL;
    }
    char idem[8];
    size_t idem_len = sizeof(idem);
    k->idempotent = rd_kafka_conf_get(rd_kafka_conf(k->rk), "enable.idempotence", idem,
                                      &idem_len) == RD_KAFKA_CONF_OK &&
                    strcmp(idem, "true") == 0;
    char maxb[24];
    size_t maxb_len = sizeof(maxb);
    k->max_bytes = rd_kafka_conf_get(rd_kafka_conf(k->rk), "message.max.bytes", maxb, &maxb_len) ==
                           RD_KAFKA_CONF_OK
                       ? (size_t)strtoull(maxb, NULL, 10)
                       : DEFAULT_MESSAGE_MAX_BYTES;
    if (attach_loop(k, loop) != 0) {
        k->destroying = true;
        rd_kafka_destroy(k->rk); /* startup only: blocking is acceptable here */
        free(k);
        return CM_EIO;
    }
    k->topics = cm_strset_new(8);
    cm__queue_init(&k->base, &kafka_ops, loop, opts->metrics);
    set_window(k, opts->batch_window, opts->batch_backlog);
    *out = &k->base;
    return 0;
}
