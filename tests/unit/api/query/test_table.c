/*
 * test_table.c - the SQL of the materialized tables (services/api/query/
 * table.c), golden in each dialect: the text the endpoints' table reads,
 * the insight read and the materializer send, with hostile names and
 * values (quotes, backquotes, backslashes, control bytes, UTF-8); the
 * SQLite text is also run by SQLite itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "query/table.h"

#define SQLITE CM_EVSTORE_SQL_SQLITE
#define CH1816 CM_EVSTORE_SQL_CLICKHOUSE_1816
#define CHNEW  CM_EVSTORE_SQL_CLICKHOUSE_MODERN

static const cm_evstore_dialect_t clickhouses[] = {CH1816, CHNEW};

typedef void (*writer_fn)(cm_buf_t *b, cm_evstore_dialect_t d, const char *table);

static void expect_writer(writer_fn f, cm_evstore_dialect_t d, const char *table, const char *want)
{
    cm_buf_t b = CM_BUF_INIT;
    f(&b, d, table);
    assert_string_equal(cm_buf_cstr(&b), want);
    cm_buf_free(&b);
}

static void expect_create(cm_evstore_dialect_t d, const char *table, const char *want)
{
    cm_buf_t b = CM_BUF_INIT;
    api_query_table_create(&b, d, table, "SELECT 1 AS x");
    assert_string_equal(cm_buf_cstr(&b), want);
    cm_buf_free(&b);
}

static void test_ddl(void **state)
{
    (void)state;
    expect_create(SQLITE, "mat_0a1b_1700000000000",
                  "CREATE TABLE mat_0a1b_1700000000000 AS SELECT 1 AS x");
    expect_create(SQLITE, "m\"t x", "CREATE TABLE \"m\"\"t x\" AS SELECT 1 AS x");
    for (size_t i = 0; i < 2; i++) {
        expect_create(clickhouses[i], "mat_0a1b_17",
                      "CREATE TABLE mat_0a1b_17 ENGINE = Log AS SELECT 1 AS x");
        expect_create(clickhouses[i], "m`t\\",
                      "CREATE TABLE `m\\`t\\\\` ENGINE = Log AS SELECT 1 AS x");
    }
    cm_evstore_dialect_t all[] = {SQLITE, CH1816, CHNEW};
    for (size_t i = 0; i < 3; i++) {
        expect_writer(api_query_table_drop, all[i], "mat_1_2", "DROP TABLE IF EXISTS mat_1_2");
        expect_writer(api_query_table_columns, all[i], "mat_1_2", "SELECT * FROM mat_1_2 LIMIT 0");
    }
    /* not plain: a leading digit, a space, a quote, a non-ASCII letter */
    expect_writer(api_query_table_drop, SQLITE, "1t", "DROP TABLE IF EXISTS \"1t\"");
    expect_writer(api_query_table_drop, CH1816, "t; DROP TABLE events",
                  "DROP TABLE IF EXISTS `t; DROP TABLE events`");
    expect_writer(api_query_table_columns, CHNEW, "t\xc3\xa9", "SELECT * FROM `t\xc3\xa9` LIMIT 0");
    expect_writer(api_query_table_columns, SQLITE, "", "SELECT * FROM \"\" LIMIT 0");
}

/* On a cluster: DESCRIBE, the empty replicated table on every node with
 * DESCRIBE's columns (names quoted, types as the server spelled them),
 * the fill, the drop from every node; hostile names stay one name, inside
 * backquotes and inside the ZooKeeper path's string. */
static void test_cluster_ddl(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    api_query_table_describe(&b, "SELECT 1 AS x");
    assert_string_equal(cm_buf_cstr(&b), "DESCRIBE TABLE (SELECT 1 AS x)");
    cm_buf_reset(&b);
    const char *names[] = {"n", "a b`c", "t"};
    const char *types[] = {"UInt64", "Nullable(String)", "DateTime('UTC')"};
    api_query_table_create_replicated(&b, "mat_0a1b_17", "cm_cluster", "default", names, types, 3);
    assert_string_equal(cm_buf_cstr(&b),
                        "CREATE TABLE default.mat_0a1b_17 ON CLUSTER cm_cluster (`n` UInt64, "
                        "`a b\\`c` Nullable(String), `t` DateTime('UTC')) ENGINE = "
                        "ReplicatedMergeTree('/clickhouse/tables/noshard/default.mat_0a1b_17', "
                        "'{shard}-{replica}') ORDER BY tuple()");
    cm_buf_reset(&b);
    api_query_table_create_replicated(&b, "m't", "c-1", "my db", names, types, 1);
    assert_string_equal(cm_buf_cstr(&b),
                        "CREATE TABLE `my db`.`m't` ON CLUSTER `c-1` (`n` UInt64) ENGINE = "
                        "ReplicatedMergeTree('/clickhouse/tables/noshard/my db.m\\'t', "
                        "'{shard}-{replica}') ORDER BY tuple()");
    cm_buf_reset(&b);
    api_query_table_fill(&b, "mat_1_2", "SELECT 1 AS x");
    assert_string_equal(cm_buf_cstr(&b), "INSERT INTO mat_1_2 SELECT 1 AS x");
    cm_buf_reset(&b);
    api_query_table_drop_replicated(&b, "mat_1_2", "cm_cluster", "default");
    assert_string_equal(cm_buf_cstr(&b),
                        "DROP TABLE IF EXISTS default.mat_1_2 ON CLUSTER cm_cluster");
    cm_buf_free(&b);
}

/* A read without a range variable: the columns as they are, one
 * comparison per operator, the page. */
static const char hostile[] = "O'Brien\\`x\"\xc3\xa9\n";

static void read_plain(cm_evstore_dialect_t d, api_query_table_sql_t *out)
{
    static const api_query_table_col_t cols[] = {{"c1_0", 'g'}, {"we`ir\\d\"col", 's'}};
    static api_query_value_t s, n;
    s = (api_query_value_t){.kind = API_QV_STRING, .s = hostile, .len = sizeof(hostile) - 1};
    n = (api_query_value_t){.kind = API_QV_INT, .i = 42};
    const api_query_table_var_t vars[] = {{"v_name", "=", false, &s}, {"v_n", ">= <", false, &n}};
    api_query_table_read_t r = {.table = "mat_abc_123",
                                .cols = cols,
                                .ncols = 2,
                                .vars = vars,
                                .nvars = 2,
                                .limit = 101,
                                .offset = 5};
    api_query_table_read(&r, d, out);
}

static void test_read_plain(void **state)
{
    (void)state;
    api_query_table_sql_t q;
    for (size_t i = 0; i < 2; i++) {
        read_plain(clickhouses[i], &q);
        assert_string_equal(cm_buf_cstr(&q.sql),
                            "SELECT `c1_0`, `we\\`ir\\\\d\"col` FROM mat_abc_123 WHERE 1 = 1"
                            " AND `v_name` = 'O\\'Brien\\\\`x\"\xc3\xa9"
                            "\\x0a' AND `v_n` >= 42 AND `v_n` < 42 LIMIT 101 OFFSET 5");
        assert_int_equal(q.nparams, 0);
        assert_string_equal(q.types, "");
        assert_null(q.params[0]);
        api_query_table_sql_free(&q);
    }
    read_plain(SQLITE, &q);
    assert_string_equal(cm_buf_cstr(&q.sql),
                        "SELECT \"c1_0\", \"we`ir\\d\"\"col\" FROM mat_abc_123 WHERE 1 = 1"
                        " AND \"v_name\" = $1 AND \"v_n\" >= $2 AND \"v_n\" < $3"
                        " LIMIT 101 OFFSET 5");
    assert_int_equal(q.nparams, 3);
    assert_string_equal(q.params[0], hostile);
    assert_string_equal(q.params[1], "42");
    assert_string_equal(q.params[2], "42");
    assert_string_equal(q.types, "tii"); /* a C string: the api copies it as one */
    assert_null(q.params[3]);
    api_query_table_sql_free(&q);
}

/* A range variable: its day, and every other column aggregated again
 * (or grouped by); a variable without a value compares nothing. */
static void read_range(cm_evstore_dialect_t d, const char *table, api_query_table_sql_t *out)
{
    static const api_query_table_col_t cols[] = {{"cnt", 'c'}, {"s", 's'}, {"lo", 'n'},
                                                 {"hi", 'x'},  {"k", 'g'}, {"k2", 0}};
    static api_query_value_t day, f, b;
    day = (api_query_value_t){.kind = API_QV_STRING, .s = "2024-03-05T10:11:12Z", .len = 20};
    f = (api_query_value_t){.kind = API_QV_FLOAT, .f = 0.5};
    b = (api_query_value_t){.kind = API_QV_BOOL, .i = 1};
    const api_query_table_var_t vars[] = {{"__day", ">=", true, &day},
                                          {"f", "=", false, &f},
                                          {"gone", "=", false, NULL},
                                          {"b", " = ", false, &b}};
    api_query_table_read_t r = {.table = table,
                                .cols = cols,
                                .ncols = 6,
                                .vars = vars,
                                .nvars = 4,
                                .reaggregate = true,
                                .limit = 0,
                                .offset = 0};
    api_query_table_read(&r, d, out);
}

static void test_read_range(void **state)
{
    (void)state;
    api_query_table_sql_t q;
    for (size_t i = 0; i < 2; i++) {
        read_range(clickhouses[i], "mat x", &q);
        assert_string_equal(cm_buf_cstr(&q.sql),
                            "SELECT coalesce(sum(`cnt`), 0), sum(`s`), min(`lo`), max(`hi`), `k`,"
                            " `k2` FROM `mat x` WHERE 1 = 1 AND `__day` >= '2024-03-05 00:00:00'"
                            " AND `f` = 0.5 AND `b` = 1 GROUP BY `k`, `k2` LIMIT 0 OFFSET 0");
        assert_int_equal(q.nparams, 0);
        assert_string_equal(q.types, "");
        assert_null(q.params[0]);
        api_query_table_sql_free(&q);
    }
    read_range(SQLITE, "mat x", &q);
    assert_string_equal(cm_buf_cstr(&q.sql),
                        "SELECT coalesce(sum(\"cnt\"), 0), sum(\"s\"), min(\"lo\"), max(\"hi\"),"
                        " \"k\", \"k2\" FROM \"mat x\" WHERE 1 = 1 AND \"__day\" >= $1"
                        " AND \"f\" = $2 AND \"b\" = $3 GROUP BY \"k\", \"k2\" LIMIT 0 OFFSET 0");
    assert_int_equal(q.nparams, 3);
    assert_string_equal(q.params[0], "2024-03-05 00:00:00");
    assert_string_equal(q.params[1], "0.5");
    assert_string_equal(q.params[2], "1");
    assert_string_equal(q.types, "tfi");
    api_query_table_sql_free(&q);
}

static void expect_insight(cm_evstore_dialect_t d, const cm_slice_t *key, const char *want,
                           size_t nparams)
{
    static const char *const cols[5] = {"c0", "c1", "c2", "c3", "c4"};
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(api_query_table_insight(&b, d, "mat_1_2", cols, key), nparams);
    assert_string_equal(cm_buf_cstr(&b), want);
    cm_buf_free(&b);
}

static void test_insight(void **state)
{
    (void)state;
    cm_slice_t key = CM_SLICE_LIT("a'b\\c`\x01");
    for (size_t i = 0; i < 2; i++) {
        expect_insight(clickhouses[i], &key,
                       "SELECT c0, c1, c2, c3, c4 FROM mat_1_2 WHERE c2 = 'a\\'b\\\\c`\\x01'"
                       " ORDER BY c0",
                       0);
        expect_insight(clickhouses[i], NULL, "SELECT c0, c1, c2, c3, c4 FROM mat_1_2 ORDER BY c0",
                       0);
    }
    expect_insight(SQLITE, &key, "SELECT c0, c1, c2, c3, c4 FROM mat_1_2 WHERE c2 = $1 ORDER BY c0",
                   1);
    expect_insight(SQLITE, NULL, "SELECT c0, c1, c2, c3, c4 FROM mat_1_2 ORDER BY c0", 0);
}

/* SQLite reads what it is given: a table made by the create, read back by
 * the range read with its values bound. */
static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fail_msg("%s: %s", sql, err ? err : "");
}

static void test_sqlite_runs(void **state)
{
    (void)state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    cm_buf_t b = CM_BUF_INIT;
    api_query_table_create(&b, SQLITE, "mat x",
                           "SELECT 2 AS cnt, 3 AS s, 4 AS lo, 5 AS hi, 'a' AS k, 'b' AS k2,"
                           " '2024-03-05 00:00:00' AS __day, 0.5 AS f, 1 AS gone, 1 AS b"
                           " UNION ALL SELECT 1, 1, 1, 9, 'a', 'b', '2024-03-06 00:00:00', 0.5, 0,"
                           " 1");
    exec(db, cm_buf_cstr(&b));
    api_query_table_sql_t q;
    read_range(SQLITE, "mat x", &q);
    /* the page: LIMIT 0 would read nothing */
    cm_buf_t sql = CM_BUF_INIT;
    cm_buf_append(&sql, q.sql.p, q.sql.len - strlen(" LIMIT 0 OFFSET 0"));
    cm_buf_append_cstr(&sql, " LIMIT 10 OFFSET 0");
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, cm_buf_cstr(&sql), -1, &st, NULL), SQLITE_OK);
    for (size_t i = 0; i < q.nparams; i++) /* by type, as the event store binds them */
        if (q.types[i] == 'i')
            sqlite3_bind_int64(st, (int)i + 1, strtoll(q.params[i], NULL, 10));
        else if (q.types[i] == 'f')
            sqlite3_bind_double(st, (int)i + 1, strtod(q.params[i], NULL));
        else
            sqlite3_bind_text(st, (int)i + 1, q.params[i], -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 3);
    assert_int_equal(sqlite3_column_int(st, 1), 4);
    assert_int_equal(sqlite3_column_int(st, 2), 1);
    assert_int_equal(sqlite3_column_int(st, 3), 9);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    api_query_table_sql_free(&q);
    cm_buf_reset(&b);
    api_query_table_drop(&b, SQLITE, "mat x");
    exec(db, cm_buf_cstr(&b));
    cm_buf_free(&b);
    cm_buf_free(&sql);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ddl),        cmocka_unit_test(test_cluster_ddl),
        cmocka_unit_test(test_read_plain), cmocka_unit_test(test_read_range),
        cmocka_unit_test(test_insight),    cmocka_unit_test(test_sqlite_runs),
    };
    return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
