/*
 * events.c - what the writer stored, read back in PostHog's shapes, so a
 * user can see that what was captured arrived:
 *   GET /api/projects/{id}/events/?limit=&event=&distinct_id=&before=&after=
 *     {"next": URL or null, "results": [{"id", "distinct_id", "properties",
 *      "event", "timestamp", "person", "elements", "elements_chain"}]},
 *     newest first; next pages on with before= the last row's time and
 *     before_id= its uuid (events of the same millisecond are not lost);
 *   GET /api/projects/{id}/persons/?distinct_id=&limit=&offset=
 *     {"next", "previous", "results": [{"id", "uuid", "name",
 *      "distinct_ids", "properties", "is_identified", "created_at"}]}.
 * Both read the event store (proto/event-store.md); an unreachable store is
 * a 503 like the metadata store's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "http/admit.h"
#include "resources/person_name.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    api_events_query_t q;
    char *event, *distinct_id, *before_id;
    char **person_ids; /* persons: the page's rows (person_row_t), see below */
    size_t npersons;
} read_state_t;

static void state_free(void *p)
{
    read_state_t *s = p;
    free(s->event);
    free(s->distinct_id);
    free(s->before_id);
    free(s);
}

static read_state_t *state(api_call_t *call)
{
    read_state_t *s = cm_xcalloc(1, sizeof(*s));
    call->state = s;
    call->state_free = state_free;
    return s;
}

/* ?before= / ?after=: ISO 8601 -> epoch ms; answers 400 and returns -1. */
static int query_time(api_call_t *call, const char *name, int64_t *ms)
{
    char *v = api_call_query(call, name);
    int64_t us;
    *ms = 0;
    if (v == NULL)
        return 0;
    int rc = cm_iso8601_parse(v, strlen(v), &us);
    free(v);
    if (rc != 0) {
        api_respond_invalid(call, name, "%s must be an ISO 8601 date-time.", name);
        return -1;
    }
    *ms = us / 1000;
    return 0;
}

static void url_encode(cm_buf_t *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~$", c))
            cm_buf_putc(out, (char)c);
        else
            cm_buf_appendf(out, "%%%02X", c);
    }
}

/* QUERY_TIMEOUT, from the request's first byte, waiting included */
#define READ_TIMEOUT_MS api_query_timeout_ms(call)

/* A list's SELECT run on the event store, once the project's turn came
 * (http/admit.h). */
static void run_read(api_call_t *call, cm_buf_t *sql, cm_evstore_query_cb done)
{
    cm_evstore_select_t q = {.sql = cm_buf_cstr(sql), .timeout_ms = READ_TIMEOUT_MS};
    api_query_select(call, &q, done, call);
    cm_buf_free(sql);
}

static void respond_store_error(api_call_t *call, int status, const char *err)
{
    cm_api_error_t e;
    if (api_query_refused(call, status))
        return;
    if (status == CM_ETIMEDOUT) {
        cm_api_error_set(&e, 504, "timeout", NULL,
                         "The event store did not answer within %u s; try a narrower read.",
                         READ_TIMEOUT_MS / 1000);
        api_respond_error(call, &e);
        return;
    }
    cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "event store: %s", err ? err : "failed");
    cm_api_error_set(&e, 503, "store_unavailable", NULL,
                     "The event store cannot be reached; try again shortly.");
    api_respond_error(call, &e);
}

static void json_ms(cm_json_writer_t *w, const char *ms)
{
    char iso[CM_ISO8601_MAX];
    cm_iso8601_format(atoll(ms ? ms : "0") * 1000, 3, iso);
    cm_json_str_cstr(w, iso);
}

/* ---- events ------------------------------------------------------------------------- */

static void on_events(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_call_t *call = ud;
    read_state_t *s = call->state;
    if (status != 0) {
        respond_store_error(call, status, err);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "next");
    if (n > 0 && (long long)n == s->q.limit) {
        cm_buf_t url = CM_BUF_INIT;
        cm_slice_t path = cm_http_req_path(call->req);
        char iso[CM_ISO8601_MAX];
        cm_iso8601_format(atoll(cm_evstore_value(rows, n - 1, API_EVENT_TIME_MS)) * 1000, 3, iso);
        cm_buf_appendf(&url, "%s%.*s?limit=%lld&before=%s&before_id=%s", call->ctx->cfg.base_url,
                       (int)path.len, path.p, s->q.limit, iso,
                       cm_evstore_value(rows, n - 1, API_EVENT_UUID));
        if (s->event) {
            cm_buf_append_cstr(&url, "&event=");
            url_encode(&url, s->event);
        }
        if (s->distinct_id) {
            cm_buf_append_cstr(&url, "&distinct_id=");
            url_encode(&url, s->distinct_id);
        }
        cm_json_str_s(&w, cm_buf_slice(&url));
        cm_buf_free(&url);
    } else
        cm_json_null(&w);
    cm_json_key(&w, "results");
    cm_json_begin_array(&w);
    for (size_t r = 0; r < n; r++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "id");
        cm_json_str_cstr(&w, cm_evstore_value(rows, r, API_EVENT_UUID));
        cm_json_key(&w, "distinct_id");
        cm_json_str_cstr(&w, cm_evstore_value(rows, r, API_EVENT_DISTINCT_ID));
        cm_json_key(&w, "properties");
        api_json_stored(&w, cm_evstore_value(rows, r, API_EVENT_PROPERTIES));
        cm_json_key(&w, "event");
        cm_json_str_cstr(&w, cm_evstore_value(rows, r, API_EVENT_NAME));
        cm_json_key(&w, "timestamp");
        json_ms(&w, cm_evstore_value(rows, r, API_EVENT_TIME_MS));
        cm_json_key(&w, "person_id");
        cm_json_str_cstr(&w, cm_evstore_value(rows, r, API_EVENT_PERSON_ID));
        cm_json_key(&w, "person");
        cm_json_null(&w);
        cm_json_key(&w, "elements");
        cm_json_begin_array(&w);
        cm_json_end_array(&w);
        cm_json_key(&w, "elements_chain");
        cm_json_str_cstr(&w, "");
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_end_object(&w);
    api_respond_json(call, 200, &out);
}

void api_events_list(api_call_t *call)
{
    read_state_t *s = state(call);
    if (api_call_page(call) != 0 || query_time(call, "before", &s->q.before_ms) != 0 ||
        query_time(call, "after", &s->q.after_ms) != 0)
        return;
    s->event = api_call_query(call, "event");
    s->distinct_id = api_call_query(call, "distinct_id");
    s->before_id = api_call_query(call, "before_id");
    s->q.project_id = call->project_id;
    s->q.before_id = s->before_id;
    s->q.event = s->event;
    s->q.distinct_id = s->distinct_id;
    s->q.limit = call->limit;
    cm_buf_t sql = CM_BUF_INIT;
    api_store_events_list_sql(call->ctx->events, &s->q, &sql);
    run_read(call, &sql, on_events);
}

/* ---- persons ------------------------------------------------------------------------ */

/* The persons page is kept between the two reads (rows live only during
 * their callback). */
typedef struct {
    char *id, *properties, *created;
    bool identified;
} person_row_t;

static void persons_free(void *p)
{
    read_state_t *s = p;
    person_row_t *rows = (person_row_t *)s->person_ids;
    for (size_t i = 0; i < s->npersons; i++) {
        free(rows[i].id);
        free(rows[i].properties);
        free(rows[i].created);
    }
    free(rows);
    s->person_ids = NULL;
    s->npersons = 0;
    state_free(s);
}

static void on_distinct_ids(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_call_t *call = ud;
    read_state_t *s = call->state;
    person_row_t *persons = (person_row_t *)s->person_ids;
    if (status != 0) {
        respond_store_error(call, status, err);
        return;
    }
    /* one person's distinct ids at a time, for its name */
    const char **ids = cm_xcalloc(cm_evstore_nrows(rows) + 1, sizeof(*ids));
    size_t nids;
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "next");
    if ((long long)s->npersons == call->limit) {
        cm_buf_t url = CM_BUF_INIT;
        cm_slice_t path = cm_http_req_path(call->req);
        cm_buf_appendf(&url, "%s%.*s?limit=%lld&offset=%lld", call->ctx->cfg.base_url,
                       (int)path.len, path.p, call->limit, call->offset + call->limit);
        cm_json_str_s(&w, cm_buf_slice(&url));
        cm_buf_free(&url);
    } else
        cm_json_null(&w);
    cm_json_key(&w, "previous");
    cm_json_null(&w);
    cm_json_key(&w, "results");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < s->npersons; i++) {
        person_row_t *p = &persons[i];
        cm_json_begin_object(&w);
        cm_json_key(&w, "id");
        cm_json_str_cstr(&w, p->id);
        cm_json_key(&w, "uuid");
        cm_json_str_cstr(&w, p->id);
        cm_json_key(&w, "distinct_ids");
        cm_json_begin_array(&w);
        nids = 0;
        for (size_t r = 0; r < cm_evstore_nrows(rows); r++)
            if (!strcmp(cm_evstore_value(rows, r, API_PDI_PERSON), p->id)) {
                ids[nids] = cm_evstore_value(rows, r, API_PDI_DISTINCT_ID);
                cm_json_str_cstr(&w, ids[nids++]);
            }
        cm_json_end_array(&w);
        cm_json_key(&w, "name"); /* PostHog's display name: person_name.h */
        api_person_name_write(&w, p->properties, ids, nids, p->id);
        cm_json_key(&w, "properties");
        api_json_stored(&w, p->properties);
        cm_json_key(&w, "is_identified");
        cm_json_boolean(&w, p->identified);
        cm_json_key(&w, "created_at");
        char iso[CM_ISO8601_MAX];
        int64_t us = 0;
        cm_iso8601_parse(p->created, strlen(p->created), &us);
        cm_iso8601_format(us, 3, iso);
        cm_json_str_cstr(&w, iso);
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_end_object(&w);
    free(ids);
    api_respond_json(call, 200, &out);
}

static void on_persons(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_call_t *call = ud;
    read_state_t *s = call->state;
    if (status != 0) {
        respond_store_error(call, status, err);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    person_row_t *persons = cm_xcalloc(n + 1, sizeof(*persons));
    const char **ids = cm_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        const char *props = cm_evstore_value(rows, i, API_PERSON_PROPERTIES);
        const char *created = cm_evstore_value(rows, i, API_PERSON_CREATED);
        const char *ident = cm_evstore_value(rows, i, API_PERSON_IDENTIFIED);
        persons[i].id = cm_xstrdup(cm_evstore_value(rows, i, API_PERSON_ID));
        persons[i].properties = cm_xstrdup(props ? props : "{}");
        persons[i].created = cm_xstrdup(created ? created : "1970-01-01 00:00:00");
        persons[i].identified = ident && atoi(ident) != 0;
        ids[i] = persons[i].id;
    }
    s->person_ids = (char **)persons;
    s->npersons = n;
    call->state_free = persons_free;
    cm_buf_t sql = CM_BUF_INIT;
    api_store_person_distinct_ids_sql(call->ctx->events, call->project_id, ids, n, &sql);
    run_read(call, &sql, on_distinct_ids);
    free(ids);
}

void api_persons_list(api_call_t *call)
{
    read_state_t *s = state(call);
    if (api_call_page(call) != 0)
        return;
    s->distinct_id = api_call_query(call, "distinct_id");
    cm_buf_t sql = CM_BUF_INIT;
    api_store_persons_list_sql(call->ctx->events, call->project_id, s->distinct_id, call->limit,
                               call->offset, &sql);
    run_read(call, &sql, on_persons);
}
