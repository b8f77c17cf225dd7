/*
 * insight_variables.c - /api/projects/{id}/insight_variables/: the typed
 * variables an endpoint's query names as {variables.<code_name>}
 * (docs/endpoints.md). PostHog's shape: id (UUID), name, code_name, type
 * (String, Number, Boolean, List, Date), default_value, values (a List's
 * choices). code_name defaults to the name made into an identifier, and is
 * unique in the project.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/uuid.h"
#include "resources/resources.h"
#include "query/variables.h"
#include "store/store.h"

static void write_variable(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                           size_t row)
{
    (void)call;
#define V(col) cm_db_value(res, 0, row, col)
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, V(API_VAR_ID));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, V(API_VAR_NAME));
    cm_json_key(w, "code_name");
    cm_json_str_cstr(w, V(API_VAR_CODE_NAME));
    cm_json_key(w, "type");
    cm_json_str_cstr(w, V(API_VAR_TYPE));
    cm_json_key(w, "default_value");
    api_json_stored(w, V(API_VAR_DEFAULT));
    cm_json_key(w, "values");
    api_json_stored(w, V(API_VAR_OPTIONS));
    cm_json_key(w, "created_at");
    api_json_time(w, V(API_VAR_CREATED));
    cm_json_key(w, "updated_at");
    api_json_time(w, V(API_VAR_UPDATED));
    cm_json_end_object(w);
#undef V
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_VAR_TOTAL, write_variable);
}

void api_variables_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_variables_list(call->ctx->db, call->project_id, call->limit_text,
                                 call->offset_text, on_list, call);
}

/* ---- writes ------------------------------------------------------------------------------ */

typedef struct {
    char id[CM_UUID_STR_LEN + 1];
    char *name, *code_name, *type, *default_value, *options;
    bool have_default, have_options;
} var_write_t;

static void var_write_free(void *p)
{
    var_write_t *x = p;
    free(x->name);
    free(x->code_name);
    free(x->type);
    free(x->default_value);
    free(x->options);
    free(x);
}

/* "Page views (EU)" -> "page_views_eu". */
static char *code_name_of(const char *name)
{
    size_t n = strlen(name), w = 0;
    char *out = cm_xmalloc(n + 2);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isalnum(c))
            out[w++] = (char)tolower(c);
        else if ((c == ' ' || c == '_' || c == '-') && w > 0 && out[w - 1] != '_')
            out[w++] = '_';
    }
    while (w > 0 && out[w - 1] == '_')
        w--;
    out[w] = '\0';
    if (w > 0 && isdigit((unsigned char)out[0])) {
        memmove(out + 1, out, w + 1);
        out[0] = '_';
    }
    return out;
}

static char *json_of(cm_json_t v)
{
    cm_buf_t text = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &text);
    cm_json_value(&w, v);
    return cm_buf_detach(&text, NULL);
}

static int parse_body(api_call_t *call, var_write_t *x, bool create)
{
    cm_json_t root = cm_json_root(call->body), v;
    const char *ident = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    if (api_body_string(call, "name", 1, 400, NULL, NULL, &x->name) < 0 ||
        api_body_string(call, "code_name", 1, 400, ident, "Only letters, digits and underscores.",
                        &x->code_name) < 0 ||
        api_body_string(call, "type", 1, 20, NULL, NULL, &x->type) < 0)
        return -1;
    if (create && x->name == NULL) {
        api_respond_invalid(call, "name", "This field is required.");
        return -1;
    }
    if (create && x->type == NULL) {
        api_respond_invalid(call, "type", "This field is required.");
        return -1;
    }
    if (x->type != NULL && api_variable_type(x->type) < 0) {
        api_respond_invalid(call, "type", "\"%s\" is not a valid choice.", x->type);
        return -1;
    }
    if (x->code_name != NULL && isdigit((unsigned char)x->code_name[0])) {
        api_respond_invalid(call, "code_name", "A code name cannot start with a digit.");
        return -1;
    }
    if (cm_json_exists(v = cm_json_get(root, "values"))) {
        x->have_options = true;
        if (!cm_json_is_null(v) && cm_json_type(v) != CM_JSON_ARRAY) {
            api_respond_invalid(call, "values", "Expected a list of values.");
            return -1;
        }
        x->options = cm_json_is_null(v) ? NULL : json_of(v);
    }
    if (cm_json_exists(v = cm_json_get(root, "default_value"))) {
        x->have_default = true;
        x->default_value = cm_json_is_null(v) ? NULL : json_of(v);
    }
    return 0;
}

/* The default fits the type (checked once both are known). */
static bool check_default(api_call_t *call, var_write_t *x)
{
    if (x->default_value == NULL)
        return true;
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(x->default_value, strlen(x->default_value), NULL, &doc, NULL) != 0)
        return false;
    char why[160];
    bool ok = api_variable_fits(api_variable_type(x->type), cm_json_root(doc), why, sizeof(why));
    cm_json_doc_free(doc);
    if (!ok)
        api_respond_invalid(call, "default_value", "%s", why);
    return ok;
}

static void on_written(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status == CM_ECONFLICT) {
        api_respond_invalid(call, "code_name",
                            "A variable with this code name already exists in the project.");
        return;
    }
    api_respond_row(call, status, res, call->route->methods == CM_HTTP_POST ? 201 : 200,
                    write_variable);
}

static void on_current(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    var_write_t *x = call->state;
    if (status != 0 || cm_db_nrows(res, 0) != 1) {
        api_respond_row(call, status, res, 200, write_variable);
        return;
    }
#define KEEP(field, col)                                                                           \
    if (x->field == NULL && cm_db_value(res, 0, 0, col) != NULL)                                   \
        x->field = cm_xstrdup(cm_db_value(res, 0, 0, col));
    KEEP(name, API_VAR_NAME);
    KEEP(code_name, API_VAR_CODE_NAME);
    KEEP(type, API_VAR_TYPE);
    if (!x->have_default)
        KEEP(default_value, API_VAR_DEFAULT);
    if (!x->have_options)
        KEEP(options, API_VAR_OPTIONS);
#undef KEEP
    if (!check_default(call, x))
        return;
    api_store_variable_update(call->ctx->db, call->project_id, x->id, x->name, x->code_name,
                              x->type, x->default_value, x->options, on_written, call);
}

static var_write_t *begin(api_call_t *call, bool with_id)
{
    var_write_t *x = cm_xcalloc(1, sizeof(*x));
    call->state = x;
    call->state_free = var_write_free;
    if (with_id) {
        cm_slice_t id = cm_http_req_param(call->req, "id");
        if (!cm_uuid_valid(id.p, id.len)) {
            api_respond_not_found(call);
            return NULL;
        }
        snprintf(x->id, sizeof(x->id), "%.*s", (int)id.len, id.p);
    }
    return x;
}

void api_variables_create(api_call_t *call)
{
    var_write_t *x = begin(call, false);
    if (x == NULL || api_call_body(call) < 0 || parse_body(call, x, true) < 0)
        return;
    if (x->code_name == NULL)
        x->code_name = code_name_of(x->name);
    if (x->code_name[0] == '\0') {
        api_respond_invalid(call, "code_name", "The name gives no code name: give one.");
        return;
    }
    if (!check_default(call, x))
        return;
    cm_uuid_v7(x->id);
    api_store_variable_create(call->ctx->db, call->project_id, x->id, x->name, x->code_name,
                              x->type, x->default_value, x->options, on_written, call);
}

static void on_read(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, write_variable);
}

void api_variables_retrieve(api_call_t *call)
{
    var_write_t *x = begin(call, true);
    if (x != NULL)
        api_store_variable_get(call->ctx->db, call->project_id, x->id, on_read, call);
}

void api_variables_update(api_call_t *call)
{
    var_write_t *x = begin(call, true);
    if (x == NULL || api_call_body(call) < 0 || parse_body(call, x, false) < 0)
        return;
    api_store_variable_get(call->ctx->db, call->project_id, x->id, on_current, call);
}

static void on_deleted(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0)
        api_respond_db_error(call, status, res, NULL, NULL);
    else if (cm_db_nrows(res, 0) == 0)
        api_respond_not_found(call);
    else
        api_respond_empty(call, 204);
}

void api_variables_delete(api_call_t *call)
{
    var_write_t *x = begin(call, true);
    if (x != NULL)
        api_store_variable_delete(call->ctx->db, call->project_id, x->id, on_deleted, call);
}
