/*
 * queue_consumer_kafka_internal.h - what the Kafka consumer's two files
 * share: queue_consumer_kafka.c (fetch, commit, rewind, readiness,
 * construction and close; its top comment explains the design) and
 * queue_consumer_kafka_group.c (partition bookkeeping and librdkafka's
 * callbacks: rebalances, commit results, errors, statistics, logs).
 * Not public.
 */
#ifndef CM_QUEUE_CONSUME_KAFKA_INTERNAL_H
#define CM_QUEUE_CONSUME_KAFKA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "cm/log.h"
#include "queue_consumer_internal.h"

#define WHO                      "queue consumer kafka"
#define SESSION_TIMEOUT_MS       "10000"
#define HEARTBEAT_INTERVAL_MS    "1000"
#define RECONNECT_BACKOFF_MAX_MS "1000"
#define STATS_INTERVAL_MS        "1000"
#define BACKSTOP_MS              100 /* a parked fetch or a close looks again this often */
#define CLOSE_DEADLINE_MS                                                                          \
    20000 /* a close not done by then is abandoned (see the top of queue_consumer_kafka.c) */
#define CATCH_UP_MS           1000  /* longest a partition holds the next topics back */
#define JOIN_WAIT_MS          10000 /* longest a topic not joined yet holds them back */
#define ERROR_LOG_INTERVAL_MS 1000
#define SERVE_CHUNK           64 /* ops taken from a main queue per call */
#define HEADERS_ON_STACK      16

typedef struct kc kc_t;

/* A partition of a topic's consumer, indexed by partition id. */
typedef struct {
    int64_t next;   /* offset after the last message taken; -1: none since assigned */
    int64_t seen;   /* offset after the last one read from librdkafka (gaps); -1: none */
    uint64_t since; /* uv_now() of the assignment, the last message taken or a rewind */
    bool assigned;
} kpart_t;

typedef struct {
    kc_t *k;
    size_t index;     /* in opts.topics: a batch's source */
    const char *name; /* k->base.topics[index] */
    rd_kafka_t *rk;
    rd_kafka_queue_t *cq; /* consumer queue: messages, consumer errors, rebalances */
    rd_kafka_queue_t *mq; /* main queue: logs, errors, statistics, commit results */
    kpart_t *parts;
    size_t nparts;        /* allocated, not assigned */
    size_t nassigned;     /* of parts */
    bool joined;          /* an assignment (maybe empty) was received */
    uint64_t created;     /* uv_now() at creation */
    bool conn_up;         /* the last news: connected (see the top) */
    const char *down_why; /* static text: why not conn_up */
    bool fatal;
    char fatal_reason[256];
    bool closed; /* the close finished, or could not start */
    /* Taken from the queue but past max_batch_bytes: the first message of
     * this topic's next batch. */
    rd_kafka_message_t *carry;
    cm_log_limit_t error_log;
} ktopic_t;

struct kc {
    cm_consumer_t base; /* first: the ops receive &base */
    ktopic_t *t;
    size_t nt;
    rd_kafka_message_t **msgs; /* the batch being gathered, max_batch */
    size_t nmsgs;
    int efd;
    uv_poll_t poll;
    uv_timer_t backstop;
    cm__kafka_closing_t handles; /* poll + backstop, closed at shutdown */
    bool parked;                 /* a fetch is in flight, waiting for a wake-up */
    bool closing;                /* ops->shutdown ran */
    uint64_t closing_since;      /* uv_now() when it ran */
    bool abandoned;              /* the close passed CLOSE_DEADLINE_MS: no rd_kafka_destroy() */
    bool destroy_queued;         /* every consumer closed, destroy work queued */
    bool destroying;             /* librdkafka may call back from its own threads */
    uv_work_t destroy_work;
};

/* One entry per partition of a batch: its lowest and highest offsets. */
typedef struct {
    int32_t partition;
    int64_t lo, hi;
} span_t;

/* ---- queue_consumer_kafka_group.c ---------------------------------------------- */

/* The state of partition p, made (when grow) if new; NULL for p < 0. */
kpart_t *cm__kc_part_of(ktopic_t *t, int32_t p, bool grow);
bool cm__kc_is_assigned(ktopic_t *t, int32_t p);
void cm__kc_set_assigned(ktopic_t *t, const rd_kafka_topic_partition_list_t *parts, bool on);
void cm__kc_unassign_all(ktopic_t *t);
/* From the messages' ids, "partition:offset"; *out is malloc'd. */
size_t cm__kc_batch_spans(const cm_consumer_batch_t *b, span_t **out);
/* why: static text, kept for cm_consumer_ready(). */
void cm__kc_set_conn(ktopic_t *t, bool up, const char *why);
void cm__kc_log_consumer_error(ktopic_t *t, const rd_kafka_message_t *m);
/* librdkafka's callbacks, set on every topic's configuration; opaque is the ktopic_t. */
void cm__kc_on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque);
void cm__kc_on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque);
void cm__kc_on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque);
int cm__kc_on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque);
void cm__kc_on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf);

#endif
