/* queue_consumer.c - the consumer's common part (see queue_consumer_internal.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "queue_consumer_internal.h"

#define DEFAULT_MAX_BATCH  1000
#define DEFAULT_MAX_BYTES  (4u << 20)
#define DEFAULT_BLOCK_MS   500
#define DEFAULT_CLAIM_IDLE 30000

static void count(cm_counter_t *m, uint64_t n)
{
    if (m)
        cm_counter_add(m, n);
}

static void default_name(char *out, size_t cap)
{
    char host[128] = "host";
    if (gethostname(host, sizeof(host)) != 0)
        strcpy(host, "host");
    host[sizeof(host) - 1] = '\0';
    snprintf(out, cap, "%s-%ld", host, (long)getpid());
}

static void make_metrics(cm_consumer_t *c, cm_metrics_t *m, const char *backend)
{
    c->metrics = m;
    if (m == NULL)
        return;
    char labels[64];
    snprintf(labels, sizeof(labels), "backend=\"%s\"", backend);
    c->m_messages = cm_metrics_counter(m, "queue_consumer_messages_total",
                                       "Messages delivered to the consumer's owner", labels);
    c->m_batches = cm_metrics_counter(m, "queue_consumer_batches_total",
                                      "Batches delivered to the consumer's owner", labels);
    c->m_redelivered = cm_metrics_counter(
        m, "queue_consumer_redelivered_total",
        "Messages known to have been delivered before (pending, claimed)", labels);
    c->m_commits = cm_metrics_counter(m, "queue_consumer_commits_total",
                                      "Batches acknowledged after they were stored", labels);
    c->m_commit_failures =
        cm_metrics_counter(m, "queue_consumer_commit_failures_total",
                           "Acknowledgements that failed (their messages come again)", labels);
    c->m_retries = cm_metrics_counter(m, "queue_consumer_retries_total",
                                      "Batches handed back to be delivered again", labels);
    c->m_gaps = cm_metrics_counter(m, "queue_consumer_offset_gaps_total",
                                   "Jumps forward in a partition's offsets (Kafka)", labels);
}

/* Topic names come from the configuration: a quote or backslash would
 * break the label, so such a name is not labelled (never expected). */
static bool label_safe(const char *s)
{
    return strlen(s) < 200 && strpbrk(s, "\"\\\n") == NULL;
}

void cm__consumer_note_lag(cm_consumer_t *c, const char *topic, int32_t partition, double lag)
{
    if (c->metrics == NULL || !label_safe(topic))
        return;
    char labels[256];
    snprintf(labels, sizeof(labels), "topic=\"%s\",partition=\"%d\"", topic, (int)partition);
    cm_gauge_set(cm_metrics_gauge(c->metrics, "queue_consumer_lag_messages",
                                  "Messages in the partition the group has not read yet", labels),
                 lag);
}

void cm__consumer_note_assigned(cm_consumer_t *c, const char *topic, size_t partitions)
{
    if (c->metrics == NULL || !label_safe(topic))
        return;
    char labels[256];
    snprintf(labels, sizeof(labels), "topic=\"%s\"", topic);
    cm_gauge_set(cm_metrics_gauge(c->metrics, "queue_consumer_assigned_partitions",
                                  "Partitions of the topic this member holds (Kafka)", labels),
                 (double)partitions);
}

void cm__consumer_note_pending(cm_consumer_t *c, const char *topic, double pending)
{
    if (c->metrics == NULL || !label_safe(topic))
        return;
    char labels[256];
    snprintf(labels, sizeof(labels), "topic=\"%s\"", topic);
    cm_gauge_set(cm_metrics_gauge(c->metrics, "queue_consumer_pending_messages",
                                  "Messages delivered to the group and not acknowledged yet",
                                  labels),
                 pending);
}

int cm__consumer_init(cm_consumer_t *c, const cm__consumer_ops_t *ops, uv_loop_t *loop,
                      const cm_consumer_opts_t *opts, cm_consumer_batch_cb on_batch, void *ud)
{
    if (opts->ntopics == 0 || opts->topics == NULL || opts->group == NULL || !opts->group[0] ||
        on_batch == NULL) {
        cm_log(CM_LOG_ERROR, NULL, "queue consumer: topics, group and a callback are required");
        return CM_EINVAL;
    }
    for (size_t i = 0; i < opts->ntopics; i++)
        if (opts->topics[i] == NULL || !opts->topics[i][0]) {
            cm_log(CM_LOG_ERROR, NULL, "queue consumer: empty topic name");
            return CM_EINVAL;
        }
    c->ops = ops;
    c->loop = loop;
    c->ntopics = opts->ntopics;
    c->topics = cm_xcalloc(opts->ntopics, sizeof(char *));
    for (size_t i = 0; i < opts->ntopics; i++)
        c->topics[i] = cm_xstrdup(opts->topics[i]);
    c->group = cm_xstrdup(opts->group);
    char name[200];
    if (opts->consumer && opts->consumer[0])
        snprintf(name, sizeof(name), "%s", opts->consumer);
    else
        default_name(name, sizeof(name));
    c->consumer = cm_xstrdup(name);
    c->max_batch = opts->max_batch ? opts->max_batch : DEFAULT_MAX_BATCH;
    c->max_batch_bytes = opts->max_batch_bytes ? opts->max_batch_bytes : DEFAULT_MAX_BYTES;
    c->block_ms = opts->block_ms > 0 ? opts->block_ms : DEFAULT_BLOCK_MS;
    c->claim_idle_ms = opts->claim_idle_ms > 0 ? opts->claim_idle_ms : DEFAULT_CLAIM_IDLE;
    if (opts->depth > CM__CONSUMER_DEPTH_MAX) {
        cm_log(CM_LOG_ERROR, NULL, "queue consumer: depth %zu above %d", opts->depth,
               CM__CONSUMER_DEPTH_MAX);
        cm__consumer_fini(c);
        return CM_EINVAL;
    }
    c->depth = opts->depth ? opts->depth : 1;
    c->on_batch = on_batch;
    c->ud = ud;
    make_metrics(c, opts->metrics, ops->name);
    return CM_OK;
}

void cm__consumer_fini(cm_consumer_t *c)
{
    for (size_t i = 0; i < c->ntopics; i++)
        free(c->topics[i]);
    free(c->topics);
    free(c->group);
    free(c->consumer);
    c->topics = NULL;
    c->group = c->consumer = NULL;
}

/* ---- batches ------------------------------------------------------------------ */

cm_consumer_batch_t *cm__consumer_batch_new(cm_consumer_t *c, size_t source)
{
    cm_consumer_batch_t *b = cm_xcalloc(1, sizeof(*b));
    b->c = c;
    b->source = source;
    return b;
}

void cm__consumer_batch_add(cm_consumer_batch_t *b, const char *id, cm_slice_t key,
                            cm_slice_t value, const cm_queue_header_t *headers, size_t nheaders,
                            bool redelivered)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->msgs = cm_xrealloc(b->msgs, b->cap * sizeof(*b->msgs));
        b->blocks = cm_xrealloc(b->blocks, b->cap * sizeof(*b->blocks));
    }
    size_t idlen = strlen(id) + 1;
    size_t bytes = nheaders * sizeof(cm_queue_header_t) + idlen + key.len + value.len + 1;
    for (size_t i = 0; i < nheaders; i++)
        bytes += headers[i].name.len + headers[i].value.len;
    char *block = cm_xmalloc(bytes);
    cm_queue_header_t *hs = (cm_queue_header_t *)block;
    char *p = block + nheaders * sizeof(cm_queue_header_t);
    cm_consumed_t *m = &b->msgs[b->n];
    memcpy(p, id, idlen);
    m->id = p;
    p += idlen;
    memcpy(p, key.p ? key.p : "", key.len);
    m->key = (cm_slice_t){p, key.len};
    p += key.len;
    memcpy(p, value.p ? value.p : "", value.len);
    p[value.len] = '\0'; /* a convenience for parsers that want a C string */
    m->value = (cm_slice_t){p, value.len};
    p += value.len + 1;
    for (size_t i = 0; i < nheaders; i++) {
        memcpy(p, headers[i].name.p, headers[i].name.len);
        hs[i].name = (cm_slice_t){p, headers[i].name.len};
        p += headers[i].name.len;
        memcpy(p, headers[i].value.p, headers[i].value.len);
        hs[i].value = (cm_slice_t){p, headers[i].value.len};
        p += headers[i].value.len;
    }
    m->headers = nheaders ? hs : NULL;
    m->nheaders = nheaders;
    m->topic = b->c->topics[b->source];
    m->source = b->source;
    m->redelivered = redelivered;
    b->blocks[b->n++] = block;
}

void cm__consumer_batch_free(cm_consumer_batch_t *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->n; i++)
        free(b->blocks[i]);
    free(b->blocks);
    free(b->msgs);
    free(b);
}

size_t cm_consumer_batch_len(const cm_consumer_batch_t *b)
{
    return b->n;
}

const cm_consumed_t *cm_consumer_batch_msg(const cm_consumer_batch_t *b, size_t i)
{
    return i < b->n ? &b->msgs[i] : NULL;
}

/* ---- the cycle: fetch -> deliver -> commit or retry -> fetch ------------------ */

static void maybe_shutdown(cm_consumer_t *c);
static void on_timer(uv_timer_t *t);

/* Ending batches out of order would acknowledge a message delivered after
 * one handed back: a bug of the caller's, not something to carry on from. */
static void out_of_order(const char *what)
{
    cm_log(CM_LOG_ERROR, NULL, "queue consumer: %s", what);
    abort();
}

/* The next fetch, when one may start: fewer than depth outstanding, none
 * under way or waiting for delivery, and no retry's delay still running. */
static void maybe_fetch(cm_consumer_t *c)
{
    if (c->nout >= c->depth || c->fetching || c->ready_batch)
        return;
    uint64_t now = uv_now(c->loop);
    if (now < c->not_before) {
        uv_timer_start(&c->timer, on_timer, c->not_before - now, 0);
        return;
    }
    c->fetching = true;
    c->ops->fetch(c);
}

static void on_timer(uv_timer_t *t)
{
    cm_consumer_t *c = t->data;
    if (c->closing) {
        maybe_shutdown(c);
        return;
    }
    if (c->ready_batch) {
        cm_consumer_batch_t *b = c->ready_batch;
        c->ready_batch = NULL;
        c->out[c->nout++] = b;
        count(c->m_batches, 1);
        count(c->m_messages, b->n);
        size_t again = 0;
        for (size_t i = 0; i < b->n; i++)
            again += b->msgs[i].redelivered;
        count(c->m_redelivered, again);
        c->on_batch(b, c->ud);
        /* room for another: fetch it while the caller works on this one */
        if (!c->closing && c->nout < c->depth)
            uv_timer_start(&c->timer, on_timer, 0, 0);
        return;
    }
    maybe_fetch(c);
}

void cm__consumer_start(cm_consumer_t *c)
{
    uv_timer_init(c->loop, &c->timer);
    c->timer.data = c;
    uv_timer_start(&c->timer, on_timer, 0, 0);
}

void cm__consumer_deliver(cm_consumer_t *c, cm_consumer_batch_t *b)
{
    c->fetching = false;
    if (c->stale) { /* fetched across a retry: later than what was handed back */
        c->stale = false;
        if (b->n > 0)
            c->ops->rewind(c, b);
        cm__consumer_batch_free(b);
        uv_timer_start(&c->timer, on_timer, 0, 0);
        return;
    }
    if (c->closing || b->n == 0) {
        cm__consumer_batch_free(b); /* unacknowledged: the messages come again */
        uv_timer_start(&c->timer, on_timer, 0, 0);
        return;
    }
    c->ready_batch = b;
    uv_timer_start(&c->timer, on_timer, 0, 0);
}

void cm__consumer_idle(cm_consumer_t *c, uint64_t delay_ms)
{
    c->fetching = false;
    c->stale = false; /* it brought nothing */
    uv_timer_start(&c->timer, on_timer, c->closing ? 0 : delay_ms, 0);
}

void cm__consumer_commit_failed(cm_consumer_t *c)
{
    count(c->m_commit_failures, 1);
}

void cm__consumer_offset_gap(cm_consumer_t *c)
{
    count(c->m_gaps, 1);
}

void cm_consumer_commit(cm_consumer_batch_t *b)
{
    cm_consumer_t *c = b->c;
    if (c->nout == 0 || c->out[0] != b)
        out_of_order("commit of a batch that is not the oldest outstanding");
    c->ops->commit(c, b);
    count(c->m_commits, 1);
    memmove(c->out, c->out + 1, (c->nout - 1) * sizeof(c->out[0]));
    c->out[--c->nout] = NULL;
    cm__consumer_batch_free(b);
    uv_timer_start(&c->timer, on_timer, 0, 0);
}

void cm_consumer_retry(cm_consumer_batch_t *b, uint64_t delay_ms)
{
    cm_consumer_t *c = b->c;
    if (c->nout == 0 || c->out[c->nout - 1] != b)
        out_of_order("retry of a batch that is not the newest outstanding");
    if (c->ready_batch) { /* fetched, not yet delivered: later than b */
        c->ops->rewind(c, c->ready_batch);
        cm__consumer_batch_free(c->ready_batch);
        c->ready_batch = NULL;
    }
    if (c->fetching)
        c->stale = true;
    c->ops->rewind(c, b);
    count(c->m_retries, 1);
    c->out[--c->nout] = NULL;
    cm__consumer_batch_free(b);
    if (!c->closing)
        c->not_before = uv_now(c->loop) + delay_ms;
    uv_timer_start(&c->timer, on_timer, c->closing ? 0 : delay_ms, 0);
}

bool cm_consumer_ready(cm_consumer_t *c, cm_buf_t *why)
{
    if (c->closing) {
        if (why != NULL)
            cm_buf_append_cstr(why, "queue consumer closing");
        return false;
    }
    return c->ops->ready(c, why);
}

const char *cm_consumer_backend(const cm_consumer_t *c)
{
    return c->ops->name;
}

/* ---- close -------------------------------------------------------------------- */

static void timer_closed(uv_handle_t *h)
{
    cm_consumer_t *c = h->data;
    cm_consumer_closed_cb done = c->done;
    void *ud = c->done_ud;
    cm__consumer_fini(c);
    c->ops->free(c);
    if (done)
        done(ud);
}

static void maybe_shutdown(cm_consumer_t *c)
{
    if (c->shut || c->nout > 0 || c->fetching)
        return;
    cm__consumer_batch_free(c->ready_batch);
    c->ready_batch = NULL;
    c->shut = true;
    c->ops->shutdown(c);
}

void cm__consumer_shutdown_done(cm_consumer_t *c)
{
    uv_close((uv_handle_t *)&c->timer, timer_closed);
}

void cm_consumer_close(cm_consumer_t *c, cm_consumer_closed_cb done, void *ud)
{
    if (c->closing)
        return;
    c->closing = true;
    c->done = done;
    c->done_ud = ud;
    uv_timer_start(&c->timer, on_timer, 0, 0);
}
