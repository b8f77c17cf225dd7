/*
 * cohorts.c - /api/projects/{id}/cohorts/: property-based (dynamic)
 * cohorts, the ones flags evaluate locally. filters is PostHog's
 * {"properties": {"type": "AND"|"OR", "values": [...]}}, nested groups with
 * property filters at the leaves (flagdefs/ checks it). A cohort may point
 * at other cohorts, never back at itself; one that a live flag or cohort
 * uses cannot be deleted. Static cohorts (uploaded lists) are not here yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "flagdefs/flagdefs.h"
#include "publish/publish.h"
#include "resources/resources.h"
#include "store/store.h"

static void write_cohort(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    (void)call;
#define V(col) cm_db_value(res, 0, row, col)
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(V(API_COHORT_ID)));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, V(API_COHORT_NAME));
    cm_json_key(w, "description");
    cm_json_str_cstr(w, V(API_COHORT_DESCRIPTION));
    cm_json_key(w, "filters");
    cm_json_begin_object(w);
    cm_json_key(w, "properties");
    api_json_stored(w, V(API_COHORT_FILTERS));
    cm_json_end_object(w);
    cm_json_key(w, "is_static");
    cm_json_boolean(w, false);
    cm_json_key(w, "deleted");
    cm_json_boolean(w, atoi(V(API_COHORT_DELETED)) != 0);
    cm_json_key(w, "version");
    cm_json_int(w, atoll(V(API_COHORT_VERSION)));
    cm_json_key(w, "created_at");
    api_json_time(w, V(API_COHORT_CREATED));
    cm_json_key(w, "updated_at");
    api_json_time(w, V(API_COHORT_UPDATED));
    cm_json_end_object(w);
#undef V
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_COHORT_TOTAL, write_cohort);
}

void api_cohorts_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_cohorts_list(call->ctx->db, call->project_id, call->limit_text, call->offset_text,
                               on_list, call);
}

/* ---- writes and the one-cohort read ------------------------------------------ */

typedef struct {
    char id[24];
    char *name, *description, *filters, *deleted;
    bool read_only, is_delete;
    api_flagdefs_refs_t refs;
} cohort_write_t;

static void cohort_write_free(void *p)
{
    cohort_write_t *x = p;
    free(x->name);
    free(x->description);
    free(x->filters);
    free(x->deleted);
    free(x);
}

static int parse_body(api_call_t *call, cohort_write_t *x)
{
    cm_json_t root = cm_json_root(call->body), v;
    if (api_body_string(call, "name", 0, 400, NULL, NULL, &x->name) < 0 ||
        api_body_string(call, "description", 0, 1000, NULL, NULL, &x->description) < 0)
        return -1;
    bool b;
    if (cm_json_exists(v = cm_json_get(root, "is_static")) && cm_json_as_bool(v, &b) == CM_OK &&
        b) {
        api_respond_invalid(call, "is_static", "Static cohorts are not supported yet.");
        return -1;
    }
    if (cm_json_exists(v = cm_json_get(root, "deleted"))) {
        if (cm_json_as_bool(v, &b) != CM_OK) {
            api_respond_invalid(call, "deleted", "Must be a valid boolean.");
            return -1;
        }
        x->deleted = cm_xstrdup(b ? "1" : "0");
    }
    if (cm_json_exists(v = cm_json_get(root, "filters"))) {
        cm_json_t group = cm_json_get(v, "properties");
        cm_api_error_t e;
        if (cm_json_type(v) != CM_JSON_OBJECT || !cm_json_exists(group)) {
            api_respond_invalid(call, "filters",
                                "Expected {\"properties\": {\"type\": ..., "
                                "\"values\": [...]}}.");
            return -1;
        }
        if (api_flagdefs_check_cohort(group, &x->refs, &e) != 0) {
            api_respond_error(call, &e);
            return -1;
        }
        cm_buf_t text = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &text);
        cm_json_value(&w, group);
        x->filters = cm_buf_detach(&text, NULL);
    }
    return 0;
}

/* The project's cohorts (table 1 of the context: id, group) and what they
 * include, with the written cohort's new references in place of its
 * stored ones. */
static api_flagdefs_graph_t *cohort_graph(const cm_db_res_t *res, const cohort_write_t *x)
{
    size_t n = cm_db_nrows(res, 1);
    api_flagdefs_graph_t *g = api_flagdefs_graph_new(n + 1);
    long long me = x->id[0] ? atoll(x->id) : 0;
    for (size_t i = 0; i < n; i++) {
        long long id = atoll(cm_db_value(res, 1, i, 0));
        api_flagdefs_refs_t refs;
        if (id == me)
            continue;
        api_flagdefs_cohort_refs_of(cm_db_value(res, 1, i, 1), &refs);
        api_flagdefs_graph_add(g, id, NULL, refs.cohorts, refs.ncohorts);
    }
    if (me)
        api_flagdefs_graph_add(g, me, NULL, x->refs.cohorts, x->refs.ncohorts);
    return g;
}

/* A live flag or another cohort that includes this one directly: its name,
 * for the detail (one that includes it further away includes a direct user). */
static bool used_by(const cm_db_res_t *res, const cohort_write_t *x, char *who, size_t size)
{
    long long me = atoll(x->id);
    api_flagdefs_refs_t refs;
    for (size_t i = 0; i < cm_db_nrows(res, 2); i++) {
        api_flagdefs_refs_of(cm_db_value(res, 2, i, 2), &refs);
        for (size_t j = 0; j < refs.ncohorts; j++)
            if (refs.cohorts[j] == me) {
                snprintf(who, size, "feature flag \"%s\"", cm_db_value(res, 2, i, 1));
                return true;
            }
    }
    for (size_t i = 0; i < cm_db_nrows(res, 1); i++) {
        long long other = atoll(cm_db_value(res, 1, i, 0));
        api_flagdefs_cohort_refs_of(cm_db_value(res, 1, i, 1), &refs);
        for (size_t j = 0; other != me && j < refs.ncohorts; j++)
            if (refs.cohorts[j] == me) {
                snprintf(who, size, "cohort %lld", other);
                return true;
            }
    }
    return false;
}

static void on_written(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    cohort_write_t *x = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) {
        cm_api_error_t e;
        cm_api_error_set(&e, 409, "conflict", NULL,
                         "The cohort was changed by another request meanwhile; read it and retry.");
        api_respond_error(call, &e);
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    if (x->is_delete) {
        api_respond_empty(call, 204);
        return;
    }
    api_respond_row(call, 0, res, x->id[0] ? 200 : 201, write_cohort);
}

static void on_context(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    cohort_write_t *x = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    bool have = cm_db_nrows(res, 0) == 1;
    if (x->id[0] && !have) {
        api_respond_not_found(call);
        return;
    }
    if (x->read_only) {
        api_respond_row(call, 0, res, 200, write_cohort);
        return;
    }
    api_flagdefs_graph_t *g = x->id[0] && x->refs.ncohorts ? cohort_graph(res, x) : NULL;
    for (size_t i = 0; x->filters && i < x->refs.ncohorts; i++) {
        long long dep = x->refs.cohorts[i];
        bool unknown = !api_store_has_id(res, 1, dep);
        bool loops = !unknown && g && api_flagdefs_graph_reaches(g, dep, atoll(x->id));
        if (unknown || loops) {
            api_flagdefs_graph_free(g);
            if (unknown)
                api_respond_invalid(call, "filters", "Cohort with id %lld does not exist.", dep);
            else
                api_respond_invalid(call, "filters",
                                    "A cohort cannot include itself (through cohort %lld).", dep);
            return;
        }
    }
    api_flagdefs_graph_free(g);
    char who[160];
    if (x->deleted && strcmp(x->deleted, "1") == 0 && used_by(res, x, who, sizeof(who))) {
        api_respond_invalid(call, "deleted", "This cohort is used by %s.", who);
        return;
    }
#define KEEP(field, col, def)                                                                      \
    if (x->field == NULL)                                                                          \
        x->field = cm_xstrdup(have ? cm_db_value(res, 0, 0, col) : def);
    KEEP(name, API_COHORT_NAME, "");
    KEEP(description, API_COHORT_DESCRIPTION, "");
    KEEP(deleted, API_COHORT_DELETED, "0");
#undef KEEP
    if (x->id[0])
        api_store_cohort_update(call->ctx->db, call->project_id, x->id,
                                cm_db_value(res, 0, 0, API_COHORT_VERSION), x->name, x->description,
                                x->filters ? x->filters
                                           : cm_db_value(res, 0, 0, API_COHORT_FILTERS),
                                x->deleted, on_written, call);
    else
        api_store_cohort_create(call->ctx->db, call->project_id, x->name, x->description,
                                x->filters, on_written, call);
}

static cohort_write_t *begin(api_call_t *call, bool with_id)
{
    cohort_write_t *x = cm_xcalloc(1, sizeof(*x));
    call->state = x;
    call->state_free = cohort_write_free;
    if (with_id) {
        cm_slice_t id = cm_http_req_param(call->req, "id");
        if (id.len == 0 || id.len > 18 || cm_slice_span(id, "0123456789") < id.len) {
            api_respond_not_found(call);
            return NULL;
        }
        snprintf(x->id, sizeof(x->id), "%.*s", (int)id.len, id.p);
    }
    return x;
}

void api_cohorts_retrieve(api_call_t *call)
{
    cohort_write_t *x = begin(call, true);
    if (x == NULL)
        return;
    x->read_only = true;
    api_store_cohort_context(call->ctx->db, call->project_id, x->id, on_context, call);
}

void api_cohorts_create(api_call_t *call)
{
    cohort_write_t *x = begin(call, false);
    if (api_call_body(call) != 0 || parse_body(call, x) != 0)
        return;
    if (x->filters == NULL) {
        api_respond_invalid(call, "filters", "This field is required.");
        return;
    }
    api_store_cohort_context(call->ctx->db, call->project_id, NULL, on_context, call);
}

void api_cohorts_update(api_call_t *call)
{
    cohort_write_t *x = begin(call, true);
    if (x == NULL || api_call_body(call) != 0 || parse_body(call, x) != 0)
        return;
    api_store_cohort_context(call->ctx->db, call->project_id, x->id, on_context, call);
}

void api_cohorts_delete(api_call_t *call)
{
    cohort_write_t *x = begin(call, true);
    if (x == NULL)
        return;
    x->deleted = cm_xstrdup("1");
    x->is_delete = true;
    api_store_cohort_context(call->ctx->db, call->project_id, x->id, on_context, call);
}
