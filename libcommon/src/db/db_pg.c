/*
 * db_pg.c - the PostgreSQL backend of cm_db (see db.h), on libpq's
 * non-blocking API driven by the loop.
 *
 * One connection. States: DOWN (a retry timer runs, jobs fail at once with
 * CM_EUNAVAIL so requests answer 503 instead of waiting), CONNECTING
 * (PQconnectPoll on socket readiness; the next job waits for the attempt's
 * outcome), UP. A job with several statements is
 * sent as BEGIN, the statements one by one, COMMIT; the first error sends
 * ROLLBACK instead. A broken connection fails the running job with
 * CM_EUNAVAIL and goes back to DOWN; the retry waits 100 ms, doubling to 5 s.
 *
 * Prepared statements: a statement with parameters is prepared on the
 * connection the first time its SQL text is run there (PQsendPrepare, named
 * "cm_<n>") and executed by name from then on, so the server parses and
 * plans it once per connection instead of on every request. The names live
 * with the connection: a reconnect starts an empty set. The server re-plans
 * a prepared statement itself when a table it reads changes; the one change
 * it refuses ("cached plan must not change result type", after a migration
 * altered the columns of a SELECT *) forgets the name, and a job outside a
 * transaction runs the statement again, prepared afresh. Statements without
 * parameters go as simple queries (they may be scripts of several).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/strset.h"
#include "db_internal.h"

enum { PG_DOWN, PG_CONNECTING, PG_UP };
enum { PH_WAIT, PH_BEGIN, PH_PREPARE, PH_STMT, PH_COMMIT, PH_ROLLBACK };

/* Past this many distinct statements on one connection the rest run
 * unprepared: SQL built per request must not grow the server's memory. */
#define PG_MAX_PREPARED 2048

typedef struct {
    struct cm_db base; /* first */
    char *conninfo;
    PGconn *conn;
    int state;
    uv_poll_t *poll; /* on PQsocket(conn); remade when the socket changes */
    int fd;
    uv_timer_t retry;
    uint64_t backoff_ms;
    cm_buf_t last_error;
    cm__db_job_t *job; /* running */
    int phase;
    size_t step, tables_before;
    int pending;  /* first error of the running job, 0 if none */
    uint64_t gen; /* connections made: an open transaction lives on one */
    int closing_handles;
    cm_strset_t *prepared; /* SQL text -> its number + 1, on this connection */
    size_t nprepared;
    bool replanned; /* the running job already ran a statement again */
    bool again;     /* the statement in flight is to run again once it ends */
} pg_db_t;

static void on_poll(uv_poll_t *p, int status, int events);
static void pg_connect(pg_db_t *pg);
static void begin(pg_db_t *pg);
static void flush_sent(pg_db_t *pg, int ok);

static void poll_closed(uv_handle_t *h)
{
    pg_db_t *pg = h->data;
    free(h);
    if (pg && --pg->closing_handles == 0)
        cm__db_shutdown_done(&pg->base);
}

static void unwatch(pg_db_t *pg, bool counted)
{
    if (pg->poll == NULL)
        return;
    pg->poll->data = counted ? pg : NULL;
    if (counted)
        pg->closing_handles++;
    uv_close((uv_handle_t *)pg->poll, poll_closed);
    pg->poll = NULL;
}

static void watch(pg_db_t *pg, int events)
{
    int fd = PQsocket(pg->conn);
    if (pg->poll && fd != pg->fd)
        unwatch(pg, false);
    if (pg->poll == NULL) {
        pg->poll = cm_xcalloc(1, sizeof(*pg->poll));
        uv_poll_init(pg->base.loop, pg->poll, fd);
        pg->poll->data = pg;
        pg->fd = fd;
    }
    uv_poll_start(pg->poll, events, on_poll);
}

static void forget_prepared(pg_db_t *pg)
{
    cm_strset_free(pg->prepared);
    pg->prepared = cm_strset_new(64);
    pg->nprepared = 0;
}

static void on_retry(uv_timer_t *t)
{
    pg_connect(t->data);
}

/* The connection is gone (or never came): fail the running job, retry later. */
static void lost(pg_db_t *pg, const char *why)
{
    cm_buf_reset(&pg->last_error);
    cm_buf_append_cstr(&pg->last_error, why && *why ? why : "connection lost");
    while (pg->last_error.len && pg->last_error.p[pg->last_error.len - 1] == '\n')
        pg->last_error.len--;
    cm_buf_cstr(&pg->last_error);
    bool was_up = pg->state == PG_UP;
    if (was_up)
        cm_log(CM_LOG_WARN, NULL, "%s: connection lost: %s", pg->base.name, pg->last_error.p);
    unwatch(pg, false);
    PQfinish(pg->conn);
    pg->conn = NULL;
    pg->state = PG_DOWN;
    uv_timer_start(&pg->retry, on_retry, pg->backoff_ms, 0);
    pg->backoff_ms = pg->backoff_ms * 2 > 5000 ? 5000 : pg->backoff_ms * 2;
    cm__db_job_t *job = pg->job;
    if (job) {
        pg->job = NULL;
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: %s: %s", pg->base.name,
                        was_up ? "connection lost" : "cannot connect", pg->last_error.p);
        cm__db_job_done(job);
    }
}

static void pg_connect(pg_db_t *pg)
{
    pg->conn = PQconnectStart(pg->conninfo);
    if (pg->conn == NULL || PQstatus(pg->conn) == CONNECTION_BAD) {
        lost(pg, pg->conn ? PQerrorMessage(pg->conn) : "out of memory");
        return;
    }
    pg->state = PG_CONNECTING;
    watch(pg, UV_WRITABLE);
}

/* NOTICE and WARNING from the server ("relation already exists, skipping"):
 * debug lines in our log, not raw text on stderr. */
static void on_notice(void *ud, const char *message)
{
    pg_db_t *pg = ud;
    size_t n = strcspn(message, "\n");
    cm_log(CM_LOG_DEBUG, NULL, "%s: %.*s", pg->base.name, (int)n, message);
}

static void connecting(pg_db_t *pg)
{
    switch (PQconnectPoll(pg->conn)) {
    case PGRES_POLLING_READING: watch(pg, UV_READABLE); return;
    case PGRES_POLLING_WRITING: watch(pg, UV_WRITABLE); return;
    case PGRES_POLLING_OK:
        PQsetnonblocking(pg->conn, 1);
        PQsetNoticeProcessor(pg->conn, on_notice, pg);
        pg->state = PG_UP;
        pg->gen++;
        forget_prepared(pg); /* the server's names went with the last connection */
        pg->backoff_ms = 100;
        cm_log(CM_LOG_INFO, NULL, "%s: connected", pg->base.name);
        watch(pg, UV_READABLE);
        if (pg->job && pg->phase == PH_WAIT)
            begin(pg);
        else
            cm__db_kick(&pg->base);
        return;
    default: lost(pg, PQerrorMessage(pg->conn));
    }
}

/* ---- running a job ------------------------------------------------------------ */

static int status_of(const PGresult *r)
{
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (state == NULL)
        return CM_EUNAVAIL;
    if (!strcmp(state, "23505") || !strcmp(state, "23503"))
        return CM_ECONFLICT;
    if (!strcmp(state, "40001") || !strcmp(state, "40P01")) /* serialization, deadlock */
        return CM_ECONFLICT;
    if (!strncmp(state, "08", 2) || !strncmp(state, "57", 2) || !strncmp(state, "53", 2))
        return CM_EUNAVAIL;
    return CM_EINVAL;
}

static void finish(pg_db_t *pg)
{
    cm__db_job_t *job = pg->job;
    pg->job = NULL;
    if (pg->pending && job->status == 0)
        job->status = pg->pending;
    cm__db_job_done(job);
}

static void send_sql(pg_db_t *pg, const char *sql, const cm_db_stmt_t *s)
{
    int ok = s && s->nparams > 0
                 ? PQsendQueryParams(pg->conn, sql, s->nparams, NULL, s->params, NULL, NULL, 0)
                 : PQsendQuery(pg->conn, sql);
    flush_sent(pg, ok);
}

/* After a PQsend*: push the bytes out, then wait for the answer. */
static void flush_sent(pg_db_t *pg, int ok)
{
    if (!ok) {
        lost(pg, PQerrorMessage(pg->conn));
        return;
    }
    int rc = PQflush(pg->conn);
    if (rc < 0)
        lost(pg, PQerrorMessage(pg->conn));
    else
        watch(pg, rc == 1 ? UV_READABLE | UV_WRITABLE : UV_READABLE);
}

static void stmt_name(char *out, size_t cap, uintptr_t n)
{
    snprintf(out, cap, "cm_%lu", (unsigned long)n);
}

/* The running statement by its prepared name: PH_STMT. */
static void send_prepared(pg_db_t *pg, uintptr_t n)
{
    const cm_db_stmt_t *s = &pg->job->stmts[pg->step];
    char name[32];
    stmt_name(name, sizeof(name), n);
    pg->phase = PH_STMT;
    flush_sent(pg, PQsendQueryPrepared(pg->conn, name, s->nparams, s->params, NULL, NULL, 0));
}

static void send_step(pg_db_t *pg)
{
    const cm_db_stmt_t *s = &pg->job->stmts[pg->step];
    pg->tables_before = pg->job->res.ntables;
    if (s->nparams == 0) {
        send_sql(pg, s->sql, s);
        return;
    }
    cm_slice_t key = {s->sql, strlen(s->sql)};
    uintptr_t known = (uintptr_t)cm_strset_get(pg->prepared, key);
    if (known) {
        send_prepared(pg, known - 1);
        return;
    }
    if (pg->nprepared >= PG_MAX_PREPARED) {
        send_sql(pg, s->sql, s);
        return;
    }
    char name[32];
    stmt_name(name, sizeof(name), pg->nprepared);
    pg->phase = PH_PREPARE;
    flush_sent(pg, PQsendPrepare(pg->conn, name, s->sql, s->nparams, NULL));
}

/* The server refused a prepared statement whose result columns changed
 * under it (SQLSTATE 0A000 after a migration): its name is not used again. */
static bool plan_changed(const PGresult *r)
{
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    return state && !strcmp(state, "0A000") && msg && strstr(msg, "cached plan") != NULL;
}

/* From pg->step on: the next statement, else the job's ending. */
static void next_stmt(pg_db_t *pg)
{
    cm__db_job_t *job = pg->job;
    pg->phase = PH_STMT;
    if (pg->step < job->nstmts)
        send_step(pg);
    else if (cm__db_job_commits(job)) {
        pg->phase = PH_COMMIT;
        send_sql(pg, "COMMIT", NULL);
    } else if (job->tx == CM__TX_ROLLBACK) {
        pg->phase = PH_ROLLBACK;
        send_sql(pg, "ROLLBACK", NULL);
    } else
        finish(pg); /* CM__TX_OPEN leaves its transaction open */
}

/* The command in flight has returned all its results: on to the next one. */
static void advance(pg_db_t *pg)
{
    cm__db_job_t *job = pg->job;
    if (pg->again && !pg->pending) {
        pg->again = false;
        pg->replanned = true;
        send_step(pg);
        return;
    }
    if (pg->pending && pg->phase != PH_COMMIT && pg->phase != PH_ROLLBACK &&
        cm__db_job_in_tx(job)) {
        pg->phase = PH_ROLLBACK;
        send_sql(pg, "ROLLBACK", NULL);
        return;
    }
    if (pg->pending || pg->phase == PH_COMMIT || pg->phase == PH_ROLLBACK) {
        finish(pg);
        return;
    }
    if (pg->phase == PH_PREPARE) { /* prepared: now run it by name */
        const char *sql = job->stmts[pg->step].sql;
        uintptr_t n = pg->nprepared++;
        cm_strset_put(pg->prepared, (cm_slice_t){sql, strlen(sql)}, (void *)(n + 1));
        send_prepared(pg, n);
        return;
    }
    if (pg->phase == PH_STMT)
        pg->step++;
    next_stmt(pg);
}

static void keep_result(pg_db_t *pg, PGresult *r)
{
    cm__db_job_t *job = pg->job;
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE || st == PGRES_NONFATAL_ERROR) {
        if (pg->phase == PH_STMT && plan_changed(r)) {
            const char *sql = job->stmts[pg->step].sql;
            cm_strset_put(pg->prepared, (cm_slice_t){sql, strlen(sql)}, NULL);
            if (pg->pending == 0 && !cm__db_job_in_tx(job) && !pg->replanned) {
                pg->again = true; /* nothing else ran: safe to run it again */
                return;
            }
        }
        if (pg->pending == 0) {
            pg->pending = status_of(r);
            cm__db_job_fail(job, pg->pending, "%s: %s", pg->base.name, PQresultErrorMessage(r));
            while (job->res.error.len && job->res.error.p[job->res.error.len - 1] == '\n')
                job->res.error.p[--job->res.error.len] = '\0';
        }
        return;
    }
    if (pg->phase != PH_STMT || pg->pending)
        return;                                    /* BEGIN, COMMIT, ROLLBACK: nothing to keep */
    while (job->res.ntables > pg->tables_before) { /* an earlier part of a script */
        cm__db_table_t *t = &job->res.tables[--job->res.ntables];
        free(t->cells);
        cm_buf_free(&t->text);
    }
    int ncols = PQnfields(r), nrows = PQntuples(r);
    cm__db_table_t *t = cm__db_table_add(&job->res, (size_t)ncols);
    for (int c = 0; c < ncols; c++)
        cm__db_table_cell(t, PQfname(r, c), strlen(PQfname(r, c)));
    for (int row = 0; row < nrows; row++)
        for (int c = 0; c < ncols; c++)
            cm__db_table_cell(t, PQgetisnull(r, row, c) ? NULL : PQgetvalue(r, row, c),
                              (size_t)PQgetlength(r, row, c));
    t->changes = atoll(PQcmdTuples(r));
}

static void readable(pg_db_t *pg)
{
    if (!PQconsumeInput(pg->conn)) {
        lost(pg, PQerrorMessage(pg->conn));
        return;
    }
    while (pg->job && !PQisBusy(pg->conn)) {
        PGresult *r = PQgetResult(pg->conn);
        if (r == NULL) {
            advance(pg);
            return;
        }
        keep_result(pg, r);
        PQclear(r);
    }
    if (pg->job == NULL) /* idle: drain what the server says on its own */
        for (PGnotify *n; (n = PQnotifies(pg->conn)) != NULL;)
            PQfreemem(n);
    if (PQstatus(pg->conn) == CONNECTION_BAD)
        lost(pg, PQerrorMessage(pg->conn));
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    pg_db_t *pg = p->data;
    if (pg == NULL || pg->conn == NULL)
        return;
    if (pg->state == PG_CONNECTING) {
        connecting(pg);
        return;
    }
    if (status < 0) {
        lost(pg, uv_strerror(status));
        return;
    }
    if (events & UV_WRITABLE) {
        int rc = PQflush(pg->conn);
        if (rc < 0) {
            lost(pg, PQerrorMessage(pg->conn));
            return;
        }
        if (rc == 0)
            watch(pg, UV_READABLE);
    }
    if (events & UV_READABLE)
        readable(pg);
}

static void begin(pg_db_t *pg)
{
    cm__db_job_t *job = pg->job;
    pg->pending = 0;
    pg->step = 0;
    pg->replanned = false;
    pg->again = false;
    if (job->tx == CM__TX_OPEN)
        job->gen = pg->gen;
    if ((job->tx == CM__TX_COMMIT || job->tx == CM__TX_ROLLBACK) && job->gen != pg->gen) {
        pg->job = NULL; /* the transaction went with its connection */
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: the connection of the transaction was lost",
                        pg->base.name);
        cm__db_job_done(job);
        return;
    }
    if (cm__db_job_opens(job)) {
        pg->phase = PH_BEGIN;
        send_sql(pg, job->tx == CM__TX_OPEN ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN",
                 NULL);
    } else
        next_stmt(pg);
}

static void pg_start(cm_db_t *db, cm__db_job_t *job)
{
    pg_db_t *pg = (pg_db_t *)db;
    if (pg->state == PG_CONNECTING) { /* held until the attempt ends either way */
        pg->job = job;
        pg->phase = PH_WAIT;
        return;
    }
    if (pg->state != PG_UP) {
        cm__db_job_fail(job, CM_EUNAVAIL, "%s: not connected: %s", db->name,
                        pg->last_error.len ? pg->last_error.p : "connecting");
        cm__db_job_done(job);
        return;
    }
    pg->job = job;
    begin(pg);
}

static bool pg_ready(cm_db_t *db, cm_buf_t *why)
{
    pg_db_t *pg = (pg_db_t *)db;
    if (pg->state != PG_UP)
        cm_buf_appendf(why, "%s: not connected: %s", db->name,
                       pg->last_error.len ? pg->last_error.p : "connecting");
    return pg->state == PG_UP;
}

static void retry_closed(uv_handle_t *h)
{
    pg_db_t *pg = h->data;
    if (--pg->closing_handles == 0)
        cm__db_shutdown_done(&pg->base);
}

static void pg_shutdown(cm_db_t *db)
{
    pg_db_t *pg = (pg_db_t *)db;
    pg->closing_handles = 1;
    unwatch(pg, true);
    PQfinish(pg->conn);
    pg->conn = NULL;
    pg->state = PG_DOWN;
    uv_close((uv_handle_t *)&pg->retry, retry_closed);
}

static void pg_free(cm_db_t *db)
{
    pg_db_t *pg = (pg_db_t *)db;
    cm_buf_free(&pg->last_error);
    cm_strset_free(pg->prepared);
    free(pg->conninfo);
    free(pg);
}

static const cm__db_ops_t pg_ops = {
    .name = "postgres",
    .dialect = CM_DB_POSTGRES,
    .start = pg_start,
    .ready = pg_ready,
    .shutdown = pg_shutdown,
    .free = pg_free,
};

int cm_db_open_pg(uv_loop_t *loop, const cm_db_opts_t *opts, cm_db_t **out)
{
    pg_db_t *pg = cm_xcalloc(1, sizeof(*pg));
    cm__db_init(&pg->base, loop, &pg_ops, opts->name);
    pg->conninfo = cm_xstrdup(opts->url);
    pg->backoff_ms = 100;
    cm_buf_init(&pg->last_error);
    uv_timer_init(loop, &pg->retry);
    pg->retry.data = pg;
    pg_connect(pg);
    *out = &pg->base;
    return CM_OK;
}
