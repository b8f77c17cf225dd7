/*
 * admit.c - per-project admission of event-store reads (see
 * admit.h, docs/endpoints.md "Sharing the event store").
 *
 * Each project with reads running or waiting has an entry (a list: a
 * process serves few projects at once, and an entry goes when its last
 * read ends). One timer serves every queue: it fires at the earliest
 * deadline among waiting reads, or at once when a refusal is to be
 * answered (callbacks never run inside api_query_select).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "http/admit.h"

#define RETRY_AFTER_S 1 /* a slot frees when any read of the project ends: soon, unknown */

typedef struct project project_t;
typedef struct query query_t;

struct query {
    query_t *next;
    api_admit_t *a;
    project_t *p;
    api_call_t *call;
    char *sql;
    char **params;
    char *types;
    int nparams;
    bool ddl;
    size_t max_bytes;  /* the answer's bound (cm_evstore_select_t) */
    uint64_t deadline; /* uv_now() ms past which it must not start; 0: none */
    int fail;          /* on the failing list: the status to answer */
    cm_evstore_query_cb cb;
    void *ud;
};

struct project {
    project_t *next;
    long long id;
    size_t running, queued;
    query_t *head, *tail; /* waiting, oldest first */
};

struct api_admit {
    api_ctx_t *ctx;
    size_t concurrency, queue_max;
    project_t *projects;
    query_t *failing, *failing_tail; /* answered by the timer */
    uv_timer_t timer;
    size_t running;
    bool closing, timer_closed;
};

static void push(query_t **head, query_t **tail, query_t *q)
{
    q->next = NULL;
    if (*tail)
        (*tail)->next = q;
    else
        *head = q;
    *tail = q;
}

static void query_free(query_t *q)
{
    for (int i = 0; i < q->nparams; i++)
        free(q->params[i]);
    free(q->params);
    free(q->types);
    free(q->sql);
    free(q);
}

static void answer(query_t *q, int status, const char *err)
{
    q->cb(status, err, NULL, q->ud);
    query_free(q);
}

static project_t *project_get(api_admit_t *a, long long id)
{
    for (project_t *p = a->projects; p; p = p->next)
        if (p->id == id)
            return p;
    project_t *p = cm_xcalloc(1, sizeof(*p));
    p->id = id;
    p->next = a->projects;
    a->projects = p;
    return p;
}

/* Entries with nothing running or waiting go. */
static void drop_idle(api_admit_t *a)
{
    for (project_t **pp = &a->projects; *pp;) {
        project_t *p = *pp;
        if (p->running == 0 && p->queued == 0) {
            *pp = p->next;
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

static void maybe_free(api_admit_t *a)
{
    if (!a->closing || !a->timer_closed || a->running > 0)
        return;
    drop_idle(a);
    a->ctx->admit = NULL;
    free(a);
}

static void on_timer(uv_timer_t *t);

static void reschedule(api_admit_t *a)
{
    if (a->closing)
        return;
    if (a->failing) {
        uv_timer_start(&a->timer, on_timer, 0, 0);
        return;
    }
    uint64_t first = 0;
    for (project_t *p = a->projects; p; p = p->next)
        for (query_t *q = p->head; q; q = q->next)
            if (q->deadline && (first == 0 || q->deadline < first))
                first = q->deadline;
    uint64_t now = uv_now(a->ctx->loop);
    if (first)
        uv_timer_start(&a->timer, on_timer, first > now ? first - now : 0, 0);
    else
        uv_timer_stop(&a->timer);
}

/* What is left of the budget, at least 1 ms (0 means no limit below). */
static unsigned time_left(uv_loop_t *loop, uint64_t deadline)
{
    uint64_t now = uv_now(loop);
    if (deadline == 0)
        return 0;
    return deadline > now + 1 ? (unsigned)(deadline - now) : 1;
}

static void pump(api_admit_t *a, project_t *p);

static void on_done(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    query_t *q = ud;
    api_admit_t *a = q->a;
    project_t *p = q->p;
    p->running--;
    a->running--;
    pump(a, p); /* the next waiting read first: it was there before cb's next one */
    q->cb(status, err, rows, q->ud);
    query_free(q);
    drop_idle(a);
    maybe_free(a);
}

static void start(api_admit_t *a, project_t *p, query_t *q)
{
    p->running++;
    a->running++;
    cm_evstore_select_t s = {
        .sql = q->sql,
        .params = (const char *const *)q->params,
        .types = q->types,
        .nparams = q->nparams,
        .timeout_ms = time_left(a->ctx->loop, q->deadline),
        .ddl = q->ddl,
        .max_bytes = q->max_bytes,
    };
    cm_evstore_select(a->ctx->events, &s, on_done, q);
}

/* Waiting reads into free slots; called from completions only, so a read
 * whose time passed, or whose client went away, is answered here. */
static void pump(api_admit_t *a, project_t *p)
{
    while (p->head && (p->running < a->concurrency || a->closing)) {
        query_t *q = p->head;
        p->head = q->next;
        if (p->head == NULL)
            p->tail = NULL;
        p->queued--;
        if (q->deadline && uv_now(a->ctx->loop) >= q->deadline)
            answer(q, CM_ETIMEDOUT, "the query ran out of time waiting for its turn");
        else if (!cm_http_req_connected(q->call->req))
            answer(q, CM_EUNAVAIL, "the client went away while the query waited");
        else
            start(a, p, q);
    }
    reschedule(a);
}

/* Refusals to answer, and waiting reads whose time passed: collected
 * first, answered after (an answer may submit another read). */
static void on_timer(uv_timer_t *t)
{
    api_admit_t *a = t->data;
    uint64_t now = uv_now(a->ctx->loop);
    query_t *due = a->failing, *due_tail = a->failing_tail;
    a->failing = a->failing_tail = NULL;
    for (project_t *p = a->projects; p; p = p->next) {
        query_t *keep = NULL, *keep_tail = NULL;
        for (query_t *q = p->head, *next; q; q = next) {
            next = q->next;
            if (q->deadline && now >= q->deadline) {
                q->fail = CM_ETIMEDOUT;
                p->queued--;
                push(&due, &due_tail, q);
            } else {
                push(&keep, &keep_tail, q);
            }
        }
        p->head = keep;
        p->tail = keep_tail;
    }
    drop_idle(a);
    reschedule(a);
    for (query_t *q = due, *next; q; q = next) {
        next = q->next;
        answer(q, q->fail,
               q->fail == CM_ETIMEDOUT ? "the query ran out of time waiting for its turn"
               : q->fail == CM_EAGAIN  ? "too many queries of this project"
                                       : "the service is closing");
    }
}

api_admit_t *api_admit_new(api_ctx_t *ctx)
{
    api_admit_t *a = cm_xcalloc(1, sizeof(*a));
    a->ctx = ctx;
    a->concurrency = ctx->cfg.query_concurrency > 0 ? (size_t)ctx->cfg.query_concurrency : 1;
    a->queue_max = ctx->cfg.query_queue > 0 ? (size_t)ctx->cfg.query_queue : 0;
    uv_timer_init(ctx->loop, &a->timer);
    a->timer.data = a;
    return a;
}

static void on_timer_closed(uv_handle_t *h)
{
    api_admit_t *a = h->data;
    a->timer_closed = true;
    maybe_free(a);
}

void api_admit_close(api_admit_t *a)
{
    query_t *due = a->failing, *due_tail = a->failing_tail;
    a->failing = a->failing_tail = NULL;
    a->closing = true;
    for (project_t *p = a->projects; p; p = p->next) {
        while (p->head) {
            query_t *q = p->head;
            p->head = q->next;
            q->fail = CM_EUNAVAIL;
            push(&due, &due_tail, q);
        }
        p->tail = NULL;
        p->queued = 0;
    }
    uv_close((uv_handle_t *)&a->timer, on_timer_closed);
    for (query_t *q = due, *next; q; q = next) {
        next = q->next;
        answer(q, q->fail, "the service is closing");
    }
}

static query_t *copy(api_call_t *call, const cm_evstore_select_t *s, cm_evstore_query_cb cb,
                     void *ud)
{
    query_t *q = cm_xcalloc(1, sizeof(*q));
    q->call = call;
    q->sql = cm_xstrdup(s->sql);
    q->nparams = s->nparams > 0 ? s->nparams : 0;
    q->params = cm_xcalloc((size_t)q->nparams + 1, sizeof(char *));
    for (int i = 0; i < q->nparams; i++)
        q->params[i] = s->params[i] ? cm_xstrdup(s->params[i]) : NULL;
    q->types = s->types ? cm_xstrdup(s->types) : NULL;
    q->ddl = s->ddl;
    q->max_bytes = s->max_bytes;
    if (s->timeout_ms)
        q->deadline = cm_http_req_start_ms(call->req) + s->timeout_ms;
    q->cb = cb;
    q->ud = ud;
    return q;
}

void api_query_select(api_call_t *call, const cm_evstore_select_t *s, cm_evstore_query_cb cb,
                      void *ud)
{
    api_admit_t *a = call->ctx->admit;
    query_t *q = copy(call, s, cb, ud);
    if (a == NULL || a->closing) { /* closing: whatever still runs is not held back */
        cm_evstore_select_t left = *s;
        left.timeout_ms = time_left(call->ctx->loop, q->deadline);
        cm_evstore_select(call->ctx->events, &left, cb, ud);
        query_free(q);
        return;
    }
    q->a = a;
    project_t *p = project_get(a, strtoll(call->project_id, NULL, 10));
    q->p = p;
    if (q->deadline && uv_now(call->ctx->loop) >= q->deadline) {
        /* an insight's later query, or a materialized read's fallback */
        q->fail = CM_ETIMEDOUT;
        push(&a->failing, &a->failing_tail, q);
        drop_idle(a);
        reschedule(a);
    } else if (p->running < a->concurrency && p->head == NULL) {
        start(a, p, q);
    } else if (p->queued < a->queue_max) {
        push(&p->head, &p->tail, q);
        p->queued++;
        reschedule(a);
    } else {
        q->fail = CM_EAGAIN;
        push(&a->failing, &a->failing_tail, q);
        drop_idle(a);
        reschedule(a);
    }
}

bool api_query_refused(api_call_t *call, int status)
{
    if (status != CM_EAGAIN)
        return false;
    cm_api_error_t e;
    char secs[16];
    snprintf(secs, sizeof(secs), "%d", RETRY_AFTER_S);
    cm_http_res_header(call->req, "Retry-After", secs);
    cm_api_error_set(&e, 429, "throttled", NULL,
                     "Too many queries of this project are running or waiting (%lld at once, "
                     "%lld waiting); retry in %d s.",
                     call->ctx->cfg.query_concurrency, call->ctx->cfg.query_queue, RETRY_AFTER_S);
    api_respond_error(call, &e);
    return true;
}

unsigned api_query_timeout_ms(const api_call_t *call)
{
    return (unsigned)call->ctx->cfg.query_timeout_ms;
}
