/*
 * db_internal.h - what db.c (the job queue, results, migrations) shares
 * with the backends db_sqlite.c and db_pg.c. Not part of the public API.
 *
 * Life of a job: cm_db_run copies the statements into a job and queues it;
 * db.c's pump (always from a timer callback or a completion, never inside
 * cm_db_run) hands the oldest job to ops->start when nothing else runs. The
 * backend fills job->res (tables through cm__db_table_*), sets job->status
 * and calls cm__db_job_done(job) on the loop; that runs the user callback,
 * frees the job and starts the next one. A backend may complete a job from
 * inside ops->start (a PostgreSQL that is down fails at once).
 *
 * Close: once the queue is empty, ops->shutdown releases the connection
 * (asynchronously if it needs) and calls cm__db_shutdown_done; db.c then
 * closes its timer, calls ops->free and the user's done.
 */
#ifndef CM_DB_INTERNAL_H
#define CM_DB_INTERNAL_H

#include <stdint.h>

#include "cm/db.h"

typedef struct {
    size_t ncols;
    size_t nrows;
    long long changes;
    size_t *cells; /* ncols names, then nrows * ncols values: offset + 1 into text, 0 = NULL */
    size_t ncells, cap;
    cm_buf_t text;
} cm__db_table_t;

struct cm_db_res {
    cm__db_table_t *tables;
    size_t ntables;
    cm_buf_t error;
};

/* How a job relates to a transaction (see cm_db_begin in db.h). */
enum {
    CM__TX_AUTO = 0, /* cm_db_run: BEGIN and COMMIT around two or more statements */
    CM__TX_OPEN,     /* cm_db_begin: BEGIN, the statements, and the transaction stays open */
    CM__TX_COMMIT,   /* cm_db_txn_commit: the statements, then COMMIT */
    CM__TX_ROLLBACK, /* cm_db_txn_rollback: ROLLBACK only */
};

typedef struct cm__db_job cm__db_job_t;
struct cm__db_job {
    cm__db_job_t *next;
    cm_db_t *db;
    cm_db_stmt_t *stmts; /* deep copies */
    size_t nstmts;
    cm_db_done_cb cb;
    cm_db_txn_cb txn_cb; /* CM__TX_OPEN's callback instead of cb */
    void *ud;
    int status;
    int tx;       /* CM__TX_* */
    uint64_t gen; /* the connection the transaction lives on (backend's count) */
    cm_db_res_t res;
    uint64_t queued_ns; /* uv_hrtime() at submission: the latency histogram */
    /* a lone SELECT: its key (db_cache.c) and the cache's generation at
     * submission */
    cm_buf_t cache_key; /* empty: not a lone read */
    uint64_t cache_gen;
    /* the same read submitted again while this one waited: answered with
     * this one's result, in order (db.c, "Identical reads waiting") */
    struct cm__db_follower *followers, *followers_tail;
    /* keep: a cached read's miss, whose answer is kept (db_cache.c): the
     * loop's time at submission and its time to live, or (until_changed on
     * a backend that tells) the store's data version at submission */
    bool keep;
    uint64_t cache_since;
    unsigned cache_ms;
    bool cache_has_version;
    uint64_t cache_version;
};

/* The statements run inside a transaction; one is opened first; it is
 * committed at the end. Any failure inside a transaction rolls it back. */
static inline bool cm__db_job_in_tx(const cm__db_job_t *j)
{
    return j->tx != CM__TX_AUTO || j->nstmts > 1;
}
static inline bool cm__db_job_opens(const cm__db_job_t *j)
{
    return j->tx == CM__TX_OPEN || (j->tx == CM__TX_AUTO && j->nstmts > 1);
}
static inline bool cm__db_job_commits(const cm__db_job_t *j)
{
    return j->tx == CM__TX_COMMIT || (j->tx == CM__TX_AUTO && j->nstmts > 1);
}

typedef struct {
    const char *name;
    cm_db_dialect_t dialect;
    void (*start)(cm_db_t *db, cm__db_job_t *job);
    bool (*ready)(cm_db_t *db, cm_buf_t *why);
    void (*shutdown)(cm_db_t *db);
    void (*free)(cm_db_t *db); /* the backend struct holding db */
    /* Optional (NULL: the backend cannot tell): on the loop, without
     * waiting, a number that changes whenever anything is committed to the
     * store by any connection; -1 when it cannot say now. */
    int (*data_version)(cm_db_t *db, uint64_t *out);
} cm__db_ops_t;

struct cm_db {
    const cm__db_ops_t *ops;
    uv_loop_t *loop;
    char *name;
    cm__db_job_t *head, *tail; /* waiting, oldest first */
    cm__db_job_t *running;
    cm_db_txn_t *held; /* an open transaction: only its own jobs run */
    bool pumping, closing, shut;
    uv_timer_t kick;
    cm_db_closed_cb done;
    void *done_ud;
    /* read cache (db_cache.c) */
    struct cm_strset *cache; /* statement -> its answer, shared */
    uint64_t cache_gen;      /* bumped by every job that may write */
    size_t cache_bytes;      /* the answers' text, to bound memory */
    struct cm__db_hit *hits; /* answered from the cache, callbacks due */
    struct cm__db_hit *hits_tail;
    /* store_operation_duration_seconds by kind (db.c); NULL: not measured */
    cm_histogram_t *lat_read, *lat_write, *lat_txn;
};

/* db_cache.c: cm_db_run's read cache (see db.h). */
typedef struct cm__db_hit cm__db_hit_t;
/* The lone read's key into job->cache_key: its SQL, types and parameters. */
void cm__db_cache_key(cm__db_job_t *job);
/* A cacheable job: true when it was answered from memory (the callback is
 * queued on db->hits and job freed); otherwise the job is marked to be kept
 * when it completes. */
bool cm__db_cache_lookup(cm_db_t *db, cm__db_job_t *job);
/* Any other job: everything cached so far is forgotten. */
void cm__db_cache_invalidate(cm_db_t *db);
/* A completed job: runs its callback, keeping its answer when it may. */
void cm__db_cache_complete(cm_db_t *db, cm__db_job_t *job);
/* Runs the callbacks of the hits queued so far. */
void cm__db_cache_deliver(cm_db_t *db);
void cm__db_cache_free(cm_db_t *db);

/* Backends: embed struct cm_db first; db.c sets the common fields. */
void cm__db_init(cm_db_t *db, uv_loop_t *loop, const cm__db_ops_t *ops, const char *name);
int cm_db_open_sqlite(uv_loop_t *loop, const cm_db_opts_t *opts, const char *path, cm_db_t **out);
int cm_db_open_pg(uv_loop_t *loop, const cm_db_opts_t *opts, cm_db_t **out);

void cm__db_job_done(cm__db_job_t *job);
/* Runs the job's callback, then its followers', with one result. */
void cm__db_job_answer(cm__db_job_t *job, int status, const cm_db_res_t *res);
void cm__db_job_free(cm__db_job_t *job);
/* The backend has released its connection (after ops->shutdown). */
void cm__db_shutdown_done(cm_db_t *db);
/* New jobs may run again (PostgreSQL connected): pump the queue. */
void cm__db_kick(cm_db_t *db);

/* Result building, row-major: a table, its column names, then its cells. */
cm__db_table_t *cm__db_table_add(cm_db_res_t *res, size_t ncols);
void cm__db_table_cell(cm__db_table_t *t, const char *s, size_t len); /* s NULL: SQL NULL */
/* Discards every table (a failed transaction returns none). */
void cm__db_res_clear_tables(cm_db_res_t *res);
void cm__db_job_fail(cm__db_job_t *job, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
