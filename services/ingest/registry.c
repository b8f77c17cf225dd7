/* registry.c - token registry and quota list refreshed from Redis (see registry.h). */
#include "registry.h"

#include <stdlib.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/strset.h"

struct ing_registry {
    uv_timer_t timer;
    cm_redis_t *redis;
    cm_redis_t *sub; /* flags:changed; NULL without Redis */
    uint64_t refresh_ms;
    cm_strset_t *tokens; /* NULL until the first successful read */
    cm_strset_t *limited;
    ing_recheck_t *recheck; /* NULL without Redis */
    int pending;            /* replies outstanding */
    bool again;             /* a change notice came during a read: read once more */
    bool closing;
    bool timer_closed, sub_closed, recheck_closed;
    cm_gauge_t *known_gauge;
    cm_gauge_t *limited_gauge;
};

static void refresh(uv_timer_t *t);

static void maybe_free(ing_registry_t *r)
{
    if (!r->closing || !r->timer_closed || !r->sub_closed || !r->recheck_closed || r->pending > 0)
        return;
    cm_strset_free(r->tokens);
    cm_strset_free(r->limited);
    free(r);
}

/* Builds a set from every other element of an array reply (start: 0 or 1). */
static cm_strset_t *set_from_reply(const redisReply *reply, size_t step)
{
    cm_strset_t *s = cm_strset_new(reply->elements / step);
    for (size_t i = 0; i < reply->elements; i += step) {
        const redisReply *e = reply->element[i];
        if (e->type == REDIS_REPLY_STRING)
            cm_strset_add(s, (cm_slice_t){e->str, (size_t)e->len});
    }
    return s;
}

/* Both replies of a read are in: a change notice during it reads again
 * (the read may have been sent before the change was written). */
static void read_done(ing_registry_t *r)
{
    if (r->pending > 0)
        return;
    if (r->again && !r->closing) {
        r->again = false;
        refresh(&r->timer);
    }
    maybe_free(r);
}

/* A token the last list had and this one has not was retired (a reset,
 * a deleted project): refused from now on without a wait for it. */
static void retire_if_gone(cm_slice_t token, void *value, void *ud)
{
    ing_registry_t *r = ud;
    (void)value;
    if (!cm_strset_has(r->tokens, token))
        ing_recheck_retired(r->recheck, token);
}

static void on_tokens(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    ing_registry_t *r = ud;
    (void)c;
    r->pending--;
    if (!r->closing && reply && reply->type == REDIS_REPLY_ARRAY) {
        cm_strset_t *old = r->tokens;
        r->tokens = set_from_reply(reply, 2); /* HGETALL: field, value, ... */
        if (r->recheck) {
            cm_strset_each(old, retire_if_gone, r);
            ing_recheck_forget(r->recheck, r->tokens);
        }
        cm_strset_free(old);
        if (r->known_gauge)
            cm_gauge_set(r->known_gauge, (double)cm_strset_count(r->tokens));
    } else if (!r->closing) {
        cm_log(CM_LOG_WARN, NULL, "token registry refresh failed: %s",
               err ? err : (reply && reply->str ? reply->str : "unexpected reply"));
    }
    read_done(r);
}

static void on_limited(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    ing_registry_t *r = ud;
    (void)c;
    r->pending--;
    if (!r->closing && reply && reply->type == REDIS_REPLY_ARRAY) {
        cm_strset_free(r->limited);
        r->limited = set_from_reply(reply, 1);
        if (r->limited_gauge)
            cm_gauge_set(r->limited_gauge, (double)cm_strset_count(r->limited));
    } else if (!r->closing) {
        /* Fail open: keep the last list we had. */
        cm_log(CM_LOG_WARN, NULL, "quota list refresh failed: %s",
               err ? err : (reply && reply->str ? reply->str : "unexpected reply"));
    }
    read_done(r);
}

static void refresh(uv_timer_t *t)
{
    ing_registry_t *r = t->data;
    if (r->pending > 0 || r->closing)
        return;
    if (!cm_redis_connected(r->redis)) {
        if (r->tokens == NULL) /* never loaded: try again soon, not in refresh_ms */
            uv_timer_start(&r->timer, refresh, 100, r->refresh_ms);
        return;
    }
    char now[32];
    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    r->pending += 2;
    cm_redis_command(r->redis, on_tokens, r, "HGETALL %s", CM_REDISKEY_PROJECT_TOKENS);
    cm_redis_command(r->redis, on_limited, r, "ZRANGEBYSCORE %s %s +inf", CM_REDISKEY_QUOTA_EVENTS,
                     now);
}

/* The api published a project (a new one, a reset token, a quota): read
 * both lists now rather than at the next tick. */
static void on_changed(cm_redis_t *c, cm_slice_t channel, cm_slice_t msg, void *ud)
{
    ing_registry_t *r = ud;
    (void)c;
    (void)channel;
    (void)msg;
    if (r->closing)
        return;
    if (r->pending > 0)
        r->again = true;
    else
        refresh(&r->timer);
    ing_recheck_changed(r->recheck);
}

/* Subscribed (again): a notice may have been missed meanwhile. */
static void on_sub_connect(cm_redis_t *c, void *ud)
{
    on_changed(c, CM_SLICE_NULL, CM_SLICE_NULL, ud);
}

/* A re-check found a token: known from now on, without waiting for the
 * next read of the whole list. */
static void on_found(void *owner, cm_slice_t token)
{
    ing_registry_t *r = owner;
    if (r->tokens)
        cm_strset_add(r->tokens, token);
}

ing_registry_t *ing_registry_new(uv_loop_t *loop, const ing_registry_opts_t *o)
{
    ing_registry_t *r = cm_xcalloc(1, sizeof(*r));
    r->redis = o->redis;
    r->refresh_ms = o->refresh_ms;
    r->sub_closed = r->recheck_closed = true;
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    if (o->metrics) {
        r->known_gauge = cm_metrics_gauge(o->metrics, "ingest_known_tokens",
                                          "Project tokens in the registry", NULL);
        r->limited_gauge = cm_metrics_gauge(o->metrics, "ingest_quota_limited_tokens",
                                            "Tokens whose events are dropped for quota", NULL);
    }
    if (r->redis == NULL)
        return r;
    /* First refresh soon after start (Redis may still be connecting). */
    uv_timer_start(&r->timer, refresh, 10, r->refresh_ms);
    r->recheck = ing_recheck_new(loop, r->redis, o->recheck_wait_ms, o->metrics, on_found, r);
    r->recheck_closed = false;
    cm_redis_opts_t so = {.url = o->redis_url,
                          .subscriber = true,
                          .name = "redis-sub",
                          .on_connect = on_sub_connect,
                          .ud = r};
    if (cm_redis_new(loop, &so, &r->sub) == 0) {
        r->sub_closed = false;
        cm_redis_subscribe(r->sub, CM_REDISKEY_FLAGS_CHANGED, on_changed, r);
    } else {
        r->sub = NULL;
    }
    return r;
}

ing_token_state_t ing_registry_token(const ing_registry_t *r, cm_slice_t token)
{
    if (r->tokens == NULL || cm_strset_count(r->tokens) == 0)
        return ING_TOKEN_UNCHECKED;
    return cm_strset_has(r->tokens, token) ? ING_TOKEN_KNOWN : ING_TOKEN_UNKNOWN;
}

void ing_registry_recheck(ing_registry_t *r, cm_slice_t token, ing_recheck_cb cb, void *ud)
{
    if (r->recheck == NULL || r->closing) {
        cb(ud, false);
        return;
    }
    ing_recheck_ask(r->recheck, token, cb, ud);
}

bool ing_registry_quota_limited(const ing_registry_t *r, cm_slice_t token)
{
    return cm_strset_has(r->limited, token);
}

static void timer_closed(uv_handle_t *h)
{
    ing_registry_t *r = h->data;
    r->timer_closed = true;
    maybe_free(r);
}

static void sub_closed(void *ud)
{
    ing_registry_t *r = ud;
    r->sub_closed = true;
    maybe_free(r);
}

static void recheck_closed(void *ud)
{
    ing_registry_t *r = ud;
    r->recheck_closed = true;
    maybe_free(r);
}

void ing_registry_close(ing_registry_t *r)
{
    r->closing = true;
    uv_close((uv_handle_t *)&r->timer, timer_closed);
    if (r->sub)
        cm_redis_close(r->sub, sub_closed, r);
    if (r->recheck)
        ing_recheck_close(r->recheck, recheck_closed, r);
}
