/*
 * db.h - an asynchronous SQL store: SQLite or PostgreSQL behind one interface.
 *
 *   cm_db_t *db;
 *   cm_db_open(loop, &(cm_db_opts_t){.url = "sqlite:var/meta.db"}, &db);
 *   const char *p[] = {"42"};
 *   cm_db_stmt_t s = {"SELECT key, version FROM flags WHERE project_id = $1", p, 1};
 *   cm_db_run(db, &s, 1, on_rows, ud);        (on_rows runs later, on the loop)
 *
 * A job is one transaction: its statements run in order between BEGIN and
 * COMMIT, and the first failure rolls all of them back. Jobs run one after
 * another, in the order they were submitted, so a caller that submits a
 * read after a write sees the write. Statements are written once for both
 * dialects: parameters are $1..$N and go in as text (NULL is SQL NULL; on
 * SQLite a canonical integer is bound as an integer, so LIMIT $1 works);
 * results come out as text (NULL for SQL NULL; a SQLite REAL as the
 * shortest text that reads back as the same double), valid only during the
 * callback, as a redisReply is. A statement without parameters may hold
 * several SQL statements separated by ';' (migrations); its result is the
 * last one's.
 *
 * Backends (one file each, behind db.c, as the queue's are):
 *   "sqlite:<path>"  db_sqlite.c: WAL, a busy timeout for other processes;
 *                    every job runs on libuv's thread pool (or a pool of
 *                    the caller's: opts.worker), never on the loop, one job
 *                    at a time per handle.
 *   "postgres://..." db_pg.c: libpq's non-blocking calls driven by the loop
 *   "postgresql://"  (connection string as libpq reads it); reconnects with
 *                    backoff (100 ms doubling to 5 s) whenever the server
 *                    goes away.
 *
 * The callback runs exactly once per cm_db_run, on the loop, never from
 * inside cm_db_run itself; it may call cm_db_run and cm_db_close. Status:
 *   0             committed (or read)
 *   CM_EUNAVAIL   the database cannot be reached, or the connection broke
 *                 during the job (then it may or may not have committed);
 *                 also every job submitted after cm_db_close
 *   CM_ECONFLICT  a UNIQUE, primary key or foreign key constraint refused it
 *   CM_EINVAL     the SQL failed otherwise (a bug of the caller's)
 * cm_db_error(res) says why in words (the server's message).
 */
#ifndef CM_DB_H
#define CM_DB_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/worker.h"

typedef struct cm_db cm_db_t;
typedef struct cm_db_res cm_db_res_t;

typedef enum { CM_DB_SQLITE = 1, CM_DB_POSTGRES = 2 } cm_db_dialect_t;

/* A SQLite connection being opened (cm_db_opts_t.on_connect), and an
 * aggregate of doubles it may be given (db_sqlite_fns.c): step sees each
 * row's arguments (a SQL NULL as nulls[i], its value 0), final the group's
 * answer: 0 with *out, 1 for a SQL NULL, or -1 (out of memory). state is
 * state_size zeroed bytes per group; final runs once per group and frees
 * what step took. */
typedef struct cm_db_conn cm_db_conn_t;
typedef struct {
    const char *name;
    int nargs;
    size_t state_size;
    void (*step)(void *state, int argc, const double *args, const bool *nulls);
    int (*final)(void *state, double *out);
} cm_db_aggregate_t;
/* agg must outlive the connection (a static). 0, or CM_EUNAVAIL. */
int cm_db_conn_add_aggregate(cm_db_conn_t *conn, const cm_db_aggregate_t *agg);
/* ClickHouse's functions that need SQLite's own values, under the names
 * the query compiler prints (db_sqlite_ch.c, db_sqlite_url.c,
 * db_sqlite_re.c): cm_argmax, cm_argmin, cm_finite, cm_pad, cm_repeat,
 * cm_base64_encode, cm_base64_decode, cm_domain, cm_path,
 * cm_url_param, cm_cut_query, cm_decode_url, cm_reverse, cm_match, cm_extract, cm_replace_one,
 * cm_replace_all, cm_lower_utf8, cm_upper_utf8, cm_encode_url (db_sqlite_text.c),
 * cm_city_hash64 (db_sqlite_cityhash.c), cm_to_week (db_sqlite_week.c). 0, or CM_EUNAVAIL. */
int cm_db_conn_add_clickhouse_fns(cm_db_conn_t *conn);

/* A scalar function of text (db_sqlite_fns.c): call sees the arguments as
 * text (NULL for a SQL NULL) and writes its answer, NUL-terminated, into out
 * (cap bytes): 0 for that text, 1 for a SQL NULL. state is the connection's
 * own (state_new when added, state_free when the connection closes), so a
 * cache in it is never shared between threads. fn must outlive the
 * connection (a static). 0, or CM_EUNAVAIL / CM_ERR. */
#define CM_DB_FN_OUT 64
typedef struct {
    const char *name;
    int nargs; /* -1: any */
    void *(*state_new)(void);
    void (*state_free)(void *state);
    int (*call)(void *state, int argc, const char *const *args, char *out, size_t cap);
} cm_db_function_t;
int cm_db_conn_add_function(cm_db_conn_t *conn, const cm_db_function_t *fn);

/* A scalar function of text for a SQLite connection (db_sqlite_fns.c): call
 * sees the arguments as text (NULL for a SQL NULL) and answers malloc'd
 * text (freed by SQLite), or NULL: a SQL NULL, or with *failed set an
 * error. fn must outlive the connection (a static). 0, or CM_EUNAVAIL. */
typedef struct {
    const char *name;
    int nargs;
    char *(*call)(int argc, const char *const *args, bool *failed);
} cm_db_text_fn_t;
int cm_db_conn_add_text_fn(cm_db_conn_t *conn, const cm_db_text_fn_t *fn);

typedef struct {
    const char *url;     /* see above */
    const char *name;    /* for logs; default "db" */
    int busy_timeout_ms; /* SQLite: wait for another process's lock; default 5000 */
    /* SQLite: run on every connection it opens (PRAGMAs of the handle's own) */
    const char *on_open_sql;
    /* SQLite: called on each connection it opens, on the thread that
     * opens it, before any statement (the event store adds its HogQL
     * aggregates with cm_db_conn_add_aggregate); non-zero fails the open. */
    int (*on_connect)(cm_db_conn_t *conn, void *ud);
    void *on_connect_ud;
    /* SQLite: run the jobs on this pool (which must outlive the handle)
     * instead of libuv's thread pool: for jobs that may run long (the event
     * store's queries), see worker.h. NULL: libuv's. */
    cm_worker_t *worker;
    /* SQLite: open the file read-only (it must exist, in WAL mode: another
     * handle made it); such a handle reads beside a writer's. */
    bool read_only;
    /* Optional: store_operation_duration_seconds{store=name,op=read|write|
     * transaction}, from the call to the callback (queue wait included:
     * what the caller waits). Answers from the read cache are not counted. */
    cm_metrics_t *metrics;
} cm_db_opts_t;

/* Copied by cm_db_run: the caller may free it all once the call returns. */
typedef struct {
    const char *sql;
    /* nparams values for $1..$N; an entry may be NULL. PostgreSQL: a
     * statement with parameters is one command, prepared once per connection
     * (on first use) and run by name after that; with none it may be a
     * script of several. */
    const char *const *params;
    int nparams;
    /* SQLite, optional: one letter per parameter saying how to bind it
     * ('t' text, 'i' integer, 'f' real); NULL keeps the rule above. */
    const char *types;
    /* SQLite, optional: the statement is interrupted after this long and
     * fails with CM_ETIMEDOUT; 0 for no limit. */
    unsigned timeout_ms;
    /* Optional: a SELECT whose answer may come from this handle's memory
     * for up to this long (a job of this one statement; see "Read cache"
     * below); 0 always reads the store. */
    unsigned cache_ms;
    /* Optional, with or without cache_ms: on a store that can tell whether
     * anything was committed to it since (SQLite), the kept answer serves
     * for as long as nothing was, and cache_ms is not used; on one that
     * cannot (PostgreSQL), cache_ms alone applies (0: not kept). */
    bool until_changed;
    /* SQLite, optional: the rows' text may add up to this many bytes (a
     * value counts its length plus 8), and no value computed on the way
     * may be longer; past it the statement stops and fails with
     * CM_ETOOBIG. 0 for no limit. */
    size_t max_bytes;
} cm_db_stmt_t;

typedef void (*cm_db_done_cb)(int status, const cm_db_res_t *res, void *ud);
typedef void (*cm_db_closed_cb)(void *ud);

/* CM_EINVAL for a URL of no known scheme (nothing opened). Connecting (or
 * opening the file) happens in the background: see cm_db_ready. */
int cm_db_open(uv_loop_t *loop, const cm_db_opts_t *opts, cm_db_t **out);
cm_db_dialect_t cm_db_dialect(const cm_db_t *db);
/* Reachable now? Otherwise appends a short reason to why. */
bool cm_db_ready(cm_db_t *db, cm_buf_t *why);
void cm_db_run(cm_db_t *db, const cm_db_stmt_t *stmts, size_t n, cm_db_done_cb cb, void *ud);
/* Jobs already submitted finish; later ones fail with CM_EUNAVAIL; then the
 * connection closes and done(ud) runs. */
void cm_db_close(cm_db_t *db, cm_db_closed_cb done, void *ud);

/*
 * Transactions that span callbacks, for a read-decide-write cycle:
 *
 *   cm_db_begin(db, reads, n, on_read, ud);
 *   on_read(status, res, txn, ud): decide from res, then
 *       cm_db_txn_commit(txn, writes, m, on_written, ud)   or
 *       cm_db_txn_rollback(txn, on_done, ud)
 *
 * cm_db_begin opens a transaction, runs stmts in it (n may be 0) and hands
 * the open transaction to cb. The transaction is strict: SQLite takes the
 * write lock at once (BEGIN IMMEDIATE, so nobody changes anything until it
 * ends); PostgreSQL runs it at REPEATABLE READ, so when a concurrent
 * transaction changed a row it read (SELECT ... FOR UPDATE) or inserted a
 * key it inserts, the statement fails with CM_ECONFLICT: retry the whole
 * cycle. While it is open, no other job of the handle starts: end it
 * promptly, exactly once, with commit or rollback (both free txn; their
 * callback runs as cm_db_run's does). When status != 0, the transaction is
 * already rolled back and txn is NULL. A transaction whose connection broke
 * fails its commit with CM_EUNAVAIL (nothing was committed).
 */
typedef struct cm_db_txn cm_db_txn_t;
typedef void (*cm_db_txn_cb)(int status, const cm_db_res_t *res, cm_db_txn_t *txn, void *ud);

void cm_db_begin(cm_db_t *db, const cm_db_stmt_t *stmts, size_t n, cm_db_txn_cb cb, void *ud);
void cm_db_txn_commit(cm_db_txn_t *txn, const cm_db_stmt_t *stmts, size_t n, cm_db_done_cb cb,
                      void *ud);
void cm_db_txn_rollback(cm_db_txn_t *txn, cm_db_done_cb cb, void *ud);

/*
 * Read cache: a job of one statement with cache_ms > 0 is answered from
 * memory when the same SQL with the same parameters was read through this
 * handle less than cache_ms ago (a failure is never kept). A job that may
 * write (anything but a SELECT, a transaction) empties the cache when it is
 * submitted, and a read that started before it is not kept, so a process
 * always reads its own writes; another process's writes show within
 * cache_ms. For the hot reads of a request path (a key's lookup, an
 * endpoint's definition) that would otherwise cost a thread-pool hop or a
 * round trip each. The callback still runs later, on the loop.
 *
 * until_changed on SQLite: the answer is kept with the file's data version
 * (PRAGMA data_version of a second, read-only connection the loop thread
 * uses for nothing else) taken when the read was submitted, and serves
 * while that version is the same: no connection of any process committed
 * anything since, so the store would answer the same. The check is one
 * read transaction's locks on the loop and no wait: the connection has no
 * busy timeout, and a store that is busy counts as changed. Another
 * process's writes show at once.
 */

/* Results: one table per statement of the job, in order. */
size_t cm_db_ntables(const cm_db_res_t *res);
size_t cm_db_nrows(const cm_db_res_t *res, size_t table);
size_t cm_db_ncols(const cm_db_res_t *res, size_t table);
const char *cm_db_colname(const cm_db_res_t *res, size_t table, size_t col);
/* NULL for SQL NULL (and outside the table). */
const char *cm_db_value(const cm_db_res_t *res, size_t table, size_t row, size_t col);
/* Rows an INSERT, UPDATE or DELETE touched. */
long long cm_db_changes(const cm_db_res_t *res, size_t table);
/* The failure in words; "" on success. */
const char *cm_db_error(const cm_db_res_t *res);

/*
 * Schema migrations: each version applied once, in order, in its own
 * transaction, recorded in schema_migrations. The text is per dialect (the
 * two differ in types and identity columns). Two processes starting at once
 * are safe: the loser's failed migration is checked against the table again.
 */
typedef struct {
    int version; /* 1, 2, 3...: strictly increasing */
    const char *sqlite;
    const char *postgres;
} cm_db_migration_t;

/* status 0 when every version is in place; res names the failure. The
 * array must live until done runs. */
void cm_db_migrate(cm_db_t *db, const cm_db_migration_t *m, size_t n, cm_db_done_cb done, void *ud);

#endif
