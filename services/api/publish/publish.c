/* publish.c - the outbox drained into Redis, oldest first (see publish.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "access/access.h"
#include "publish/publish.h"
#include "publish/publish_int.h"
#include "metrics.h"
#include "store/store.h"

#define BATCH 100

struct api_publisher {
    api_ctx_t *ctx;
    uv_timer_t timer; /* deferred drains and retries */
    bool draining, again, idle, closing;
    bool want_all; /* queue every project before the next drain */
    char ids[BATCH][24], projects[BATCH][24];
    char *retired_token[BATCH], *retired_secret[BATCH]; /* what the fleet must forget */
    size_t n, i;
    int pending;  /* Redis replies still to come for the current project */
    bool sending; /* inside the sends: replies that fail at once wait for the end */
    bool failed;
    void (*done)(void *ud);
    void *done_ud;
};

static void drain(api_publisher_t *p);

static void forget_batch(api_publisher_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->retired_token[i]);
        free(p->retired_secret[i]);
        p->retired_token[i] = p->retired_secret[i] = NULL;
    }
    p->n = 0;
}

static void on_timer(uv_timer_t *t)
{
    drain(t->data);
}

static void timer_closed(uv_handle_t *h)
{
    api_publisher_t *p = h->data;
    void (*done)(void *) = p->done;
    void *ud = p->done_ud;
    free(p);
    if (done)
        done(ud);
}

/* The drain stops here: for now (empty), or until the retry. */
static void stop(api_publisher_t *p, bool retry)
{
    p->draining = false;
    forget_batch(p);
    if (p->closing) {
        uv_close((uv_handle_t *)&p->timer, timer_closed);
        return;
    }
    if (p->again && !retry)
        uv_timer_start(&p->timer, on_timer, 0, 0);
    else /* a retry; or a look, in a while, for what other processes queued (api adduser) */
        uv_timer_start(&p->timer, on_timer, (uint64_t)p->ctx->cfg.publish_retry_ms, 0);
}

static void next_project(api_publisher_t *p);

static void on_acked(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "publish: outbox: %s", cm_db_error(res));
        stop(p, true);
        return;
    }
    p->again = true; /* there may be more behind this batch */
    stop(p, false);
}

static void project_done(api_publisher_t *p)
{
    if (p->failed) {
        cm_log(CM_LOG_WARN, NULL, "publish: Redis unavailable; %zu queued change(s) wait",
               p->n - p->i);
        stop(p, true);
        return;
    }
    p->i++;
    next_project(p);
}

static void on_reply(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    api_publisher_t *p = ud;
    (void)r;
    if (err || reply == NULL || reply->type == REDIS_REPLY_ERROR ||
        (reply->type == REDIS_REPLY_NIL))
        p->failed = true;
    if (--p->pending == 0 && !p->sending)
        project_done(p);
}

static void send_cmd(api_publisher_t *p, int argc, const char **argv, const size_t *lens)
{
    p->pending++;
    cm_redis_command_argv(p->ctx->redis, on_reply, p, argc, argv, lens);
}

#define SEND(...)                                                                                  \
    do {                                                                                           \
        const char *argv_[] = {__VA_ARGS__};                                                       \
        send_cmd(p, (int)CM_ARRAY_LEN(argv_), argv_, NULL);                                        \
    } while (0)

static void on_fleet(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "publish: store: %s", cm_db_error(res));
        stop(p, true);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) { /* no such project (any more): nothing to write */
        p->i++;
        next_project(p);
        return;
    }
    const char *id = cm_db_value(res, 0, 0, API_FLEET_ID);
    const char *token = cm_db_value(res, 0, 0, API_FLEET_TOKEN);
    const char *secret = cm_db_value(res, 0, 0, API_FLEET_SECRET_HASH);
    const char *tz = cm_db_value(res, 0, 0, API_FLEET_TIMEZONE);
    const char *until = cm_db_value(res, 0, 0, API_FLEET_QUOTA_UNTIL);
    bool deleted = atoi(cm_db_value(res, 0, 0, API_FLEET_DELETED)) != 0;
    const char *backup = cm_db_value(res, 0, 0, API_FLEET_SECRET_BACKUP_HASH);
    const char *old_token = p->retired_token[p->i], *old_secret = p->retired_secret[p->i];
    bool limited = until && atoll(until) > (long long)time(NULL);
    cm_buf_t defs = CM_BUF_INIT;
    api_publish__envelope(&defs, res, id);
    p->failed = false;
    p->sending = true;
    SEND("MULTI");
    if (old_token && strcmp(old_token, token) != 0) {
        SEND("HDEL", CM_REDISKEY_PROJECT_TOKENS, old_token);
        SEND("ZREM", CM_REDISKEY_QUOTA_FLAGS, old_token);
    }
    if (old_secret && !(secret && strcmp(old_secret, secret) == 0) &&
        !(backup && strcmp(old_secret, backup) == 0))
        SEND("HDEL", CM_REDISKEY_PROJECT_SECRET_TOKENS, old_secret);
    if (deleted) {
        SEND("HDEL", CM_REDISKEY_PROJECT_TOKENS, token);
        if (secret)
            SEND("HDEL", CM_REDISKEY_PROJECT_SECRET_TOKENS, secret);
        if (backup)
            SEND("HDEL", CM_REDISKEY_PROJECT_SECRET_TOKENS, backup);
        SEND("HDEL", CM_REDISKEY_PROJECT_TIMEZONES, id);
        SEND("HDEL", CM_REDISKEY_FLAG_DEFINITIONS, id);
    } else {
        SEND("HSET", CM_REDISKEY_PROJECT_TOKENS, token, id);
        if (secret)
            SEND("HSET", CM_REDISKEY_PROJECT_SECRET_TOKENS, secret, id);
        if (backup) /* the rotated-out secret keeps working until it is dropped */
            SEND("HSET", CM_REDISKEY_PROJECT_SECRET_TOKENS, backup, id);
        SEND("HSET", CM_REDISKEY_PROJECT_TIMEZONES, id, tz);
        SEND("HSET", CM_REDISKEY_FLAG_DEFINITIONS, id, cm_buf_cstr(&defs));
    }
    if (limited && !deleted)
        SEND("ZADD", CM_REDISKEY_QUOTA_FLAGS, until, token);
    else
        SEND("ZREM", CM_REDISKEY_QUOTA_FLAGS, token);
    SEND("EXEC");
    SEND("PUBLISH", CM_REDISKEY_FLAGS_CHANGED, id);
    cm_buf_free(&defs);
    p->sending = false;
    if (p->pending == 0)
        project_done(p);
}

/* The personal API key table: each key hash -> the comma-separated ids of
 * the projects whose definitions it may read (feature_flag:read or more),
 * replaced whole in one MULTI/EXEC. */
static void on_keys(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "publish: store: %s", cm_db_error(res));
        stop(p, true);
        return;
    }
    size_t rows = cm_db_nrows(res, 0);
    /* argv: HSET key, then hash/value pairs; values live in one buffer of
     * NUL-separated lists, pointed to once it stops growing. */
    const char **argv = cm_xcalloc(2 + 2 * rows, sizeof(*argv));
    size_t *at = cm_xcalloc(rows + 1, sizeof(*at));
    cm_buf_t lists = CM_BUF_INIT;
    int argc = 2, pairs = 0;
    argv[0] = "HSET";
    argv[1] = CM_REDISKEY_PERSONAL_KEYS;
    for (size_t r = 0; r < rows; r++) {
        const char *hash = cm_db_value(res, 0, r, API_FLEETKEY_HASH);
        const char *project = cm_db_value(res, 0, r, API_FLEETKEY_PROJECT);
        if (!api_access_allows(cm_db_value(res, 0, r, API_FLEETKEY_SCOPES), "feature_flag",
                               false) ||
            !api_access_reaches(cm_db_value(res, 0, r, API_FLEETKEY_SCOPED_TEAMS),
                                cm_db_value(res, 0, r, API_FLEETKEY_SCOPED_ORGS), project,
                                cm_db_value(res, 0, r, API_FLEETKEY_ORG)))
            continue;
        if (pairs == 0 || strcmp(argv[argc - 2], hash) != 0) {
            if (pairs > 0)
                cm_buf_append(&lists, "", 1); /* ends the previous list */
            argv[argc++] = hash;
            at[pairs++] = lists.len;
            argc++; /* its value, set below */
        } else {
            cm_buf_append_cstr(&lists, ",");
        }
        cm_buf_append_cstr(&lists, project);
    }
    cm_buf_append(&lists, "", 1);
    for (int k = 0; k < pairs; k++)
        argv[2 + 2 * k + 1] = lists.p + at[k];
    p->failed = false;
    p->sending = true;
    SEND("MULTI");
    SEND("DEL", CM_REDISKEY_PERSONAL_KEYS);
    if (pairs > 0)
        send_cmd(p, argc, argv, NULL);
    SEND("EXEC");
    SEND("PUBLISH", CM_REDISKEY_FLAGS_CHANGED, CM_REDISKEY_PERSONAL_KEYS);
    p->sending = false;
    cm_buf_free(&lists);
    free(at);
    free(argv);
    if (p->pending == 0)
        project_done(p);
}

static void next_project(api_publisher_t *p)
{
    /* A project queued several times in the batch is published at its last
     * entry, unless an entry names tokens to retire. */
    while (p->i < p->n) {
        bool later = false;
        for (size_t j = p->i + 1; j < p->n && !later; j++)
            later = strcmp(p->projects[j], p->projects[p->i]) == 0;
        if (!later || p->retired_token[p->i] || p->retired_secret[p->i])
            break;
        p->i++;
    }
    if (p->i < p->n && strcmp(p->projects[p->i], API_OUTBOX_KEYS_PROJECT) == 0)
        api_store_fleet_keys(p->ctx->db, on_keys, p);
    else if (p->i < p->n)
        api_store_fleet_project(p->ctx->db, p->projects[p->i], on_fleet, p);
    else
        api_store_outbox_ack(p->ctx->db, p->ids[p->n - 1], on_acked, p);
}

static void on_head(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "publish: outbox: %s", cm_db_error(res));
        stop(p, true);
        return;
    }
    p->n = cm_db_nrows(res, 0);
    p->i = 0;
    if (p->n == 0) {
        p->idle = true;
        stop(p, false);
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        snprintf(p->ids[i], sizeof(p->ids[i]), "%s", cm_db_value(res, 0, i, API_OUTBOX_ID));
        snprintf(p->projects[i], sizeof(p->projects[i]), "%s",
                 cm_db_value(res, 0, i, API_OUTBOX_PROJECT));
        const char *t = cm_db_value(res, 0, i, API_OUTBOX_RETIRED_TOKEN);
        const char *sec = cm_db_value(res, 0, i, API_OUTBOX_RETIRED_SECRET);
        p->retired_token[i] = t ? cm_xstrdup(t) : NULL;
        p->retired_secret[i] = sec ? cm_xstrdup(sec) : NULL;
    }
    next_project(p);
}

/* The outbox's depth for the api_outbox_* gauges, read before each head:
 * every drain and every retry while Redis is away, so the gauges follow a
 * growing outbox. */
static void on_depth(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0 || cm_db_nrows(res, 0) != 1)
        return; /* the head's read, next, reports the store */
    const char *n = cm_db_value(res, 0, 0, API_OUTBOX_DEPTH_N);
    const char *oldest = cm_db_value(res, 0, 0, API_OUTBOX_DEPTH_OLDEST);
    char now[24];
    api_store_now(now);
    cm_gauge_set(p->ctx->m->outbox_entries, n ? atof(n) : 0);
    double age = oldest ? (atof(now) - atof(oldest)) / 1000.0 : 0;
    cm_gauge_set(p->ctx->m->outbox_oldest_age, age > 0 ? age : 0);
}

static void read_head(api_publisher_t *p)
{
    api_store_outbox_depth(p->ctx->db, on_depth, p);
    char limit[8];
    snprintf(limit, sizeof(limit), "%d", BATCH);
    api_store_outbox_head(p->ctx->db, limit, on_head, p);
}

static void on_all_queued(int status, const cm_db_res_t *res, void *ud)
{
    api_publisher_t *p = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "publish: cannot queue every project: %s", cm_db_error(res));
        p->want_all = true;
        stop(p, true);
        return;
    }
    read_head(p);
}

static void drain(api_publisher_t *p)
{
    if (p->closing)
        return;
    if (p->draining) {
        p->again = true;
        return;
    }
    p->draining = true;
    p->again = false;
    p->idle = false;
    if (p->want_all) {
        p->want_all = false;
        api_store_outbox_all(p->ctx->db, on_all_queued, p);
    } else {
        read_head(p);
    }
}

api_publisher_t *api_publisher_new(api_ctx_t *ctx)
{
    api_publisher_t *p = cm_xcalloc(1, sizeof(*p));
    p->ctx = ctx;
    uv_timer_init(ctx->loop, &p->timer);
    p->timer.data = p;
    return p;
}

void api_publisher_kick(api_publisher_t *p)
{
    if (p->draining)
        p->again = true;
    else if (!p->closing)
        uv_timer_start(&p->timer, on_timer, 0, 0);
}

void api_publisher_republish_all(api_publisher_t *p)
{
    p->want_all = true;
    api_publisher_kick(p);
}

bool api_publisher_idle(const api_publisher_t *p)
{
    return p->idle && !p->draining;
}

void api_publisher_close(api_publisher_t *p, void (*done)(void *ud), void *ud)
{
    p->closing = true;
    p->done = done;
    p->done_ud = ud;
    uv_timer_stop(&p->timer);
    if (!p->draining)
        uv_close((uv_handle_t *)&p->timer, timer_closed);
}
