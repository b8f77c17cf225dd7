/*
 * person_erasure.c - DELETE /api/projects/{project_id}/persons/{id}/
 * [?delete_events=true], PostHog's person deletion for erasure requests
 * (docs/persons.md, "Deleting a person"). {id} is the person's uuid; a
 * person of another project, or none, is 404. The steps, each waiting for
 * the one before:
 *   1. the person and its distinct ids, read from the event store;
 *   2. the request for the writer's persons store queued in Redis
 *      (person_erasures; the writer deletes the person there);
 *   3. ClickHouse only: tombstones (is_deleted, version + 100) that hide
 *      the person at once, as PostHog writes them: the mutations are slow;
 *   4. with delete_events: its events, and those of its distinct ids
 *      written with an earlier person (before a merge) (SQLite in slices;
 *      ClickHouse: a mutation, applied in the background);
 *   5. Redis: the flags' person copies deleted, then the project's cached
 *      endpoint answers (SCAN, then DEL): none may answer for the person;
 *   6. the project's materialized endpoints made stale: a run reads a
 *      table only while fresh, so it runs the query until the materializer
 *      (which resources/ does not reach) rebuilt the table at its next look;
 *   7. last, the person's rows (SQLite: DELETE; ClickHouse: mutations), so
 *      that a request failing on the way (503) finds the person again when
 *      it is repeated, and every step is done again (each is idempotent).
 * Answer: 202 with what is done and what the store still applies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/timefmt.h"
#include "cm/uuid.h"
#include "http/admit.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char id[40];
    bool delete_events;
    long long version;
    int64_t created_ms;
    char **distinct_ids;
    long long *versions;
    size_t n;
    bool pending; /* ClickHouse: mutations still being applied */
    unsigned long long events;
    char cursor[32]; /* SCAN's */
    bool scanning;   /* a cursor "0" ends the scan once it began */
} erase_t;

static void erase_free(void *p)
{
    erase_t *e = p;
    for (size_t i = 0; i < e->n; i++)
        free(e->distinct_ids[i]);
    free(e->distinct_ids);
    free(e->versions);
    free(e);
}

static void unavailable(api_call_t *call, const char *what, const char *err)
{
    cm_api_error_t ae;
    cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "person erasure %s: %s: %s",
           ((erase_t *)call->state)->id, what, err ? err : "failed");
    cm_api_error_set(&ae, 503, "store_unavailable", NULL,
                     "The person could not be deleted completely (%s); repeat the request.", what);
    api_respond_error(call, &ae);
}

/* ---- 7. the person's rows, then the answer ------------------------------------------ */

static void on_person_deleted(int status, const char *err, uint64_t deleted, bool pending, void *ud)
{
    (void)deleted;
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (status != 0) {
        unavailable(call, "the person's rows", err);
        return;
    }
    e->pending = e->pending || pending;
    cm_log(CM_LOG_INFO, cm_http_req_id(call->req),
           "person erasure %s in project %s: %zu distinct ids, events %s%s", e->id,
           call->project_id, e->n, e->delete_events ? "deleted" : "kept",
           e->pending ? " (ClickHouse mutations pending)" : "");
    /* PostHog answers 202 with no body; ours says what is still pending. */
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "id");
    cm_json_str_cstr(&w, e->id);
    cm_json_key(&w, "distinct_ids");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < e->n; i++)
        cm_json_str_cstr(&w, e->distinct_ids[i]);
    cm_json_end_array(&w);
    cm_json_key(&w, "delete_events");
    cm_json_boolean(&w, e->delete_events);
    cm_json_key(&w, "events_deleted");
    cm_json_int(&w, (long long)e->events);
    cm_json_key(&w, "status");
    cm_json_str_cstr(&w, e->pending ? "pending" : "done");
    cm_json_end_object(&w);
    api_respond_json(call, 202, &out);
}

/* ---- 6. materialized tables ----------------------------------------------------------- */

static void on_stale(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (status != 0) {
        unavailable(call, "materialized endpoints", cm_db_error(res));
        return;
    }
    cm_evstore_delete_person(call->ctx->events, atoll(call->project_id), e->id, on_person_deleted,
                             call);
}

/* ---- 5. Redis: the flags' copies, the endpoint cache ------------------------------- */

static void scan_next(api_call_t *call);

static void on_cache_deleted(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    (void)reply;
    api_call_t *call = ud;
    if (err) {
        unavailable(call, "the endpoint cache", err);
        return;
    }
    scan_next(call);
}

static void on_scan(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_ARRAY) {
        unavailable(call, "the endpoint cache", err ? err : "SCAN: an unexpected reply");
        return;
    }
    snprintf(e->cursor, sizeof(e->cursor), "%s", reply->element[0]->str);
    const redisReply *keys = reply->element[1];
    if (keys->elements > 0) {
        const char **argv = cm_xcalloc(keys->elements + 1, sizeof(char *));
        size_t *lens = cm_xcalloc(keys->elements + 1, sizeof(size_t));
        argv[0] = "DEL";
        lens[0] = 3;
        int argc = 1;
        for (size_t i = 0; i < keys->elements; i++)
            if (keys->element[i]->type == REDIS_REPLY_STRING) {
                argv[argc] = keys->element[i]->str;
                lens[argc++] = keys->element[i]->len;
            }
        cm_redis_command_argv(rd, on_cache_deleted, call, argc, argv, lens);
        free(argv);
        free(lens);
        return;
    }
    scan_next(call);
}

static void scan_next(api_call_t *call)
{
    erase_t *e = call->state;
    if (e->scanning && strcmp(e->cursor, "0") == 0) { /* the scan came round */
        api_store_mat_stale_project(call->ctx->db, call->project_id, on_stale, call);
        return;
    }
    e->scanning = true;
    cm_buf_t match = CM_BUF_INIT;
    cm_rediskeys_endpoint_cache(&match, cm_slice_from_cstr(call->project_id),
                                cm_slice_from_cstr("*"));
    cm_redis_command(call->ctx->redis, on_scan, call, "SCAN %s MATCH %s COUNT 500", e->cursor,
                     cm_buf_cstr(&match));
    cm_buf_free(&match);
}

static void on_copies_deleted(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (err || reply->type == REDIS_REPLY_ERROR) {
        unavailable(call, "the flags' person copies", err ? err : reply->str);
        return;
    }
    snprintf(e->cursor, sizeof(e->cursor), "0");
    scan_next(call);
}

static void copies_step(api_call_t *call)
{
    erase_t *e = call->state;
    if (e->n == 0) {
        snprintf(e->cursor, sizeof(e->cursor), "0");
        scan_next(call);
        return;
    }
    cm_buf_t *keys = cm_xcalloc(e->n, sizeof(cm_buf_t));
    const char **argv = cm_xcalloc(e->n + 1, sizeof(char *));
    size_t *lens = cm_xcalloc(e->n + 1, sizeof(size_t));
    argv[0] = "DEL";
    lens[0] = 3;
    for (size_t i = 0; i < e->n; i++) {
        cm_buf_init(&keys[i]);
        cm_rediskeys_person(&keys[i], cm_slice_from_cstr(call->project_id),
                            cm_slice_from_cstr(e->distinct_ids[i]));
        argv[i + 1] = keys[i].p;
        lens[i + 1] = keys[i].len;
    }
    cm_redis_command_argv(call->ctx->redis, on_copies_deleted, call, (int)e->n + 1, argv, lens);
    for (size_t i = 0; i < e->n; i++)
        cm_buf_free(&keys[i]);
    free(keys);
    free(argv);
    free(lens);
}

/* ---- 4. the events ------------------------------------------------------------------ */

static void on_events_deleted(int status, const char *err, uint64_t deleted, bool pending, void *ud)
{
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (status != 0) {
        unavailable(call, "the events", err);
        return;
    }
    e->events = deleted;
    e->pending = e->pending || pending;
    copies_step(call);
}

static void events_step(api_call_t *call)
{
    erase_t *e = call->state;
    if (!e->delete_events) {
        copies_step(call);
        return;
    }
    cm_evstore_delete_t q = {.project_id = atoll(call->project_id),
                             .person_id = e->id,
                             .distinct_ids = (const char *const *)e->distinct_ids,
                             .ndistinct_ids = e->n};
    cm_evstore_delete_events(call->ctx->events, &q, on_events_deleted, call);
}

/* ---- 3. ClickHouse's tombstones ---------------------------------------------------- */

static void on_tombstones(int status, const char *err, size_t inserted, void *ud)
{
    (void)inserted;
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (status != 0) {
        unavailable(call, "the person's tombstone", err);
        return;
    }
    e->pending = true; /* the mutations below run in the background */
    events_step(call);
}

static void write_tombstones(api_call_t *call)
{
    erase_t *e = call->state;
    long long project = atoll(call->project_id);
    /* PostHog's rule: a deletion is the row's version + 100, above
     * whatever a writer still finishing would write. */
    cm_evstore_person_t person = {.id = e->id,
                                  .project_id = project,
                                  .properties = cm_slice_from_cstr("{}"),
                                  .is_deleted = true,
                                  .created_at_ms = e->created_ms,
                                  .version = e->version + 100};
    cm_evstore_distinct_id_t *ids = cm_xcalloc(e->n + 1, sizeof(*ids));
    for (size_t i = 0; i < e->n; i++)
        ids[i] = (cm_evstore_distinct_id_t){.project_id = project,
                                            .distinct_id = cm_slice_from_cstr(e->distinct_ids[i]),
                                            .person_id = e->id,
                                            .version = e->versions[i] + 100,
                                            .is_deleted = true};
    cm_evstore_rows_in_t rows = {
        .persons = &person, .npersons = 1, .distinct_ids = ids, .ndistinct_ids = e->n};
    cm_evstore_write(call->ctx->events, &rows, on_tombstones, call);
    free(ids);
}

/* ---- 2. the writer's request ---------------------------------------------------------- */

static void on_request_queued(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    api_call_t *call = ud;
    if (err || reply->type == REDIS_REPLY_ERROR) {
        unavailable(call, "the writer's request", err ? err : reply->str);
        return;
    }
    if (cm_evstore_kind(call->ctx->events) == CM_EVSTORE_CLICKHOUSE)
        write_tombstones(call);
    else
        events_step(call);
}

static void request_step(api_call_t *call)
{
    erase_t *e = call->state;
    char request[96];
    snprintf(request, sizeof(request), "%s:%s", call->project_id, e->id);
    cm_redis_command(call->ctx->redis, on_request_queued, call, "RPUSH %s %s",
                     CM_REDISKEY_PERSON_ERASURES, request);
}

/* ---- 1. the person ----------------------------------------------------------------- */

static void on_person(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_call_t *call = ud;
    erase_t *e = call->state;
    if (status != 0) {
        if (!api_query_refused(call, status))
            unavailable(call, "reading the person", err);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    bool found = false;
    e->distinct_ids = cm_xcalloc(n + 1, sizeof(char *));
    e->versions = cm_xcalloc(n + 1, sizeof(long long));
    for (size_t r = 0; r < n; r++) {
        const char *kind = cm_evstore_value(rows, r, API_ERASE_KIND);
        const char *key = cm_evstore_value(rows, r, API_ERASE_KEY);
        const char *version = cm_evstore_value(rows, r, API_ERASE_VERSION);
        if (kind == NULL || key == NULL)
            continue;
        if (kind[0] == 'p') {
            const char *created = cm_evstore_value(rows, r, API_ERASE_CREATED);
            int64_t us = 0;
            if (created)
                cm_iso8601_parse(created, strlen(created), &us);
            found = true;
            e->version = version ? atoll(version) : 0;
            e->created_ms = us / 1000;
        } else {
            e->distinct_ids[e->n] = cm_xstrdup(key);
            e->versions[e->n++] = version ? atoll(version) : 0;
        }
    }
    if (!found) {
        api_respond_not_found(call);
        return;
    }
    request_step(call);
}

void api_persons_delete(api_call_t *call)
{
    erase_t *e = cm_xcalloc(1, sizeof(*e));
    call->state = e;
    call->state_free = erase_free;
    cm_slice_t id = cm_http_req_param(call->req, "id");
    /* Persons are known by uuid here (PostHog also takes its integer pk,
     * which this store does not have): anything else names no person. */
    if (!cm_uuid_valid(id.p, id.len)) {
        api_respond_not_found(call);
        return;
    }
    for (size_t i = 0; i < id.len; i++) /* the stores keep it lowercase */
        e->id[i] = (char)(id.p[i] >= 'A' && id.p[i] <= 'F' ? id.p[i] + 32 : id.p[i]);
    char *flag = api_call_query(call, "delete_events");
    e->delete_events = flag && (!strcmp(flag, "true") || !strcmp(flag, "1") ||
                                !strcmp(flag, "True") || !strcmp(flag, "yes"));
    free(flag);
    cm_buf_t sql = CM_BUF_INIT;
    api_store_person_erasure_sql(call->ctx->events, call->project_id, e->id, &sql);
    cm_evstore_select_t q = {.sql = cm_buf_cstr(&sql), .timeout_ms = api_query_timeout_ms(call)};
    api_query_select(call, &q, on_person, call);
    cm_buf_free(&sql);
}
