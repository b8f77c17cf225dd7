/*
 * query.h - the HogQL compiler: SELECT text -> syntax tree -> SQL for the
 * event store (SQLite or ClickHouse). Pure: no I/O, no loop, no store; the
 * caller runs what it prints.
 *
 *   api_query_parse()   tokenize (tokenize.re), parse (grammar.y, lemon),
 *                       resolve names and check them against the allow-list
 *                       (resolve.c, functions.c); errors are for the user
 *   api_query_print()   print for one store (print.c, print_select.c,
 *                       print_fn.c, print_hogql.c) with the project's filter on
 *                       every table it reads, the variables' values bound,
 *                       and the row limit
 *
 * Safety is structural (docs/endpoints.md): only a SELECT parses; only the
 * tables events, persons and groups (and the query's own CTEs and
 * subqueries) resolve; only listed functions print; every stored table is
 * printed as a derived table already filtered to the project, so no join,
 * subquery, CTE or UNION can see another project's rows; values never
 * enter the text (SQLite binds them, ClickHouse gets escaped literals
 * printed from the tree).
 */
#ifndef API_QUERY_H
#define API_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/evstore_sql.h"

typedef struct api_query api_query_t;

#define API_QUERY_DEFAULT_ROWS 100
#define API_QUERY_MAX_ROWS     50000

/* Parses and resolves HogQL text. 0, or CM_EINVAL with a message for the
 * user in err (no "Invalid HogQL query: " prefix: the caller adds it). */
int api_query_parse(const char *text, size_t len, api_query_t **out, cm_buf_t *err);
void api_query_free(api_query_t *q);

/* The {variables.X} code names the query uses, each once, in order. */
size_t api_query_nvariables(const api_query_t *q);
const char *api_query_variable(const api_query_t *q, size_t i);

/* A variable's value: what the run request's JSON gave. */
typedef enum {
    API_QV_NULL,
    API_QV_STRING,
    API_QV_INT,
    API_QV_FLOAT,
    API_QV_BOOL,
    API_QV_LIST, /* items: scalars */
} api_query_value_kind_t;

typedef struct api_query_value {
    api_query_value_kind_t kind;
    const char *s; /* API_QV_STRING: bytes (may hold NUL), len of them */
    size_t len;
    int64_t i; /* API_QV_INT, API_QV_BOOL (0/1) */
    double f;  /* API_QV_FLOAT */
    const struct api_query_value *items;
    size_t nitems;
} api_query_value_t;

typedef enum { API_QUERY_SQLITE, API_QUERY_CLICKHOUSE } api_query_dialect_t;

/* The ClickHouse rules a query is printed for (docs/endpoints.md,
 * "ClickHouse versions"); the golden files pin the SQL of each.
 *   API_QUERY_CH_1816  Debian's 18.16, and any server before 21.8 or not
 *                      yet known: no JSONExtract, window functions, CTEs
 *                      or several JOINs in one SELECT (refused, "needs
 *                      ClickHouse 21.8+")
 *   API_QUERY_CH_21    21.8 (LTS) to 23.x, the old analyzer: what 18.16
 *                      refuses prints; formatDateTime's minute is %M
 *   API_QUERY_CH_24    24.x and any later major, the new analyzer (the
 *                      default from 24.3): its scoping and type rules,
 *                      formatDateTime's minute is %i */
typedef enum {
    API_QUERY_CH_1816,
    API_QUERY_CH_21,
    API_QUERY_CH_24,
} api_query_ch_version_t;

/* The rules for an event store's dialect (cm_evstore_dialect()). */
api_query_ch_version_t api_query_ch_version(cm_evstore_dialect_t d);

typedef struct {
    api_query_dialect_t dialect;
    api_query_ch_version_t clickhouse_version; /* ClickHouse only; 0 is 18.16 */
    int64_t project_id;
    /* Values of the variables, by code name (api_query_variable()). */
    const char *const *var_names;
    const api_query_value_t *var_values;
    size_t nvars;
    /* Rows of the answer: the top SELECT returns at most limit + 1 (the
     * extra row says hasMore), after offset; a LIMIT in the query is a
     * ceiling. limit 0: API_QUERY_DEFAULT_ROWS; capped at API_QUERY_MAX_ROWS. */
    int64_t limit;
    int64_t offset;
    /* The whole answer, no page (a materialized table's query): only the
     * query's own LIMIT / OFFSET apply. */
    bool whole;
    /* The project's time zone (an IANA name ICU knows; NULL or "UTC": UTC):
     * DateTime values are shown and bucketed in it, as PostHog prints
     * toTimeZone(column, zone); and its first day of the week (0 Sunday,
     * 1 Monday: PostHog's week_start_day), toStartOfWeek's default mode. */
    const char *timezone;
    int week_start;
} api_query_print_opts_t;

/* A result column's type, as ClickHouse names it ("String", "Int64",
 * "Float64", "DateTime", "Date", "UInt8", "UUID", "Nullable(String)", ...;
 * "DateTime('America/New_York')" for a DateTime in a zone other than UTC:
 * the value is a UTC instant, written with that zone's offset);
 * the runner reads both stores' values by it, so they answer alike. */
typedef struct {
    char *name;
    char *type;
} api_query_column_t;

typedef struct {
    cm_buf_t sql;
    /* SQLite: the values for $1..$n (pointers into the options' values). */
    const api_query_value_t **params;
    size_t nparams;
    api_query_column_t *cols;
    size_t ncols;
    int64_t limit; /* rows the caller returns (the SQL asks one more) */
    int64_t offset;
    bool whole; /* printed without a page (api_query_print_opts_t.whole) */
} api_query_sql_t;

/* Prints q for o->dialect into out (which the caller frees with
 * api_query_sql_free, also on failure). CM_EINVAL with a message in err
 * for what the chosen store cannot run, or a variable without a value. */
int api_query_print(const api_query_t *q, const api_query_print_opts_t *o, api_query_sql_t *out,
                    cm_buf_t *err);
void api_query_sql_free(api_query_sql_t *s);

/* Materialization (materialize.c, docs/endpoints.md): whether the query
 * can be stored as a table with its variables as columns, and the HogQL
 * that fills the table. CM_EINVAL with the reason (PostHog's words) when
 * it cannot. */
typedef struct {
    char *code_name;
    bool range; /* compared with >=, >, <, <=: the column is by day */
    /* how the column compares with the value, each comparison's operator
     * with the column on the left ("=", ">=", ...), space-separated */
    char ops[32];
} api_query_mat_var_t;
typedef struct {
    cm_buf_t hogql; /* the table's query */
    api_query_mat_var_t *vars;
    size_t nvars;
    bool limit_dropped; /* the query's LIMIT / OFFSET: for the read to apply */
    /* per column of the query (the table has them, then one per variable):
     * how a read over day buckets aggregates it again, 'g' grouped by, 's'
     * sum, 'n' min, 'x' max (all 'g' without a range variable) */
    char *reagg;
    size_t ncols;
    bool reaggregate; /* reads aggregate again (a range variable, or no GROUP BY) */
    /* aggregates without GROUP BY: the query answers one row even where no
     * event matches, which a table read that does not aggregate again
     * cannot give (the run answers from the query then: run_table.c) */
    bool one_row;
    int64_t limit, offset; /* the query's own (limit_dropped), else -1 and 0 */
} api_query_mat_t;
int api_query_materialize(const api_query_t *q, api_query_mat_t *out, cm_buf_t *reason);
void api_query_mat_free(api_query_mat_t *m);

/* SQLite's parameters as text, for cm_evstore_select: text[i] a string the
 * caller frees (NULL for NULL), types[i] 't', 'i' or 'f'. Both arrays have
 * room for s->nparams. */
void api_query_params_text(const api_query_sql_t *s, char **text, char *types);

#endif
