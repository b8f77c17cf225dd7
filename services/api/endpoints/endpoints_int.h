/*
 * endpoints_int.h - what the files of endpoints/ share (crud.c: CRUD
 * and versions; run.c: run; openapi.c: the document).
 */
#ifndef API_ENDPOINTS_INT_H
#define API_ENDPOINTS_INT_H

#include "cm/db.h"
#include "cm/json.h"
#include "http/http.h"
#include "query/query.h"

/* The endpoint path segment {name}: 1 to 128 bytes of a name's charset,
 * starting with a letter (PostHog's rule); false otherwise. */
bool api_endpoints__name_valid(cm_slice_t name);

/* Answers {"error": "<message>"} with status, as PostHog's endpoint
 * views do for version errors (not the validation_error shape). */
void api_endpoints__error(api_call_t *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ?version=N (or NULL): 0, or -1 having answered 400 with
 * {"error": "Invalid version parameter: <v>"}. out: decimal text or "". */
int api_endpoints__version_param(api_call_t *call, char out[24]);

/* A variable entry of a stored query ({"variableId", "code_name", "value"}). */
typedef struct {
    cm_slice_t id, code_name;
    cm_json_t value;
} api_endpoints__var_t;

/* The variables of a stored HogQL query node, in order; *n of them. The
 * caller frees the array (the strings point into doc). */
api_endpoints__var_t *api_endpoints__vars(const cm_json_doc_t *doc, size_t *n);

/* run_insight.c: the run of an endpoint whose version stores an
 * insight query (api_insight_kind); it takes the call over (its state
 * replaces the caller's, which is freed). */
typedef struct {
    char endpoint_id[40];
    long long version_n;
    char version_created[24];
    int cache_age;
    int refresh; /* 0 cache, 1 force, 2 direct */
    char timezone[64];
    bool materialized; /* the version is: its variable rules apply */
    /* a fresh table to read (NULL: none), its info and time (ms text) */
    const char *mat_table, *mat_info, *mat_at;
} api_endpoints__insight_t;
void api_endpoints__run_insight(api_call_t *call, const api_endpoints__insight_t *how,
                                const char *stored_text);

/* materializable.c: whether a version's query (its stored JSON) may
 * be materialized; false with PostHog's reason appended to reason. */
bool api_endpoints__can_materialize(const char *query_json, cm_buf_t *reason);

/* cache.c: the cache key. Fields are appended each as its
 * length, ':', its bytes and ';' (NULL as "-;"), so that two lists of
 * fields never encode alike; the name is the project's
 * endpoint_cache:<project>:<hash> (out: 96 bytes). */
void api_endpoints__key_field(cm_buf_t *b, const char *p, size_t len);
void api_endpoints__key_field_c(cm_buf_t *b, const char *s);
void api_endpoints__key_name(const cm_buf_t *fields, const char *project_id, char out[96]);

/* cache.c: a run's answer in Redis for age_s seconds (the time
 * it was computed, then the answer's members), when it is at most
 * ENDPOINT_CACHE_MAX_BYTES (a bigger one is not kept). */
void api_endpoints__cache_put(api_call_t *call, const char *key, const char *when, cm_slice_t page,
                              int age_s);
/* A cached answer in a GET's reply: its time and members (into reply). */
bool api_endpoints__cache_hit(const redisReply *reply, const char *err, char when[48],
                              cm_slice_t *page);
/* A failed query on the event store answered (400 for a refused,
 * timed-out or too big answer, 503 for a store away; the store's text is
 * logged with the request id, never answered): true; false when status
 * is 0. */
bool api_endpoints__query_failed(api_call_t *call, int status, const char *err,
                                 unsigned timeout_ms);
/* 400: the answer is past ENDPOINT_MAX_ANSWER_BYTES. */
void api_endpoints__answer_too_big(api_call_t *call);

/* run.c: one value of a run's answer, read by its column's type
 * (so both stores answer alike). */
void api_endpoints__write_value(cm_json_writer_t *w, const char *type, const char *v);

/* page.c: a HogQL run's page from the store's rows (at most
 * sql->limit of them, hasMore when there are more): "{" and the members
 * results, columns, types, hasMore, limit, offset, without the closing
 * brace, handed to cb with status 0 (cb may take the buffer over), or
 * CM_ETOOBIG (page empty) when the JSON grows past max_bytes. A big answer
 * is written off the loop: cb runs later, sql must live until then. */
typedef void (*api_endpoints__page_cb)(api_call_t *call, int status, cm_buf_t *page);
void api_endpoints__page(api_call_t *call, const api_query_sql_t *sql,
                         const cm_evstore_rows_t *rows, size_t max_bytes,
                         api_endpoints__page_cb cb);

/* run_table.c: a HogQL endpoint's run answered from its
 * materialized table; fallback(call) runs it inline instead when the
 * table cannot answer (the call's state is the caller's throughout). */
typedef struct {
    const char *table, *info, *at; /* the version's mat_table, mat_info, mat_at */
    const char *const *names;      /* the bound variables */
    const api_query_value_t *values;
    size_t nvars;
    int64_t limit, offset; /* the page asked (limit 0: the default) */
    int cache_age;
    long long version_n;
    const char *version_created;
} api_endpoints__mat_read_t;
void api_endpoints__run_materialized(api_call_t *call, const api_endpoints__mat_read_t *how,
                                     void (*fallback)(api_call_t *call));

/* crud.c: a materialized version's "materialization" members
 * (status, can_materialize, last_materialized_at, error, sync_frequency)
 * from a store result's table t, row row (API_ENDPOINT_*). */
void api_endpoints__write_materialization(cm_json_writer_t *w, const cm_db_res_t *res, size_t t,
                                          size_t row);

/* crud.c: the endpoint of a store result's last table, row row. */
void api_endpoints__write_row(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                              size_t row);

#endif
