/*
 * test_db.c - cm_db on both backends: SQLite in a temp file, and a real
 * PostgreSQL 15 that the group setup starts (tests/support/postgres) and the
 * teardown stops by PID. Every test runs once per backend; each owns a fresh
 * loop and ends with uv_loop_close() == 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm/common.h"
#include "cm/db.h"
#include "cm/err.h"
#include "cm/log.h"

static char pg_dir[256];
static char pg_url[256];
static char sqlite_dir[256];
static char sqlite_url[300];

static int start_postgres(void **state)
{
    (void)state;
    snprintf(pg_dir, sizeof(pg_dir), "/tmp/cm-test-db-pg.%d", (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "tests/support/postgres start %s", pg_dir);
    FILE *f = popen(cmd, "r");
    char line[512] = "";
    if (f == NULL || fgets(line, sizeof(line), f) == NULL || pclose(f) != 0) {
        fprintf(stderr, "cannot start PostgreSQL: %s\n", line);
        return -1;
    }
    const char *u = strstr(line, "\"url\":\"");
    if (u == NULL)
        return -1;
    u += 7;
    size_t n = strcspn(u, "\"");
    snprintf(pg_url, sizeof(pg_url), "%.*s", (int)n, u);
    snprintf(sqlite_dir, sizeof(sqlite_dir), "/tmp/cm-test-db-sqlite.XXXXXX");
    if (mkdtemp(sqlite_dir) == NULL)
        return -1;
    return 0;
}

static int stop_postgres(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "tests/support/postgres stop %s; rm -rf %s", pg_dir, sqlite_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- a test's loop and handle ------------------------------------------------- */

typedef struct {
    const char *backend; /* "sqlite" or "postgres" */
    uv_loop_t loop;
    cm_db_t *db;
    cm_db_t *extra; /* a second handle a test opened; closed by the teardown */
    char url[300];  /* the handle's URL */
} fixture_t;

/* Runs the loop while cond holds, never blocking once it stops: a callback
 * that came from a timer (a cached answer, a refusal) runs before
 * UV_RUN_ONCE polls, and the poll would then wait for I/O that never comes
 * while a PostgreSQL socket keeps the loop alive. */
#define WAIT_WHILE(loop, cond)                                                                     \
    do {                                                                                           \
        while (cond) {                                                                             \
            uv_run((loop), UV_RUN_NOWAIT);                                                         \
            if (cond)                                                                              \
                uv_run((loop), UV_RUN_ONCE);                                                       \
        }                                                                                          \
    } while (0)

static void on_created(int status, const cm_db_res_t *res, void *ud)
{
    if (status != 0)
        fprintf(stderr, "CREATE DATABASE: %s\n", cm_db_error(res));
    *(int *)ud = status == 0 ? 1 : -1;
}

static void on_closed(void *ud);

/* Each PostgreSQL test gets a database of its own, made through cm_db itself. */
static void fresh_pg_database(uv_loop_t *loop, int seq, char *url, size_t size)
{
    cm_db_t *admin;
    char sql[64];
    int created = 0;
    bool closed = false;
    snprintf(sql, sizeof(sql), "CREATE DATABASE t%d", seq);
    assert_int_equal(cm_db_open(loop, &(cm_db_opts_t){.url = pg_url}, &admin), 0);
    cm_db_stmt_t s = {sql, NULL, 0};
    cm_db_run(admin, &s, 1, on_created, &created);
    WAIT_WHILE(loop, created == 0);
    assert_int_equal(created, 1);
    cm_db_close(admin, on_closed, &closed);
    WAIT_WHILE(loop, !closed);
    const char *slash = strrchr(pg_url, '/');
    snprintf(url, size, "%.*s/t%d", (int)(slash - pg_url), pg_url, seq);
}

static int fx_setup(void **state)
{
    static int seq;
    static char url_buf[300];
    fixture_t *fx = calloc(1, sizeof(*fx));
    fx->backend = *state;
    uv_loop_init(&fx->loop);
    const char *url = url_buf;
    if (strcmp(fx->backend, "sqlite") == 0) {
        snprintf(sqlite_url, sizeof(sqlite_url), "sqlite:%s/t%d.db", sqlite_dir, ++seq);
        url = sqlite_url;
    } else {
        fresh_pg_database(&fx->loop, ++seq, url_buf, sizeof(url_buf));
    }
    snprintf(fx->url, sizeof(fx->url), "%s", url);
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = url, .name = "t"}, &fx->db), 0);
    *state = fx;
    return 0;
}

static void on_closed(void *ud)
{
    *(bool *)ud = true;
}

static int fx_teardown(void **state)
{
    fixture_t *fx = *state;
    bool closed = false, extra_closed = false;
    if (fx->extra)
        cm_db_close(fx->extra, on_closed, &extra_closed);
    if (fx->db)
        cm_db_close(fx->db, on_closed, &closed);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    assert_true(closed || fx->db == NULL);
    assert_true(extra_closed || fx->extra == NULL);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    free(fx);
    return 0;
}

/* What a job's callback saw, copied out of the result. */
typedef struct {
    bool done;
    int status;
    size_t ntables, nrows, ncols;
    long long changes;
    char first[256]; /* table `pick`, row 0, column 0; "<null>" for NULL */
    char error[512];
    size_t pick; /* which table to copy from: the last one when SIZE_MAX */
    bool in_run; /* set while cm_db_run is on the stack */
    bool called_in_run;
} outcome_t;

static void on_done(int status, const cm_db_res_t *res, void *ud)
{
    outcome_t *o = ud;
    o->called_in_run = o->in_run;
    o->done = true;
    o->status = status;
    o->ntables = cm_db_ntables(res);
    size_t t = o->pick == SIZE_MAX && o->ntables ? o->ntables - 1 : o->pick;
    o->nrows = cm_db_nrows(res, t);
    o->ncols = cm_db_ncols(res, t);
    o->changes = cm_db_changes(res, t);
    const char *v = cm_db_value(res, t, 0, 0);
    snprintf(o->first, sizeof(o->first), "%s", v ? v : "<null>");
    snprintf(o->error, sizeof(o->error), "%s", cm_db_error(res));
}

static outcome_t run(fixture_t *fx, const cm_db_stmt_t *stmts, size_t n)
{
    outcome_t o = {.pick = SIZE_MAX};
    o.in_run = true;
    cm_db_run(fx->db, stmts, n, on_done, &o);
    o.in_run = false;
    WAIT_WHILE(&fx->loop, !o.done);
    return o;
}

static outcome_t run1(fixture_t *fx, const char *sql, const char *const *params, int n)
{
    cm_db_stmt_t s = {sql, params, n};
    return run(fx, &s, 1);
}

static const cm_db_migration_t migrations[] = {
    {1,
     "CREATE TABLE things (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
     " size INTEGER, note TEXT)",
     "CREATE TABLE things (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
     " size BIGINT, note TEXT)"},
    {2, "ALTER TABLE things ADD COLUMN tag TEXT; CREATE INDEX things_tag ON things (tag)",
     "ALTER TABLE things ADD COLUMN tag TEXT; CREATE INDEX things_tag ON things (tag)"},
};

static void migrate(fixture_t *fx, size_t n)
{
    outcome_t o = {.pick = SIZE_MAX};
    cm_db_migrate(fx->db, migrations, n, on_done, &o);
    WAIT_WHILE(&fx->loop, !o.done);
    assert_int_equal(o.status, 0);
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_migrate_once_in_order(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 1);
    outcome_t o = run1(fx, "SELECT MAX(version) FROM schema_migrations", NULL, 0);
    assert_string_equal(o.first, "1");
    migrate(fx, 2); /* only version 2 is new; version 1 again would fail (table exists) */
    o = run1(fx, "SELECT COUNT(*) FROM schema_migrations", NULL, 0);
    assert_string_equal(o.first, "2");
    migrate(fx, 2);
    o = run1(fx, "SELECT COUNT(*) FROM schema_migrations", NULL, 0);
    assert_string_equal(o.first, "2");
    const char *p[] = {"a", "x"};
    o = run1(fx, "INSERT INTO things (name, tag) VALUES ($1, $2)", p, 2);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.changes, 1);
}

/* Two processes starting at once on a fresh database (writers of one
 * group): both runs succeed and each migration is applied once. On
 * PostgreSQL the concurrent CREATE TABLE IF NOT EXISTS of schema_migrations
 * failed one of them before the runs took an advisory lock. */
static void test_migrate_concurrently(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(
        cm_db_open(&fx->loop, &(cm_db_opts_t){.url = fx->url, .name = "other"}, &fx->extra), 0);
    outcome_t a = {.pick = SIZE_MAX}, b = {.pick = SIZE_MAX};
    cm_db_migrate(fx->db, migrations, 2, on_done, &a);
    cm_db_migrate(fx->extra, migrations, 2, on_done, &b);
    WAIT_WHILE(&fx->loop, !a.done || !b.done);
    if (a.status != 0 || b.status != 0)
        fail_msg("migrations at once: %d (%s), %d (%s)", a.status, a.error, b.status, b.error);
    outcome_t o = run1(fx, "SELECT COUNT(*) FROM schema_migrations", NULL, 0);
    assert_string_equal(o.first, "2");
}

/* Several handles' first jobs at once on fresh SQLite files: each turns
 * the file to WAL, and two doing so together can deadlock on the lock
 * upgrade, which SQLite breaks by answering SQLITE_BUSY at once (no busy
 * handler): the open tries again within the busy timeout. Without that,
 * about one file in twenty failed a handle here. */
static void test_sqlite_fresh_file_many_openers(void **state)
{
    fixture_t *fx = *state;
    enum { ROUNDS = 40, HANDLES = 4 };
    for (int r = 0; r < ROUNDS; r++) {
        char url[600];
        snprintf(url, sizeof(url), "%s-fresh%d.db", fx->url, r);
        cm_db_t *h[HANDLES];
        outcome_t o[HANDLES];
        for (int i = 0; i < HANDLES; i++) {
            assert_int_equal(
                cm_db_open(&fx->loop, &(cm_db_opts_t){.url = url, .name = "many"}, &h[i]), 0);
            o[i] = (outcome_t){.pick = SIZE_MAX};
        }
        cm_db_stmt_t s = {"SELECT 1", NULL, 0};
        for (int i = 0; i < HANDLES; i++)
            cm_db_run(h[i], &s, 1, on_done, &o[i]);
        WAIT_WHILE(&fx->loop, !o[0].done || !o[1].done || !o[2].done || !o[3].done);
        for (int i = 0; i < HANDLES; i++)
            if (o[i].status != 0)
                fail_msg("round %d, handle %d: %s", r, i, o[i].error);
        bool closed[HANDLES] = {false};
        for (int i = 0; i < HANDLES; i++)
            cm_db_close(h[i], on_closed, &closed[i]);
        WAIT_WHILE(&fx->loop, !closed[0] || !closed[1] || !closed[2] || !closed[3]);
    }
}

static void test_params_in_text_out(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    const char *evil = "'; DROP TABLE things; -- \"$1\" \\ \xc3\xa9";
    const char *p1[] = {evil, "42", NULL};
    outcome_t o =
        run1(fx, "INSERT INTO things (name, size, note) VALUES ($1, $2, $3) RETURNING id", p1, 3);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "1");
    const char *p2[] = {"1"};
    o = run1(fx, "SELECT name FROM things WHERE id = $1", p2, 1);
    assert_string_equal(o.first, evil);
    o = run1(fx, "SELECT note FROM things WHERE id = $1", p2, 1);
    assert_string_equal(o.first, "<null>");
    o = run1(fx, "SELECT size + 1 FROM things WHERE size = $1", (const char *[]){"42"}, 1);
    assert_string_equal(o.first, "43");
    /* the same parameter twice, out of order, and in LIMIT */
    const char *p3[] = {"0", "1"};
    o = run1(fx, "SELECT name FROM things WHERE id >= $2 AND id > $1 LIMIT $2", p3, 2);
    assert_int_equal(o.nrows, 1);
    assert_int_equal(o.ncols, 1);
    /* leading zeros stay text */
    o = run1(fx, "SELECT CAST($1 AS TEXT)", (const char *[]){"007"}, 1);
    assert_string_equal(o.first, "007");
}

static void test_transaction_rolls_back_on_conflict(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    assert_int_equal(run1(fx, "INSERT INTO things (name) VALUES ('taken')", NULL, 0).status, 0);
    cm_db_stmt_t tx[] = {
        {"INSERT INTO things (name) VALUES ('fresh')", NULL, 0},
        {"UPDATE things SET size = 7 WHERE name = 'taken'", NULL, 0},
        {"INSERT INTO things (name) VALUES ('taken')", NULL, 0},
    };
    outcome_t o = run(fx, tx, 3);
    assert_int_equal(o.status, CM_ECONFLICT);
    assert_int_equal(o.ntables, 0);
    assert_true(o.error[0] != '\0');
    o = run1(fx, "SELECT COUNT(*) FROM things WHERE name = 'fresh' OR size = 7", NULL, 0);
    assert_string_equal(o.first, "0");
    /* and a good transaction gives one table per statement */
    cm_db_stmt_t ok[] = {
        {"INSERT INTO things (name) VALUES ('fresh')", NULL, 0},
        {"SELECT name FROM things ORDER BY name", NULL, 0},
    };
    o = run(fx, ok, 2);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.ntables, 2);
    assert_int_equal(o.nrows, 2);
    assert_string_equal(o.first, "fresh");
}

/* What a cm_db_begin callback saw. */
typedef struct {
    bool done;
    int status;
    char first[256];
    cm_db_txn_t *txn;
} opened_t;

static void on_opened(int status, const cm_db_res_t *res, cm_db_txn_t *txn, void *ud)
{
    opened_t *o = ud;
    o->done = true;
    o->status = status;
    o->txn = txn;
    const char *v = cm_db_value(res, 0, 0, 0);
    snprintf(o->first, sizeof(o->first), "%s", v ? v : "<null>");
}

static opened_t begin(fixture_t *fx, cm_db_t *db, const char *sql)
{
    opened_t o = {0};
    cm_db_stmt_t s = {sql, NULL, 0};
    cm_db_begin(db, &s, 1, on_opened, &o);
    WAIT_WHILE(&fx->loop, !o.done);
    return o;
}

/* A transaction stays open across callbacks: a job submitted meanwhile
 * waits for it, then sees what it committed; a rollback leaves nothing. */
static void test_txn_holds_until_commit(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    assert_int_equal(run1(fx, "INSERT INTO things (name, size) VALUES ('a', 1)", NULL, 0).status,
                     0);
    opened_t t = begin(fx, fx->db, "SELECT size FROM things WHERE name = 'a'");
    assert_int_equal(t.status, 0);
    assert_non_null(t.txn);
    assert_string_equal(t.first, "1");
    outcome_t later = {.pick = SIZE_MAX};
    cm_db_stmt_t read = {"SELECT size FROM things WHERE name = 'a'", NULL, 0};
    cm_db_run(fx->db, &read, 1, on_done, &later);
    for (int i = 0; i < 20; i++)
        uv_run(&fx->loop, UV_RUN_NOWAIT);
    assert_false(later.done); /* held back by the open transaction */
    outcome_t committed = {.pick = SIZE_MAX};
    const char *p[] = {"2"};
    cm_db_stmt_t w = {"UPDATE things SET size = size + $1 WHERE name = 'a'", p, 1};
    cm_db_txn_commit(t.txn, &w, 1, on_done, &committed);
    WAIT_WHILE(&fx->loop, !later.done);
    assert_true(committed.done); /* the commit ran first */
    assert_int_equal(committed.status, 0);
    assert_int_equal(committed.changes, 1);
    assert_string_equal(later.first, "3");

    t = begin(fx, fx->db, "UPDATE things SET size = 100 WHERE name = 'a'");
    assert_int_equal(t.status, 0);
    outcome_t rolled = {.pick = SIZE_MAX};
    cm_db_txn_rollback(t.txn, on_done, &rolled);
    WAIT_WHILE(&fx->loop, !rolled.done);
    assert_int_equal(rolled.status, 0);
    assert_string_equal(run1(fx, "SELECT size FROM things WHERE name = 'a'", NULL, 0).first, "3");

    /* a failed begin rolls back and hands no transaction */
    t = begin(fx, fx->db, "SELECT nope FROM things");
    assert_int_equal(t.status, CM_EINVAL);
    assert_null(t.txn);
    assert_int_equal(run1(fx, "SELECT COUNT(*) FROM things", NULL, 0).status, 0);
}

/* PostgreSQL: a row another transaction changed after this one read it
 * makes the write fail with CM_ECONFLICT, and nothing of it is kept. */
static void test_txn_conflict_pg(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    assert_int_equal(run1(fx, "INSERT INTO things (name, size) VALUES ('a', 1)", NULL, 0).status,
                     0);
    opened_t t = begin(fx, fx->db, "SELECT size FROM things WHERE name = 'a' FOR UPDATE");
    assert_int_equal(t.status, 0);
    outcome_t done = {.pick = SIZE_MAX};
    cm_db_txn_rollback(t.txn, on_done, &done);
    WAIT_WHILE(&fx->loop, !done.done);

    /* the snapshot is taken by the first read; another connection then
     * changes the row; this transaction's update of it must fail */
    t = begin(fx, fx->db, "SELECT size FROM things WHERE name = 'a'");
    assert_int_equal(t.status, 0);
    assert_int_equal(
        cm_db_open(&fx->loop, &(cm_db_opts_t){.url = fx->url, .name = "other"}, &fx->extra), 0);
    outcome_t other = {.pick = SIZE_MAX};
    cm_db_stmt_t bump = {"UPDATE things SET size = 50 WHERE name = 'a'", NULL, 0};
    cm_db_run(fx->extra, &bump, 1, on_done, &other);
    WAIT_WHILE(&fx->loop, !other.done);
    assert_int_equal(other.status, 0);
    outcome_t mine = {.pick = SIZE_MAX};
    cm_db_stmt_t w[] = {{"INSERT INTO things (name) VALUES ('b')", NULL, 0},
                        {"UPDATE things SET size = size + 1 WHERE name = 'a'", NULL, 0}};
    cm_db_txn_commit(t.txn, w, 2, on_done, &mine);
    WAIT_WHILE(&fx->loop, !mine.done);
    assert_int_equal(mine.status, CM_ECONFLICT);
    assert_string_equal(run1(fx, "SELECT size FROM things WHERE name = 'a'", NULL, 0).first, "50");
    assert_string_equal(run1(fx, "SELECT COUNT(*) FROM things WHERE name = 'b'", NULL, 0).first,
                        "0");
}

/* SQLite: types say how a parameter binds; a REAL reads back exactly; a
 * statement past its time limit stops with CM_ETIMEDOUT. */
static void test_sqlite_types_reals_timeout(void **state)
{
    fixture_t *fx = *state;
    cm_db_stmt_t s = {"SELECT typeof($1), typeof($2), typeof($3), $3 > 5", NULL, 3, "tif", 0};
    s.params = (const char *const[]){"42", "42", "1.5"};
    outcome_t o = run(fx, &s, 1);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "text"); /* "42" as text, not the canonical-integer rule */
    s.sql = "SELECT typeof($2) || ',' || typeof($3) || ',' || ($3 > 1)";
    o = run(fx, &s, 1);
    assert_string_equal(o.first, "integer,real,1");
    /* 0.1 + 0.2 is not 0.3: SQLite's own 15 digits would say it is */
    o = run1(fx, "SELECT 0.1 + 0.2, 2.0, 1e300 * 1e300", NULL, 0);
    assert_string_equal(o.first, "0.30000000000000004");
    /* a recursive count that runs for seconds, stopped after 50 ms */
    cm_db_stmt_t slow = {"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n"
                         " WHERE x < 100000000) SELECT count(*) FROM n",
                         NULL, 0, NULL, 50};
    uint64_t t0 = uv_hrtime();
    o = run(fx, &slow, 1);
    assert_int_equal(o.status, CM_ETIMEDOUT);
    assert_true(uv_hrtime() - t0 < 2000000000ull);
    /* the connection goes on, without a limit for the next statement */
    o = run1(fx, "SELECT 7", NULL, 0);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "7");
}

/* SQLite: an answer bounded by max_bytes stops past it with CM_ETOOBIG,
 * counting the rows as they come and every value made on the way; the
 * next statement has no bound. */
static void test_sqlite_max_bytes(void **state)
{
    fixture_t *fx = *state;
    /* 1,000 rows of 100 bytes: 108,000 with the 8 a value counts */
    cm_db_stmt_t rows = {"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n"
                         " WHERE x < 1000) SELECT printf('%100d', x) FROM n",
                         NULL, 0};
    rows.max_bytes = 100000;
    outcome_t o = run(fx, &rows, 1);
    assert_int_equal(o.status, CM_ETOOBIG);
    rows.max_bytes = 110000;
    o = run(fx, &rows, 1);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.nrows, 1000);
    /* one value of 100,000 bytes, grown by nested replace(), in one row */
    cm_db_stmt_t grown = {"SELECT length(replace(replace(replace(replace('xxxxxxxxxx', 'x',"
                          " 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x',"
                          " 'xxxxxxxxxx'))",
                          NULL, 0};
    grown.max_bytes = 50000; /* the answer itself is 6 bytes: the value on the way is past it */
    o = run(fx, &grown, 1);
    assert_int_equal(o.status, CM_ETOOBIG);
    grown.max_bytes = 0;
    o = run(fx, &grown, 1);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "100000");
}

static void test_sql_error_is_einval(void **state)
{
    fixture_t *fx = *state;
    outcome_t o = run1(fx, "SELECT * FROM no_such_table", NULL, 0);
    assert_int_equal(o.status, CM_EINVAL);
    assert_non_null(strstr(o.error, "no_such_table"));
    o = run1(fx, "SELEC 1", NULL, 0);
    assert_int_equal(o.status, CM_EINVAL);
    /* the handle goes on working after a failure */
    o = run1(fx, "SELECT 1", NULL, 0);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "1");
}

static void test_script_keeps_last_result(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    outcome_t o = run1(fx,
                       "INSERT INTO things (name) VALUES ('a'); INSERT INTO things (name) "
                       "VALUES ('b');\n SELECT COUNT(*) AS n FROM things; -- done\n",
                       NULL, 0);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.ntables, 1);
    assert_string_equal(o.first, "2");
}

/* Jobs complete in submission order, never inside cm_db_run. */
#define NJOBS 200
static int order_seen[NJOBS], order_n;
static void on_ordered(int status, const cm_db_res_t *res, void *ud)
{
    assert_int_equal(status, 0);
    assert_string_equal(cm_db_value(res, 0, 0, 0), ud);
    order_seen[order_n++] = atoi(ud);
}

static void test_jobs_complete_in_order(void **state)
{
    fixture_t *fx = *state;
    static char names[NJOBS][16];
    order_n = 0;
    for (int i = 0; i < NJOBS; i++) {
        snprintf(names[i], sizeof(names[i]), "%d", i);
        const char *p[] = {names[i]};
        cm_db_stmt_t s = {"SELECT CAST($1 AS TEXT)", p, 1};
        cm_db_run(fx->db, &s, 1, on_ordered, names[i]);
        assert_int_equal(order_n, 0);
    }
    WAIT_WHILE(&fx->loop, order_n < NJOBS);
    for (int i = 0; i < NJOBS; i++)
        assert_int_equal(order_seen[i], i);
    outcome_t o = run1(fx, "SELECT 1", NULL, 0);
    assert_false(o.called_in_run);
}

static void test_ready_after_first_job(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(run1(fx, "SELECT 1", NULL, 0).status, 0);
    cm_buf_t why = CM_BUF_INIT;
    assert_true(cm_db_ready(fx->db, &why));
    assert_int_equal(why.len, 0);
    cm_buf_free(&why);
    assert_int_equal(cm_db_dialect(fx->db),
                     strcmp(fx->backend, "sqlite") == 0 ? CM_DB_SQLITE : CM_DB_POSTGRES);
}

/* cm_db_close: what was submitted finishes; what comes after is refused. */
static void test_close_finishes_then_refuses(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 1);
    outcome_t before = {.pick = SIZE_MAX}, after = {.pick = SIZE_MAX};
    bool closed = false;
    cm_db_stmt_t s = {"INSERT INTO things (name) VALUES ('last')", NULL, 0};
    cm_db_run(fx->db, &s, 1, on_done, &before);
    cm_db_close(fx->db, on_closed, &closed);
    cm_db_run(fx->db, &s, 1, on_done, &after);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    assert_true(closed);
    assert_int_equal(before.status, 0);
    assert_int_equal(after.status, CM_EUNAVAIL);
    fx->db = NULL;
}

/* A statement with cache_ms: answered from memory while fresh; this
 * handle's own writes (and transactions) empty the cache at once, another
 * handle's show after cache_ms; failures are never kept; an answer read
 * before a write but arriving after it is not kept. */
static outcome_t run_extra(fixture_t *fx, const char *sql);

static outcome_t cached(fixture_t *fx, const char *sql, const char *name, unsigned ms)
{
    const char *p[] = {name};
    cm_db_stmt_t s = {sql, p, 1, .cache_ms = ms};
    return run(fx, &s, 1);
}

static void test_read_cache(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    const char *q = "SELECT size FROM things WHERE name = $1";
    assert_int_equal(run1(fx, "INSERT INTO things (name, size) VALUES ('a', 1)", NULL, 0).status,
                     0);
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = fx->url}, &fx->extra), 0);
    outcome_t o = cached(fx, q, "a", 60000);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "1");
    assert_false(o.called_in_run);

    /* another handle's write: not seen while the answer is fresh */
    assert_int_equal(run_extra(fx, "UPDATE things SET size = 2").status, 0);
    o = cached(fx, q, "a", 60000);
    assert_string_equal(o.first, "1");
    assert_false(o.called_in_run); /* a hit still answers later, on the loop */
    assert_int_equal(cached(fx, q, "b", 60000).nrows, 0); /* other parameters: other answer */
    assert_string_equal(run1(fx, q, (const char *[]){"a"}, 1).first, "2"); /* uncached */

    /* the uncached read above was no write: the entry stands */
    assert_string_equal(cached(fx, q, "a", 60000).first, "1");
    /* this handle's own write empties the cache */
    assert_int_equal(run1(fx, "UPDATE things SET note = 'x'", NULL, 0).status, 0);
    assert_string_equal(cached(fx, q, "a", 60000).first, "2");

    /* a short life: the other handle's write shows once it passed */
    const char *q2 = "SELECT size FROM things WHERE name = $1 AND 1 = 1";
    assert_string_equal(cached(fx, q2, "a", 50).first, "2");
    assert_int_equal(run_extra(fx, "UPDATE things SET size = 3").status, 0);
    assert_string_equal(cached(fx, q2, "a", 50).first, "2");
    uv_sleep(80);
    uv_update_time(&fx->loop);
    assert_string_equal(cached(fx, q2, "a", 50).first, "3");

    /* a failure is not kept */
    const char *q3 = "SELECT size FROM later WHERE 1 = $1";
    assert_int_equal(cached(fx, q3, "1", 60000).status, CM_EINVAL);
    assert_int_equal(run_extra(fx, "CREATE TABLE later (size INTEGER)").status, 0);
    assert_int_equal(cached(fx, q3, "1", 60000).status, 0);

    /* a read submitted before a write, answered after it: not kept */
    const char *q4 = "SELECT size FROM things WHERE name = $1 AND 2 = 2";
    const char *pa[] = {"a"};
    cm_db_stmt_t r = {q4, pa, 1, .cache_ms = 60000};
    cm_db_stmt_t w = {"UPDATE things SET size = 4", NULL, 0};
    outcome_t before = {.pick = SIZE_MAX}, written = {.pick = SIZE_MAX};
    cm_db_run(fx->db, &r, 1, on_done, &before);
    cm_db_run(fx->db, &w, 1, on_done, &written);
    WAIT_WHILE(&fx->loop, !before.done || !written.done);
    assert_string_equal(before.first, "3");
    assert_int_equal(written.status, 0);
    assert_string_equal(cached(fx, q4, "a", 60000).first, "4");

    /* a transaction empties it too */
    assert_string_equal(cached(fx, q4, "a", 60000).first, "4");
    assert_int_equal(run_extra(fx, "UPDATE things SET size = 5").status, 0);
    cm_db_stmt_t tx[] = {{"UPDATE things SET note = 'y'", NULL, 0}, {"SELECT 1", NULL, 0}};
    assert_int_equal(run(fx, tx, 2).status, 0);
    assert_string_equal(cached(fx, q4, "a", 60000).first, "5");
}

/* until_changed: on SQLite the answer serves for as long as nothing was
 * committed to the file (by any handle), whatever cache_ms says, and another
 * handle's write shows at once; on PostgreSQL cache_ms alone decides. The
 * answer carries random(): the same value twice means it came from memory. */
static outcome_t until_changed(fixture_t *fx, const char *name, unsigned ms)
{
    const char *p[] = {name};
    cm_db_stmt_t s = {"SELECT random(), size FROM things WHERE name = $1", p, 1, .cache_ms = ms,
                      .until_changed = true};
    return run(fx, &s, 1);
}

static void test_read_cache_until_changed(void **state)
{
    fixture_t *fx = *state;
    bool sqlite = strcmp(fx->backend, "sqlite") == 0;
    migrate(fx, 2);
    assert_int_equal(run1(fx, "INSERT INTO things (name, size) VALUES ('a', 1)", NULL, 0).status,
                     0);
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = fx->url}, &fx->extra), 0);

    /* no cache_ms: kept on SQLite only */
    char first[256];
    outcome_t o = until_changed(fx, "a", 0);
    assert_int_equal(o.status, 0);
    snprintf(first, sizeof(first), "%s", o.first);
    o = until_changed(fx, "a", 0);
    assert_int_equal(o.status, 0);
    assert_int_equal(strcmp(o.first, first) == 0, sqlite);
    assert_false(o.called_in_run);

    /* kept past a short cache_ms on SQLite while the file is unchanged */
    o = until_changed(fx, "a", 50);
    snprintf(first, sizeof(first), "%s", o.first);
    uv_sleep(80);
    uv_update_time(&fx->loop);
    assert_int_equal(strcmp(until_changed(fx, "a", 50).first, first) == 0, sqlite);

    /* another handle's write: SQLite reads again at once; PostgreSQL keeps
     * its answer for cache_ms */
    o = until_changed(fx, "a", 60000);
    snprintf(first, sizeof(first), "%s", o.first);
    assert_int_equal(run_extra(fx, "UPDATE things SET size = 2").status, 0);
    o = until_changed(fx, "a", 60000);
    assert_int_equal(strcmp(o.first, first) == 0, !sqlite);

    /* a change that does not touch the row still counts (SQLite cannot tell
     * which rows changed): read again, same size */
    o = until_changed(fx, "a", 0);
    snprintf(first, sizeof(first), "%s", o.first);
    assert_int_equal(run_extra(fx, "INSERT INTO things (name, size) VALUES ('z', 9)").status, 0);
    assert_string_not_equal(until_changed(fx, "a", 0).first, first);
}

/* The same read submitted again while the first waits in the queue is
 * answered by the first's run (random() tells: the same value); not across
 * a write submitted between them, nor with other parameters or limits. */
static void test_identical_reads_join(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2);
    assert_int_equal(run1(fx, "INSERT INTO things (name, size) VALUES ('a', 1)", NULL, 0).status,
                     0);
    const char *pa[] = {"a"}, *pb[] = {"b"};
    const char *q = "SELECT random(), size FROM things WHERE name = $1";
    cm_db_stmt_t r = {q, pa, 1}, rb = {q, pb, 1}, rmax = {q, pa, 1, .max_bytes = 4096};
    cm_db_stmt_t w = {"UPDATE things SET size = 2", NULL, 0};
    outcome_t o[6];
    for (size_t i = 0; i < 6; i++)
        o[i] = (outcome_t){.pick = SIZE_MAX};
    cm_db_run(fx->db, &r, 1, on_done, &o[0]);
    cm_db_run(fx->db, &r, 1, on_done, &o[1]); /* joins o[0] */
    cm_db_run(fx->db, &rb, 1, on_done, &o[2]);
    cm_db_run(fx->db, &rmax, 1, on_done, &o[3]);
    cm_db_run(fx->db, &w, 1, on_done, &o[4]);
    cm_db_run(fx->db, &r, 1, on_done, &o[5]); /* after the write: its own run */
    WAIT_WHILE(&fx->loop, !o[5].done);
    for (size_t i = 0; i < 6; i++) {
        assert_true(o[i].done);
        assert_int_equal(o[i].status, 0);
    }
    assert_string_equal(o[0].first, o[1].first);
    assert_int_equal(o[2].nrows, 0);
    assert_string_not_equal(o[3].first, o[0].first);
    assert_string_not_equal(o[5].first, o[0].first);
    /* what each saw */
    cm_db_stmt_t size = {"SELECT size FROM things WHERE name = $1", pa, 1};
    assert_string_equal(run(fx, &size, 1).first, "2");
}

/* ---- backend-specific ---------------------------------------------------------- */

/* Runs one statement on the fixture's second handle. */
static outcome_t run_extra(fixture_t *fx, const char *sql)
{
    cm_db_t *keep = fx->db;
    fx->db = fx->extra;
    outcome_t o = run1(fx, sql, NULL, 0);
    fx->db = keep;
    return o;
}

/* The connection hook (cm_db_opts_t.on_connect): an aggregate it adds
 * sees each row's doubles and NULLs and answers per group (a value, or
 * NULL); a handle without the hook lacks it; a hook that fails fails the
 * open with its reason. */
typedef struct {
    double sum;
    int n;
} tsum_t;
static void tsum_step(void *state, int argc, const double *args, const bool *nulls)
{
    tsum_t *t = state;
    if (argc == 1 && !nulls[0]) {
        t->sum += args[0];
        t->n++;
    }
}
static int tsum_final(void *state, double *out)
{
    tsum_t *t = state;
    *out = t->sum;
    return t->n ? 0 : 1;
}
static const cm_db_aggregate_t tsum = {.name = "t_sum",
                                       .nargs = 1,
                                       .state_size = sizeof(tsum_t),
                                       .step = tsum_step,
                                       .final = tsum_final};
static int add_tsum(cm_db_conn_t *conn, void *ud)
{
    ++*(int *)ud;
    return cm_db_conn_add_aggregate(conn, &tsum);
}
static int refuse(cm_db_conn_t *conn, void *ud)
{
    (void)conn;
    (void)ud;
    return -1;
}

static void test_sqlite_connection_hook(void **state)
{
    fixture_t *fx = *state;
    int calls = 0;
    cm_db_opts_t o = {.url = fx->url, .on_connect = add_tsum, .on_connect_ud = &calls};
    assert_int_equal(cm_db_open(&fx->loop, &o, &fx->extra), 0);
    outcome_t r = run_extra(fx, "SELECT t_sum(x) FROM (SELECT column1 AS x FROM"
                                " (VALUES (NULL), (2.5), (4)))");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.first, "6.5");
    assert_int_equal(calls, 1);
    r = run_extra(fx, "SELECT t_sum(x) FROM (SELECT 1 AS x) WHERE x > 1");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.first, "<null>");
    assert_int_equal(calls, 1); /* once per connection, not per statement */
    r = run1(fx, "SELECT t_sum(1)", NULL, 0);
    assert_int_equal(r.status, CM_EINVAL);
    bool closed = false;
    cm_db_close(fx->extra, on_closed, &closed);
    while (!closed)
        uv_run(&fx->loop, UV_RUN_ONCE);
    fx->extra = NULL;
    o = (cm_db_opts_t){.url = fx->url, .on_connect = refuse};
    assert_int_equal(cm_db_open(&fx->loop, &o, &fx->extra), 0);
    r = run_extra(fx, "SELECT 1");
    assert_int_equal(r.status, CM_EUNAVAIL);
    assert_non_null(strstr(r.error, "connection hook"));
}

static void test_sqlite_cannot_open(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(
        cm_db_open(&fx->loop, &(cm_db_opts_t){.url = "sqlite:/nonexistent/dir/x.db"}, &fx->extra),
        0);
    outcome_t o = run_extra(fx, "SELECT 1");
    assert_int_equal(o.status, CM_EUNAVAIL);
    assert_non_null(strstr(o.error, "cannot open"));
    cm_buf_t why = CM_BUF_INIT;
    assert_false(cm_db_ready(fx->extra, &why));
    assert_non_null(strstr(cm_buf_cstr(&why), "cannot open"));
    cm_buf_free(&why);
}

static void test_pg_unreachable_fails_fast(void **state)
{
    fixture_t *fx = *state;
    /* port 1 on loopback: refused at once */
    const char *url = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2";
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = url}, &fx->extra), 0);
    outcome_t o = run_extra(fx, "SELECT 1"); /* waits for the first attempt, which fails */
    assert_int_equal(o.status, CM_EUNAVAIL);
    assert_non_null(strstr(o.error, "cannot connect"));
    o = run_extra(fx, "SELECT 1"); /* while down: at once */
    assert_int_equal(o.status, CM_EUNAVAIL);
    assert_non_null(strstr(o.error, "not connected"));
    cm_buf_t why = CM_BUF_INIT;
    assert_false(cm_db_ready(fx->extra, &why));
    assert_non_null(strstr(cm_buf_cstr(&why), "not connected"));
    cm_buf_free(&why);
}

static void test_unknown_scheme(void **state)
{
    fixture_t *fx = *state;
    cm_db_t *db = (cm_db_t *)1;
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = "mysql://x"}, &db), CM_EINVAL);
    assert_null(db);
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = "sqlite:"}, &db), CM_EINVAL);
}

/* Connections drop: the running job fails with CM_EUNAVAIL and the handle
 * reconnects by itself. The server kills our backend with
 * pg_terminate_backend, which is what a restart looks like to a client. */
static void test_pg_reconnects_after_drop(void **state)
{
    fixture_t *fx = *state;
    outcome_t o = run1(fx, "SELECT pg_backend_pid()", NULL, 0);
    assert_int_equal(o.status, 0);
    char pid[sizeof(o.first)];
    snprintf(pid, sizeof(pid), "%s", o.first);
    o = run1(fx, "SELECT pg_terminate_backend(pg_backend_pid())", NULL, 0);
    assert_int_equal(o.status, CM_EUNAVAIL);
    /* fail fast while down, then back within a few retries */
    bool back = false;
    for (int i = 0; i < 200 && !back; i++) {
        o = run1(fx, "SELECT pg_backend_pid()", NULL, 0);
        if (o.status == 0)
            back = true;
        else {
            assert_int_equal(o.status, CM_EUNAVAIL);
            uv_sleep(25);
        }
    }
    assert_true(back);
    assert_string_not_equal(o.first, pid);
}

/* How many statements the server holds prepared for this connection. */
static long prepared_count(fixture_t *fx)
{
    outcome_t o = run1(fx, "SELECT count(*) FROM pg_prepared_statements", NULL, 0);
    assert_int_equal(o.status, 0);
    return atol(o.first);
}

/* A statement with parameters is prepared once per connection and run by
 * name after that; a migration that changes a SELECT *'s columns does not
 * break it (run again, prepared afresh); a reconnect prepares it again. */
static void test_pg_prepared_statements(void **state)
{
    fixture_t *fx = *state;
    migrate(fx, 2); /* its own statements with parameters are prepared too */
    long before = prepared_count(fx);
    outcome_t o = run1(fx, "SELECT CAST($1 AS INTEGER) + 1", (const char *[]){"1"}, 1);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.first, "2");
    assert_int_equal(prepared_count(fx), before + 1);
    o = run1(fx, "SELECT CAST($1 AS INTEGER) + 1", (const char *[]){"41"}, 1);
    assert_string_equal(o.first, "42");
    assert_int_equal(prepared_count(fx), before + 1);
    /* a statement that does not prepare fails as before and holds no name */
    o = run1(fx, "SELECT nope FROM things WHERE id = $1", (const char *[]){"1"}, 1);
    assert_int_equal(o.status, CM_EINVAL);
    assert_int_equal(prepared_count(fx), before + 1);

    o = run1(fx, "INSERT INTO things (name, size) VALUES ($1, $2)", (const char *[]){"a", "7"}, 2);
    assert_int_equal(o.status, 0);
    const char *sel = "SELECT * FROM things WHERE name = $1";
    o = run1(fx, sel, (const char *[]){"a"}, 1);
    assert_int_equal(o.status, 0);
    size_t cols = o.ncols;
    /* a migration (another connection's, as in a rolling deploy) adds a column */
    cm_db_t *other;
    assert_int_equal(cm_db_open(&fx->loop, &(cm_db_opts_t){.url = fx->url, .name = "o"}, &other),
                     0);
    fx->extra = other;
    outcome_t a = {.pick = SIZE_MAX};
    cm_db_run(other, &(cm_db_stmt_t){"ALTER TABLE things ADD COLUMN extra TEXT"}, 1, on_done, &a);
    WAIT_WHILE(&fx->loop, !a.done);
    assert_int_equal(a.status, 0);
    o = run1(fx, sel, (const char *[]){"a"}, 1);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.ncols, cols + 1);
    o = run1(fx, sel, (const char *[]){"a"}, 1);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.ncols, cols + 1);
    /* inside a transaction the statement cannot be run again: the job
     * fails and rolls back, and the next run prepares it afresh */
    a.done = false;
    cm_db_run(other, &(cm_db_stmt_t){"ALTER TABLE things ADD COLUMN more TEXT"}, 1, on_done, &a);
    WAIT_WHILE(&fx->loop, !a.done);
    assert_int_equal(a.status, 0);
    const char *const pa[] = {"a"};
    cm_db_stmt_t two[] = {{sel, pa, 1}, {"UPDATE things SET size = 8 WHERE name = $1", pa, 1}};
    o = run(fx, two, 2);
    assert_int_not_equal(o.status, 0);
    o = run1(fx, "SELECT size FROM things WHERE name = $1", pa, 1);
    assert_string_equal(o.first, "7"); /* rolled back */
    o = run(fx, two, 2);
    assert_int_equal(o.status, 0);
    o = run1(fx, sel, pa, 1);
    assert_int_equal(o.ncols, cols + 2);

    /* a new connection starts with no names and prepares on first use */
    o = run1(fx, "SELECT pg_terminate_backend(pg_backend_pid())", NULL, 0);
    assert_int_equal(o.status, CM_EUNAVAIL);
    bool back = false;
    for (int i = 0; i < 200 && !back; i++) {
        o = run1(fx, "SELECT CAST($1 AS INTEGER) + 1", (const char *[]){"9"}, 1);
        if (o.status == 0)
            back = true;
        else
            uv_sleep(25);
    }
    assert_true(back);
    assert_string_equal(o.first, "10");
    assert_int_equal(prepared_count(fx), 1);
}

#define BOTH(t)                                                                                    \
    cmocka_unit_test_prestate_setup_teardown(t, fx_setup, fx_teardown, "sqlite"),                  \
        cmocka_unit_test_prestate_setup_teardown(t, fx_setup, fx_teardown, "postgres")

int main(void)
{
    cm_log_init("test_db", CM_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        BOTH(test_migrate_once_in_order),
        BOTH(test_migrate_concurrently),
        BOTH(test_params_in_text_out),
        BOTH(test_transaction_rolls_back_on_conflict),
        BOTH(test_txn_holds_until_commit),
        cmocka_unit_test_prestate_setup_teardown(test_txn_conflict_pg, fx_setup, fx_teardown,
                                                 "postgres"),
        cmocka_unit_test_prestate_setup_teardown(test_sqlite_types_reals_timeout, fx_setup,
                                                 fx_teardown, "sqlite"),
        cmocka_unit_test_prestate_setup_teardown(test_sqlite_max_bytes, fx_setup, fx_teardown,
                                                 "sqlite"),
        BOTH(test_sql_error_is_einval),
        BOTH(test_script_keeps_last_result),
        BOTH(test_jobs_complete_in_order),
        BOTH(test_ready_after_first_job),
        BOTH(test_close_finishes_then_refuses),
        BOTH(test_read_cache),
        BOTH(test_read_cache_until_changed),
        BOTH(test_identical_reads_join),
        cmocka_unit_test_prestate_setup_teardown(test_sqlite_connection_hook, fx_setup, fx_teardown,
                                                 "sqlite"),
        cmocka_unit_test_prestate_setup_teardown(test_sqlite_fresh_file_many_openers, fx_setup,
                                                 fx_teardown, "sqlite"),
        cmocka_unit_test_prestate_setup_teardown(test_sqlite_cannot_open, fx_setup, fx_teardown,
                                                 "sqlite"),
        cmocka_unit_test_prestate_setup_teardown(test_pg_unreachable_fails_fast, fx_setup,
                                                 fx_teardown, "postgres"),
        cmocka_unit_test_prestate_setup_teardown(test_unknown_scheme, fx_setup, fx_teardown,
                                                 "sqlite"),
        cmocka_unit_test_prestate_setup_teardown(test_pg_reconnects_after_drop, fx_setup,
                                                 fx_teardown, "postgres"),
        cmocka_unit_test_prestate_setup_teardown(test_pg_prepared_statements, fx_setup, fx_teardown,
                                                 "postgres"),
    };
    return cmocka_run_group_tests_name("db", tests, start_postgres, stop_postgres);
}
