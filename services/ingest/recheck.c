/* recheck.c - unknown tokens asked of Redis in shared rounds (see recheck.h). */
#include "recheck.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/rediskeys.h"
#include "cm/strset.h"

/* Long enough that an SDK repeating a wrong token costs Redis nothing
 * more; short enough that a token missed by a lost change notice is not
 * refused for long. */
#define NEGATIVE_TTL_MS 5000
/* Distinct unknown tokens remembered; beyond, the cache starts over (a
 * flood of random tokens must not grow memory). */
#define NEGATIVE_MAX 10000
/* Tokens per HMGET: one round stays a small command. */
#define ROUND_MAX 256

typedef struct waiter waiter_t;
struct waiter {
    waiter_t *next;
    char *token;
    size_t len;
    uint64_t deadline; /* uv_now() after which a miss is final */
    bool asked;        /* a round has asked for it */
    ing_recheck_cb cb;
    void *ud;
};

typedef struct {
    ing_recheck_t *c;
    uint64_t sent_at;
    size_t n;
    waiter_t *w[ROUND_MAX];
} round_t;

struct ing_recheck {
    uv_loop_t *loop;
    uv_timer_t timer; /* the earliest wait's end */
    cm_redis_t *redis;
    uint64_t wait_ms;
    waiter_t *head, *tail;
    round_t *round;      /* in flight */
    bool again;          /* a change notice came: ask every waiting token again */
    cm_strset_t *misses; /* token -> (void *)(expiry ms + 1) */
    ing_recheck_found_cb found;
    void *owner;
    cm_counter_t *known, *unknown, *cached;
    bool closing, timer_closed;
    void (*done)(void *ud);
    void *done_ud;
};

static void send_round(ing_recheck_t *c);

static void count(cm_counter_t *counter)
{
    if (counter)
        cm_counter_inc(counter);
}

static void on_timer(uv_timer_t *t)
{
    send_round(t->data);
}

static void maybe_done(ing_recheck_t *c)
{
    if (!c->closing || !c->timer_closed || c->round)
        return;
    cm_strset_free(c->misses);
    void (*done)(void *) = c->done;
    void *ud = c->done_ud;
    free(c);
    if (done)
        done(ud);
}

static void answer(ing_recheck_t *c, waiter_t *w, bool known)
{
    count(known ? c->known : c->unknown);
    ing_recheck_cb cb = w->cb;
    void *ud = w->ud;
    free(w->token);
    free(w);
    cb(ud, known);
}

static void push(ing_recheck_t *c, waiter_t *w)
{
    w->next = NULL;
    if (c->tail)
        c->tail->next = w;
    else
        c->head = w;
    c->tail = w;
}

static void remember_miss(ing_recheck_t *c, cm_slice_t token)
{
    if (cm_strset_count(c->misses) >= NEGATIVE_MAX) {
        cm_strset_free(c->misses);
        c->misses = cm_strset_new(64);
    }
    uintptr_t until = (uintptr_t)(uv_now(c->loop) + NEGATIVE_TTL_MS + 1);
    cm_strset_put(c->misses, token, (void *)until);
}

/* What to do next: a round now (a token never asked, or a change notice),
 * or at the earliest end of a wait. */
static void schedule(ing_recheck_t *c)
{
    if (c->round || c->closing)
        return;
    uint64_t now = uv_now(c->loop), first = UINT64_MAX;
    bool now_due = c->again;
    for (waiter_t *w = c->head; w && !now_due; w = w->next) {
        if (!w->asked || w->deadline <= now)
            now_due = true;
        first = CM_MIN(first, w->deadline);
    }
    if (now_due) {
        send_round(c);
        return;
    }
    if (c->head)
        uv_timer_start(&c->timer, on_timer, first - now, 0);
    else
        uv_timer_stop(&c->timer);
}

static void on_round(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    round_t *rd = ud;
    ing_recheck_t *c = rd->c;
    (void)r;
    bool ok = !err && reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == rd->n;
    c->round = NULL;
    for (size_t i = 0; i < rd->n; i++) {
        waiter_t *w = rd->w[i];
        bool known = ok && reply->element[i]->type == REDIS_REPLY_STRING;
        if (known) {
            if (!c->closing)
                c->found(c->owner, (cm_slice_t){w->token, w->len});
            answer(c, w, true);
        } else if (!ok || c->closing || w->deadline <= rd->sent_at) {
            /* Redis failing answers as the list would have: unknown, but
             * not remembered, since nothing was learnt. */
            if (ok)
                remember_miss(c, (cm_slice_t){w->token, w->len});
            answer(c, w, false);
        } else {
            push(c, w); /* still within its wait: the next round asks again */
        }
    }
    free(rd);
    schedule(c);
    maybe_done(c);
}

static void send_round(ing_recheck_t *c)
{
    if (c->round || c->head == NULL || c->closing)
        return;
    round_t *rd = cm_xcalloc(1, sizeof(*rd));
    rd->c = c;
    rd->sent_at = uv_now(c->loop);
    const char *argv[ROUND_MAX + 2];
    size_t lens[ROUND_MAX + 2];
    argv[0] = "HMGET";
    argv[1] = CM_REDISKEY_PROJECT_TOKENS;
    lens[0] = strlen(argv[0]);
    lens[1] = strlen(argv[1]);
    while (c->head && rd->n < ROUND_MAX) {
        waiter_t *w = c->head;
        c->head = w->next;
        if (c->head == NULL)
            c->tail = NULL;
        w->asked = true;
        argv[2 + rd->n] = w->token;
        lens[2 + rd->n] = w->len;
        rd->w[rd->n++] = w;
    }
    c->again = false;
    c->round = rd;
    cm_redis_command_argv(c->redis, on_round, rd, (int)rd->n + 2, argv, lens);
}

void ing_recheck_ask(ing_recheck_t *c, cm_slice_t token, ing_recheck_cb cb, void *ud)
{
    uintptr_t until = (uintptr_t)cm_strset_get(c->misses, token);
    if (c->closing || (until > 0 && uv_now(c->loop) + 1 < until)) {
        count(c->cached);
        cb(ud, false);
        return;
    }
    waiter_t *w = cm_xcalloc(1, sizeof(*w));
    w->token = cm_xmemdup(token.p, token.len);
    w->len = token.len;
    w->deadline = uv_now(c->loop) + c->wait_ms;
    w->cb = cb;
    w->ud = ud;
    push(c, w);
    schedule(c);
}

void ing_recheck_changed(ing_recheck_t *c)
{
    if (c->closing || c->head == NULL)
        return;
    c->again = true;
    schedule(c);
}

void ing_recheck_retired(ing_recheck_t *c, cm_slice_t token)
{
    remember_miss(c, token);
}

typedef struct {
    const cm_strset_t *known;
    cm_strset_t *keep;
} forget_t;

static void keep_unknown(cm_slice_t token, void *until, void *ud)
{
    forget_t *f = ud;
    if (!cm_strset_has(f->known, token))
        cm_strset_put(f->keep, token, until);
}

void ing_recheck_forget(ing_recheck_t *c, const cm_strset_t *known)
{
    if (cm_strset_count(c->misses) == 0)
        return;
    forget_t f = {known, cm_strset_new(cm_strset_count(c->misses))};
    cm_strset_each(c->misses, keep_unknown, &f);
    cm_strset_free(c->misses);
    c->misses = f.keep;
}

ing_recheck_t *ing_recheck_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t wait_ms,
                               cm_metrics_t *metrics, ing_recheck_found_cb found, void *owner)
{
    ing_recheck_t *c = cm_xcalloc(1, sizeof(*c));
    c->loop = loop;
    c->redis = redis;
    c->wait_ms = wait_ms;
    c->found = found;
    c->owner = owner;
    c->misses = cm_strset_new(64);
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    if (metrics) {
        const char *help = "Tokens not in the registry asked of Redis before an answer";
        c->known =
            cm_metrics_counter(metrics, "ingest_token_rechecks_total", help, "result=\"known\"");
        c->unknown =
            cm_metrics_counter(metrics, "ingest_token_rechecks_total", help, "result=\"unknown\"");
        c->cached = cm_metrics_counter(metrics, "ingest_token_rechecks_total", help,
                                       "result=\"cached_unknown\"");
    }
    return c;
}

static void timer_closed(uv_handle_t *h)
{
    ing_recheck_t *c = h->data;
    c->timer_closed = true;
    maybe_done(c);
}

void ing_recheck_close(ing_recheck_t *c, void (*done)(void *ud), void *ud)
{
    c->closing = true;
    c->done = done;
    c->done_ud = ud;
    while (c->head) {
        waiter_t *w = c->head;
        c->head = w->next;
        answer(c, w, false);
    }
    c->tail = NULL;
    uv_close((uv_handle_t *)&c->timer, timer_closed);
}
