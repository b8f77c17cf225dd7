/*
 * queue_internal.h - what queue.c (the common dispatch) shares with the
 * backends queue_kafka.c and queue_redis.c. Not part of the public API.
 *
 * queue.c owns everything that does not depend on the backend: the list of
 * outstanding messages and their callbacks, metrics, and the close sequence.
 * A backend embeds struct cm_queue as the first member of its own struct and
 * supplies a small ops table.
 *
 * Life of a message (an "op"):
 *   cm_queue_produce: op allocated, linked, in_flight++, ops->produce();
 *     the backend refuses (op freed, nothing called) or keeps `op` as the
 *     opaque of the request and later calls cm__queue_complete(op, ...),
 *     which runs the user callback and frees the op.
 *   close: ops still outstanding at the deadline are ABANDONED: their user
 *     callback runs with CM_ETIMEDOUT, op->q becomes NULL, and they move to
 *     q->abandoned, because the backend library may still hold the pointer.
 *     ops->shutdown() then decides their fate: Kafka frees them once the
 *     producer is destroyed; Redis hands them to the client's pending
 *     commands, whose late reply reaches cm__queue_complete(), which frees
 *     an abandoned op without calling anything.
 *
 * Close sequence: cm_queue_close -> (in_flight reaches 0 or the deadline)
 *   -> close timer fires -> abandon the rest -> ops->shutdown(q) -> ... ->
 *   cm__queue_shutdown_done(q) -> timer closed -> ops->free(q) -> done(ud).
 * The step after the last completion always goes through the timer, so a
 * backend is never torn down from inside its own library's callback.
 */
#ifndef CM_QUEUE_INTERNAL_H
#define CM_QUEUE_INTERNAL_H

#include "cm/queue.h"

typedef struct cm__queue_op cm__queue_op_t;

struct cm__queue_op {
    cm__queue_op_t *prev, *next;
    cm_queue_t *q; /* NULL once abandoned */
    cm_queue_done_cb cb;
    void *ud;
    size_t bytes;    /* key + value + headers, for the byte window */
    bool submitting; /* inside ops->produce() */
    bool early;      /* the backend completed it from inside ops->produce() */
    int early_status;
};

typedef struct {
    const char *name; /* "kafka", "redis": also the metrics label */
    /* 0: the backend owns op until it calls cm__queue_complete(op) (never
     * from inside this call, or the common code turns it into a refusal);
     * negative: refused, op untouched. */
    int (*produce)(cm_queue_t *q, const cm_queue_msg_t *msg, cm__queue_op_t *op);
    bool (*ready)(cm_queue_t *q, cm_buf_t *why);
    /* Known to be down (not merely "not ready yet"): batches are refused
     * at once. */
    bool (*down)(cm_queue_t *q);
    /* Optional: the pump produced a slice of batch messages; hand over
     * what the backend holds back for the end of the iteration now
     * (Kafka), instead of one loop iteration later. */
    void (*flush)(cm_queue_t *q);
    /* Once, after the last completion or abandonment: release the backend
     * (asynchronously if needed), deal with q->abandoned, then call
     * cm__queue_shutdown_done(q). */
    void (*shutdown)(cm_queue_t *q);
    void (*free)(cm_queue_t *q); /* the backend struct holding q */
} cm__queue_ops_t;

struct cm_queue {
    const cm__queue_ops_t *ops;
    uv_loop_t *loop;
    cm__queue_op_t *head, *tail; /* outstanding, oldest first */
    cm__queue_op_t *abandoned;   /* see above; linked through next */
    size_t in_flight;
    bool closing;  /* cm_queue_close() was called */
    bool finished; /* the close timer fired: shutdown under way */
    uv_timer_t close_timer;
    cm_queue_closed_cb done;
    void *done_ud;
    cm_counter_t *m_produced, *m_acked, *m_failed, *m_rejected;
    cm_gauge_t *m_in_flight;

    /* Batches (queue_batch.c). The backend sets the window after init. */
    size_t in_flight_bytes;
    size_t window;       /* batches keep in_flight below this */
    size_t window_bytes; /* ... and in_flight_bytes below this (0: no bound) */
    size_t max_waiting;  /* backlog limit for admission */
    size_t waiting;      /* messages of admitted batches not yet produced */
    cm_queue_batch_t *wait_head, *wait_tail;
    uv_idle_t pump;
    int handles_open; /* close_timer + pump */
    /* Circuit breaker (queue_batch.c). */
    int brk_state;
    unsigned brk_fails;    /* consecutive failures */
    uint64_t brk_until;    /* uv_now() when an open breaker lets a probe through */
    uint64_t brk_cooldown; /* the next open period, ms */
    bool brk_probe_out;    /* half-open: the probe batch is under way */
    cm_counter_t *m_batches_refused, *m_breaker_opened;
    cm_gauge_t *m_waiting;
};

/* Initialises the common part; metrics may be NULL. */
void cm__queue_init(cm_queue_t *q, const cm__queue_ops_t *ops, uv_loop_t *loop,
                    cm_metrics_t *metrics);
/* The backend's verdict on op: runs the callback once, frees op. */
void cm__queue_complete(cm__queue_op_t *op, int status, const char *err);
/* Frees every op on q->abandoned (once nothing else can refer to them). */
void cm__queue_free_abandoned(cm_queue_t *q);
/* The backend finished ops->shutdown(). */
void cm__queue_shutdown_done(cm_queue_t *q);

/* queue_batch.c. The backend sets the window: the smaller of what it can
 * hold and the batch_window option (0: the default). */
void cm__queue_set_window(cm_queue_t *q, size_t capacity, size_t batch_window,
                          size_t batch_backlog);
void cm__queue_batch_init(cm_queue_t *q, cm_metrics_t *metrics, const char *labels);
/* Every completion: feeds the breaker, resumes waiting batches. */
void cm__queue_batch_note(cm_queue_t *q, int status);
/* close(): waiting batches stop producing. */
void cm__queue_batch_close(cm_queue_t *q);

#endif
