/*
 * consume.c - batches of queue messages from delivery to acknowledgement
 * (see writer.h for the steps).
 *
 * Each batch is cut into up to PARTS_MAX parts of at least PART_MIN
 * messages (SQLite as the event store; with ClickHouse a batch is one
 * insert, one part), and the parts go through three lanes, each holding one
 * step at a time and taking the parts in order: parse with project ids,
 * persons (load, apply, save in one transaction), store (the event store
 * and the Redis mirror). While part k is in the event store (its thread, or
 * ClickHouse), part k+1 is parsed and its persons are loaded, applied and
 * committed. The consumer hands over WR_BATCHES_IN_FLIGHT batches at once
 * and the lanes run across them: batch N+1's first parts are parsed and
 * their persons done while batch N's last part is stored, and its messages
 * were fetched while batch N was being worked on. So one person's events
 * are still applied in queue order (batch by batch, part by part) and a
 * part's persons are committed before its events are stored. Dead letters
 * go last, for a whole batch, and only then is it acknowledged; batches are
 * acknowledged oldest first.
 *
 * Failures: a person conflict with a concurrent writer (CM_ECONFLICT) runs
 * that part's persons step again at once, a few times; anything else (a
 * store or Redis down, the dead-letter queue refusing) fails its batch and
 * every later one (a later batch must not commit persons ahead of an
 * earlier one's, nor be acknowledged past it): no new step starts for
 * them, and once none of theirs is under way they are handed back to the
 * queue, newest first, to come again in order after a backoff that doubles
 * from 100 ms to WRITER_RETRY_MAX; the writer reports not ready until a
 * batch goes through. Nothing is acknowledged before all of it is stored,
 * and storing again the parts that were is harmless: events are
 * deduplicated by uuid, person work by the events_seen records.
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
#define PARTS_MAX        4                 /* overlapping parts of a batch */
#define PART_MIN         250 /* messages: smaller parts cost the stores more per row */

typedef struct {
    wr_batch_t *wb;
    size_t lo, hi; /* its messages: events[lo..hi) */
    wr_state_t st;
    wr_stmts_t load, save;
    int conflicts;
} wr_part_t;

struct wr_batch {
    wr_ctx_t *ctx;
    wr_batch_t *next; /* the next newer batch under way */
    cm_consumer_batch_t *b;
    wr_event_t *events;
    size_t n;
    bool *seen;
    wr_part_t parts[PARTS_MAX];
    size_t nparts;
    size_t parsed;       /* messages parsed so far (parsing goes in slices) */
    size_t ready;        /* parts parsed, with their project ids */
    size_t persons_done; /* parts whose persons are committed */
    size_t stored;       /* parts in the event store (and Redis) */
    bool dead_started;
    size_t inserted;
    int status;       /* the first failure: no new step starts, the batch goes back */
    const char *what; /* static */
    char err[200];
    uint64_t started;
    int64_t now_ms;
    cm_arena_t arena; /* the events' property bytes: one free per batch, not one per property */
};

static void advance(wr_ctx_t *ctx);

static void batch_free(wr_batch_t *wb)
{
    for (size_t i = 0; i < wb->n; i++)
        wr_event_free(&wb->events[i]);
    free(wb->events);
    cm_arena_free(&wb->arena); /* after the events, whose maps borrow from it */
    free(wb->seen);
    for (size_t k = 0; k < wb->nparts; k++) {
        wr_state_free(&wb->parts[k].st);
        wr_stmts_free(&wb->parts[k].load);
        wr_stmts_free(&wb->parts[k].save);
    }
    free(wb);
}

/* x goes back with the earlier batch that failed. */
static void follow(wr_batch_t *x, const wr_batch_t *failed_one)
{
    x->status = failed_one->status;
    x->what = failed_one->what;
    snprintf(x->err, sizeof(x->err), "an earlier batch failed: %.170s", failed_one->err);
}

/* Keeps the first failure, in wb and every later batch: they go back
 * together (hand_back) once none of their steps is under way. */
static void failed(wr_batch_t *wb, int status, const char *what, const char *err)
{
    if (wb->status)
        return;
    wb->status = status ? status : CM_EUNAVAIL;
    wb->what = what;
    snprintf(wb->err, sizeof(wb->err), "%s", err ? err : cm_strerror(wb->status));
    for (wr_batch_t *x = wb->next; x != NULL; x = x->next)
        if (!x->status)
            follow(x, wb);
}

static bool lane_holds_failed(const wr_ctx_t *ctx)
{
    const wr_batch_t *held[] = {ctx->lane.parse, ctx->lane.persons, ctx->lane.store,
                                ctx->lane.dead};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
        if (held[i] != NULL && held[i]->status)
            return true;
    return false;
}

/* The failed batches (the newest ones) go back to the queue, newest first,
 * once no step of theirs is under way. */
static void hand_back(wr_ctx_t *ctx)
{
    wr_batch_t **link = &ctx->batches;
    while (*link != NULL && !(*link)->status)
        link = &(*link)->next;
    wr_batch_t *first = *link;
    if (first == NULL || lane_holds_failed(ctx))
        return;
    *link = NULL;
    wr_batch_t *back[WR_BATCHES_IN_FLIGHT];
    size_t nback = 0, messages = 0;
    for (wr_batch_t *x = first; x != NULL && nback < WR_BATCHES_IN_FLIGHT; x = x->next) {
        back[nback++] = x;
        messages += x->n;
    }
    uint64_t skipped;
    cm_counter_add(ctx->m_failures, nback);
    ctx->backoff_ms = ctx->backoff_ms ? ctx->backoff_ms * 2 : FIRST_BACKOFF_MS;
    if (ctx->backoff_ms > (uint64_t)ctx->cfg.retry_max_ms)
        ctx->backoff_ms = (uint64_t)ctx->cfg.retry_max_ms;
    ctx->failing = true;
    snprintf(ctx->last_error, sizeof(ctx->last_error), "%s: %s", first->what, first->err);
    if (cm_log_limit(&ctx->fail_log, uv_now(ctx->loop), 1000, &skipped))
        cm_log(CM_LOG_WARN, NULL,
               "%zu batch(es) of %zu messages handed back, again in %llu ms: %s (%llu more)", nback,
               messages, (unsigned long long)ctx->backoff_ms, ctx->last_error,
               (unsigned long long)skipped);
    while (nback > 0) {
        wr_batch_t *x = back[--nback];
        cm_consumer_retry(x->b, ctx->backoff_ms);
        batch_free(x);
    }
}

static void succeed(wr_batch_t *wb)
{
    wr_ctx_t *ctx = wb->ctx;
    size_t stored = 0, inserted = wb->inserted;
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
    ctx->batches = wb->next; /* the oldest: acknowledged first */
    cm_consumer_commit(wb->b);
    batch_free(wb);
    advance(ctx);
}

/* ---- the last step: dead letters, for the whole batch ---------------------------------- */

static void on_dead_sent(int status, void *ud)
{
    wr_batch_t *wb = ud;
    wb->ctx->lane.dead = NULL;
    if (status != 0 || wb->status) {
        failed(wb, status, "dead-letter queue", NULL);
        advance(wb->ctx);
        return;
    }
    succeed(wb);
}

static void step_dead(wr_batch_t *wb)
{
    size_t dead = 0;
    for (size_t i = 0; i < wb->n; i++)
        dead += wb->events[i].fate == WR_EVENT_DEAD;
    cm_counter_add(wb->ctx->m_dead, dead);
    wr_dead_letters(wb->ctx, wb->b, wb->events, wb->n, on_dead_sent, wb);
}

/* ---- store lane: the event store and the Redis mirror, a part at a time ---------------- */

static void on_sunk(int status, const char *err, size_t inserted, void *ud)
{
    wr_part_t *part = ud;
    wr_batch_t *wb = part->wb;
    wb->ctx->lane.store = NULL;
    if (status != 0)
        failed(wb, status, "store", err);
    else {
        wb->inserted += inserted;
        wb->stored++;
    }
    advance(wb->ctx);
}

/* ---- persons lane: load, apply, save, in one transaction per part ---------------------- */

static void step_persons(wr_part_t *part);

static void persons_failed(wr_part_t *part, int status, const cm_db_res_t *res)
{
    wr_batch_t *wb = part->wb;
    if (status == CM_ECONFLICT && ++part->conflicts <= CONFLICT_RETRIES && !wb->status) {
        cm_counter_inc(wb->ctx->m_conflicts);
        step_persons(part);
        if (wb->ctx->lane.persons == NULL) /* it could not start */
            advance(wb->ctx);
        return;
    }
    wb->ctx->lane.persons = NULL;
    failed(wb, status, "persons store", cm_db_error(res));
    advance(wb->ctx);
}

static void on_saved(int status, const cm_db_res_t *res, void *ud)
{
    wr_part_t *part = ud;
    wr_batch_t *wb = part->wb;
    if (status != 0) {
        persons_failed(part, status, res);
        return;
    }
    wb->ctx->lane.persons = NULL;
    wb->persons_done++;
    advance(wb->ctx);
}

static void on_loaded(int status, const cm_db_res_t *res, cm_db_txn_t *txn, void *ud)
{
    wr_part_t *part = ud;
    wr_batch_t *wb = part->wb;
    wr_event_t *events = wb->events + part->lo;
    size_t n = part->hi - part->lo;
    if (status != 0) {
        persons_failed(part, status, res);
        return;
    }
    unsigned long long hits0, misses0, hits, misses;
    wr_props_memo_counts(wb->ctx->persons_memo, &hits0, &misses0);
    wr_persons_load_result(res, &part->load, events, n, &part->st, wb->seen + part->lo);
    wr_props_memo_counts(wb->ctx->persons_memo, &hits, &misses);
    cm_counter_add(wb->ctx->m_memo_hits, hits - hits0);
    cm_counter_add(wb->ctx->m_memo_misses, misses - misses0);
    for (size_t i = 0; i < n; i++)
        if (events[i].fate == WR_EVENT_OK && events[i].project_id > 0)
            wr_persons_apply(&part->st, &events[i], wb->seen[part->lo + i]);
    wr_persons_save_stmts(cm_db_dialect(wb->ctx->persons), &part->st, events, n,
                          wb->seen + part->lo, wb->now_ms, &part->save);
    cm_db_txn_commit(txn, part->save.stmts, part->save.n, on_saved, part);
}

static void step_persons(wr_part_t *part)
{
    wr_batch_t *wb = part->wb;
    wr_ctx_t *ctx = wb->ctx;
    if (!ctx->persons_migrated) {
        ctx->lane.persons = NULL;
        failed(wb, CM_EUNAVAIL, "persons store", "tables not created yet");
        return; /* advance() hands the batch back once nothing of it is under way */
    }
    wr_state_free(&part->st);
    wr_state_init(&part->st);
    part->st.memo = ctx->persons_memo;
    wr_stmts_free(&part->load);
    wr_stmts_free(&part->save);
    for (size_t i = part->lo; i < part->hi; i++) { /* a conflict's retry starts from the parse */
        free(wb->events[i].person_properties);
        wb->events[i].person_properties = NULL;
        wb->events[i].warning = NULL;
    }
    wr_persons_load_stmts(cm_db_dialect(ctx->persons), wb->events + part->lo, part->hi - part->lo,
                          &part->load);
    cm_db_begin(ctx->persons, part->load.stmts, part->load.n, on_loaded, part);
}

/* ---- parse lane: parse, then project ids from tokens, a part at a time ------------------ */

static size_t resolve(wr_batch_t *wb, const wr_part_t *part, bool final)
{
    size_t unknown = 0;
    for (size_t i = part->lo; i < part->hi; i++) {
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

static void part_ready(wr_batch_t *wb)
{
    wb->ctx->lane.parse = NULL;
    wb->ready++;
    advance(wb->ctx);
}

static void on_tokens(bool ok, void *ud)
{
    wr_batch_t *wb = ud;
    if (!ok) {
        wb->ctx->lane.parse = NULL;
        failed(wb, CM_EUNAVAIL, "redis", "cannot read projects:tokens");
        advance(wb->ctx);
        return;
    }
    resolve(wb, &wb->parts[wb->ready], true);
    part_ready(wb);
}

/* A slice of the part, then the loop gets a turn (and the other lanes'
 * callbacks): a batch of large messages never holds it for long. Runs from
 * the step timer only, never inside advance(). */
static void on_step(uv_timer_t *t)
{
    wr_batch_t *wb = t->data;
    wr_ctx_t *ctx = wb->ctx;
    const wr_part_t *part = &wb->parts[wb->ready];
    uint64_t start = uv_hrtime();
    if (wb->status) { /* a step of an earlier part failed meanwhile */
        ctx->lane.parse = NULL;
        advance(ctx);
        return;
    }
    while (wb->parsed < part->hi) {
        const cm_consumed_t *m = cm_consumer_batch_msg(wb->b, wb->parsed);
        wr_event_t *e = &wb->events[wb->parsed++];
        wr_event_parse_in(e, &wb->arena, m->value.p, m->value.len, ctx->cfg.max_event);
        if (e->fate == WR_EVENT_DROP)
            cm_counter_inc(ctx->m_dropped_invalid);
        if (wb->parsed < part->hi && uv_hrtime() - start > SLICE_NS) {
            uv_timer_start(&ctx->step, on_step, 0, 0);
            return;
        }
    }
    if (resolve(wb, part, false) > 0)
        wr_tokens_refresh(ctx->tokens, on_tokens, wb);
    else
        part_ready(wb);
}

/* ---- the lanes ------------------------------------------------------------------------- */

typedef enum { LANE_PARSE, LANE_PERSONS, LANE_STORE } lane_t;

/* How many of wb's parts are through lane l. */
static size_t through(const wr_batch_t *wb, lane_t l)
{
    return l == LANE_PARSE ? wb->ready : l == LANE_PERSONS ? wb->persons_done : wb->stored;
}

/* The batch whose next part lane l takes: the oldest with a part not
 * through it yet. NULL when there is none, or when that batch failed (every
 * later one has too). */
static wr_batch_t *next_for(wr_ctx_t *ctx, lane_t l)
{
    wr_batch_t *wb = ctx->batches;
    while (wb != NULL && through(wb, l) == wb->nparts)
        wb = wb->next;
    return wb != NULL && !wb->status ? wb : NULL;
}

/*
 * Starts what can start: the next part's parse, the next parsed part's
 * persons, the next committed part's store, across the batches under way in
 * order; the oldest batch's dead letters once every part of it is stored.
 * Called after every step; each lane holds one step at a time. Failed
 * batches start nothing new and go back once their steps under way have
 * ended. A step may end inside the call that starts it (and call advance()
 * again): nothing here holds a batch across one.
 */
static void advance(wr_ctx_t *ctx)
{
    wr_batch_t *wb;
    if (ctx->lane.parse == NULL && (wb = next_for(ctx, LANE_PARSE)) != NULL) {
        ctx->lane.parse = wb;
        ctx->step.data = wb;
        uv_timer_start(&ctx->step, on_step, 0, 0);
    }
    if (ctx->lane.persons == NULL && (wb = next_for(ctx, LANE_PERSONS)) != NULL &&
        wb->persons_done < wb->ready) {
        ctx->lane.persons = wb;
        step_persons(&wb->parts[wb->persons_done]);
    }
    if (ctx->lane.store == NULL && (wb = next_for(ctx, LANE_STORE)) != NULL &&
        wb->stored < wb->persons_done) {
        wr_part_t *part = &wb->parts[wb->stored];
        ctx->lane.store = wb;
        wr_sink_write(ctx, wb->events + part->lo, part->hi - part->lo, &part->st, wb->now_ms,
                      on_sunk, part);
    }
    wb = ctx->batches;
    if (ctx->lane.dead == NULL && wb != NULL && !wb->status && !wb->dead_started &&
        wb->stored == wb->nparts) {
        ctx->lane.dead = wb;
        wb->dead_started = true;
        step_dead(wb);
        return;
    }
    hand_back(ctx);
}

void wr_on_batch(cm_consumer_batch_t *b, void *ud)
{
    wr_ctx_t *ctx = ud;
    wr_batch_t *wb = cm_xcalloc(1, sizeof(*wb));
    wr_batch_t **link = &ctx->batches;
    while (*link != NULL)
        link = &(*link)->next;
    *link = wb;
    wb->ctx = ctx;
    wb->b = b;
    wb->n = cm_consumer_batch_len(b);
    wb->events = cm_xcalloc(wb->n + 1, sizeof(*wb->events));
    wb->seen = cm_xcalloc(wb->n + 1, sizeof(*wb->seen));
    wb->started = uv_now(ctx->loop);
    wb->now_ms = cm_now_us() / 1000;
    /* ClickHouse wants few large inserts: a part each would cost its
     * server about twice the CPU per row (bench writer), so one part. */
    wb->nparts = cm_evstore_kind(ctx->events) == CM_EVSTORE_CLICKHOUSE ? 1 : wb->n / PART_MIN;
    if (wb->nparts > PARTS_MAX)
        wb->nparts = PARTS_MAX;
    if (wb->nparts == 0)
        wb->nparts = 1;
    for (size_t k = 0; k < wb->nparts; k++) {
        wr_part_t *part = &wb->parts[k];
        part->wb = wb;
        part->lo = wb->n * k / wb->nparts;
        part->hi = wb->n * (k + 1) / wb->nparts;
        wr_state_init(&part->st);
    }
    for (wr_batch_t *x = ctx->batches; x != wb; x = x->next)
        if (x->status) { /* an earlier batch is on its way back: this one goes with it */
            follow(wb, x);
            break;
        }
    advance(ctx);
}

bool wr_idle(const wr_ctx_t *ctx)
{
    return ctx->batches == NULL;
}
