/* db.c - the store's job queue, results and dispatch (see db.h, db_internal.h). */
#include "cm/db.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "db_internal.h"

static void make_latency(cm_db_t *db, cm_metrics_t *m)
{
    char labels[160];
    const char *help = "Store operations from the call to the answer, queue wait included";
    snprintf(labels, sizeof(labels), "store=\"%.64s\",op=\"read\"", db->name);
    db->lat_read = cm_metrics_histogram(m, "store_operation_duration_seconds", help, labels,
                                        cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
    snprintf(labels, sizeof(labels), "store=\"%.64s\",op=\"write\"", db->name);
    db->lat_write = cm_metrics_histogram(m, "store_operation_duration_seconds", help, labels,
                                         cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
    snprintf(labels, sizeof(labels), "store=\"%.64s\",op=\"transaction\"", db->name);
    db->lat_txn = cm_metrics_histogram(m, "store_operation_duration_seconds", help, labels,
                                       cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
}

int cm_db_open(uv_loop_t *loop, const cm_db_opts_t *opts, cm_db_t **out)
{
    const char *url = opts->url ? opts->url : "";
    int rc = CM_EINVAL;
    *out = NULL;
    if (strncmp(url, "sqlite:", 7) == 0 && url[7] != '\0')
        rc = cm_db_open_sqlite(loop, opts, url + 7, out);
    else if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0)
        rc = cm_db_open_pg(loop, opts, out);
    if (rc == CM_OK && *out && opts->metrics)
        make_latency(*out, opts->metrics);
    return rc;
}

static void on_kick(uv_timer_t *t);

void cm__db_init(cm_db_t *db, uv_loop_t *loop, const cm__db_ops_t *ops, const char *name)
{
    db->ops = ops;
    db->loop = loop;
    db->name = cm_xstrdup(name ? name : "db");
    uv_timer_init(loop, &db->kick);
    db->kick.data = db;
}

cm_db_dialect_t cm_db_dialect(const cm_db_t *db)
{
    return db->ops->dialect;
}

bool cm_db_ready(cm_db_t *db, cm_buf_t *why)
{
    if (db->closing) {
        cm_buf_append_cstr(why, "closing");
        return false;
    }
    return db->ops->ready(db, why);
}

/* ---- the queue ------------------------------------------------------------ */

static char *copy_into(char **cursor, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = *cursor;
    memcpy(p, s, n);
    *cursor += n;
    return p;
}

/* One allocation for the job, its statements, their parameter arrays and text. */
static cm__db_job_t *job_new(cm_db_t *db, const cm_db_stmt_t *stmts, size_t n)
{
    size_t bytes = sizeof(cm__db_job_t) + n * sizeof(cm_db_stmt_t);
    for (size_t i = 0; i < n; i++) {
        bytes += strlen(stmts[i].sql) + 1 + (size_t)stmts[i].nparams * sizeof(char *);
        if (stmts[i].types)
            bytes += strlen(stmts[i].types) + 1;
        for (int j = 0; j < stmts[i].nparams; j++)
            if (stmts[i].params[j])
                bytes += strlen(stmts[i].params[j]) + 1;
    }
    cm__db_job_t *job = cm_xcalloc(1, bytes);
    job->db = db;
    job->queued_ns = uv_hrtime();
    job->stmts = (cm_db_stmt_t *)(job + 1);
    job->nstmts = n;
    char **arrays = (char **)(job->stmts + n);
    size_t nptr = 0;
    for (size_t i = 0; i < n; i++)
        nptr += (size_t)stmts[i].nparams;
    char *text = (char *)(arrays + nptr);
    for (size_t i = 0; i < n; i++) {
        cm_db_stmt_t *s = &job->stmts[i];
        s->sql = copy_into(&text, stmts[i].sql);
        s->nparams = stmts[i].nparams;
        s->types = stmts[i].types ? copy_into(&text, stmts[i].types) : NULL;
        s->timeout_ms = stmts[i].timeout_ms;
        s->cache_ms = stmts[i].cache_ms;
        s->until_changed = stmts[i].until_changed;
        s->max_bytes = stmts[i].max_bytes;
        s->params = (const char *const *)arrays;
        for (int j = 0; j < s->nparams; j++)
            *arrays++ = stmts[i].params[j] ? copy_into(&text, stmts[i].params[j]) : NULL;
    }
    cm_buf_init(&job->res.error);
    return job;
}

struct cm__db_follower {
    struct cm__db_follower *next;
    cm_db_done_cb cb;
    void *ud;
};

void cm__db_job_answer(cm__db_job_t *job, int status, const cm_db_res_t *res)
{
    job->cb(status, res, job->ud);
    while (job->followers) {
        struct cm__db_follower *f = job->followers;
        job->followers = f->next;
        f->cb(status, res, f->ud);
        free(f);
    }
    job->followers_tail = NULL;
}

void cm__db_job_free(cm__db_job_t *job)
{
    cm__db_res_clear_tables(&job->res);
    cm_buf_free(&job->res.error);
    cm_buf_free(&job->cache_key);
    free(job);
}

/* Whether a job may change what a cached read would answer: anything but
 * plain SELECTs outside a transaction of the caller's. */
static bool job_may_write(const cm__db_job_t *job)
{
    if (job->tx != CM__TX_AUTO)
        return true;
    for (size_t i = 0; i < job->nstmts; i++) {
        const char *q = job->stmts[i].sql;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '(')
            q++;
        if (strncasecmp(q, "SELECT", 6) != 0)
            return true;
    }
    return false;
}

static void pump(cm_db_t *db)
{
    if (db->pumping)
        return; /* a completion inside ops->start: the loop below goes on */
    db->pumping = true;
    while (db->running == NULL && db->head) {
        cm__db_job_t *job = db->head;
        if (db->held && job->tx != CM__TX_COMMIT && job->tx != CM__TX_ROLLBACK)
            break; /* the open transaction's own jobs go first (queued at the head) */
        db->head = job->next;
        if (db->head == NULL)
            db->tail = NULL;
        job->next = NULL;
        db->running = job;
        if (job->status != 0)
            cm__db_job_done(job); /* refused while closing */
        else
            db->ops->start(db, job);
    }
    db->pumping = false;
    if (db->closing && !db->shut && db->running == NULL && db->head == NULL && !db->held &&
        db->hits == NULL) {
        db->shut = true;
        db->ops->shutdown(db);
    }
}

static void on_kick(uv_timer_t *t)
{
    cm__db_cache_deliver(t->data);
    pump(t->data);
}

void cm__db_kick(cm_db_t *db)
{
    if (!db->shut)
        uv_timer_start(&db->kick, on_kick, 0, 0);
}

/*
 * Identical reads waiting: a lone SELECT submitted while the same statement
 * with the same parameters waits in the queue, not started, and no job that
 * may write was submitted since (the cache's generation), becomes a follower
 * of that one: one run answers both. It reads no older a store than its own
 * run would have: the job it joins starts after it was submitted, and
 * nothing of this handle's writes comes between. With one job at a time per
 * handle, the requests that arrive during one round trip (PostgreSQL) or
 * thread-pool hop (SQLite) asking the same thing cost one more, not one each.
 */
static bool join_waiting(cm_db_t *db, cm__db_job_t *job)
{
    for (cm__db_job_t *w = db->head; w; w = w->next) {
        /* only lone reads have a key: transactions and writes never match */
        if (w->cache_key.len != job->cache_key.len || w->cache_gen != db->cache_gen ||
            w->stmts[0].timeout_ms != job->stmts[0].timeout_ms ||
            w->stmts[0].max_bytes != job->stmts[0].max_bytes ||
            memcmp(w->cache_key.p, job->cache_key.p, job->cache_key.len) != 0)
            continue;
        struct cm__db_follower *f = cm_xcalloc(1, sizeof(*f));
        f->cb = job->cb;
        f->ud = job->ud;
        if (w->followers_tail)
            w->followers_tail->next = f;
        else
            w->followers = f;
        w->followers_tail = f;
        cm__db_job_free(job);
        return true;
    }
    return false;
}

void cm_db_run(cm_db_t *db, const cm_db_stmt_t *stmts, size_t n, cm_db_done_cb cb, void *ud)
{
    cm__db_job_t *job = job_new(db, stmts, n);
    job->cb = cb;
    job->ud = ud;
    if (db->closing) {
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: closing", db->name);
    } else if (n == 1 &&
               (stmts[0].cache_ms > 0 || (stmts[0].until_changed && db->ops->data_version))) {
        if (cm__db_cache_lookup(db, job)) {
            cm__db_kick(db);
            return;
        }
        if (join_waiting(db, job))
            return;
    } else if (job_may_write(job)) {
        cm__db_cache_invalidate(db);
    } else if (n == 1) {
        cm__db_cache_key(job);
        job->cache_gen = db->cache_gen;
        if (join_waiting(db, job))
            return;
    }
    if (db->tail)
        db->tail->next = job;
    else
        db->head = job;
    db->tail = job;
    cm__db_kick(db);
}

struct cm_db_txn {
    cm_db_t *db;
    uint64_t gen;
};

static bool job_may_write(const cm__db_job_t *job);

static void observe(cm_db_t *db, const cm__db_job_t *job)
{
    if (db->lat_read == NULL)
        return;
    cm_histogram_t *h = cm__db_job_in_tx(job) ? db->lat_txn
                        : job_may_write(job)  ? db->lat_write
                                              : db->lat_read;
    cm_histogram_observe(h, (double)(uv_hrtime() - job->queued_ns) / 1e9);
}

void cm__db_job_done(cm__db_job_t *job)
{
    cm_db_t *db = job->db;
    observe(db, job);
    if (db->running == job)
        db->running = NULL;
    if (job->tx == CM__TX_OPEN) {
        cm_db_txn_t *txn = NULL;
        if (job->status == 0) {
            txn = cm_xcalloc(1, sizeof(*txn));
            txn->db = db;
            txn->gen = job->gen;
            db->held = txn;
        }
        job->txn_cb(job->status, &job->res, txn, job->ud);
    } else {
        if (job->tx == CM__TX_COMMIT || job->tx == CM__TX_ROLLBACK) {
            free(db->held);
            db->held = NULL;
        }
        if (job->keep)
            cm__db_cache_complete(db, job);
        else
            cm__db_job_answer(job, job->status, &job->res);
    }
    cm__db_job_free(job);
    pump(db);
}

void cm_db_begin(cm_db_t *db, const cm_db_stmt_t *stmts, size_t n, cm_db_txn_cb cb, void *ud)
{
    cm__db_job_t *job = job_new(db, stmts, n);
    job->tx = CM__TX_OPEN;
    job->txn_cb = cb;
    job->ud = ud;
    cm__db_cache_invalidate(db);
    if (db->closing)
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: closing", db->name);
    if (db->tail)
        db->tail->next = job;
    else
        db->head = job;
    db->tail = job;
    cm__db_kick(db);
}

/* The transaction's next job goes first: nothing else runs while it is open. */
static void txn_job(cm_db_txn_t *txn, int tx, const cm_db_stmt_t *stmts, size_t n, cm_db_done_cb cb,
                    void *ud)
{
    cm_db_t *db = txn->db;
    cm__db_job_t *job = job_new(db, stmts, n);
    job->tx = tx;
    job->gen = txn->gen;
    job->cb = cb;
    job->ud = ud;
    job->next = db->head;
    db->head = job;
    if (db->tail == NULL)
        db->tail = job;
    cm__db_cache_invalidate(db); /* what was read before the commit may be old now */
    cm__db_kick(db);
}

void cm_db_txn_commit(cm_db_txn_t *txn, const cm_db_stmt_t *stmts, size_t n, cm_db_done_cb cb,
                      void *ud)
{
    txn_job(txn, CM__TX_COMMIT, stmts, n, cb, ud);
}

void cm_db_txn_rollback(cm_db_txn_t *txn, cm_db_done_cb cb, void *ud)
{
    txn_job(txn, CM__TX_ROLLBACK, NULL, 0, cb, ud);
}

/* ---- close ------------------------------------------------------------------ */

static void kick_closed(uv_handle_t *h)
{
    cm_db_t *db = h->data;
    cm_db_closed_cb done = db->done;
    void *ud = db->done_ud;
    while (db->head) { /* submitted while the connection was shutting down */
        cm__db_job_t *job = db->head;
        db->head = job->next;
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: closed", db->name);
        cm__db_job_answer(job, job->status, &job->res);
        cm__db_job_free(job);
    }
    cm__db_cache_free(db);
    free(db->name);
    db->ops->free(db);
    if (done)
        done(ud);
}

void cm__db_shutdown_done(cm_db_t *db)
{
    uv_close((uv_handle_t *)&db->kick, kick_closed);
}

void cm_db_close(cm_db_t *db, cm_db_closed_cb done, void *ud)
{
    if (db->closing)
        return;
    db->closing = true;
    db->done = done;
    db->done_ud = ud;
    cm__db_kick(db);
}

/* ---- results ------------------------------------------------------------------ */

cm__db_table_t *cm__db_table_add(cm_db_res_t *res, size_t ncols)
{
    res->tables = cm_xrealloc(res->tables, (res->ntables + 1) * sizeof(*res->tables));
    cm__db_table_t *t = &res->tables[res->ntables++];
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    cm_buf_init(&t->text);
    return t;
}

void cm__db_table_cell(cm__db_table_t *t, const char *s, size_t len)
{
    if (t->ncells == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = cm_xrealloc(t->cells, t->cap * sizeof(*t->cells));
    }
    if (s == NULL) {
        t->cells[t->ncells++] = 0;
    } else {
        t->cells[t->ncells++] = t->text.len + 1;
        cm_buf_append(&t->text, s, len);
        cm_buf_putc(&t->text, '\0');
    }
    if (t->ncols && t->ncells > t->ncols)
        t->nrows = (t->ncells - t->ncols) / t->ncols;
}

void cm__db_res_clear_tables(cm_db_res_t *res)
{
    for (size_t i = 0; i < res->ntables; i++) {
        free(res->tables[i].cells);
        cm_buf_free(&res->tables[i].text);
    }
    free(res->tables);
    res->tables = NULL;
    res->ntables = 0;
}

void cm__db_job_fail(cm__db_job_t *job, int status, const char *fmt, ...)
{
    va_list ap;
    job->status = status;
    cm__db_res_clear_tables(&job->res);
    cm_buf_reset(&job->res.error);
    va_start(ap, fmt);
    cm_buf_vappendf(&job->res.error, fmt, ap);
    va_end(ap);
}

static const cm__db_table_t *table(const cm_db_res_t *res, size_t i)
{
    return res && i < res->ntables ? &res->tables[i] : NULL;
}

static const char *cell(const cm__db_table_t *t, size_t i)
{
    return t && i < t->ncells && t->cells[i] ? t->text.p + t->cells[i] - 1 : NULL;
}

size_t cm_db_ntables(const cm_db_res_t *res)
{
    return res ? res->ntables : 0;
}

size_t cm_db_nrows(const cm_db_res_t *res, size_t i)
{
    const cm__db_table_t *t = table(res, i);
    return t ? t->nrows : 0;
}

size_t cm_db_ncols(const cm_db_res_t *res, size_t i)
{
    const cm__db_table_t *t = table(res, i);
    return t ? t->ncols : 0;
}

const char *cm_db_colname(const cm_db_res_t *res, size_t i, size_t col)
{
    const cm__db_table_t *t = table(res, i);
    return t && col < t->ncols ? cell(t, col) : NULL;
}

const char *cm_db_value(const cm_db_res_t *res, size_t i, size_t row, size_t col)
{
    const cm__db_table_t *t = table(res, i);
    if (t == NULL || row >= t->nrows || col >= t->ncols)
        return NULL;
    return cell(t, t->ncols + row * t->ncols + col);
}

long long cm_db_changes(const cm_db_res_t *res, size_t i)
{
    const cm__db_table_t *t = table(res, i);
    return t ? t->changes : 0;
}

const char *cm_db_error(const cm_db_res_t *res)
{
    return res && res->error.len ? res->error.p : "";
}
