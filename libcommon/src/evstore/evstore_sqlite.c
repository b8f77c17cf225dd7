/*
 * evstore_sqlite.c - the SQLite event store (see event_store.h): cm_db on
 * threads of its own (cm/worker.h), never libuv's pool, which the process
 * needs for its metadata store, hashing and DNS while a query runs 30 s.
 *
 * Writes, the migration and DDL go through one read-write handle on one
 * thread. Reads go to `readers` read-only handles, each one connection
 * running one query at a time on a pool of as many threads: WAL lets them
 * read beside the writer and beside each other, so one long query holds
 * one connection, not the store. A read waits here (oldest first) while
 * every reader is busy; its time limit counts from cm_evstore_select, so
 * one whose time passed while waiting fails without running.
 *
 * A write is one cm_db job, so one transaction: every
 * row of the batch or none. Events go in with INSERT OR IGNORE on the
 * unique (project_id, uuid), which is the deduplication; persons, distinct
 * ids and groups are upserts that only a higher version wins.
 *
 * Work submitted before the tables exist waits in a list (the migration is
 * several jobs, and a write must not slip in between them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/db.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/worker.h"
#include "evstore_internal.h"

#define MIGRATE_RETRY_MS 1000
#define DEFAULT_READERS  4
#define MAX_READERS      64

static const char sql_event[] =
    "INSERT OR IGNORE INTO events (uuid, project_id, event, distinct_id, person_id, properties,"
    " person_properties, timestamp, timestamp_ms, created_at, session_id)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
static const char sql_person[] =
    "INSERT INTO persons (id, project_id, properties, is_identified, is_deleted, created_at,"
    " version) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    " ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id,"
    " properties = excluded.properties, is_identified = excluded.is_identified,"
    " is_deleted = excluded.is_deleted, created_at = excluded.created_at,"
    " version = excluded.version WHERE excluded.version > persons.version";
static const char sql_distinct_id[] =
    "INSERT INTO person_distinct_ids (project_id, distinct_id, person_id, version, is_deleted)"
    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, distinct_id) DO UPDATE SET"
    " person_id = excluded.person_id, version = excluded.version,"
    " is_deleted = excluded.is_deleted WHERE excluded.version > person_distinct_ids.version";
static const char sql_group[] =
    "INSERT INTO groups (project_id, group_type, group_key, properties, created_at, version)"
    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (project_id, group_type, group_key) DO UPDATE"
    " SET properties = excluded.properties, version = excluded.version"
    " WHERE excluded.version > groups.version";

/* A write or a query, built at once (cm_db copies it when it is run). */
typedef struct work work_t;
struct work {
    work_t *next;
    struct sq_store *st;
    cm_buf_t text;       /* every parameter, NUL-terminated */
    size_t *offsets;     /* into text, one per parameter */
    const char **params; /* pointers, made once text stops growing */
    size_t nparams, cap;
    cm_db_stmt_t *stmts;
    size_t nstmts, nevents;
    char *sql; /* a query's text */
    char *types;
    unsigned timeout_ms;
    size_t max_bytes;  /* a query's answer bound (cm_db_stmt_t counts it as rows are read) */
    uint64_t deadline; /* a read's uv_hrtime() past which it must not start; 0: none */
    bool ddl;          /* a query that changes the store: the writer's handle */
    size_t reader;     /* the reader running it */
    cm_evstore_write_cb wcb;
    cm_evstore_query_cb qcb;
    void *ud;
};

typedef struct sq_store {
    struct cm_evstore base; /* first */
    cm_db_t *db;            /* writes, migration, DDL */
    cm_worker_t *wpool;     /* its one thread */
    /* WAL checkpoints on a connection and thread of their own ("Checkpoints"
     * below): the writes' thread never copies pages into the file or waits
     * for its fsync */
    cm_db_t *ckpt;
    cm_worker_t *cpool;
    bool ckpt_running;
    cm_db_t **readers; /* read-only, nreaders of them */
    bool *reader_busy; /* running a read */
    size_t nreaders;
    cm_worker_t *rpool;    /* their threads, one each */
    work_t *rhead, *rtail; /* reads waiting for a free reader */
    size_t closing_left;   /* handles and pools still closing */
    bool migrated;
    uv_timer_t retry;
    work_t *head, *tail; /* waiting for the tables */
    size_t running;      /* jobs submitted, not answered */
    cm_evstore_closed_cb done;
    void *done_ud;
} sq_store_t;

/* Version 2: uuids are unique per project, not across projects (project
 * B's event must not make project A's event with the same uuid vanish).
 * sqlite.sql creates the new index already; a store made before it has
 * the old one on uuid alone, replaced here. */
static const char sql_uuid_per_project[] =
    "DROP INDEX IF EXISTS events_uuid;"
    " CREATE UNIQUE INDEX IF NOT EXISTS events_project_uuid ON events (project_id, uuid)";

#define NMIGRATIONS 2

static const cm_db_migration_t *migrations(void)
{
    static cm_db_migration_t m[NMIGRATIONS];
    m[0] = (cm_db_migration_t){1, cm__evstore_ddl_sqlite, cm__evstore_ddl_sqlite};
    m[1] = (cm_db_migration_t){2, sql_uuid_per_project, sql_uuid_per_project};
    return m;
}

static void submit(sq_store_t *st, work_t *w);
static void maybe_finish_close(sq_store_t *st);
static void pump_reads(sq_store_t *st, bool may_complete);

/* ---- building a job ------------------------------------------------------------ */

static void param(work_t *w, const char *p, size_t len)
{
    if (w->nparams == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->offsets = cm_xrealloc(w->offsets, w->cap * sizeof(*w->offsets));
    }
    w->offsets[w->nparams++] = w->text.len;
    cm_buf_append(&w->text, p ? p : "", len);
    cm_buf_putc(&w->text, '\0');
}

static void param_s(work_t *w, cm_slice_t s)
{
    param(w, s.p, s.len);
}

static void param_c(work_t *w, const char *s)
{
    param(w, s, strlen(s));
}

static void param_i(work_t *w, long long v)
{
    char n[24];
    param(w, n, (size_t)snprintf(n, sizeof(n), "%lld", v));
}

static void param_time(work_t *w, int64_t ms)
{
    char t[20];
    cm__evstore_datetime(ms, t);
    param(w, t, 19);
}

static void stmt(work_t *w, const char *sql, size_t first_param, int n)
{
    w->stmts[w->nstmts++] = (cm_db_stmt_t){sql, (const char *const *)(uintptr_t)first_param, n};
}

/* Parameters were recorded as offsets; now that text is final, point. */
static void finish_build(work_t *w)
{
    w->params = cm_xmalloc((w->nparams ? w->nparams : 1) * sizeof(char *));
    for (size_t i = 0; i < w->nparams; i++)
        w->params[i] = w->text.p + w->offsets[i];
    for (size_t i = 0; i < w->nstmts; i++)
        w->stmts[i].params = w->params + (uintptr_t)w->stmts[i].params;
}

static void work_free(work_t *w)
{
    cm_buf_free(&w->text);
    free(w->offsets);
    free(w->params);
    free(w->stmts);
    free(w->sql);
    free(w->types);
    free(w);
}

static work_t *build_write(sq_store_t *st, const cm_evstore_rows_in_t *r)
{
    work_t *w = cm_xcalloc(1, sizeof(*w));
    w->st = st;
    cm_buf_init(&w->text);
    size_t n = r->nevents + r->npersons + r->ndistinct_ids + r->ngroups;
    w->stmts = cm_xmalloc((n ? n : 1) * sizeof(*w->stmts));
    w->nevents = r->nevents;
    for (size_t i = 0; i < r->nevents; i++) {
        const cm_evstore_event_t *e = &r->events[i];
        size_t first = w->nparams;
        param_c(w, e->uuid);
        param_i(w, e->project_id);
        param_s(w, e->event);
        param_s(w, e->distinct_id);
        param_c(w, e->person_id);
        param_s(w, e->properties);
        param_s(w, e->person_properties);
        param_time(w, e->timestamp_ms);
        param_i(w, e->timestamp_ms);
        param_time(w, e->created_at_ms);
        param_s(w, e->session_id);
        stmt(w, sql_event, first, 11);
    }
    for (size_t i = 0; i < r->npersons; i++) {
        const cm_evstore_person_t *p = &r->persons[i];
        size_t first = w->nparams;
        param_c(w, p->id);
        param_i(w, p->project_id);
        param_s(w, p->properties);
        param_i(w, p->is_identified);
        param_i(w, p->is_deleted);
        param_time(w, p->created_at_ms);
        param_i(w, p->version);
        stmt(w, sql_person, first, 7);
    }
    for (size_t i = 0; i < r->ndistinct_ids; i++) {
        const cm_evstore_distinct_id_t *d = &r->distinct_ids[i];
        size_t first = w->nparams;
        param_i(w, d->project_id);
        param_s(w, d->distinct_id);
        param_c(w, d->person_id);
        param_i(w, d->version);
        param_i(w, d->is_deleted);
        stmt(w, sql_distinct_id, first, 5);
    }
    for (size_t i = 0; i < r->ngroups; i++) {
        const cm_evstore_group_t *g = &r->groups[i];
        size_t first = w->nparams;
        param_i(w, g->project_id);
        param_s(w, g->group_type);
        param_s(w, g->group_key);
        param_s(w, g->properties);
        param_time(w, g->created_at_ms);
        param_i(w, g->version);
        stmt(w, sql_group, first, 6);
    }
    finish_build(w);
    return w;
}

/* ---- running ------------------------------------------------------------------- */

/*
 * Checkpoints: SQLite's own (every 1,000 WAL pages, on the committing
 * connection) made the writes' thread copy pages into the database file
 * and wait for its fsync, in the middle of the writer's stream of batches:
 * at about 190 MB/s of WAL this was a checkpoint every few batches, and the
 * thread waited for the disk instead of inserting. After each write a
 * PASSIVE checkpoint runs on the checkpoint connection, one at a time: it
 * copies what no reader still needs, beside the next inserts (a checkpoint
 * and a writer may run together in WAL mode), and never waits for locks.
 * The writes' connection keeps an automatic checkpoint as a backstop, at
 * CKPT_BACKSTOP_PAGES, for when this one falls behind.
 */
#define CKPT_BACKSTOP_PAGES "10000"

static void on_checkpointed(int status, const cm_db_res_t *res, void *ud)
{
    sq_store_t *st = ud;
    st->ckpt_running = false;
    if (status != 0) /* busy with another checkpoint: the next write tries again */
        cm_log(CM_LOG_DEBUG, NULL, "%s: checkpoint: %s", st->base.name, cm_db_error(res));
    maybe_finish_close(st);
}

static void checkpoint_soon(sq_store_t *st)
{
    if (st->ckpt_running || st->base.closing || st->ckpt == NULL)
        return;
    st->ckpt_running = true;
    cm_db_stmt_t s = {"PRAGMA wal_checkpoint(PASSIVE)", NULL, 0};
    cm_db_run(st->ckpt, &s, 1, on_checkpointed, st);
}

static void on_written(int status, const cm_db_res_t *res, void *ud)
{
    work_t *w = ud;
    sq_store_t *st = w->st;
    size_t inserted = 0;
    if (status == 0)
        for (size_t i = 0; i < w->nevents; i++)
            inserted += (size_t)cm_db_changes(res, i);
    st->running--;
    if (status == 0)
        checkpoint_soon(st);
    w->wcb(status, status ? cm_db_error(res) : NULL, inserted, w->ud);
    work_free(w);
    maybe_finish_close(st);
}

static void on_rows(int status, const cm_db_res_t *res, void *ud)
{
    work_t *w = ud;
    sq_store_t *st = w->st;
    if (!w->ddl) { /* its reader is free: the next read may start now */
        st->reader_busy[w->reader] = false;
        pump_reads(st, true);
    }
    size_t nc = cm_db_ncols(res, 0), nr = cm_db_nrows(res, 0);
    const char **cells = cm_xmalloc((nc + nc * nr + 1) * sizeof(char *));
    for (size_t c = 0; c < nc; c++)
        cells[c] = cm_db_colname(res, 0, c);
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++)
            cells[nc + r * nc + c] = cm_db_value(res, 0, r, c);
    cm_evstore_rows_t rows = {status ? 0 : nc, status ? 0 : nr, cells};
    st->running--;
    w->qcb(status, status ? cm_db_error(res) : NULL, &rows, w->ud);
    free(cells);
    work_free(w);
    maybe_finish_close(st);
}

/* A read whose time passed while it waited: answered, never run. */
static void expire(sq_store_t *st, work_t *w)
{
    cm_evstore_rows_t none = {0, 0, NULL};
    st->running--;
    w->qcb(CM_ETIMEDOUT, "the query ran out of time waiting for the store", &none, w->ud);
    work_free(w);
}

/* Starts waiting reads on free readers, oldest first. may_complete: the
 * caller is a completion, so a read can be answered (expired) here. */
static void pump_reads(sq_store_t *st, bool may_complete)
{
    size_t r = 0;
    while (st->rhead) {
        work_t *w = st->rhead;
        uint64_t now = uv_hrtime();
        if (may_complete && w->deadline && now >= w->deadline) {
            st->rhead = w->next;
            st->rtail = st->rhead ? st->rtail : NULL;
            expire(st, w);
            continue;
        }
        while (r < st->nreaders && st->reader_busy[r])
            r++;
        if (r == st->nreaders)
            return;
        st->rhead = w->next;
        st->rtail = st->rhead ? st->rtail : NULL;
        w->next = NULL;
        w->reader = r;
        st->reader_busy[r] = true;
        unsigned left = 0;
        if (w->deadline) /* at least 1 ms: 0 would mean no limit */
            left = w->deadline > now + 1000000u ? (unsigned)((w->deadline - now) / 1000000u) : 1;
        cm_db_stmt_t s = {w->sql, w->params, (int)w->nparams, w->types, left};
        s.max_bytes = w->max_bytes;
        cm_db_run(st->readers[r], &s, 1, on_rows, w);
    }
}

static void submit(sq_store_t *st, work_t *w)
{
    st->running++;
    if (w->qcb && !w->ddl) {
        w->next = NULL;
        if (st->rtail)
            st->rtail->next = w;
        else
            st->rhead = w;
        st->rtail = w;
        pump_reads(st, false);
    } else if (w->qcb) {
        cm_db_stmt_t s = {w->sql, w->params, (int)w->nparams, w->types, w->timeout_ms};
        s.max_bytes = w->max_bytes;
        cm_db_run(st->db, &s, 1, on_rows, w);
    } else
        cm_db_run(st->db, w->stmts, w->nstmts, on_written, w);
}

static void enqueue(sq_store_t *st, work_t *w)
{
    if (st->migrated) {
        submit(st, w);
        return;
    }
    if (st->tail)
        st->tail->next = w;
    else
        st->head = w;
    st->tail = w;
}

static void on_migrated(int status, const cm_db_res_t *res, void *ud);

static void on_retry(uv_timer_t *t)
{
    sq_store_t *st = t->data;
    cm_db_migrate(st->db, migrations(), NMIGRATIONS, on_migrated, st);
}

static void on_migrated(int status, const cm_db_res_t *res, void *ud)
{
    sq_store_t *st = ud;
    if (status != 0) {
        cm_log(CM_LOG_ERROR, NULL, "%s: cannot create the tables: %s", st->base.name,
               cm_db_error(res));
        if (!st->base.closing) {
            uv_timer_start(&st->retry, on_retry, MIGRATE_RETRY_MS, 0);
            return;
        }
    }
    st->migrated = true; /* closing after a failure: the waiting work fails in cm_db */
    while (st->head) {
        work_t *w = st->head;
        st->head = w->next;
        submit(st, w);
    }
    st->tail = NULL;
    maybe_finish_close(st);
}

static void sq_write(cm_evstore_t *es, const cm_evstore_rows_in_t *rows, cm_evstore_write_cb cb,
                     void *ud)
{
    sq_store_t *st = (sq_store_t *)es;
    work_t *w = build_write(st, rows);
    w->wcb = cb;
    w->ud = ud;
    enqueue(st, w);
}

static void sq_query(cm_evstore_t *es, const cm_evstore_select_t *q, cm_evstore_query_cb cb,
                     void *ud)
{
    sq_store_t *st = (sq_store_t *)es;
    work_t *w = cm_xcalloc(1, sizeof(*w));
    w->st = st;
    cm_buf_init(&w->text);
    w->sql = cm_xstrdup(q->sql);
    for (int i = 0; i < q->nparams; i++)
        if (q->params[i] != NULL)
            param_c(w, q->params[i]);
        else
            param(w, NULL, 0);
    finish_build(w);
    for (int i = 0; i < q->nparams; i++)
        if (q->params[i] == NULL)
            w->params[i] = NULL;
    w->types = q->types ? cm_xstrdup(q->types) : NULL;
    w->timeout_ms = q->timeout_ms;
    w->max_bytes = q->max_bytes;
    w->deadline = q->timeout_ms ? uv_hrtime() + (uint64_t)q->timeout_ms * 1000000u : 0;
    w->ddl = q->ddl;
    w->qcb = cb;
    w->ud = ud;
    enqueue(st, w);
}

static bool sq_ready(cm_evstore_t *es, cm_buf_t *why)
{
    sq_store_t *st = (sq_store_t *)es;
    if (!st->migrated) {
        cm_buf_appendf(why, "%s: tables not created yet", es->name);
        return false;
    }
    return cm_db_ready(st->db, why);
}

/* ---- close ----------------------------------------------------------------------- */

static void on_retry_closed(uv_handle_t *h)
{
    sq_store_t *st = h->data;
    cm_evstore_closed_cb done = st->done;
    void *ud = st->done_ud;
    free(st->readers);
    free(st->reader_busy);
    cm__evstore_fini(&st->base);
    free(st);
    if (done)
        done(ud);
}

static void on_pool_closed(void *ud)
{
    sq_store_t *st = ud;
    if (--st->closing_left == 0)
        uv_close((uv_handle_t *)&st->retry, on_retry_closed);
}

/* The handles first (their last job, the close, runs on the pools), then
 * the pools, then the timer. */
static void on_db_closed(void *ud)
{
    sq_store_t *st = ud;
    if (--st->closing_left > 0)
        return;
    st->closing_left = 3;
    cm_worker_close(st->wpool, on_pool_closed, st);
    cm_worker_close(st->rpool, on_pool_closed, st);
    cm_worker_close(st->cpool, on_pool_closed, st);
}

static void maybe_finish_close(sq_store_t *st)
{
    if (!st->base.closing || st->running || st->head || st->rhead || st->db == NULL ||
        st->ckpt_running)
        return;
    cm_db_t *db = st->db;
    st->db = NULL;
    st->closing_left = 2 + st->nreaders;
    cm_db_close(db, on_db_closed, st);
    cm_db_close(st->ckpt, on_db_closed, st);
    for (size_t i = 0; i < st->nreaders; i++)
        cm_db_close(st->readers[i], on_db_closed, st);
}

static void sq_close(cm_evstore_t *es, cm_evstore_closed_cb done, void *ud)
{
    sq_store_t *st = (sq_store_t *)es;
    st->done = done;
    st->done_ud = ud;
    if (!st->migrated && uv_is_active((uv_handle_t *)&st->retry)) {
        uv_timer_stop(&st->retry);
        on_migrated(0, NULL, st); /* let the waiting work run (and fail) */
        return;
    }
    maybe_finish_close(st);
}

static const cm__evstore_ops_t sqlite_ops = {
    .name = "sqlite",
    .kind = CM_EVSTORE_SQLITE,
    .write = sq_write,
    .query = sq_query,
    .ready = sq_ready,
    .close = sq_close,
};

int cm__evstore_open_sqlite(uv_loop_t *loop, const cm_evstore_opts_t *opts, const char *path,
                            cm_evstore_t **out)
{
    sq_store_t *st = cm_xcalloc(1, sizeof(*st));
    cm__evstore_init(&st->base, &sqlite_ops, loop, opts->name);
    char url[4096];
    snprintf(url, sizeof(url), "sqlite:%s", path);
    /* LIKE is case-sensitive, as on ClickHouse (the endpoints' queries) */
    st->nreaders = opts->readers ? opts->readers : DEFAULT_READERS;
    if (st->nreaders > MAX_READERS)
        st->nreaders = MAX_READERS;
    if (cm_worker_open(loop, "events-write", 1, &st->wpool) != CM_OK)
        goto fail_wpool;
    if (cm_worker_open(loop, "events-read", (unsigned)st->nreaders, &st->rpool) != CM_OK)
        goto fail_rpool;
    if (cm_worker_open(loop, "events-ckpt", 1, &st->cpool) != CM_OK)
        goto fail_cpool;
    cm_db_opts_t o = {.url = url,
                      .name = st->base.name,
                      .on_open_sql = "PRAGMA case_sensitive_like = ON;"
                                     " PRAGMA wal_autocheckpoint = " CKPT_BACKSTOP_PAGES,
                      .on_connect = cm__evstore_on_connect,
                      .worker = st->wpool};
    if (cm_db_open(loop, &o, &st->db) != CM_OK)
        goto fail_db; /* cannot happen past the scheme check */
    cm_db_opts_t c = {.url = url, .name = st->base.name, .worker = st->cpool};
    cm_db_open(loop, &c, &st->ckpt); /* sqlite: only copies c; opened by its first job */
    st->readers = cm_xcalloc(st->nreaders, sizeof(*st->readers));
    st->reader_busy = cm_xcalloc(st->nreaders, sizeof(*st->reader_busy));
    o.worker = st->rpool;
    o.read_only = true;
    for (size_t i = 0; i < st->nreaders; i++)
        cm_db_open(loop, &o, &st->readers[i]); /* sqlite: only copies o */
    uv_timer_init(loop, &st->retry);
    st->retry.data = st;
    cm_db_migrate(st->db, migrations(), NMIGRATIONS, on_migrated, st);
    *out = &st->base;
    return CM_OK;
fail_db:
    cm_worker_close(st->cpool, NULL, NULL);
fail_cpool:
    cm_worker_close(st->rpool, NULL, NULL);
fail_rpool:
    cm_worker_close(st->wpool, NULL, NULL);
fail_wpool:
    cm__evstore_fini(&st->base);
    free(st);
    return CM_EINVAL;
}
