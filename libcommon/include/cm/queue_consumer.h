/*
 * queue_consumer.h - the consumer side of the event queue: batches of
 * messages from a consumer group, acknowledged only once the caller has
 * stored them.
 *
 *   cm_consumer_redis_new(loop, client, &opts, on_batch, ud, &c);
 *   static void on_batch(cm_consumer_batch_t *b, void *ud) {
 *       ... store cm_consumer_batch_msg(b, 0..len-1) (asynchronously) ...
 *       cm_consumer_commit(b);          stored: acknowledge, next batch
 *       cm_consumer_retry(b, 1000);     not stored: the same messages again later
 *   }
 *
 * Two backends behind one opaque cm_consumer_t, mirroring the producer's
 * (proto/queue.md has the wire format both read):
 *   - Redis Streams (queue_consumer_redis.c): XREADGROUP on a consumer group
 *     created at the start of each stream (so a new group reads what was
 *     queued before it existed); XACK after commit; entries left pending on
 *     a consumer that went away are taken over with XAUTOCLAIM once idle
 *     for claim_idle_ms.
 *   - Kafka (queue_consumer_kafka.c): a librdkafka consumer group per topic,
 *     auto-commit off; the offsets after a batch are committed only in
 *     cm_consumer_commit().
 *
 * Delivery is at least once: a message is delivered again when the consumer
 * dies between storing and acknowledging, when a commit fails, after a
 * rebalance, or when another consumer claims it. Callers deduplicate (the
 * writer does, by event uuid).
 *
 * Contract:
 *   - At most opts.depth batches are outstanding per consumer (default
 *     one): the next is fetched while fewer are, so with a depth of two the
 *     caller works on batch N+1 while it still stores batch N. The caller
 *     ends each with cm_consumer_commit() or cm_consumer_retry(), which free
 *     it, and ends them in order: a commit is of the OLDEST outstanding
 *     batch, a retry of the NEWEST (to hand back two, retry the newer one
 *     first). So an acknowledgement never covers a message delivered after
 *     one that is handed back, and what is handed back comes again in its
 *     order before anything later. A batch holds messages of one topic, in
 *     the order the backend delivers them.
 *   - Redis: steps that read the group's pending entries (the start, after
 *     a retry or a failed XACK, claims) wait until no batch is outstanding,
 *     so an outstanding batch is never delivered twice. Kafka: a rebalance
 *     during a fetch may revoke a held batch's partitions; its messages
 *     then come again to their next owner (queue_consumer_kafka.c, "Depth").
 *   - Topics are given in priority order: a batch comes from topics[i] only
 *     when topics[0..i-1] had nothing waiting when it was fetched (the
 *     historical stream yields to the main one).
 *   - on_batch runs on the loop thread, never from inside a call of this
 *     API; the messages' memory belongs to the batch.
 *   - Loop-thread only.
 */
#ifndef CM_QUEUE_CONSUMER_H
#define CM_QUEUE_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/queue.h"
#include "cm/redis.h"

typedef struct cm_consumer cm_consumer_t;
typedef struct cm_consumer_batch cm_consumer_batch_t;

/* One delivered message; valid until its batch is committed or retried. */
typedef struct {
    const char *topic; /* NUL-terminated */
    size_t source;     /* its topic's index in opts.topics (0: first priority) */
    cm_slice_t key;    /* empty when the message had none */
    cm_slice_t value;
    const cm_queue_header_t *headers;
    size_t nheaders;
    const char *id;   /* for logs and dead letters: Redis "ms-seq", Kafka "partition:offset" */
    bool redelivered; /* known to have been delivered before (Redis: pending or claimed) */
} cm_consumed_t;

typedef void (*cm_consumer_batch_cb)(cm_consumer_batch_t *b, void *ud);
typedef void (*cm_consumer_closed_cb)(void *ud);

/* Zero means "default" for every numeric field. */
typedef struct {
    const char *const *topics; /* stream / topic names, priority order */
    size_t ntopics;
    const char *group;    /* consumer group (required) */
    const char *consumer; /* this member's name; default "<hostname>-<pid>" */
    size_t max_batch;     /* messages per batch; default 1000 */
    /* About this many bytes of values per batch at most; default 4 MiB. Redis
     * cannot be asked for bytes: it reads 64 messages first, then as many as
     * the last batch's average size lets fit. One message always goes. */
    size_t max_batch_bytes;
    int block_ms;          /* Redis: longest XREADGROUP BLOCK when idle; default 500.
                              It must stay below the client's command timeout */
    int claim_idle_ms;     /* Redis: take over entries pending this long elsewhere; default 30000 */
    size_t depth;          /* batches outstanding at once, 1 to 4; default 1 (see Contract) */
    cm_metrics_t *metrics; /* optional */
} cm_consumer_opts_t;

typedef struct {
    const char *brokers; /* bootstrap list (required) */
    /* "name=value" librdkafka properties applied last. */
    const char *const *extra;
    size_t nextra;
} cm_consumer_kafka_opts_t;

/*
 * Both return 0 and set *out, or CM_EINVAL (bad option, logged). Fetching
 * starts at once. The Redis consumer borrows client, which must be its own
 * (XREADGROUP BLOCK holds the connection) with a command timeout above
 * block_ms: close the consumer BEFORE the client.
 */
int cm_consumer_redis_new(uv_loop_t *loop, cm_redis_t *client, const cm_consumer_opts_t *opts,
                          cm_consumer_batch_cb on_batch, void *ud, cm_consumer_t **out);
int cm_consumer_kafka_new(uv_loop_t *loop, const cm_consumer_opts_t *opts,
                          const cm_consumer_kafka_opts_t *kopts, cm_consumer_batch_cb on_batch,
                          void *ud, cm_consumer_t **out);

size_t cm_consumer_batch_len(const cm_consumer_batch_t *b);
const cm_consumed_t *cm_consumer_batch_msg(const cm_consumer_batch_t *b, size_t i);

/* Every message of the batch is stored: acknowledge them all (XACK, or the
 * offsets committed), free the batch and fetch the next. b must be the
 * oldest outstanding batch. A failed
 * acknowledgement is logged and counted; those messages come again (Kafka:
 * when their partition is next read from its committed offset, after a
 * restart or a move, unless a later commit covered them). */
void cm_consumer_commit(cm_consumer_batch_t *b);
/* None of the batch was stored: free it; after delay_ms its messages are
 * delivered again first, then the consumer goes on (Kafka: first for each
 * of the batch's partitions; what was already fetched of other partitions
 * may come in between). b must be the newest outstanding batch; a fetch
 * under way meanwhile is dropped unacknowledged (it comes again after). */
void cm_consumer_retry(cm_consumer_batch_t *b, uint64_t delay_ms);

/* For /_ready: the backend reachable and the group joined. why may be NULL. */
bool cm_consumer_ready(cm_consumer_t *c, cm_buf_t *why);
/* The backend's name, "kafka" or "redis". */
const char *cm_consumer_backend(const cm_consumer_t *c);

/*
 * Stops fetching. Outstanding batches may still be committed or retried
 * (a commit is still sent); once they have been, or at once when there is
 * none, the backend is released and done(ud) runs (never from inside this
 * call). c must not be used after done, and no on_batch runs after this
 * call.
 */
void cm_consumer_close(cm_consumer_t *c, cm_consumer_closed_cb done, void *ud);

#endif
