/*
 * db_sqlite.c - the SQLite backend of cm_db (see db.h).
 *
 * One connection per handle, opened by the first job. db.c runs one job at a
 * time, and each runs whole on libuv's thread pool (uv_queue_work), or on the
 * caller's pool of dedicated threads (opts.worker, cm/worker.h): the loop
 * thread never touches the connection, and no two threads use it at once, so
 * SQLite's own mutexes are off (SQLITE_OPEN_NOMUTEX). WAL lets other
 * processes read while this one writes; the busy timeout makes a writer wait
 * for another process's lock instead of failing.
 *
 * Prepared statements are kept (STMT_CACHE of them, by SQL text): a service
 * runs the same few dozen statements over and over, and compiling one costs
 * about as much as running it.
 *
 * The gate: a second, read-only connection, opened by the job that opens the
 * first and used after that by the loop thread alone, for one statement:
 * PRAGMA data_version, the read cache's "until changed" check (db.h). It has
 * no busy timeout, so it never waits on the loop.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <sys/stat.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/hashfn.h"
#include "db_internal.h"

#define STMT_CACHE 64 /* prepared statements kept per connection */

typedef struct {
    char *sql; /* NULL: free slot */
    uint64_t hash;
    sqlite3_stmt *st;
} cached_stmt_t;

typedef struct {
    struct cm_db base; /* first: a cm_db_t * is a sqlite_db_t * */
    char *path;
    int busy_timeout_ms;
    char *on_open_sql; /* NULL: none */
    int (*on_connect)(cm_db_conn_t *conn, void *ud);
    void *on_connect_ud;
    bool read_only;
    cm_worker_t *worker; /* NULL: libuv's thread pool */
    cm_worker_job_t wjob;
    void (*wjob_work)(uv_work_t *w);
    void (*wjob_after)(uv_work_t *w, int status);
    uint64_t deadline; /* uv_hrtime() past which the running statement stops; 0: none */
    sqlite3 *conn;     /* touched only inside work callbacks */
    sqlite3 *gate;     /* set by the opening job; then the loop's alone (state 1) */
    sqlite3_stmt *gate_version;
    bool open_failed; /* written inside work callbacks */
    int state;        /* on the loop: 0 not opened yet, 1 open, -1 the last open failed */
    uv_work_t work;
    cm__db_job_t *job;
    cached_stmt_t cache[STMT_CACHE]; /* touched only inside work callbacks */
    size_t cache_next;               /* the slot replaced next when all are taken */
} sqlite_db_t;

static void cache_clear(sqlite_db_t *sq)
{
    for (size_t i = 0; i < STMT_CACHE; i++) {
        sqlite3_finalize(sq->cache[i].st);
        free(sq->cache[i].sql);
        sq->cache[i] = (cached_stmt_t){0};
    }
}

/* The kept statement for sql (one statement, nothing after it), reset and
 * unbound; else prepares and keeps it. NULL with sq->conn's error set. */
static sqlite3_stmt *cached_prepare(sqlite_db_t *sq, const char *sql)
{
    uint64_t h = cm_fnv1a_64(cm_slice_from_cstr(sql));
    for (size_t i = 0; i < STMT_CACHE; i++) {
        cached_stmt_t *c = &sq->cache[i];
        if (c->sql && c->hash == h && strcmp(c->sql, sql) == 0) {
            sqlite3_reset(c->st);
            sqlite3_clear_bindings(c->st);
            return c->st;
        }
    }
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v3(sq->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, &tail) != SQLITE_OK)
        return NULL;
    if (st == NULL || (tail && tail[strspn(tail, " \t\r\n;")] != '\0')) {
        sqlite3_finalize(st); /* several statements: run_stmt's slow path */
        return NULL;
    }
    cached_stmt_t *c = &sq->cache[sq->cache_next];
    sq->cache_next = (sq->cache_next + 1) % STMT_CACHE;
    sqlite3_finalize(c->st);
    free(c->sql);
    *c = (cached_stmt_t){cm_xstrdup(sql), h, st};
    return st;
}

static int status_of(int rc)
{
    switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_FOREIGNKEY: return CM_ECONFLICT;
    }
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_NOMEM: return CM_EUNAVAIL;
    }
    return CM_EINVAL;
}

static int fail(sqlite_db_t *sq, cm__db_job_t *job, const char *what)
{
    int rc = sqlite3_extended_errcode(sq->conn);
    cm__db_job_fail(job, status_of(rc), "%s: %s: %s", sq->base.name, what,
                    sqlite3_errmsg(sq->conn));
    return -1;
}

static int exec(sqlite_db_t *sq, cm__db_job_t *job, const char *sql)
{
    return sqlite3_exec(sq->conn, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(sq, job, sql);
}

/* Two connections turning a new file to WAL at once (the api and the
 * writer starting together on a fresh SQLite file) can each hold a shared
 * lock and want the exclusive one: SQLite answers one of them SQLITE_BUSY
 * at once, without the busy handler, to break the deadlock. Tried again
 * for up to the busy timeout (a worker thread: sleeping blocks no loop). */
static int set_wal(sqlite_db_t *sq, cm__db_job_t *job)
{
    static const char sql[] = "PRAGMA journal_mode=WAL";
    for (int waited = 0;; waited += 10) {
        int rc = sqlite3_exec(sq->conn, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY || waited >= sq->busy_timeout_ms)
            return fail(sq, job, sql);
        sqlite3_sleep(10);
    }
}

/* var/meta.db on a fresh checkout: make the file's directory (one level). */
static void make_dir_of(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return;
    *slash = '\0';
    if (mkdir(dir, 0750) != 0 && errno != EEXIST)
        return; /* the open below says why */
}

/* Every PROGRESS_STEPS virtual machine steps: past the statement's
 * deadline, SQLite interrupts it (a few microseconds apart at most). */
#define PROGRESS_STEPS 10000
static int on_progress(void *ud)
{
    sqlite_db_t *sq = ud;
    return sq->deadline != 0 && uv_hrtime() > sq->deadline;
}

static int run_on_connect(sqlite_db_t *sq, cm__db_job_t *job)
{
    if (sq->on_connect((cm_db_conn_t *)sq->conn, sq->on_connect_ud) == 0)
        return 0;
    cm__db_job_fail(job, CM_EUNAVAIL, "%s: the connection hook failed: %s", sq->base.name,
                    sqlite3_errmsg(sq->conn));
    return -1;
}

/* A read-only handle neither makes the file nor sets its journal mode (the
 * writer's handle did both: WAL is a property of the file). */
static int open_conn(sqlite_db_t *sq, cm__db_job_t *job)
{
    int flags = SQLITE_OPEN_NOMUTEX;
    if (sq->read_only) {
        flags |= SQLITE_OPEN_READONLY;
    } else {
        make_dir_of(sq->path);
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    }
    int rc = sqlite3_open_v2(sq->path, &sq->conn, flags, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_extended_result_codes(sq->conn, 1);
        sqlite3_busy_timeout(sq->conn, sq->busy_timeout_ms);
    }
    if (rc != SQLITE_OK || (!sq->read_only && set_wal(sq, job) != 0) ||
        (!sq->read_only && exec(sq, job, "PRAGMA synchronous=NORMAL") != 0) ||
        exec(sq, job, "PRAGMA foreign_keys=ON") != 0 ||
        (sq->on_open_sql != NULL && exec(sq, job, sq->on_open_sql) != 0) ||
        (sq->on_connect != NULL && run_on_connect(sq, job) != 0)) {
        if (rc != SQLITE_OK)
            cm__db_job_fail(job, CM_EUNAVAIL, "%s: cannot open %s: %s", sq->base.name, sq->path,
                            sq->conn ? sqlite3_errmsg(sq->conn) : sqlite3_errstr(rc));
        sqlite3_close_v2(sq->conn);
        sq->conn = NULL;
        sq->open_failed = true;
        return -1;
    }
    sqlite3_progress_handler(sq->conn, PROGRESS_STEPS, on_progress, sq);
    sq->open_failed = false;
    return 0;
}

/* After the first connection opened (the file exists, in WAL mode when
 * writable). A gate that fails to open leaves the cache to cache_ms. */
static void open_gate(sqlite_db_t *sq)
{
    if (sqlite3_open_v2(sq->path, &sq->gate, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v3(sq->gate, "PRAGMA data_version", -1, SQLITE_PREPARE_PERSISTENT,
                           &sq->gate_version, NULL) != SQLITE_OK) {
        sqlite3_close_v2(sq->gate);
        sq->gate = NULL;
    }
}

static int sqlite_data_version(cm_db_t *db, uint64_t *out)
{
    sqlite_db_t *sq = (sqlite_db_t *)db;
    if (sq->state != 1 || sq->gate_version == NULL)
        return -1;
    int rc = sqlite3_step(sq->gate_version);
    if (rc == SQLITE_ROW)
        *out = (uint64_t)sqlite3_column_int64(sq->gate_version, 0);
    sqlite3_reset(sq->gate_version); /* ends the read: holds no snapshot */
    return rc == SQLITE_ROW ? 0 : -1;
}

/* "42", "-7", "0": bound as integers so LIMIT $1 and integer keys compare as
 * PostgreSQL would; anything else (leading zeros, "+1", 19+ digits) as text. */
static bool canonical_int(const char *s)
{
    const char *d = s + (*s == '-');
    size_t n = strlen(d);
    if (n == 0 || n > 18 || (d[0] == '0' && n > 1) || (d[0] == '0' && *s == '-'))
        return false;
    return strspn(d, "0123456789") == n;
}

static void bind_params(sqlite3_stmt *st, const cm_db_stmt_t *s)
{
    for (int i = 0; i < s->nparams; i++) {
        char name[16];
        snprintf(name, sizeof(name), "$%d", i + 1);
        int ix = sqlite3_bind_parameter_index(st, name);
        const char *v = s->params[i];
        char type = s->types != NULL ? s->types[i] : 0;
        if (ix == 0)
            continue; /* not used by this statement */
        if (v == NULL)
            sqlite3_bind_null(st, ix);
        else if (type == 'i')
            sqlite3_bind_int64(st, ix, strtoll(v, NULL, 10));
        else if (type == 'f')
            sqlite3_bind_double(st, ix, strtod(v, NULL));
        else if (type == 't')
            sqlite3_bind_text(st, ix, v, -1, SQLITE_STATIC);
        else if (canonical_int(v))
            sqlite3_bind_int64(st, ix, strtoll(v, NULL, 10));
        else
            sqlite3_bind_text(st, ix, v, -1, SQLITE_STATIC);
    }
}

/* A REAL as the shortest text that reads back as the same double, with
 * ".0" on whole numbers as SQLite's own text has (its 15 digits would turn
 * 0.1 + 0.2 into 0.3, which PostgreSQL and ClickHouse do not). */
static size_t real_text(double v, char *out, size_t cap)
{
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            break;
    }
    if (isfinite(v) && strpbrk(out, ".eEn") == NULL && (size_t)n + 2 < cap) {
        memcpy(out + n, ".0", 3);
        n += 2;
    }
    return (size_t)n;
}

/* The answer's bound (cm_db_stmt_t.max_bytes): what a value costs. */
#define CELL_OVERHEAD 8

static int step_rows(sqlite_db_t *sq, cm__db_job_t *job, sqlite3_stmt *st, size_t max_bytes)
{
    int ncols = sqlite3_column_count(st);
    cm__db_table_t *t = cm__db_table_add(&job->res, (size_t)ncols);
    for (int c = 0; c < ncols; c++) {
        const char *name = sqlite3_column_name(st, c);
        cm__db_table_cell(t, name, strlen(name));
    }
    int rc;
    size_t bytes = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < ncols && rc == SQLITE_ROW; c++) {
            char d[32];
            const char *v = NULL;
            size_t n = 0;
            if (sqlite3_column_type(st, c) == SQLITE_FLOAT) {
                n = real_text(sqlite3_column_double(st, c), d, sizeof(d));
                v = d;
            } else if (sqlite3_column_type(st, c) != SQLITE_NULL) {
                v = (const char *)sqlite3_column_text(st, c);
                n = (size_t)sqlite3_column_bytes(st, c);
            }
            bytes += n + CELL_OVERHEAD;
            if (max_bytes != 0 && bytes > max_bytes)
                rc = SQLITE_TOOBIG; /* checked before it is kept */
            else
                cm__db_table_cell(t, v, n);
        }
        if (rc != SQLITE_ROW)
            break;
    }
    if (rc == SQLITE_TOOBIG && max_bytes != 0) {
        cm__db_job_fail(job, CM_ETOOBIG, "%s: the answer is larger than %zu bytes", sq->base.name,
                        max_bytes);
        return -1;
    }
    if (rc == SQLITE_INTERRUPT && sq->deadline != 0) {
        cm__db_job_fail(job, CM_ETIMEDOUT, "%s: the query ran out of time", sq->base.name);
        return -1;
    }
    if (rc != SQLITE_DONE)
        return fail(sq, job, "step");
    t->changes = sqlite3_changes(sq->conn);
    return 0;
}

/* One statement of the job; text without parameters may hold several, of
 * which the last one's result is kept. */
static int run_stmt_timed(sqlite_db_t *sq, cm__db_job_t *job, const cm_db_stmt_t *s);

static int run_stmt(sqlite_db_t *sq, cm__db_job_t *job, const cm_db_stmt_t *s)
{
    sq->deadline = s->timeout_ms ? uv_hrtime() + (uint64_t)s->timeout_ms * 1000000u : 0;
    /* A bounded answer bounds every value made on the way too (a string
     * grown by nested replace() fails once past it, not at SQLite's 1 GB) */
    int length = sqlite3_limit(sq->conn, SQLITE_LIMIT_LENGTH, -1);
    if (s->max_bytes != 0 && s->max_bytes < (size_t)length)
        sqlite3_limit(sq->conn, SQLITE_LIMIT_LENGTH, (int)s->max_bytes);
    int rc = run_stmt_timed(sq, job, s);
    sqlite3_limit(sq->conn, SQLITE_LIMIT_LENGTH, length);
    sq->deadline = 0;
    return rc;
}

static int run_stmt_timed(sqlite_db_t *sq, cm__db_job_t *job, const cm_db_stmt_t *s)
{
    const char *sql = s->sql;
    size_t tables_before = job->res.ntables;
    sqlite3_stmt *kept =
        s->nparams > 0 || strchr(sql, ';') == NULL ? cached_prepare(sq, sql) : NULL;
    if (kept) {
        bind_params(kept, s);
        int rc = step_rows(sq, job, kept, s->max_bytes);
        sqlite3_reset(kept); /* ends its read, releases what it holds */
        return rc;
    }
    while (*sql) {
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        if (sqlite3_prepare_v2(sq->conn, sql, -1, &st, &tail) != SQLITE_OK)
            return fail(sq, job, "prepare");
        sql = tail;
        if (st == NULL)
            continue;                              /* whitespace or a comment */
        while (job->res.ntables > tables_before) { /* an earlier part's result */
            cm__db_table_t *t = &job->res.tables[--job->res.ntables];
            free(t->cells);
            cm_buf_free(&t->text);
        }
        bind_params(st, s);
        int rc = step_rows(sq, job, st, s->max_bytes);
        sqlite3_finalize(st);
        if (rc != 0)
            return rc;
    }
    if (job->res.ntables == tables_before) /* nothing but comments */
        cm__db_table_add(&job->res, 0);
    return 0;
}

static void on_work(uv_work_t *w)
{
    sqlite_db_t *sq = w->data;
    cm__db_job_t *job = sq->job;
    bool tx = cm__db_job_in_tx(job);
    if (sq->conn == NULL) {
        if (open_conn(sq, job) != 0)
            return;
        if (sq->gate == NULL)
            open_gate(sq);
    }
    if (job->tx == CM__TX_ROLLBACK) {
        exec(sq, job, "ROLLBACK");
        return;
    }
    if (cm__db_job_opens(job) && exec(sq, job, "BEGIN IMMEDIATE") != 0)
        return;
    for (size_t i = 0; i < job->nstmts; i++)
        if (run_stmt(sq, job, &job->stmts[i]) != 0) {
            if (tx)
                sqlite3_exec(sq->conn, "ROLLBACK", NULL, NULL, NULL);
            return;
        }
    if (cm__db_job_commits(job) && exec(sq, job, "COMMIT") != 0)
        sqlite3_exec(sq->conn, "ROLLBACK", NULL, NULL, NULL);
}

static void on_work_done(uv_work_t *w, int status)
{
    sqlite_db_t *sq = w->data;
    cm__db_job_t *job = sq->job;
    (void)status; /* uv_cancel is never called on this work */
    sq->job = NULL;
    sq->state = sq->open_failed ? -1 : sq->conn ? 1 : sq->state;
    cm__db_job_done(job);
}

/* The handle's pool, or libuv's: the same two callbacks either way. */
static void on_wjob_work(cm_worker_job_t *j)
{
    sqlite_db_t *sq = j->data;
    sq->wjob_work(&sq->work);
}

static void on_wjob_done(cm_worker_job_t *j)
{
    sqlite_db_t *sq = j->data;
    sq->wjob_after(&sq->work, 0);
}

static void queue_work(sqlite_db_t *sq, void (*work)(uv_work_t *), void (*after)(uv_work_t *, int))
{
    sq->work.data = sq;
    if (sq->worker == NULL) {
        uv_queue_work(sq->base.loop, &sq->work, work, after);
        return;
    }
    sq->wjob_work = work;
    sq->wjob_after = after;
    sq->wjob = (cm_worker_job_t){.work = on_wjob_work, .done = on_wjob_done, .data = sq};
    cm_worker_submit(sq->worker, &sq->wjob);
}

static void sqlite_start(cm_db_t *db, cm__db_job_t *job)
{
    sqlite_db_t *sq = (sqlite_db_t *)db;
    sq->job = job;
    queue_work(sq, on_work, on_work_done);
}

static bool sqlite_ready(cm_db_t *db, cm_buf_t *why)
{
    sqlite_db_t *sq = (sqlite_db_t *)db;
    if (sq->state == 0)
        cm_buf_appendf(why, "%s: not opened yet", db->name);
    else if (sq->state < 0)
        cm_buf_appendf(why, "%s: cannot open %s", db->name, sq->path);
    return sq->state > 0;
}

static void on_close_work(uv_work_t *w)
{
    sqlite_db_t *sq = w->data;
    cache_clear(sq);
    sqlite3_close_v2(sq->conn); /* a NULL connection is a no-op */
    sq->conn = NULL;
    sqlite3_finalize(sq->gate_version);
    sqlite3_close_v2(sq->gate);
    sq->gate_version = NULL;
    sq->gate = NULL;
}

static void on_close_done(uv_work_t *w, int status)
{
    (void)status;
    cm__db_shutdown_done(w->data);
}

static void sqlite_shutdown(cm_db_t *db)
{
    queue_work((sqlite_db_t *)db, on_close_work, on_close_done);
}

static void sqlite_free(cm_db_t *db)
{
    sqlite_db_t *sq = (sqlite_db_t *)db;
    free(sq->path);
    free(sq->on_open_sql);
    free(sq);
}

static const cm__db_ops_t sqlite_ops = {
    .name = "sqlite",
    .dialect = CM_DB_SQLITE,
    .start = sqlite_start,
    .ready = sqlite_ready,
    .shutdown = sqlite_shutdown,
    .free = sqlite_free,
    .data_version = sqlite_data_version,
};

int cm_db_open_sqlite(uv_loop_t *loop, const cm_db_opts_t *opts, const char *path, cm_db_t **out)
{
    sqlite_db_t *sq = cm_xcalloc(1, sizeof(*sq));
    cm__db_init(&sq->base, loop, &sqlite_ops, opts->name);
    sq->path = cm_xstrdup(path);
    sq->busy_timeout_ms = opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000;
    sq->on_open_sql = opts->on_open_sql ? cm_xstrdup(opts->on_open_sql) : NULL;
    sq->on_connect = opts->on_connect;
    sq->on_connect_ud = opts->on_connect_ud;
    sq->read_only = opts->read_only;
    sq->worker = opts->worker;
    *out = &sq->base;
    return CM_OK;
}
