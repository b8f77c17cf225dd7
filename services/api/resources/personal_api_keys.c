/*
 * personal_api_keys.c - /api/personal_api_keys/: the key's user's own keys.
 *
 * A key is "phx_" and 256 random bits, shown once in the creation's answer
 * ("value") and stored only as its SHA-256 and a mask ("phx_...abcd").
 * Scopes come from http/scopes.c; a key may be limited to some
 * organizations (scoped_organizations) or projects (scoped_teams).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char value[CM_TOKEN_MAX];
    char *label;
    cm_buf_t scopes, orgs, teams;
} create_t;

/* The key's value only in the answer that made it (call->state). */
static void write_key(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    const create_t *made = call->state;
    const char *value = made ? made->value : NULL;
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_KEYROW_ID));
    cm_json_key(w, "label");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_KEYROW_LABEL));
    if (value) {
        cm_json_key(w, "value");
        cm_json_str_cstr(w, value);
    }
    cm_json_key(w, "mask_value");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_KEYROW_MASK));
    cm_json_key(w, "created_at");
    api_json_time(w, cm_db_value(res, 0, row, API_KEYROW_CREATED));
    cm_json_key(w, "last_used_at");
    api_json_time(w, cm_db_value(res, 0, row, API_KEYROW_LAST_USED));
    cm_json_key(w, "user_id");
    cm_json_int(w, atoll(call->user_id));
    cm_json_key(w, "scopes");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPES));
    cm_json_key(w, "scoped_organizations");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPED_ORGS));
    cm_json_key(w, "scoped_teams");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPED_TEAMS));
    cm_json_end_object(w);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_KEYROW_TOTAL, write_key);
}

void api_keys_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_keys_list(call->ctx->db, call->user_id, call->limit_text, call->offset_text,
                            on_list, call);
}

static void create_free(void *p)
{
    create_t *c = p;
    free(c->label);
    cm_buf_free(&c->scopes);
    cm_buf_free(&c->orgs);
    cm_buf_free(&c->teams);
    free(c);
}

static void on_one(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    api_respond_row(call, status, res, call->state ? 201 : 200, write_key);
}

static bool id_param(api_call_t *call, char *out, size_t size)
{
    cm_slice_t id = cm_http_req_param(call->req, "id");
    if (id.len == 0 || id.len >= size || !cm_uuid_valid(id.p, id.len)) {
        api_respond_not_found(call);
        return false;
    }
    snprintf(out, size, "%.*s", (int)id.len, id.p);
    return true;
}

void api_keys_retrieve(api_call_t *call)
{
    char id[40];
    if (id_param(call, id, sizeof(id)))
        api_store_key_get(call->ctx->db, call->user_id, id, on_one, call);
}

static void on_deleted(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0)
        api_respond_db_error(call, status, res, NULL, NULL);
    else if (cm_db_changes(res, 0) == 0)
        api_respond_not_found(call);
    else
        api_respond_empty(call, 204);
}

void api_keys_delete(api_call_t *call)
{
    char id[40];
    if (id_param(call, id, sizeof(id)))
        api_store_key_delete(call->ctx->db, call->user_id, id, on_deleted, call);
}

/* field: absent/null -> *out stays empty (and *present false); else a JSON
 * array of at most max strings (or integers when ints) checked by ok(). */
static int list_field(api_call_t *call, const char *field, bool ints, size_t max,
                      bool (*ok)(cm_slice_t), cm_buf_t *out, bool *present)
{
    cm_json_t v = cm_json_get(cm_json_root(call->body), field);
    *present = false;
    if (!cm_json_exists(v) || cm_json_is_null(v))
        return 0;
    if (cm_json_type(v) != CM_JSON_ARRAY || cm_json_len(v) > max) {
        api_respond_invalid(call, field, "Expected a list of at most %zu items.", max);
        return -1;
    }
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_array(&w);
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t item;
    while (cm_json_next(&it, NULL, &item)) {
        int64_t n;
        cm_slice_t s = cm_json_str_inner(item);
        if (ints ? cm_json_as_int64(item, &n) != CM_OK || n <= 0
                 : s.p == NULL || cm_json_str_has_escapes(item) || (ok && !ok(s))) {
            cm_slice_t raw = cm_json_raw(item);
            api_respond_invalid(call, field, "Invalid value %.*s.",
                                (int)(raw.len > 80 ? 80 : raw.len), raw.p);
            return -1;
        }
        if (ints)
            cm_json_int(&w, n);
        else
            cm_json_str_s(&w, s);
    }
    cm_json_end_array(&w);
    *present = true;
    return 0;
}

static bool org_id_ok(cm_slice_t s)
{
    return cm_uuid_valid(s.p, s.len);
}

void api_keys_create(api_call_t *call)
{
    if (api_call_body(call) != 0)
        return;
    create_t *c = cm_xcalloc(1, sizeof(*c));
    call->state = c;
    call->state_free = create_free;
    int rc = api_body_string(call, "label", 1, 40, NULL, NULL, &c->label);
    if (rc != 0) {
        if (rc > 0)
            api_respond_invalid(call, "label", "A label of 1 to 40 characters is required.");
        return;
    }
    bool has_scopes, has_orgs, has_teams;
    if (list_field(call, "scopes", false, 300, api_scope_valid, &c->scopes, &has_scopes) != 0 ||
        list_field(call, "scoped_organizations", false, 100, org_id_ok, &c->orgs, &has_orgs) != 0 ||
        list_field(call, "scoped_teams", true, 1000, NULL, &c->teams, &has_teams) != 0)
        return;
    if (!has_scopes || c->scopes.len <= 2) {
        api_respond_invalid(call, "scopes", "At least one scope is required.");
        return;
    }
    char id[CM_UUID_STR_LEN + 1], hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_uuid_v7(id);
    cm_token_new("phx_", c->value);
    cm_sha256_hex(c->value, strlen(c->value), hash);
    cm_token_mask(c->value, mask, sizeof(mask));
    api_store_key_create(call->ctx->db, id, call->user_id, c->label, hash, mask,
                         cm_buf_cstr(&c->scopes), has_orgs ? cm_buf_cstr(&c->orgs) : NULL,
                         has_teams ? cm_buf_cstr(&c->teams) : NULL, on_one, call);
}
