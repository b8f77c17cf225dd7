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
    uint64_t refresh_ms;
    cm_strset_t *tokens; /* NULL until the first successful read */
    cm_strset_t *limited;
    int pending; /* replies outstanding */
    bool closing;
    bool timer_closed;
    cm_gauge_t *known_gauge;
    cm_gauge_t *limited_gauge;
};

static void maybe_free(ing_registry_t *r)
{
    if (!r->closing || !r->timer_closed || r->pending > 0)
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

static void on_tokens(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    ing_registry_t *r = ud;
    (void)c;
    r->pending--;
    if (!r->closing && reply && reply->type == REDIS_REPLY_ARRAY) {
        cm_strset_free(r->tokens);
        r->tokens = set_from_reply(reply, 2); /* HGETALL: field, value, ... */
        if (r->known_gauge)
            cm_gauge_set(r->known_gauge, (double)cm_strset_count(r->tokens));
    } else if (!r->closing) {
        cm_log(CM_LOG_WARN, NULL, "token registry refresh failed: %s",
               err ? err : (reply && reply->str ? reply->str : "unexpected reply"));
    }
    maybe_free(r);
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
    maybe_free(r);
}

static void refresh(uv_timer_t *t)
{
    ing_registry_t *r = t->data;
    if (r->pending > 0)
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

ing_registry_t *ing_registry_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t refresh_ms,
                                 cm_metrics_t *metrics)
{
    ing_registry_t *r = cm_xcalloc(1, sizeof(*r));
    r->redis = redis;
    r->refresh_ms = refresh_ms;
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    if (metrics) {
        r->known_gauge = cm_metrics_gauge(metrics, "ingest_known_tokens",
                                          "Project tokens in the registry", NULL);
        r->limited_gauge = cm_metrics_gauge(metrics, "ingest_quota_limited_tokens",
                                            "Tokens whose events are dropped for quota", NULL);
    }
    /* First refresh soon after start (Redis may still be connecting). */
    if (redis)
        uv_timer_start(&r->timer, refresh, 10, refresh_ms);
    return r;
}

ing_token_state_t ing_registry_token(const ing_registry_t *r, cm_slice_t token)
{
    if (r->tokens == NULL || cm_strset_count(r->tokens) == 0)
        return ING_TOKEN_UNCHECKED;
    return cm_strset_has(r->tokens, token) ? ING_TOKEN_KNOWN : ING_TOKEN_UNKNOWN;
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

void ing_registry_close(ing_registry_t *r)
{
    r->closing = true;
    uv_close((uv_handle_t *)&r->timer, timer_closed);
}
