/*
 * queue.c - the backend-independent half of the event queue (see queue.h
 * for the contract and queue_internal.h for how the work is split).
 *
 * Every produced message becomes an "op" on a doubly linked list, oldest
 * first, until its backend reports the outcome. Keeping the list here,
 * rather than trusting each library to report every message, is what lets
 * close() keep the promise "every callback exactly once" even when the
 * library would drop messages silently on destruction.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "queue_internal.h"

static const char err_closed[] = "queue closed before acknowledgement";

static void op_unlink(cm_queue_t *q, cm__queue_op_t *op)
{
    *(op->prev ? &op->prev->next : &q->head) = op->next;
    *(op->next ? &op->next->prev : &q->tail) = op->prev;
    op->prev = op->next = NULL;
}

static void counter_add(cm_counter_t *c)
{
    if (c != NULL)
        cm_counter_inc(c);
}

static void in_flight_add(cm_queue_t *q, int d)
{
    q->in_flight = (size_t)((ptrdiff_t)q->in_flight + d);
    if (q->m_in_flight != NULL)
        cm_gauge_add(q->m_in_flight, d);
}

void cm__queue_init(cm_queue_t *q, const cm__queue_ops_t *ops, uv_loop_t *loop,
                    cm_metrics_t *metrics)
{
    q->ops = ops;
    q->loop = loop;
    uv_timer_init(loop, &q->close_timer);
    q->close_timer.data = q;
    /* One series per backend; several queues of a backend add up. */
    char labels[64];
    snprintf(labels, sizeof(labels), "backend=\"%s\"", ops->name);
    cm__queue_batch_init(q, metrics, labels);
    if (metrics == NULL)
        return;
    q->m_produced = cm_metrics_counter(metrics, "queue_messages_produced_total",
                                       "Messages accepted by the queue", labels);
    q->m_acked = cm_metrics_counter(metrics, "queue_messages_acked_total",
                                    "Messages acknowledged by the backend", labels);
    q->m_failed = cm_metrics_counter(metrics, "queue_messages_failed_total",
                                     "Accepted messages that completed with an error", labels);
    q->m_rejected = cm_metrics_counter(metrics, "queue_messages_rejected_total",
                                       "Messages refused before being queued", labels);
    q->m_in_flight = cm_metrics_gauge(metrics, "queue_messages_in_flight",
                                      "Messages waiting for an acknowledgement", labels);
}

int cm_queue_produce(cm_queue_t *q, const cm_queue_msg_t *msg, cm_queue_done_cb cb, void *ud)
{
    if (q == NULL || msg == NULL || msg->topic == NULL || msg->topic[0] == '\0' || cb == NULL ||
        (msg->nheaders > 0 && msg->headers == NULL)) {
        if (q != NULL)
            counter_add(q->m_rejected);
        return CM_EINVAL;
    }
    if (q->closing) {
        counter_add(q->m_rejected);
        return CM_EAGAIN;
    }

    size_t bytes = msg->key.len + msg->value.len;
    for (size_t i = 0; i < msg->nheaders; i++)
        bytes += msg->headers[i].name.len + msg->headers[i].value.len;
    cm__queue_op_t *op = cm_xcalloc(1, sizeof(*op));
    *op = (cm__queue_op_t){
        .prev = q->tail, .q = q, .cb = cb, .ud = ud, .bytes = bytes, .submitting = true};
    *(q->tail ? &q->tail->next : &q->head) = op;
    q->tail = op;
    in_flight_add(q, 1);
    q->in_flight_bytes += bytes;

    int rc = q->ops->produce(q, msg, op);
    op->submitting = false;
    /* A backend that answers from inside produce would break the "never
     * synchronously" promise: turn the answer into a refusal instead. */
    if (rc == 0 && op->early)
        rc = op->early_status < 0 ? op->early_status : CM_EIO;
    if (rc < 0) {
        op_unlink(q, op);
        in_flight_add(q, -1);
        q->in_flight_bytes -= bytes;
        free(op);
        counter_add(q->m_rejected);
        return rc;
    }
    counter_add(q->m_produced);
    return 0;
}

static void on_close_timer(uv_timer_t *t);

void cm__queue_complete(cm__queue_op_t *op, int status, const char *err)
{
    cm_queue_t *q = op->q;

    if (q == NULL) { /* abandoned by close(): its callback already ran */
        free(op);
        return;
    }
    if (op->submitting) {
        op->early = true;
        op->early_status = status;
        return;
    }
    op_unlink(q, op);
    in_flight_add(q, -1);
    q->in_flight_bytes -= op->bytes;
    counter_add(status == 0 ? q->m_acked : q->m_failed);
    cm_queue_done_cb cb = op->cb;
    void *ud = op->ud;
    free(op);
    /* Before the callback, which may produce again (refused) or close. */
    if (q->closing && !q->finished && q->in_flight == 0)
        uv_timer_start(&q->close_timer, on_close_timer, 0, 0);
    cm__queue_batch_note(q, status);
    cb(status, status == 0 ? NULL : err, ud);
}

/* The deadline passed (or nothing is outstanding any more): abandon what
 * is left and shut the backend down. */
static void on_close_timer(uv_timer_t *t)
{
    cm_queue_t *q = t->data;

    if (q->finished)
        return;
    q->finished = true;
    cm__queue_batch_close(q); /* batches still waiting end here, unsent */
    if (q->in_flight > 0)
        cm_log(CM_LOG_WARN, NULL, "queue %s: closing with %zu message(s) unacknowledged",
               q->ops->name, q->in_flight);
    while (q->head != NULL) {
        cm__queue_op_t *op = q->head;
        op_unlink(q, op);
        in_flight_add(q, -1);
        q->in_flight_bytes -= op->bytes;
        counter_add(q->m_failed);
        op->q = NULL;
        op->next = q->abandoned;
        q->abandoned = op;
        op->cb(CM_ETIMEDOUT, err_closed, op->ud);
    }
    q->ops->shutdown(q);
}

void cm__queue_free_abandoned(cm_queue_t *q)
{
    while (q->abandoned != NULL) {
        cm__queue_op_t *op = q->abandoned;
        q->abandoned = op->next;
        free(op);
    }
}

static void on_handle_closed(uv_handle_t *h)
{
    cm_queue_t *q = h->data;
    if (--q->handles_open > 0)
        return;
    cm_queue_closed_cb done = q->done;
    void *ud = q->done_ud;

    q->ops->free(q);
    if (done != NULL)
        done(ud);
}

void cm__queue_shutdown_done(cm_queue_t *q)
{
    uv_close((uv_handle_t *)&q->pump, on_handle_closed);
    uv_close((uv_handle_t *)&q->close_timer, on_handle_closed);
}

void cm_queue_close(cm_queue_t *q, uint64_t timeout_ms, cm_queue_closed_cb done, void *ud)
{
    if (q == NULL || q->closing)
        return;
    q->closing = true;
    q->done = done;
    q->done_ud = ud;
    cm__queue_batch_close(q);
    uv_timer_start(&q->close_timer, on_close_timer, q->in_flight > 0 ? timeout_ms : 0, 0);
}

bool cm_queue_ready(cm_queue_t *q, cm_buf_t *why)
{
    if (q->closing) {
        if (why != NULL)
            cm_buf_append_cstr(why, "queue closing");
        return false;
    }
    return q->ops->ready(q, why);
}

const char *cm_queue_backend(const cm_queue_t *q)
{
    return q->ops->name;
}

size_t cm_queue_in_flight(const cm_queue_t *q)
{
    return q->in_flight;
}

size_t cm_queue_waiting(const cm_queue_t *q)
{
    return q->waiting;
}
