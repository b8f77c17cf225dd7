/*
 * queue_consumer_internal.h - what queue_consumer.c (batches, delivery,
 * metrics, the close sequence) shares with the consumer backends
 * queue_consumer_redis.c and queue_consumer_kafka.c. Not public.
 *
 * A backend embeds struct cm_consumer first in its own struct and supplies
 * an ops table. The common code calls ops->fetch whenever the consumer may
 * deliver a batch (fewer than depth outstanding, not closing, no retry's
 * delay running); c->nout says how many are outstanding meanwhile.
 * The backend fetches asynchronously and answers with exactly one of:
 *   - cm__consumer_deliver(c, b): a non-empty batch it built with
 *     cm__consumer_batch_new / cm__consumer_batch_add;
 *   - cm__consumer_idle(c, delay_ms): nothing to deliver (or an error,
 *     already logged): the common code calls ops->fetch again after delay.
 * Either may be called from inside ops->fetch; delivery to the user always
 * goes through a timer, so on_batch never runs inside an API call.
 *
 * cm_consumer_commit(b) calls ops->commit(c, b) and then frees b; the
 * backend copies what it needs (ids, offsets) before returning.
 * cm_consumer_retry(b, delay) calls ops->rewind(c, b) (the backend arranges
 * for the same messages to come again first), frees b, and calls
 * ops->fetch after delay. A fetch answered after a retry that came while
 * it was under way is stale (it may hold messages after the ones handed
 * back): it is rewound and dropped, never delivered. Only a depth above
 * one makes that possible.
 *
 * Close: fetching stops; once no batch is outstanding and the backend has
 * no fetch in flight (it calls cm__consumer_idle or cm__consumer_deliver to
 * end one; a batch delivered while closing is dropped: its messages stay
 * unacknowledged and come again), ops->shutdown runs; the backend releases
 * itself and calls cm__consumer_shutdown_done(c); the common code closes
 * its timer, calls ops->free, then the user's done.
 */
#ifndef CM_QUEUE_CONSUMER_INTERNAL_H
#define CM_QUEUE_CONSUMER_INTERNAL_H

#include "cm/queue_consumer.h"

#define CM__CONSUMER_DEPTH_MAX 4

typedef struct {
    const char *name; /* "redis", "kafka" */
    void (*fetch)(cm_consumer_t *c);
    void (*commit)(cm_consumer_t *c, cm_consumer_batch_t *b);
    void (*rewind)(cm_consumer_t *c, cm_consumer_batch_t *b);
    bool (*ready)(cm_consumer_t *c, cm_buf_t *why);
    void (*shutdown)(cm_consumer_t *c);
    void (*free)(cm_consumer_t *c); /* the backend struct holding c */
} cm__consumer_ops_t;

/* One message's bytes: key, value, id and headers in one allocation. */
struct cm_consumer_batch {
    cm_consumer_t *c;
    size_t source;
    cm_consumed_t *msgs;
    size_t n, cap;
    void **blocks; /* one per message, owned */
};

struct cm_consumer {
    const cm__consumer_ops_t *ops;
    uv_loop_t *loop;
    char **topics; /* owned copies, ntopics */
    size_t ntopics;
    char *group;
    char *consumer;
    size_t max_batch;
    size_t max_batch_bytes;
    int block_ms;
    int claim_idle_ms;
    cm_consumer_batch_cb on_batch;
    void *ud;

    size_t depth;                                     /* batches outstanding at once, at most */
    cm_consumer_batch_t *out[CM__CONSUMER_DEPTH_MAX]; /* delivered, not yet ended; oldest first */
    size_t nout;
    cm_consumer_batch_t *ready_batch; /* delivered by the backend, waiting for the timer */
    bool fetching;                    /* ops->fetch called, no answer yet */
    bool stale;                       /* a retry came while fetching: drop what it brings */
    uint64_t not_before;              /* loop time: a retry's delay, no fetch before */
    bool closing, shut;
    uv_timer_t timer; /* delivery, idle delays, retries */
    cm_consumer_closed_cb done;
    void *done_ud;

    cm_counter_t *m_messages, *m_batches, *m_redelivered, *m_commits, *m_commit_failures,
        *m_retries, *m_gaps;
    cm_metrics_t *metrics; /* opts.metrics (may be NULL): the lag gauges, made as topics show */
};

/* The group's lag behind the end of topic's partition (Kafka: librdkafka's
 * consumer_lag; a Redis stream is partition 0: XINFO GROUPS' lag) and the
 * entries delivered but not acknowledged (Redis: the group's pending). As
 * gauges queue_consumer_lag_messages{topic,partition} and
 * queue_consumer_pending_messages{topic}. Loop thread. */
void cm__consumer_note_lag(cm_consumer_t *c, const char *topic, int32_t partition, double lag);
void cm__consumer_note_pending(cm_consumer_t *c, const char *topic, double pending);
/* How many partitions of topic this member holds now (Kafka: set on every rebalance). */
void cm__consumer_note_assigned(cm_consumer_t *c, const char *topic, size_t partitions);

/* The common part from opts (copied; NULL metrics allowed). CM_EINVAL when
 * topics or group are missing. */
int cm__consumer_init(cm_consumer_t *c, const cm__consumer_ops_t *ops, uv_loop_t *loop,
                      const cm_consumer_opts_t *opts, cm_consumer_batch_cb on_batch, void *ud);
/* Frees what init took (for a backend whose own set-up failed afterwards). */
void cm__consumer_fini(cm_consumer_t *c);
/* Makes the timer and starts fetching: call once the backend is set up.
 * From then on only cm_consumer_close releases the consumer. */
void cm__consumer_start(cm_consumer_t *c);

cm_consumer_batch_t *cm__consumer_batch_new(cm_consumer_t *c, size_t source);
/* Copies everything; headers as (name, value) slices. */
void cm__consumer_batch_add(cm_consumer_batch_t *b, const char *id, cm_slice_t key,
                            cm_slice_t value, const cm_queue_header_t *headers, size_t nheaders,
                            bool redelivered);
void cm__consumer_batch_free(cm_consumer_batch_t *b);

void cm__consumer_deliver(cm_consumer_t *c, cm_consumer_batch_t *b);
void cm__consumer_idle(cm_consumer_t *c, uint64_t delay_ms);
/* The commit of a batch failed (counted; the backend logs why). */
void cm__consumer_commit_failed(cm_consumer_t *c);
/* Kafka: a partition's next message came past the one expected. */
void cm__consumer_offset_gap(cm_consumer_t *c);
void cm__consumer_shutdown_done(cm_consumer_t *c);

#endif
