/*
 * queue.h - the event queue: produce a message, learn once whether the
 * backend acknowledged it.
 *
 * The ingest service answers 200 only once EVERY event of a request was
 * acknowledged, so the whole API is one asynchronous call with a completion
 * callback. Two backends sit behind the same opaque cm_queue_t; callers
 * never branch on which one they have:
 *   - Kafka (queue_kafka.c): librdkafka, acks=all, idempotent producer;
 *   - Redis Streams (queue_redis.c): one XADD per message on a cm_redis_t.
 * The wire contract (what a consumer sees) is written down in proto/queue.md.
 *
 * The callback contract:
 *   - cm_queue_produce() returns 0 and then the callback runs EXACTLY ONCE,
 *     on the loop thread, and NEVER from inside cm_queue_produce() itself
 *     (callers finish their own bookkeeping after producing);
 *   - or it returns a negative code and the callback never runs:
 *       CM_EAGAIN   the queue cannot take it now (closing, Redis not
 *                   connected, too many Redis commands in flight): answer 503;
 *       CM_ETOOBIG  the message is larger than the configured limit;
 *       CM_EINVAL   bad arguments (no topic, NULL callback...).
 *   - status in the callback is 0 (acknowledged by the broker / server) or:
 *       CM_ETIMEDOUT  no acknowledgement in time (message.timeout.ms, the
 *                     Redis command timeout, or cm_queue_close()'s timeout);
 *                     the message MAY still have been stored;
 *       CM_ETOOBIG    the broker (or librdkafka) refused it as too large;
 *       CM_EAGAIN     Kafka: librdkafka's local buffer was full (messages
 *                     are handed to it at the end of the loop iteration,
 *                     so this refusal arrives here, not as a return value);
 *       CM_EIO        anything else (error reply, connection lost...).
 *     err is a short static text (or NULL on success); copy it to keep it.
 * Delivery is at-least-once: consumers deduplicate (by event uuid).
 *
 * Loop-thread only. Callbacks may call any function of this API, including
 * cm_queue_produce() and cm_queue_close() on the queue that calls them.
 */
#ifndef CM_QUEUE_H
#define CM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/redis.h"

typedef struct cm_queue cm_queue_t;

typedef struct {
    cm_slice_t name;
    cm_slice_t value;
} cm_queue_header_t;

/* Everything is copied by cm_queue_produce(): the caller may free it as
 * soon as the call returns. */
typedef struct {
    const char *topic; /* Kafka topic / Redis stream name (NUL-terminated) */
    cm_slice_t key;    /* empty: no key (Kafka then picks a random partition) */
    cm_slice_t value;
    const cm_queue_header_t *headers;
    size_t nheaders;
} cm_queue_msg_t;

/* status: 0 or a negative CM_E* code; err: static text, NULL on success. */
typedef void (*cm_queue_done_cb)(int status, const char *err, void *ud);
typedef void (*cm_queue_closed_cb)(void *ud);

/* Zero means "default" for every numeric field. */
typedef struct {
    const char *brokers;            /* bootstrap list "host:port,..." (required) */
    const char *client_id;          /* default "cm-queue" */
    int linger_ms;                  /* default 0: see proto/queue.md */
    int message_timeout_ms;         /* default 10000: then the callback gets an error */
    int message_max_bytes;          /* default 1000000 */
    int queue_buffering_max_kbytes; /* local buffer; default librdkafka's */
    size_t batch_window;            /* see below; default 10000 */
    size_t batch_backlog;           /* see below; default 250000 */
    /* "name=value" librdkafka properties applied last (they override the
     * above): for tests and operators. */
    const char *const *extra;
    size_t nextra;
    cm_metrics_t *metrics; /* optional */
} cm_queue_kafka_opts_t;

typedef struct {
    uint64_t maxlen;          /* XADD MAXLEN ~ maxlen; 0: no trimming */
    size_t max_message_bytes; /* key + value + headers; default 1000000 */
    size_t max_in_flight;     /* unanswered XADDs; default 100000 */
    size_t batch_window;      /* see below; default 10000 */
    size_t batch_backlog;     /* see below; default 250000 */
    cm_metrics_t *metrics;    /* optional */
} cm_queue_redis_opts_t;

/* Both return 0 and set *out, or CM_EINVAL (bad option, logged). The Kafka
 * producer starts connecting at once; until it has reached a broker,
 * cm_queue_ready() is false. */
int cm_queue_kafka_new(uv_loop_t *loop, const cm_queue_kafka_opts_t *opts, cm_queue_t **out);
/* The queue borrows client: close the queue BEFORE the client. */
int cm_queue_redis_new(uv_loop_t *loop, cm_redis_t *client, const cm_queue_redis_opts_t *opts,
                       cm_queue_t **out);

/* See the contract at the top. Data is copied. */
int cm_queue_produce(cm_queue_t *q, const cm_queue_msg_t *msg, cm_queue_done_cb cb, void *ud);

/* For /_ready. When false and why is not NULL, appends the reason. */
bool cm_queue_ready(cm_queue_t *q, cm_buf_t *why);

/* The backend's name, "kafka" or "redis", for logs. */
const char *cm_queue_backend(const cm_queue_t *q);

/* Messages produced and not yet completed. */
size_t cm_queue_in_flight(const cm_queue_t *q);
/* Messages of admitted batches not yet produced (waiting for room). */
size_t cm_queue_waiting(const cm_queue_t *q);

/* ---- Batches: admission for a whole request, production in steps ------------
 *
 * cm_queue_produce() is the low-level call: one message, refused when the
 * backend cannot take it now. A service that answers for many messages at
 * once (ingest's /batch/) wants more: either every message of the request
 * is produced, or none, and a request larger than what the backend holds in
 * flight must still go through. A batch gives that:
 *
 *   - Admission is decided once, for the whole batch, before any message is
 *     produced. It is refused (CM_EAGAIN, nothing produced, done never runs)
 *     when the queue is closing, when the backend is known to be down, while
 *     the circuit breaker is open (see below), or when the messages of
 *     admitted batches still waiting for room reach batch_backlog
 *     (default 250,000 messages: a few seconds of a healthy backend's work).
 *   - An admitted batch joins a FIFO and is produced in order, message by
 *     message, through emit(), as long as the in-flight window has room:
 *     batch_window messages (default 10,000), and never more than the
 *     backend holds (Redis: max_in_flight; Kafka: librdkafka's own
 *     queue.buffering.max.messages and .kbytes, so its local queue never
 *     overflows). The window also bounds the loop's work per burst of
 *     acknowledgements: each costs about a microsecond, and a window's
 *     worth can arrive in one read (Redis) or one poll (Kafka). Production runs from a uv_idle
 * handle, a few milliseconds per loop iteration, so a batch of 100,000 never holds the loop; when
 *     the window is full it resumes as acknowledgements free room.
 *   - done() runs exactly once, never from inside cm_queue_batch(), when
 *     every produced message has completed. If a message fails (refused or
 *     completed with an error), the rest of the batch is not produced: the
 *     queue is failing, and this is the only case in which part of an
 *     admitted batch is written.
 *
 * Circuit breaker. After BREAKER_FAILURES consecutive messages fail with a
 * timeout or an I/O error, the queue counts as down: waiting batches stop,
 * and new ones are refused at once instead of waiting for their own
 * timeouts. After a cool-down (1 s, doubling to 8 s while it keeps failing)
 * one batch is let through as a probe; its first outcome closes the
 * breaker or opens it again. A backend that knows it is down (Redis not
 * connected, every Kafka broker down) is refused at once as well.
 */
typedef struct cm_queue_batch cm_queue_batch_t;

typedef struct {
    size_t acked;    /* acknowledged */
    size_t failed;   /* produced, then completed with an error */
    size_t unsent;   /* never produced: the batch stopped at a failure or a close */
    int status;      /* 0, or the first failure (CM_ETOOBIG if any was too large) */
    const char *err; /* static text for status, NULL when 0 */
} cm_queue_batch_result_t;

/* Produces message i (0..n-1, in order): builds it and returns
 * cm_queue_batch_send(b, &msg). */
typedef int (*cm_queue_emit_cb)(cm_queue_batch_t *b, size_t i, void *ud);
typedef void (*cm_queue_batch_done_cb)(const cm_queue_batch_result_t *r, void *ud);

/* 0: admitted; CM_EAGAIN: refused (why, if not NULL, gets a static reason);
 * CM_EINVAL: bad arguments (n == 0, NULL callbacks). */
int cm_queue_batch(cm_queue_t *q, size_t n, cm_queue_emit_cb emit, cm_queue_batch_done_cb done,
                   void *ud, const char **why);
/* From inside emit only. The message is copied, as by cm_queue_produce(). */
int cm_queue_batch_send(cm_queue_batch_t *b, const cm_queue_msg_t *msg);
/* How long a refused client should wait before retrying, in ms (>= 1000). */
uint64_t cm_queue_retry_after_ms(cm_queue_t *q);

/*
 * Graceful and asynchronous: produce is refused (CM_EAGAIN) from now on;
 * outstanding messages get up to timeout_ms to be acknowledged; whatever is
 * still outstanding then completes with CM_ETIMEDOUT. Batches stop: what
 * they have not produced yet counts as unsent, and their done() runs once
 * their produced messages have completed. Then everything is
 * released, the queue's handles are closed and done(ud) runs (never from
 * inside this call). q must not be used after this call (a second close is
 * ignored); once done ran, the queue holds no handle on the loop.
 */
void cm_queue_close(cm_queue_t *q, uint64_t timeout_ms, cm_queue_closed_cb done, void *ud);

#endif
