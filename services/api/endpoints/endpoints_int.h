/*
 * endpoints_int.h - what the files of endpoints/ share (crud.c, write.c:
 * CRUD and versions; run.c and its sources run_table.c, run_hogql.c,
 * run_insight.c, with page.c and cache.c: the run; openapi.c: the
 * document; materializer.c: the tables).
 */
#ifndef API_ENDPOINTS_INT_H
#define API_ENDPOINTS_INT_H

#include "cm/arena.h"
#include "cm/db.h"
#include "cm/json.h"
#include "http/http.h"
#include "query/query.h"

/* The endpoint path segment {name}: 1 to 128 bytes of a name's charset,
 * starting with a letter (PostHog's rule); false otherwise. */
bool api_endpoints__name_valid(cm_slice_t name);

/* Answers the one error envelope of every route (api_error.h:
 * {"type", "code", "detail", "attr"}) with status: 400 validation_error
 * "invalid", 404 invalid_request "not_found"; attr may be NULL. */
void api_endpoints__error(api_call_t *call, int status, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ?version=N (or NULL): 0, or -1 having answered 400 "Invalid version
 * parameter: <v>" (attr "version"). out: decimal text or "". */
int api_endpoints__version_param(api_call_t *call, char out[24]);

/* A variable entry of a stored query ({"variableId", "code_name", "value"}). */
typedef struct {
    cm_slice_t id, code_name;
    cm_json_t value;
} api_endpoints__var_t;

/* The variables of a stored HogQL query node, in order; *n of them. The
 * caller frees the array (the strings point into doc). */
api_endpoints__var_t *api_endpoints__vars(const cm_json_doc_t *doc, size_t *n);

/* write.c: whether a version's query (its stored JSON) may
 * be materialized; false with PostHog's reason appended to reason. */
bool api_endpoints__can_materialize(const char *query_json, cm_buf_t *reason);

/* cache.c: the cache key. Fields are appended each as its
 * length, ':', its bytes and ';' (NULL as "-;"), so that two lists of
 * fields never encode alike; the name is the project's
 * endpoint_cache:<project>:<hash> (out: 96 bytes). */
void api_endpoints__key_field(cm_buf_t *b, const char *p, size_t len);
void api_endpoints__key_field_c(cm_buf_t *b, const char *s);
void api_endpoints__key_name(const cm_buf_t *fields, const char *project_id, char out[96]);

/* cache.c: a run's answer in Redis for age_s seconds: the time it was
 * computed, a newline, then the page, a whole object, whose text page
 * holds open (its '{' and members: the writer that wrote it has not closed
 * it); kept only when at most ENDPOINT_CACHE_MAX_BYTES (a bigger one is
 * not). */
void api_endpoints__cache_put(api_call_t *call, const char *key, const char *when,
                              const cm_buf_t *page, int age_s);
/* The entry cache_put keeps: when, '\n', the page closed. */
void api_endpoints__cache_entry(cm_buf_t *entry, const char *when, const cm_buf_t *page);
/* A cached answer in a GET's reply: its time and its page, a whole object
 * (into reply). */
bool api_endpoints__cache_hit(const redisReply *reply, const char *err, char when[48],
                              cm_slice_t *page);
/* A failed query on the event store answered (400 for a refused,
 * timed-out or too big answer, a refusal by its meaning when
 * api_endpoints__store_error knows it, 503 for a store away; the store's
 * text is logged with the request id, never answered; CM_ETOOBIG: past
 * ENDPOINT_MAX_ANSWER_BYTES): true; false when status is 0. */
bool api_endpoints__query_failed(api_call_t *call, int status, const char *err,
                                 unsigned timeout_ms);

/* store_error.c: a failure of the event store as the user is told it. */
typedef struct {
    int ch_code;        /* ClickHouse's error code */
    int status;         /* the answer's HTTP status */
    const char *code;   /* the envelope's code: PostHog's name, lower case */
    const char *detail; /* after "Query execution failed: " */
} api_endpoints__store_error_t;
/* The answer for the store's text err (a ClickHouse exception by its
 * code, a SQLite message by its words), or NULL: not a failure a query
 * can cause that has its own answer (the generic one, naming the
 * request, is the caller's). */
const api_endpoints__store_error_t *api_endpoints__store_error(const char *err);

/* page.c: a HogQL run's page from the store's rows (at most sql->limit
 * of them, hasMore when there are more): the members results, columns,
 * types, hasMore, limit, offset, written with w (inside an open object),
 * then done(ud, 0), or done(ud, CM_ETOOBIG) once the JSON grows past
 * max_bytes. A big answer is written off the loop: done runs later, and w
 * and sql must live until then, untouched. */
void api_endpoints__page(api_call_t *call, const api_query_sql_t *sql,
                         const cm_evstore_rows_t *rows, size_t max_bytes, cm_json_writer_t *w,
                         void (*done)(void *ud, int status), void *ud);
/* The writing itself, from any rows (cell(rows, row, col), NULL for a SQL
 * NULL): 0 or CM_ETOOBIG (checked after each row). */
int api_endpoints__page_write(cm_json_writer_t *w, const api_query_sql_t *sql, const void *rows,
                              size_t nrows, size_t ncols,
                              const char *(*cell)(const void *rows, size_t row, size_t col),
                              size_t max_bytes);

/* ---- the run: one driver (run.c), three sources ---------------------------------------------
 *
 * run.c loads the endpoint and its version, checks the request, and then
 * asks its sources in turn: for a HogQL version its materialized table
 * (run_table.c, when a fresh one is there), then the query itself
 * (run_hogql.c); for an insight version its table, then its queries
 * (run_insight.c). A source's key() names its cached answer; the driver
 * looks it up, else calls execute(), which starts the store's reads and
 * ends with done(); page() then writes the answer into the driver's
 * writer. A source that cannot answer (no table that fits, the table gone
 * while read) declines: the driver tries the next. No source answers the
 * call past key(), nor calls back into the driver but by done. */

/* Statuses of key() and done(), beside 0 and the store's CM_E* codes (the
 * driver maps those to the answer). */
#define API_ENDPOINTS__DECLINED 1 /* cannot answer: the next source is tried */
#define API_ENDPOINTS__ANSWERED 2 /* key() only: it answered (a 400); the run is gone */
#define API_ENDPOINTS__FAILED   3 /* a 400 from run->fail_attr and run->fail */

typedef struct api_endpoints__run api_endpoints__run_t;
typedef void (*api_endpoints__done_fn)(api_endpoints__run_t *run, int status, const char *err);

typedef struct {
    /* Its cached answer's name into key ("": never cached); 0, or a status. */
    int (*key)(api_endpoints__run_t *run, char key[96]);
    /* Starts the reads; ends with done(run, status, the store's text). */
    void (*execute)(api_endpoints__run_t *run, api_endpoints__done_fn done);
    /* Called inside execute's done(0): the answer's members, into w (an
     * open object), then done(run, 0 or CM_ETOOBIG, NULL). */
    void (*page)(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done);
    /* Its own members after the envelope's (NULL: none). */
    void (*tail)(api_endpoints__run_t *run, cm_json_writer_t *w);
    void (*free)(void *state); /* run->state, when set */
} api_endpoints__source_t;

extern const api_endpoints__source_t api_endpoints__hogql;         /* run_hogql.c */
extern const api_endpoints__source_t api_endpoints__table;         /* run_table.c */
extern const api_endpoints__source_t api_endpoints__insight_table; /* run_insight.c */
extern const api_endpoints__source_t api_endpoints__insight;

struct api_endpoints__run {
    api_call_t *call;
    /* the request */
    char *name;
    char version[24]; /* asked for: "" for the current one */
    int refresh;      /* 0 cache, 1 force, 2 direct (past the materialized table) */
    bool debug;
    int64_t limit, offset;
    /* the version */
    char endpoint_id[40], version_created[24];
    long long version_n;
    int cache_age;
    bool materialized; /* its variable rules apply */
    char timezone[64]; /* the project's */
    int week_start;    /* the project's: 0 Sunday, 1 Monday */
    char *stored_text; /* the query node, JSON (stored borrows it) */
    cm_json_doc_t *stored;
    char *mat_table, *mat_info, *mat_at; /* a fresh materialized table, else NULL */
    /* a HogQL version's values for its variables */
    cm_arena_t arena;
    const char **names;
    api_query_value_t *values;
    size_t nvars;
    /* set by the source answering */
    void *state;
    const char *zone_name; /* the timezone member (NULL: "UTC") */
    const char *built_at;  /* a table's answer: last_refresh is its build (ms text) */
    const char *fail_attr; /* API_ENDPOINTS__FAILED's */
    cm_buf_t fail;
    /* the driver's */
    const api_endpoints__source_t *const *sources;
    const api_endpoints__source_t *src;
    char cache_key[96];
    const char *cache_result; /* the access line's "cache": hit, miss, or NULL (not looked up) */
    cm_buf_t out;
    cm_json_writer_t w;
};

/* run.c: sets run->fail and its attr (key() then returns, or done()
 * passes, API_ENDPOINTS__FAILED). */
void api_endpoints__fail(api_endpoints__run_t *run, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* crud.c: a materialized version's "materialization" members
 * (status, can_materialize, last_materialized_at, error, sync_frequency)
 * from a store result's table t, row row (API_ENDPOINT_*). */
void api_endpoints__write_materialization(cm_json_writer_t *w, const cm_db_res_t *res, size_t t,
                                          size_t row);

/* crud.c: the endpoint of a store result's last table, row row. */
void api_endpoints__write_row(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                              size_t row);

#endif
