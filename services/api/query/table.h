/*
 * table.h - the SQL of the materialized tables (docs/endpoints.md,
 * Materialization; docs/insights.md): every statement the api sends the
 * event store about them, written here and nowhere else. Pure: text in,
 * text out; the dialect is a value of cm_evstore_dialect().
 *
 *   api_query_table_create()   CREATE TABLE t [ENGINE = Log] AS <select>
 *   api_query_table_drop()     DROP TABLE IF EXISTS t
 *   api_query_table_columns()  SELECT * FROM t LIMIT 0 (its column names)
 *   api_query_table_count()    SELECT count(*) FROM t (its rows, for the log)
 *   api_query_table_read()     a HogQL endpoint's read: the columns, its
 *                              variables' comparisons, the aggregation again
 *                              over day buckets, the page
 *   api_query_table_insight()  an insight's read, by its breakdown key
 *
 * Names: a table's name is written bare when it is a plain name (letters,
 * digits, '_'; the materializer's mat_<id>_<ms>, the compiler's c1_0),
 * else quoted as a column is: ClickHouse in backquotes with backslash
 * escapes, SQLite in double quotes, doubled. Values: SQLite's are bound
 * ($1..$n, returned as text), ClickHouse's are escaped literals.
 */
#ifndef API_QUERY_TABLE_H
#define API_QUERY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/evstore_sql.h"
#include "query/query.h"

/* A column's name quoted for d (NUL-terminated, so no NUL inside). */
void api_query_table_ident(cm_buf_t *b, cm_evstore_dialect_t d, const char *name);
/* A table's name: bare when plain, else as api_query_table_ident. */
void api_query_table_name(cm_buf_t *b, cm_evstore_dialect_t d, const char *table);

void api_query_table_create(cm_buf_t *b, cm_evstore_dialect_t d, const char *table,
                            const char *select);
void api_query_table_drop(cm_buf_t *b, cm_evstore_dialect_t d, const char *table);

/* On a ClickHouse cluster (docs/deploy.md, "A ClickHouse cluster"): a
 * materialized table is one ReplicatedMergeTree whose copies live on every
 * node (one ZooKeeper path for all shards, as persons), made empty ON
 * CLUSTER with the columns DESCRIBE gave for its SELECT, then filled once
 * by an INSERT ... SELECT on the api's node, which replication copies to
 * the others. (CREATE ... ON CLUSTER ... AS SELECT would run the SELECT on
 * every node, each adding its own copy of the rows.) A read on any node is
 * local and whole. Names are qualified with the database: DDL ON CLUSTER
 * runs on each node, where a bare name means that node's default. */
void api_query_table_describe(cm_buf_t *b, const char *select);
void api_query_table_create_replicated(cm_buf_t *b, const char *table, const char *cluster,
                                       const char *database, const char *const *names,
                                       const char *const *types, size_t ncols);
void api_query_table_fill(cm_buf_t *b, const char *table, const char *select);
void api_query_table_drop_replicated(cm_buf_t *b, const char *table, const char *cluster,
                                     const char *database);
void api_query_table_columns(cm_buf_t *b, cm_evstore_dialect_t d, const char *table);
void api_query_table_count(cm_buf_t *b, cm_evstore_dialect_t d, const char *table);

/* A HogQL endpoint's table read. */
typedef struct {
    const char *column; /* the table's name for it */
    /* aggregated again over a range variable's days: 'c' count (a sum,
     * 0 when none), 's' sum, 'n' min, 'x' max; 'g' (or 0) grouped by */
    char reagg;
} api_query_table_col_t;
typedef struct {
    const char *column; /* the variable's column */
    const char *ops;    /* its comparisons, space-separated ("=", ">= <", ...) */
    bool range;         /* compared by day: the value's YYYY-MM-DD 00:00:00 */
    const api_query_value_t *value;
} api_query_table_var_t;
typedef struct {
    const char *table;
    const api_query_table_col_t *cols;
    size_t ncols;
    const api_query_table_var_t *vars;
    size_t nvars;
    bool reaggregate; /* GROUP BY the 'g' columns, the others aggregated */
    int64_t limit, offset;
} api_query_table_read_t;

typedef struct {
    cm_buf_t sql;
    /* SQLite's values for $1..$n, as cm_evstore_select takes them: text
     * (each owned here, a NULL after the last) and types 't', 'i' or 'f'
     * (a C string). None on ClickHouse (an empty list and ""). */
    char **params;
    char *types;
    size_t nparams;
} api_query_table_sql_t;

void api_query_table_read(const api_query_table_read_t *r, cm_evstore_dialect_t d,
                          api_query_table_sql_t *out);
void api_query_table_sql_free(api_query_table_sql_t *s);

/* An insight's table read (cols: the table's q, b, k, p, v): the rows of
 * one breakdown key when key is not NULL (SQLite: bound as $1, the return
 * is 1; ClickHouse: a literal, 0), ordered by the query column q. */
size_t api_query_table_insight(cm_buf_t *b, cm_evstore_dialect_t d, const char *table,
                               const char *const cols[5], const cm_slice_t *key);

#endif
