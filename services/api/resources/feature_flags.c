/*
 * feature_flags.c - /api/projects/{id}/feature_flags/: list, create,
 * retrieve, PATCH, soft delete, in PostHog's body.
 *
 * A write goes: body -> field checks and the filters' shape
 * (flagdefs/filters.c) -> one read of the project's flags and cohorts (and the
 * flag itself for PATCH) -> references checked (unknown cohorts and flags,
 * dependency cycles) -> the write, guarded by the version it read (a
 * concurrent change gives 409), with the project queued for publishing in
 * the same transaction -> publisher kicked -> answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "http/page_cache.h"
#include "publish/publish.h"
#include "flagdefs/flagdefs.h"
#include "resources/resources.h"
#include "store/store.h"

/* ---- rendering ---------------------------------------------------------------- */

static void write_bool(cm_json_writer_t *w, const char *v)
{
    cm_json_boolean(w, v && atoi(v) != 0);
}

static void write_flag(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    (void)call;
#define V(col) cm_db_value(res, 0, row, col)
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(V(API_FLAG_ID)));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, V(API_FLAG_NAME));
    cm_json_key(w, "key");
    cm_json_str_cstr(w, V(API_FLAG_KEY));
    cm_json_key(w, "filters");
    api_json_stored(w, V(API_FLAG_FILTERS));
    cm_json_key(w, "deleted");
    write_bool(w, V(API_FLAG_DELETED));
    cm_json_key(w, "active");
    write_bool(w, V(API_FLAG_ACTIVE));
    cm_json_key(w, "created_by");
    if (V(API_FLAG_CREATED_BY)) {
        cm_json_begin_object(w);
        cm_json_key(w, "id");
        cm_json_int(w, atoll(V(API_FLAG_CREATED_BY)));
        cm_json_end_object(w);
    } else {
        cm_json_null(w);
    }
    cm_json_key(w, "created_at");
    api_json_time(w, V(API_FLAG_CREATED));
    cm_json_key(w, "updated_at");
    api_json_time(w, V(API_FLAG_UPDATED));
    cm_json_key(w, "version");
    cm_json_int(w, atoll(V(API_FLAG_VERSION)));
    cm_json_key(w, "ensure_experience_continuity");
    write_bool(w, V(API_FLAG_EEC));
    cm_json_key(w, "evaluation_runtime");
    cm_json_str_cstr(w, V(API_FLAG_RUNTIME));
    cm_json_key(w, "evaluation_contexts");
    api_json_stored(w, V(API_FLAG_CONTEXTS));
    cm_json_key(w, "evaluation_tags");
    api_json_stored(w, V(API_FLAG_CONTEXTS));
    cm_json_key(w, "bucketing_identifier");
    if (V(API_FLAG_BUCKETING))
        cm_json_str_cstr(w, V(API_FLAG_BUCKETING));
    else
        cm_json_null(w);
    cm_json_end_object(w);
#undef V
}

/* The list: the project's flags_version first (one row), then the page kept
 * for this path, limit and offset at that version, or the rows rendered and
 * kept under it. The version is read before the rows, so a change landing in
 * between leaves a page newer than its version says: the next read misses
 * and renders again; a page older than an acknowledged change is never
 * served (http/page_cache.h). */
typedef struct {
    long long version;
} list_t;

static void page_key(api_call_t *call, cm_buf_t *key)
{
    cm_slice_t path = cm_http_req_path(call->req);
    cm_buf_appendf(key, "%.*s?%s&%s", (int)path.len, path.p, call->limit_text, call->offset_text);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    list_t *l = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_buf_t out = CM_BUF_INIT, key = CM_BUF_INIT;
    api_render_page(call, res, API_FLAG_TOTAL, write_flag, &out);
    page_key(call, &key);
    api_page_cache_put(call->ctx->pages, cm_buf_slice(&key), l->version, cm_buf_slice(&out));
    cm_buf_free(&key);
    api_respond_json(call, 200, &out);
}

static void on_list_version(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    const char *v = cm_db_value(res, 0, 0, 0);
    list_t *l = cm_xcalloc(1, sizeof(*l));
    l->version = v ? atoll(v) : -1; /* no project row: -1, never a kept page's */
    call->state = l;
    call->state_free = free;
    cm_buf_t key = CM_BUF_INIT;
    page_key(call, &key);
    cm_slice_t page;
    bool hit = api_page_cache_get(call->ctx->pages, cm_buf_slice(&key), l->version, &page);
    cm_buf_free(&key);
    if (hit)
        api_respond_json_bytes(call, 200, page);
    else
        api_store_flags_list(call->ctx->db, call->project_id, call->limit_text, call->offset_text,
                             on_list, call);
}

void api_flags_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_flags_version(call->ctx->db, call->project_id, on_list_version, call);
}

static void on_one(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, write_flag);
}

static bool flag_id_param(api_call_t *call, char *out, size_t size)
{
    cm_slice_t id = cm_http_req_param(call->req, "id");
    if (id.len == 0 || id.len > 18 || id.len >= size || cm_slice_span(id, "0123456789") < id.len) {
        api_respond_not_found(call);
        return false;
    }
    snprintf(out, size, "%.*s", (int)id.len, id.p);
    return true;
}

void api_flags_retrieve(api_call_t *call)
{
    char id[24];
    if (flag_id_param(call, id, sizeof(id)))
        api_store_flag_get(call->ctx->db, call->project_id, id, on_one, call);
}

/* ---- writes --------------------------------------------------------------------- */

/* One write's state: each field as text for the store, NULL until the body
 * or the current row gives it. */
typedef struct {
    char id[24];
    char *key, *name, *filters, *active, *eec, *runtime, *contexts, *bucketing, *deleted;
    bool bucketing_given;
    bool is_delete;
    api_flagdefs_refs_t refs;
} write_t;

static void write_free(void *p)
{
    write_t *x = p;
    free(x->key);
    free(x->name);
    free(x->filters);
    free(x->active);
    free(x->eec);
    free(x->runtime);
    free(x->contexts);
    free(x->bucketing);
    free(x->deleted);
    free(x);
}

static int bool_field(api_call_t *call, cm_json_t v, const char *attr, char **out)
{
    bool b;
    if (cm_json_as_bool(v, &b) != CM_OK) {
        api_respond_invalid(call, attr, "Must be a valid boolean.");
        return -1;
    }
    *out = cm_xstrdup(b ? "1" : "0");
    return 0;
}

static int choice_field(api_call_t *call, cm_json_t v, const char *attr, const char *const *choices,
                        char **out)
{
    cm_slice_t s = cm_json_str_inner(v);
    for (size_t i = 0; s.p && choices[i]; i++)
        if (cm_slice_eq_cstr(s, choices[i])) {
            *out = cm_xstrdup(choices[i]);
            return 0;
        }
    api_respond_invalid(call, attr, "\"%.*s\" is not a valid choice.",
                        (int)(cm_json_raw(v).len > 40 ? 40 : cm_json_raw(v).len), cm_json_raw(v).p);
    return -1;
}

static int contexts_field(api_call_t *call, cm_json_t v, char **out)
{
    if (cm_json_type(v) != CM_JSON_ARRAY || cm_json_len(v) > 100) {
        api_respond_invalid(call, "evaluation_contexts", "Expected a list of at most 100 tags.");
        return -1;
    }
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_array(&w);
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t tag;
    while (cm_json_next(&it, NULL, &tag)) {
        cm_slice_t s = cm_json_str_inner(tag);
        if (s.p == NULL || cm_json_str_has_escapes(tag) || s.len == 0 || s.len > 100) {
            cm_buf_free(&b);
            api_respond_invalid(call, "evaluation_contexts",
                                "Each tag is a string of 1 to 100 characters.");
            return -1;
        }
        cm_json_str_s(&w, s);
    }
    cm_json_end_array(&w);
    *out = cm_buf_detach(&b, NULL);
    return 0;
}

/* Reads the body's fields into x. -1: answered. */
static int parse_body(api_call_t *call, write_t *x)
{
    static const char *const runtimes[] = {"all", "server", "client", NULL};
    static const char *const bucketing[] = {"distinct_id", "device_id", "", NULL};
    const char *key_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    cm_json_t root = cm_json_root(call->body), v;
    if (api_body_string(call, "key", 1, 400, key_chars,
                        "Only letters, numbers, hyphens (-) & underscores (_) are allowed.",
                        &x->key) < 0 ||
        api_body_string(call, "name", 0, 4000, NULL, NULL, &x->name) < 0)
        return -1;
    if (cm_json_exists(v = cm_json_get(root, "filters"))) {
        cm_api_error_t e;
        if (api_flagdefs_check(v, &x->refs, &e) != 0) {
            api_respond_error(call, &e);
            return -1;
        }
        cm_buf_t b = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &b);
        cm_json_value(&w, v);
        x->filters = cm_buf_detach(&b, NULL);
    }
    if (cm_json_exists(v = cm_json_get(root, "active")) &&
        bool_field(call, v, "active", &x->active) != 0)
        return -1;
    if (cm_json_exists(v = cm_json_get(root, "ensure_experience_continuity")) &&
        bool_field(call, v, "ensure_experience_continuity", &x->eec) != 0)
        return -1;
    if (cm_json_exists(v = cm_json_get(root, "deleted")) &&
        bool_field(call, v, "deleted", &x->deleted) != 0)
        return -1;
    if (cm_json_exists(v = cm_json_get(root, "evaluation_runtime")) && !cm_json_is_null(v) &&
        choice_field(call, v, "evaluation_runtime", runtimes, &x->runtime) != 0)
        return -1;
    if (cm_json_exists(v = cm_json_get_either(root, "evaluation_contexts", "evaluation_tags")) &&
        !cm_json_is_null(v) && contexts_field(call, v, &x->contexts) != 0)
        return -1;
    if (cm_json_exists(v = cm_json_get(root, "bucketing_identifier"))) {
        x->bucketing_given = true;
        if (!cm_json_is_null(v) &&
            choice_field(call, v, "bucketing_identifier", bucketing, &x->bucketing) != 0)
            return -1;
    }
    return 0;
}

/* Fills what the body left out from the current row (PATCH) or defaults. */
static void complete(write_t *x, const cm_db_res_t *res)
{
    bool have = res && cm_db_nrows(res, 0) == 1;
#define FILL(field, col, def)                                                                      \
    if (x->field == NULL)                                                                          \
        x->field =                                                                                 \
            cm_xstrdup(have && cm_db_value(res, 0, 0, col) ? cm_db_value(res, 0, 0, col) : def);
    FILL(key, API_FLAG_KEY, "");
    FILL(name, API_FLAG_NAME, "");
    FILL(filters, API_FLAG_FILTERS, "{\"groups\":[]}");
    FILL(active, API_FLAG_ACTIVE, "1");
    FILL(eec, API_FLAG_EEC, "0");
    FILL(runtime, API_FLAG_RUNTIME, "all");
    FILL(contexts, API_FLAG_CONTEXTS, "[]");
    FILL(deleted, API_FLAG_DELETED, "0");
#undef FILL
    if (!x->bucketing_given && have && cm_db_value(res, 0, 0, API_FLAG_BUCKETING))
        x->bucketing = cm_xstrdup(cm_db_value(res, 0, 0, API_FLAG_BUCKETING));
}

/* The project's flag dependencies (table 2 of the context: id, key,
 * filters), with the written flag's new references in place of its stored
 * ones. */
static api_flagdefs_graph_t *flag_graph(const cm_db_res_t *res, const write_t *x)
{
    size_t n = cm_db_nrows(res, 2);
    api_flagdefs_graph_t *g = api_flagdefs_graph_new(n + 1);
    long long me = x->id[0] ? atoll(x->id) : 0;
    for (size_t i = 0; i < n; i++) {
        long long id = atoll(cm_db_value(res, 2, i, 0));
        api_flagdefs_refs_t refs;
        if (id == me)
            continue;
        api_flagdefs_refs_of(cm_db_value(res, 2, i, 2), &refs);
        api_flagdefs_graph_add(g, id, cm_db_value(res, 2, i, 1), refs.flags, refs.nflags);
    }
    if (me)
        api_flagdefs_graph_add(g, me, x->key, x->refs.flags, x->refs.nflags);
    return g;
}

/* Unknown cohorts, unknown flags, cycles: -1 answered. */
static int check_refs(api_call_t *call, write_t *x, const cm_db_res_t *res)
{
    for (size_t i = 0; i < x->refs.ncohorts; i++)
        if (!api_store_has_id(res, 1, x->refs.cohorts[i])) {
            api_respond_invalid(call, "filters", "Cohort with id %lld does not exist.",
                                x->refs.cohorts[i]);
            return -1;
        }
    api_flagdefs_graph_t *g = x->id[0] && x->refs.nflags ? flag_graph(res, x) : NULL;
    for (size_t i = 0; i < x->refs.nflags; i++) {
        long long dep = x->refs.flags[i];
        if (!api_store_has_id(res, 2, dep)) {
            api_flagdefs_graph_free(g);
            api_respond_invalid(call, "filters", "Flag dependency references unknown flag id %lld.",
                                dep);
            return -1;
        }
        if (g && api_flagdefs_graph_reaches(g, dep, atoll(x->id))) {
            api_flagdefs_graph_free(g);
            api_respond_invalid(call, "filters",
                                "Circular dependency detected: flag %s depends on itself through "
                                "flag %lld.",
                                x->id, dep);
            return -1;
        }
    }
    api_flagdefs_graph_free(g);
    return 0;
}

static void on_written(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    write_t *x = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, "key",
                             "There is already a feature flag with this key.");
        return;
    }
    if (cm_db_nrows(res, 0) != 1) {
        cm_api_error_t e;
        cm_api_error_set(&e, 409, "conflict", NULL,
                         "The flag was changed by another request meanwhile; read it and retry.");
        api_respond_error(call, &e);
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    if (x->is_delete)
        api_respond_empty(call, 204);
    else
        api_respond_row(call, 0, res, x->id[0] ? 200 : 201, write_flag);
}

static api_store_flag_t store_fields(api_call_t *call, const write_t *x)
{
    return (api_store_flag_t){
        .project_id = call->project_id,
        .user_id = call->user_id,
        .key = x->key,
        .name = x->name,
        .filters = x->filters,
        .active = x->active,
        .eec = x->eec,
        .runtime = x->runtime,
        .contexts = x->contexts,
        .bucketing = x->bucketing,
        .deleted = x->deleted,
    };
}

static void on_context(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    write_t *x = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (x->id[0] && cm_db_nrows(res, 0) != 1) {
        api_respond_not_found(call);
        return;
    }
    if (x->id[0] && x->filters == NULL) /* PATCH without filters: the stored ones' references */
        api_flagdefs_refs_of(cm_db_value(res, 0, 0, API_FLAG_FILTERS), &x->refs);
    complete(x, x->id[0] ? res : NULL);
    if (!x->is_delete && check_refs(call, x, res) != 0)
        return;
    api_store_flag_t f = store_fields(call, x);
    if (x->id[0])
        api_store_flag_update(call->ctx->db, &f, x->id, cm_db_value(res, 0, 0, API_FLAG_VERSION),
                              on_written, call);
    else
        api_store_flag_create(call->ctx->db, &f, on_written, call);
}

static write_t *write_begin(api_call_t *call)
{
    write_t *x = cm_xcalloc(1, sizeof(*x));
    call->state = x;
    call->state_free = write_free;
    return x;
}

void api_flags_create(api_call_t *call)
{
    write_t *x = write_begin(call);
    if (api_call_body(call) != 0 || parse_body(call, x) != 0)
        return;
    if (x->key == NULL) {
        api_respond_invalid(call, "key", "This field is required.");
        return;
    }
    api_store_flag_context(call->ctx->db, call->project_id, NULL, on_context, call);
}

void api_flags_update(api_call_t *call)
{
    write_t *x = write_begin(call);
    if (!flag_id_param(call, x->id, sizeof(x->id)) || api_call_body(call) != 0 ||
        parse_body(call, x) != 0)
        return;
    api_store_flag_context(call->ctx->db, call->project_id, x->id, on_context, call);
}

void api_flags_delete(api_call_t *call)
{
    write_t *x = write_begin(call);
    if (!flag_id_param(call, x->id, sizeof(x->id)))
        return;
    x->deleted = cm_xstrdup("1");
    x->is_delete = true;
    api_store_flag_context(call->ctx->db, call->project_id, x->id, on_context, call);
}
