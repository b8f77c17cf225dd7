/*
 * personal_api_keys.c - /api/personal_api_keys/: the key's user's own keys.
 *
 * A key is "phx_" and 256 random bits, shown once in the creation's answer
 * ("value") and stored only as its SHA-256 and a mask ("phx_...abcd").
 * Scopes come from http/scopes.c; a key may be limited to some
 * organizations (scoped_organizations) or projects (scoped_teams).
 *
 * A key makes keys no wider than itself, in scopes and in scoping, and an
 * OAuth access token manages no keys at all (docs/api.md): otherwise a
 * user:write grant would outlive its revocation as a "*" key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "access/access.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char value[CM_TOKEN_MAX];
    char *label;
    cm_buf_t scopes, orgs, teams;
    bool has_orgs, has_teams;
} create_t;

/* A key row's fields (API_KEYROW_* columns), value only when given: the
 * answer that made the key, here and in `api admin keys create`. */
void api_key_json_fields(cm_json_writer_t *w, const cm_db_res_t *res, size_t row, const char *value)
{
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
    cm_json_key(w, "scopes");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPES));
    cm_json_key(w, "scoped_organizations");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPED_ORGS));
    cm_json_key(w, "scoped_teams");
    api_json_stored(w, cm_db_value(res, 0, row, API_KEYROW_SCOPED_TEAMS));
}

/* The key's value only in the answer that made it (call->state). */
static void write_key(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    const create_t *made = call->state;
    cm_json_begin_object(w);
    api_key_json_fields(w, res, row, made ? made->value : NULL);
    cm_json_key(w, "user_id");
    cm_json_int(w, atoll(call->user_id));
    cm_json_end_object(w);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_KEYROW_TOTAL, write_key);
}

void api_keys_list(api_call_t *call)
{
    if (api_call_refuse_oauth(call, "manage personal API keys"))
        return;
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
    if (!api_call_refuse_oauth(call, "manage personal API keys") && id_param(call, id, sizeof(id)))
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
    if (!api_call_refuse_oauth(call, "manage personal API keys") && id_param(call, id, sizeof(id)))
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

static void forbid(api_call_t *call, const char *attr, const char *detail)
{
    cm_api_error_t e;
    cm_api_error_set(&e, 403, "permission_denied", attr, "%s", detail);
    api_respond_error(call, &e);
}

/* The first requested scope the creating key lacks, or NULL. */
static const char *scope_too_wide(api_call_t *call, cm_json_doc_t *scopes, char *buf, size_t size)
{
    cm_json_iter_t it = cm_json_iter(cm_json_root(scopes));
    cm_json_t v;
    while (cm_json_next(&it, NULL, &v)) {
        cm_slice_t s = cm_json_str_inner(v); /* checked by list_field: a scope name */
        snprintf(buf, size, "%.*s", (int)s.len, s.p);
        if (!api_access_covers(call->cred_scopes, buf))
            return buf;
    }
    return NULL;
}

/* api_access_within's org_of over the user's projects (id, organization). */
static const char *org_of(void *ud, const char *team)
{
    const cm_db_res_t *res = ud;
    for (size_t i = 0; res && i < cm_db_nrows(res, 0); i++)
        if (strcmp(cm_db_value(res, 0, i, API_USER_PROJECT_ID), team) == 0)
            return cm_db_value(res, 0, i, API_USER_PROJECT_ORG);
    return NULL;
}

static void store_key(api_call_t *call, const cm_db_res_t *projects)
{
    create_t *c = call->state;
    char why[256];
    int wide = api_access_within(
        call->cred_teams, call->cred_orgs, c->has_teams ? cm_buf_cstr(&c->teams) : NULL,
        c->has_orgs ? cm_buf_cstr(&c->orgs) : NULL, org_of, (void *)projects, why, sizeof(why));
    if (wide != API_ACCESS_WITHIN) {
        forbid(call, wide == API_ACCESS_WIDER_TEAMS ? "scoped_teams" : "scoped_organizations", why);
        return;
    }
    char id[CM_UUID_STR_LEN + 1], hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_uuid_v7(id);
    cm_token_new("phx_", c->value);
    cm_sha256_hex(c->value, strlen(c->value), hash);
    cm_token_mask(c->value, mask, sizeof(mask));
    api_store_key_create(call->ctx->db, id, call->user_id, c->label, hash, mask,
                         cm_buf_cstr(&c->scopes), c->has_orgs ? cm_buf_cstr(&c->orgs) : NULL,
                         c->has_teams ? cm_buf_cstr(&c->teams) : NULL, on_one, call);
}

static void on_projects(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0)
        api_respond_db_error(call, status, res, NULL, NULL);
    else
        store_key(call, res);
}

void api_keys_create(api_call_t *call)
{
    if (api_call_refuse_oauth(call, "manage personal API keys") || api_call_body(call) != 0)
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
    bool has_scopes;
    if (list_field(call, "scopes", false, 300, api_scope_valid, &c->scopes, &has_scopes) != 0 ||
        list_field(call, "scoped_organizations", false, 100, org_id_ok, &c->orgs, &c->has_orgs) !=
            0 ||
        list_field(call, "scoped_teams", true, 1000, NULL, &c->teams, &c->has_teams) != 0)
        return;
    if (!has_scopes || c->scopes.len <= 2) {
        api_respond_invalid(call, "scopes", "At least one scope is required.");
        return;
    }
    /* never wider than the creating key: its scopes, then its scoping */
    cm_json_doc_t *scopes = NULL;
    char scope[96], why[200];
    if (cm_json_parse(c->scopes.p, c->scopes.len, NULL, &scopes, NULL) != CM_OK) {
        api_respond_invalid(call, "scopes", "Invalid scopes.");
        return;
    }
    const char *wide = scope_too_wide(call, scopes, scope, sizeof(scope));
    cm_json_doc_free(scopes);
    if (wide) {
        snprintf(why, sizeof(why), "The new key's scope '%s' is wider than this key's scopes.",
                 wide);
        forbid(call, "scopes", why);
        return;
    }
    /* teams of a key scoped to organizations: whose are they? */
    if (call->cred_orgs && c->has_teams)
        api_store_user_projects(call->ctx->db, call->user_id, on_projects, call);
    else
        store_key(call, NULL);
}
