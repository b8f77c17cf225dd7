/*
 * queue_batch.c - batches: admission for a whole request, production in
 * steps within the in-flight window, and the circuit breaker (queue.h has
 * the contract).
 *
 * Why here and not in the service: the window is the backend's (Redis's
 * max_in_flight, librdkafka's local queue size), and so is the knowledge
 * that it is down. A service that produced message by message learnt about
 * a full window only from a refusal in the middle of its request, after
 * part of it was written; that is the half-written batch this file exists
 * to prevent.
 *
 * Life of a batch: admitted -> on the wait list (FIFO) -> the pump emits
 * its messages while the window has room -> off the list once every
 * message was emitted, or when it stops (a failure, the breaker, close) ->
 * finished, done() called and freed, once no message of it is outstanding.
 * A batch on the list is never freed: only the pump and the close sweep
 * take batches off it.
 */
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "queue_internal.h"

#define SLICE_NS                (3 * 1000 * 1000) /* production per loop iteration */
#define SLICE_CHECK_EVERY       64                /* messages between clock reads */
#define BREAKER_FAILURES        5                 /* consecutive failed messages that open it */
#define BREAKER_COOLDOWN_MS     1000
#define BREAKER_COOLDOWN_MAX_MS 8000
#define DEFAULT_WINDOW          10000
#define DEFAULT_BACKLOG         250000

enum { BRK_CLOSED, BRK_OPEN, BRK_HALF_OPEN };

static const char why_closing[] = "the queue is closing";
static const char why_down[] = "the queue backend is down";
static const char why_breaker[] = "the queue is failing; new batches are refused for a while";
static const char why_probe[] = "the queue is failing; a probe batch is under way";
static const char why_full[] = "the queue's backlog is full";
static const char err_stopped[] = "batch stopped: the queue is failing";
static const char err_closed[] = "batch stopped: the queue is closing";
static const char err_refused[] = "refused by the queue";
static const char err_too_big[] = "message larger than the queue's limit";

struct cm_queue_batch {
    cm_queue_batch_t *prev, *next; /* on q's wait list while `listed` */
    cm_queue_t *q;
    size_t n, next_i, outstanding;
    cm_queue_emit_cb emit;
    cm_queue_batch_done_cb done;
    void *ud;
    bool listed;
    bool probe;   /* the half-open breaker's probe */
    bool sending; /* inside emit(): cm_queue_batch_send() allowed once */
    cm_queue_batch_result_t r;
};

static void pump(uv_idle_t *h);

void cm__queue_batch_init(cm_queue_t *q, cm_metrics_t *metrics, const char *labels)
{
    uv_idle_init(q->loop, &q->pump);
    q->pump.data = q;
    q->handles_open = 2; /* close_timer + pump */
    q->window = DEFAULT_WINDOW;
    q->max_waiting = DEFAULT_BACKLOG;
    q->brk_cooldown = BREAKER_COOLDOWN_MS;
    if (metrics == NULL)
        return;
    q->m_batches_refused =
        cm_metrics_counter(metrics, "queue_batches_refused_total",
                           "Batches refused at admission (nothing written)", labels);
    q->m_breaker_opened =
        cm_metrics_counter(metrics, "queue_breaker_opened_total",
                           "Times the queue was judged down after failures", labels);
    q->m_waiting = cm_metrics_gauge(metrics, "queue_messages_waiting",
                                    "Messages of admitted batches waiting for room", labels);
}

void cm__queue_set_window(cm_queue_t *q, size_t capacity, size_t batch_window, size_t batch_backlog)
{
    size_t w = batch_window > 0 ? batch_window : DEFAULT_WINDOW;
    q->window = capacity > 0 && capacity < w ? capacity : w;
    q->max_waiting = batch_backlog > 0 ? batch_backlog : DEFAULT_BACKLOG;
}

static void waiting_add(cm_queue_t *q, ptrdiff_t d)
{
    q->waiting = (size_t)((ptrdiff_t)q->waiting + d);
    if (q->m_waiting != NULL)
        cm_gauge_add(q->m_waiting, (double)d);
}

static bool room(const cm_queue_t *q)
{
    return q->in_flight < q->window &&
           (q->window_bytes == 0 || q->in_flight_bytes < q->window_bytes);
}

static void unlist(cm_queue_batch_t *b)
{
    cm_queue_t *q = b->q;
    *(b->prev ? &b->prev->next : &q->wait_head) = b->next;
    *(b->next ? &b->next->prev : &q->wait_tail) = b->prev;
    b->prev = b->next = NULL;
    b->listed = false;
}

/* The first failure is the batch's status, except that "too large" wins:
 * the client must split, not retry. */
static void record_failure(cm_queue_batch_t *b, int status, const char *err)
{
    if (b->r.status == 0 || (status == CM_ETOOBIG && b->r.status != CM_ETOOBIG)) {
        b->r.status = status;
        b->r.err = err;
    }
}

/* No more of b is produced; what was not emitted counts as unsent. */
static void stop(cm_queue_batch_t *b, int status, const char *err)
{
    size_t left = b->n - b->next_i;
    if (left == 0)
        return;
    record_failure(b, status, err);
    b->r.unsent += left;
    b->next_i = b->n;
    waiting_add(b->q, -(ptrdiff_t)left);
}

static void maybe_finish(cm_queue_batch_t *b)
{
    if (b->listed || b->outstanding > 0 || b->sending || b->next_i < b->n)
        return;
    cm_queue_t *q = b->q;
    if (b->probe && q->brk_state == BRK_HALF_OPEN)
        q->brk_probe_out = false; /* it decided nothing: the next batch probes */
    b->done(&b->r, b->ud);
    free(b);
}

static void pump_start(cm_queue_t *q)
{
    if (q->wait_head != NULL && !q->finished)
        uv_idle_start(&q->pump, pump);
}

/* Stops every waiting batch; the pump (or the close sweep) finishes them. */
static void stop_all(cm_queue_t *q, int status, const char *err)
{
    for (cm_queue_batch_t *b = q->wait_head; b != NULL; b = b->next)
        stop(b, status, err);
    pump_start(q);
}

/* ---- the breaker ------------------------------------------------------------- */

static void breaker_open(cm_queue_t *q)
{
    q->brk_state = BRK_OPEN;
    q->brk_probe_out = false;
    q->brk_until = uv_now(q->loop) + q->brk_cooldown;
    cm_log(CM_LOG_WARN, NULL,
           "queue %s: %u consecutive failures: refusing batches for %llu ms, then probing",
           q->ops->name, q->brk_fails, (unsigned long long)q->brk_cooldown);
    q->brk_cooldown = q->brk_cooldown * 2 > BREAKER_COOLDOWN_MAX_MS ? BREAKER_COOLDOWN_MAX_MS
                                                                    : q->brk_cooldown * 2;
    if (q->m_breaker_opened != NULL)
        cm_counter_inc(q->m_breaker_opened);
    stop_all(q, CM_EAGAIN, err_stopped);
}

void cm__queue_batch_note(cm_queue_t *q, int status)
{
    if (status == 0) {
        q->brk_fails = 0;
        if (q->brk_state != BRK_CLOSED) {
            cm_log(CM_LOG_INFO, NULL, "queue %s: acknowledging again: batches admitted",
                   q->ops->name);
            q->brk_state = BRK_CLOSED;
            q->brk_cooldown = BREAKER_COOLDOWN_MS;
        }
        /* A completion freed room: resume the batches that wait for it. */
        pump_start(q);
        return;
    }
    pump_start(q);
    /* Too large, or librdkafka's local queue full: the message, not the
     * queue, is at fault. */
    if (status != CM_ETIMEDOUT && status != CM_EIO)
        return;
    q->brk_fails++;
    if (q->brk_state == BRK_HALF_OPEN ||
        (q->brk_state == BRK_CLOSED && q->brk_fails >= BREAKER_FAILURES))
        breaker_open(q);
}

/* NULL: admit (possibly as the probe); else why not. */
static const char *breaker_refusal(cm_queue_t *q, bool *probe)
{
    *probe = false;
    if (q->ops->down != NULL && q->ops->down(q))
        return why_down;
    if (q->brk_state == BRK_CLOSED)
        return NULL;
    if (q->brk_state == BRK_OPEN) {
        if (uv_now(q->loop) < q->brk_until)
            return why_breaker;
        q->brk_state = BRK_HALF_OPEN;
        q->brk_probe_out = false;
    }
    if (q->brk_probe_out)
        return why_probe;
    q->brk_probe_out = true;
    *probe = true;
    return NULL;
}

uint64_t cm_queue_retry_after_ms(cm_queue_t *q)
{
    uint64_t now = uv_now(q->loop);
    if (q->brk_state == BRK_OPEN && q->brk_until > now + 1000)
        return q->brk_until - now;
    return 1000;
}

/* ---- admission and production ------------------------------------------------ */

int cm_queue_batch(cm_queue_t *q, size_t n, cm_queue_emit_cb emit, cm_queue_batch_done_cb done,
                   void *ud, const char **why)
{
    const char *no = NULL;
    bool probe = false;

    if (q == NULL || n == 0 || emit == NULL || done == NULL)
        return CM_EINVAL;
    if (q->closing)
        no = why_closing;
    else if (q->waiting >= q->max_waiting)
        no = why_full;
    else
        no = breaker_refusal(q, &probe);
    if (no != NULL) {
        if (why != NULL)
            *why = no;
        if (q->m_batches_refused != NULL)
            cm_counter_inc(q->m_batches_refused);
        return CM_EAGAIN;
    }
    cm_queue_batch_t *b = cm_xcalloc(1, sizeof(*b));
    *b = (cm_queue_batch_t){.prev = q->wait_tail,
                            .q = q,
                            .n = n,
                            .emit = emit,
                            .done = done,
                            .ud = ud,
                            .listed = true,
                            .probe = probe};
    *(q->wait_tail ? &q->wait_tail->next : &q->wait_head) = b;
    q->wait_tail = b;
    waiting_add(q, (ptrdiff_t)n);
    pump_start(q);
    return 0;
}

static void on_message_done(int status, const char *err, void *ud)
{
    cm_queue_batch_t *b = ud;

    b->outstanding--;
    if (status == 0) {
        b->r.acked++;
    } else {
        b->r.failed++;
        record_failure(b, status, err);
        stop(b, status, err); /* the queue is failing: write no more of it */
    }
    maybe_finish(b);
}

int cm_queue_batch_send(cm_queue_batch_t *b, const cm_queue_msg_t *msg)
{
    if (b == NULL || !b->sending)
        return CM_EINVAL;
    b->sending = false;
    int rc = cm_queue_produce(b->q, msg, on_message_done, b);
    if (rc == 0)
        b->outstanding++;
    return rc;
}

/* Emits the next message of b. A refusal stops the batch (the message
 * and the rest count as unsent) and, unless the message was at fault,
 * counts as a failure of the queue for the breaker. */
static void emit_one(cm_queue_batch_t *b)
{
    size_t i = b->next_i++;
    waiting_add(b->q, -1);
    b->sending = true;
    int rc = b->emit(b, i, b->ud);
    b->sending = false;
    if (rc >= 0)
        return;
    b->r.unsent++;
    record_failure(b, rc, rc == CM_ETOOBIG ? err_too_big : err_refused);
    stop(b, rc, err_refused);
    if (rc != CM_ETOOBIG && rc != CM_EINVAL)
        cm__queue_batch_note(b->q, CM_EIO);
}

/* True once this iteration's slice is used up. The clock is read every
 * SLICE_CHECK_EVERY messages only, from the first such check on (a small
 * slice, the common case, never reads it). */
static bool slice_over(unsigned count, uint64_t *t0)
{
    if (count == 0 || count % SLICE_CHECK_EVERY != 0)
        return false;
    uint64_t now = uv_hrtime();
    if (*t0 == 0)
        *t0 = now;
    return now - *t0 > SLICE_NS;
}

/* The idle handle: production in slices, oldest batch first. */
static void pump(uv_idle_t *h)
{
    cm_queue_t *q = h->data;
    uint64_t t0 = 0;
    unsigned count = 0;

    while (q->wait_head != NULL && !slice_over(count, &t0)) {
        cm_queue_batch_t *b = q->wait_head;
        if (q->closing)
            stop(b, CM_EAGAIN, err_closed);
        if (b->next_i == b->n) {
            unlist(b);
            maybe_finish(b);
            continue;
        }
        if (!room(q))
            break;
        emit_one(b);
        count++;
    }
    if (count > 0 && q->ops->flush != NULL)
        q->ops->flush(q);
    /* Empty, or the window is full: completions restart the pump. Over
     * its slice with more to do, it stays active for the next iteration. */
    if (q->wait_head == NULL || !room(q))
        uv_idle_stop(h);
}

void cm__queue_batch_close(cm_queue_t *q)
{
    stop_all(q, CM_EAGAIN, err_closed);
    if (!q->finished)
        return; /* the pump finishes them, or the close timer's sweep */
    /* The close timer: shutdown follows, the pump will not run again.
     * Batches with messages outstanding finish as those are abandoned. */
    uv_idle_stop(&q->pump);
    while (q->wait_head != NULL) {
        cm_queue_batch_t *b = q->wait_head;
        unlist(b);
        maybe_finish(b);
    }
}
