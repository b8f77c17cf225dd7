/* tokens.c - see tokens.h. */
#include "tokens.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/strset.h"

#define MIN_GAP_MS 1000

typedef struct waiter waiter_t;
struct waiter {
    waiter_t *next;
    void (*done)(bool ok, void *ud);
    void *ud;
};

struct wr_tokens {
    uv_loop_t *loop;
    cm_redis_t *redis;
    cm_strset_t *map; /* token -> (void *)(uintptr_t)project id */
    uv_timer_t timer; /* periodic refresh */
    uv_timer_t later; /* answers waiters outside the caller's stack */
    uint64_t last_read;
    bool reading, closing;
    int open_handles; /* while closing: timers whose close callback is still to come */
    bool last_ok;
    waiter_t *waiting; /* for the read under way */
    waiter_t *answer;  /* to be answered from `later` */
};

static void answer_all(waiter_t *w, bool ok)
{
    while (w) {
        waiter_t *next = w->next;
        w->done(ok, w->ud);
        free(w);
        w = next;
    }
}

static void on_hgetall(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    wr_tokens_t *t = ud;
    (void)r;
    t->reading = false;
    bool ok = err == NULL && reply->type == REDIS_REPLY_ARRAY;
    if (ok) {
        cm_strset_t *map = cm_strset_new(reply->elements / 2 + 1);
        for (size_t i = 0; i + 1 < reply->elements; i += 2) {
            const redisReply *k = reply->element[i], *v = reply->element[i + 1];
            long long id = v->type == REDIS_REPLY_STRING ? atoll(v->str) : 0;
            if (k->type == REDIS_REPLY_STRING && id > 0)
                cm_strset_put(map, (cm_slice_t){k->str, k->len}, (void *)(uintptr_t)id);
        }
        cm_strset_free(t->map);
        t->map = map;
    } else
        cm_log(CM_LOG_WARN, NULL, "tokens: cannot read %s: %s", CM_REDISKEY_PROJECT_TOKENS,
               err                                ? err
               : reply->type == REDIS_REPLY_ERROR ? reply->str
                                                  : "unexpected reply");
    t->last_ok = ok;
    waiter_t *w = t->waiting;
    t->waiting = NULL;
    answer_all(w, ok);
}

static void read_now(wr_tokens_t *t)
{
    if (t->reading || t->closing)
        return;
    t->reading = true;
    t->last_read = uv_now(t->loop);
    cm_redis_command(t->redis, on_hgetall, t, "HGETALL %s", CM_REDISKEY_PROJECT_TOKENS);
}

static void on_timer(uv_timer_t *h)
{
    read_now(h->data);
}

static void on_later(uv_timer_t *h)
{
    wr_tokens_t *t = h->data;
    waiter_t *w = t->answer;
    t->answer = NULL;
    answer_all(w, t->last_ok);
}

wr_tokens_t *wr_tokens_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t refresh_ms)
{
    wr_tokens_t *t = cm_xcalloc(1, sizeof(*t));
    t->loop = loop;
    t->redis = redis;
    t->map = cm_strset_new(16);
    uv_timer_init(loop, &t->timer);
    uv_timer_init(loop, &t->later);
    t->timer.data = t->later.data = t;
    uv_timer_start(&t->timer, on_timer, 0, refresh_ms);
    return t;
}

long long wr_tokens_get(const wr_tokens_t *t, const char *token)
{
    return (long long)(uintptr_t)cm_strset_get(t->map, cm_slice_from_cstr(token));
}

void wr_tokens_refresh(wr_tokens_t *t, void (*done)(bool ok, void *ud), void *ud)
{
    waiter_t *w = cm_xcalloc(1, sizeof(*w));
    w->done = done;
    w->ud = ud;
    if (t->reading) {
        w->next = t->waiting;
        t->waiting = w;
        return;
    }
    if (t->closing || !cm_redis_connected(t->redis) ||
        (t->last_read && uv_now(t->loop) - t->last_read < MIN_GAP_MS)) {
        if (!cm_redis_connected(t->redis))
            t->last_ok = false;
        w->next = t->answer;
        t->answer = w;
        uv_timer_start(&t->later, on_later, 0, 0);
        return;
    }
    w->next = t->waiting;
    t->waiting = w;
    read_now(t); /* the reply (or a fast failure) answers */
}

/* Both timers' close callbacks come, in an order libuv does not promise
 * (it runs them last closed first): the second one frees. */
static void on_closed(uv_handle_t *h)
{
    wr_tokens_t *t = h->data;
    if (--t->open_handles > 0)
        return;
    cm_strset_free(t->map);
    free(t);
}

/* Close the Redis client first: its pending reply then comes (failed)
 * before this, while t is still alive. */
void wr_tokens_close(wr_tokens_t *t)
{
    t->closing = true;
    answer_all(t->answer, false);
    t->answer = NULL;
    t->open_handles = 2;
    uv_close((uv_handle_t *)&t->timer, on_closed);
    uv_close((uv_handle_t *)&t->later, on_closed);
}
