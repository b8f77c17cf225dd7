/*
 * consume.c - one batch of queue messages from start to acknowledgement
 * (see writer.h for the steps). One batch is under way at a time: the
 * consumer delivers the next only once this one is committed or handed
 * back, which also keeps one person's events in order.
 *
 * Failures: a person conflict with a concurrent writer (CM_ECONFLICT) runs
 * the persons step again at once, a few times; anything else (a store or
 * Redis down, the dead-letter queue refusing) hands the whole batch back
 * to the queue, to come again after a backoff that doubles from 100 ms to
 * WRITER_RETRY_MAX, and the writer reports not ready until a batch goes
 * through. Nothing is acknowledged before it is stored, and storing again
 * is harmless: events are deduplicated by uuid, person work by the
 * events_seen records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/timefmt.h"
#include "deadletter.h"
#include "event.h"
#include "persons.h"
#include "persons_store.h"
#include "sink.h"
#include "tokens.h"
#include "writer.h"

#define CONFLICT_RETRIES 5
#define FIRST_BACKOFF_MS 100
#define SLICE_NS         (5 * 1000 * 1000) /* parsing yields the loop after this */

struct wr_batch {
    wr_ctx_t *ctx;
    cm_consumer_batch_t *b;
    wr_event_t *events;
    size_t n;
    bool *seen;
    wr_state_t st;
    wr_stmts_t load, save;
    int conflicts;
    size_t parsed; /* messages parsed so far (parsing goes in slices) */
    uint64_t started;
    int64_t now_ms;
    cm_arena_t arena; /* the events' property bytes: one free per batch, not one per property */
};

static void step_dead(wr_batch_t *wb);
static void step_persons(wr_batch_t *wb);

static void batch_free(wr_batch_t *wb)
{
    for (size_t i = 0; i < wb->n; i++)
        wr_event_free(&wb->events[i]);
    free(wb->events);
    cm_arena_free(&wb->arena); /* after the events, whose maps borrow from it */
    free(wb->seen);
    wr_state_free(&wb->st);
    wr_stmts_free(&wb->load);
    wr_stmts_free(&wb->save);
    wb->ctx->batch = NULL;
    free(wb);
}

static void fail(wr_batch_t *wb, int status, const char *what, const char *err)
{
    wr_ctx_t *ctx = wb->ctx;
    uint64_t skipped;
    cm_counter_inc(ctx->m_failures);
    ctx->backoff_ms = ctx->backoff_ms ? ctx->backoff_ms * 2 : FIRST_BACKOFF_MS;
    if (ctx->backoff_ms > (uint64_t)ctx->cfg.retry_max_ms)
        ctx->backoff_ms = (uint64_t)ctx->cfg.retry_max_ms;
    ctx->failing = true;
    snprintf(ctx->last_error, sizeof(ctx->last_error), "%s: %s", what,
             err ? err : cm_strerror(status));
    if (cm_log_limit(&ctx->fail_log, uv_now(ctx->loop), 1000, &skipped))
        cm_log(CM_LOG_WARN, NULL, "batch of %zu handed back, again in %llu ms: %s (%llu more)",
               wb->n, (unsigned long long)ctx->backoff_ms, ctx->last_error,
               (unsigned long long)skipped);
    cm_consumer_retry(wb->b, ctx->backoff_ms);
    batch_free(wb);
}

static void succeed(wr_batch_t *wb, size_t inserted)
{
    wr_ctx_t *ctx = wb->ctx;
    size_t stored = 0;
    for (size_t i = 0; i < wb->n; i++) {
        const wr_event_t *e = &wb->events[i];
        if (e->fate == WR_EVENT_OK && e->project_id > 0)
            stored++;
        if (e->warning) {
            cm_counter_inc(ctx->m_warnings);
            cm_log(CM_LOG_INFO, NULL, "ingestion warning %s: event %s (distinct id %s, other %s)",
                   e->warning, e->uuid, e->distinct_id, e->other_id ? e->other_id : "");
        }
    }
    cm_counter_add(ctx->m_stored, inserted);
    cm_counter_add(ctx->m_duplicates, stored - (inserted < stored ? inserted : stored));
    cm_histogram_observe(ctx->m_batch_seconds, (double)(uv_now(ctx->loop) - wb->started) / 1e3);
    ctx->failing = false;
    ctx->backoff_ms = 0;
    cm_consumer_commit(wb->b);
    batch_free(wb);
}

/* ---- 5. the event store and the Redis mirror ----------------------------------------- */

static void on_sunk(int status, const char *err, size_t inserted, void *ud)
{
    wr_batch_t *wb = ud;
    if (status != 0)
        fail(wb, status, "store", err);
    else
        succeed(wb, inserted);
}

/* ---- 4. persons: load, apply, save, in one transaction ------------------------------ */

static void on_saved(int status, const cm_db_res_t *res, void *ud)
{
    wr_batch_t *wb = ud;
    if (status == CM_ECONFLICT && ++wb->conflicts <= CONFLICT_RETRIES) {
        cm_counter_inc(wb->ctx->m_conflicts);
        step_persons(wb);
        return;
    }
    if (status != 0) {
        fail(wb, status, "persons store", cm_db_error(res));
        return;
    }
    wr_sink_write(wb->ctx, wb->events, wb->n, &wb->st, wb->now_ms, on_sunk, wb);
}

static void on_loaded(int status, const cm_db_res_t *res, cm_db_txn_t *txn, void *ud)
{
    wr_batch_t *wb = ud;
    if (status == CM_ECONFLICT && ++wb->conflicts <= CONFLICT_RETRIES) {
        cm_counter_inc(wb->ctx->m_conflicts);
        step_persons(wb);
        return;
    }
    if (status != 0) {
        fail(wb, status, "persons store", cm_db_error(res));
        return;
    }
    wr_persons_load_result(res, &wb->load, wb->events, wb->n, &wb->st, wb->seen);
    for (size_t i = 0; i < wb->n; i++)
        if (wb->events[i].fate == WR_EVENT_OK && wb->events[i].project_id > 0)
            wr_persons_apply(&wb->st, &wb->events[i], wb->seen[i]);
    wr_persons_save_stmts(cm_db_dialect(wb->ctx->persons), &wb->st, wb->events, wb->n, wb->seen,
                          wb->now_ms, &wb->save);
    cm_db_txn_commit(txn, wb->save.stmts, wb->save.n, on_saved, wb);
}

static void step_persons(wr_batch_t *wb)
{
    wr_ctx_t *ctx = wb->ctx;
    if (!ctx->persons_migrated) {
        fail(wb, CM_EUNAVAIL, "persons store", "tables not created yet");
        return;
    }
    wr_state_free(&wb->st);
    wr_state_init(&wb->st);
    wr_stmts_free(&wb->load);
    wr_stmts_free(&wb->save);
    for (size_t i = 0; i < wb->n; i++) { /* a conflict's retry starts from the parse */
        free(wb->events[i].person_properties);
        wb->events[i].person_properties = NULL;
        wb->events[i].warning = NULL;
    }
    wr_persons_load_stmts(cm_db_dialect(ctx->persons), wb->events, wb->n, &wb->load);
    cm_db_begin(ctx->persons, wb->load.stmts, wb->load.n, on_loaded, wb);
}

/* ---- 3. dead letters ------------------------------------------------------------------- */

static void on_dead_sent(int status, void *ud)
{
    wr_batch_t *wb = ud;
    if (status != 0) {
        fail(wb, status, "dead-letter queue", NULL);
        return;
    }
    step_persons(wb);
}

static void step_dead(wr_batch_t *wb)
{
    size_t dead = 0;
    for (size_t i = 0; i < wb->n; i++)
        dead += wb->events[i].fate == WR_EVENT_DEAD;
    cm_counter_add(wb->ctx->m_dead, dead);
    wr_dead_letters(wb->ctx, wb->b, wb->events, wb->n, on_dead_sent, wb);
}

/* ---- 2. project ids from tokens --------------------------------------------------------- */

static size_t resolve(wr_batch_t *wb, bool final)
{
    size_t unknown = 0;
    for (size_t i = 0; i < wb->n; i++) {
        wr_event_t *e = &wb->events[i];
        if (e->fate != WR_EVENT_OK)
            continue;
        e->project_id = wr_tokens_get(wb->ctx->tokens, e->token);
        if (e->project_id > 0)
            continue;
        unknown++;
        if (final) {
            e->fate = WR_EVENT_DROP;
            e->reason = "unknown_token";
            cm_counter_inc(wb->ctx->m_dropped_token);
        }
    }
    return unknown;
}

static void on_tokens(bool ok, void *ud)
{
    wr_batch_t *wb = ud;
    if (!ok) {
        fail(wb, CM_EUNAVAIL, "redis", "cannot read projects:tokens");
        return;
    }
    resolve(wb, true);
    step_dead(wb);
}

/* ---- 1. parse --------------------------------------------------------------------------- */

/* A slice of the batch, then the loop gets a turn: a batch of large
 * messages never holds it for long. */
static void parse_some(wr_batch_t *wb);

static void on_step(uv_timer_t *t)
{
    parse_some(t->data);
}

static void parse_some(wr_batch_t *wb)
{
    wr_ctx_t *ctx = wb->ctx;
    uint64_t start = uv_hrtime();
    while (wb->parsed < wb->n) {
        const cm_consumed_t *m = cm_consumer_batch_msg(wb->b, wb->parsed);
        wr_event_t *e = &wb->events[wb->parsed++];
        wr_event_parse_in(e, &wb->arena, m->value.p, m->value.len, ctx->cfg.max_event);
        if (e->fate == WR_EVENT_DROP)
            cm_counter_inc(ctx->m_dropped_invalid);
        if (wb->parsed < wb->n && uv_hrtime() - start > SLICE_NS) {
            ctx->step.data = wb;
            uv_timer_start(&ctx->step, on_step, 0, 0);
            return;
        }
    }
    if (resolve(wb, false) > 0)
        wr_tokens_refresh(ctx->tokens, on_tokens, wb);
    else
        step_dead(wb);
}

void wr_on_batch(cm_consumer_batch_t *b, void *ud)
{
    wr_ctx_t *ctx = ud;
    wr_batch_t *wb = cm_xcalloc(1, sizeof(*wb));
    ctx->batch = wb;
    wb->ctx = ctx;
    wb->b = b;
    wb->n = cm_consumer_batch_len(b);
    wb->events = cm_xcalloc(wb->n + 1, sizeof(*wb->events));
    wb->seen = cm_xcalloc(wb->n + 1, sizeof(*wb->seen));
    wb->started = uv_now(ctx->loop);
    wb->now_ms = cm_now_us() / 1000;
    wr_state_init(&wb->st);
    parse_some(wb);
}

bool wr_idle(const wr_ctx_t *ctx)
{
    return ctx->batch == NULL;
}
