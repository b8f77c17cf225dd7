/*
 * retention.c - see retention.h. One prune at a time: a cycle that has not
 * finished when the timer fires again is left to finish (the next tick
 * starts the next). The prune itself is libcommon's
 * (cm_evstore_delete_events): SQLite in short slices, ClickHouse as one
 * mutation. Erasures: one request at a time, LPOP then the persons store's
 * two DELETEs in one job, and the next at once until the list is empty
 * (then the next tick); a request the store failed is pushed back and
 * waits for the next tick.
 */
#include "retention.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/rediskeys.h"
#include "cm/timefmt.h"
#include "cm/uuid.h"
#include "persons_store.h"

struct wr_retention {
    wr_ctx_t *ctx;
    uv_timer_t prune, erase;
    int open_handles; /* timers not yet closed */
    int inflight;     /* a prune, an erasure */
    bool pruning, erasing, closing;
    cm_counter_t *m_pruned, *m_erased;
    void (*done)(void *ud);
    void *done_ud;
};

static void maybe_done(wr_retention_t *r)
{
    if (!r->closing || r->open_handles > 0 || r->inflight > 0)
        return;
    void (*done)(void *) = r->done;
    void *ud = r->done_ud;
    free(r);
    if (done)
        done(ud);
}

/* ---- the prune ------------------------------------------------------------------------ */

static void on_pruned(int status, const char *err, uint64_t deleted, bool pending, void *ud)
{
    wr_retention_t *r = ud;
    r->inflight--;
    r->pruning = false;
    if (status != 0)
        cm_log(CM_LOG_WARN, NULL, "event retention: prune failed: %s", err ? err : "store error");
    else {
        cm_counter_add(r->m_pruned, deleted);
        if (deleted > 0)
            cm_log(CM_LOG_INFO, NULL, "event retention: %" PRIu64 " events older than %lld days %s",
                   deleted, r->ctx->cfg.retention_days,
                   pending ? "submitted for deletion (ClickHouse mutation)" : "deleted");
    }
    maybe_done(r);
}

static void on_prune_tick(uv_timer_t *t)
{
    wr_retention_t *r = t->data;
    cm_buf_t why = CM_BUF_INIT;
    bool ready = cm_evstore_ready(r->ctx->events, &why);
    cm_buf_free(&why);
    if (r->pruning || r->closing || !ready)
        return;
    cm_evstore_delete_t q = {
        .before_ms = cm_now_us() / 1000 - r->ctx->cfg.retention_days * 86400000LL,
        .batch = (unsigned)r->ctx->cfg.retention_batch,
        .ttl_days = (unsigned)r->ctx->cfg.retention_days, /* ClickHouse 19.6+: a TTL */
    };
    r->pruning = true;
    r->inflight++;
    cm_evstore_delete_events(r->ctx->events, &q, on_pruned, r);
}

/* ---- erasure requests ----------------------------------------------------------------- */

static void on_erase_tick(uv_timer_t *t);

typedef struct {
    wr_retention_t *r;
    wr_stmts_t stmts;
    char request[128];
} erase_t;

static void on_pushed_back(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    (void)reply;
    if (err)
        cm_log(CM_LOG_ERROR, NULL, "person erasure: cannot push back %s: %s", (char *)ud, err);
    free(ud);
}

static void on_erased(int status, const cm_db_res_t *res, void *ud)
{
    erase_t *e = ud;
    wr_retention_t *r = e->r;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "person erasure %s: persons store: %s (retried)", e->request,
               cm_db_error(res));
        char *copy = cm_xstrdup(e->request);
        cm_redis_command(r->ctx->redis, on_pushed_back, copy, "RPUSH %s %s",
                         CM_REDISKEY_PERSON_ERASURES, copy);
    }
    bool done = status == 0;
    if (done) {
        cm_counter_inc(r->m_erased);
        cm_log(CM_LOG_INFO, NULL, "person erasure %s: persons store done", e->request);
    }
    wr_stmts_free(&e->stmts);
    free(e);
    r->inflight--;
    r->erasing = false;
    if (done && !r->closing) /* the next request at once: many may be waiting */
        on_erase_tick(&r->erase);
    maybe_done(r);
}

static void on_request(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    wr_retention_t *r = ud;
    const char *colon = NULL;
    long long project = 0;
    if (err == NULL && reply && reply->type == REDIS_REPLY_STRING) {
        colon = memchr(reply->str, ':', reply->len);
        project = atoll(reply->str);
    }
    /* The api writes "<project>:<uuid>"; anything else is dropped, logged. */
    /* Taken while closing, it is still applied: the stores close after it. */
    if (colon && project > 0 && reply->len < 128 && cm_uuid_valid(colon + 1, strlen(colon + 1))) {
        erase_t *e = cm_xcalloc(1, sizeof(*e));
        e->r = r;
        memcpy(e->request, reply->str, reply->len);
        wr_persons_erase_stmts(project, colon + 1, &e->stmts);
        cm_db_run(r->ctx->persons, e->stmts.stmts, e->stmts.n, on_erased, e);
        return; /* still in flight */
    }
    if (err)
        cm_log(CM_LOG_WARN, NULL, "person erasure: reading the requests: %s", err);
    else if (reply && reply->type == REDIS_REPLY_STRING)
        cm_log(CM_LOG_WARN, NULL, "person erasure: request %.*s is not <project>:<uuid>; dropped",
               (int)(reply->len < 200 ? reply->len : 200), reply->str);
    r->inflight--;
    r->erasing = false;
    maybe_done(r);
}

static void on_erase_tick(uv_timer_t *t)
{
    wr_retention_t *r = t->data;
    if (r->erasing || r->closing || !r->ctx->persons_migrated)
        return;
    r->erasing = true;
    r->inflight++;
    /* on a failure on_request has run already (it sees err) */
    cm_redis_command(r->ctx->redis, on_request, r, "LPOP %s", CM_REDISKEY_PERSON_ERASURES);
}

/* ---- start and stop ------------------------------------------------------------------- */

wr_retention_t *wr_retention_start(wr_ctx_t *ctx)
{
    wr_retention_t *r = cm_xcalloc(1, sizeof(*r));
    r->ctx = ctx;
    r->m_pruned = cm_metrics_counter(ctx->metrics, "writer_events_pruned_total",
                                     "Events deleted (or, on ClickHouse, submitted for deletion) "
                                     "by EVENT_RETENTION_DAYS",
                                     NULL);
    r->m_erased =
        cm_metrics_counter(ctx->metrics, "writer_person_erasures_total",
                           "Persons erased from the persons store on the api's request", NULL);
    uv_timer_init(ctx->loop, &r->prune);
    uv_timer_init(ctx->loop, &r->erase);
    r->prune.data = r->erase.data = r;
    r->open_handles = 2;
    if (ctx->cfg.retention_days > 0)
        uv_timer_start(&r->prune, on_prune_tick, (uint64_t)ctx->cfg.retention_interval_ms,
                       (uint64_t)ctx->cfg.retention_interval_ms);
    uv_timer_start(&r->erase, on_erase_tick, (uint64_t)ctx->cfg.erasure_poll_ms,
                   (uint64_t)ctx->cfg.erasure_poll_ms);
    return r;
}

static void on_timer_closed(uv_handle_t *h)
{
    wr_retention_t *r = h->data;
    r->open_handles--;
    maybe_done(r);
}

void wr_retention_close(wr_retention_t *r, void (*done)(void *ud), void *ud)
{
    r->closing = true;
    r->done = done;
    r->done_ud = ud;
    uv_close((uv_handle_t *)&r->prune, on_timer_closed);
    uv_close((uv_handle_t *)&r->erase, on_timer_closed);
}
