/*
 * cimd_verification_tokens.c - /api/organizations/{org_id}/
 * cimd_verification_tokens/ (docs/oauth.md): an organization's admins make
 * a token (phvt_, shown once, stored as its SHA-256) bound to one client
 * document URL; the app puts it in its document as
 * com.<vendor>.verification_token, which links the app to the organization
 * (higher provisioning limits). The URL is kept normalised (lowercase scheme
 * and host, no default port, no trailing slash), so the binding holds
 * whichever way the document's URL is spelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "access/access.h"
#include "oauth/oauth.h"
#include "resources/resources.h"
#include "store/store.h"

/* Every route first finds the organization among the user's (and within
 * the key's scoped_organizations): another organization is 404 whatever
 * the method, as for projects, so a key learns nothing of it. */
typedef struct {
    char org[CM_UUID_STR_LEN + 1];
    void (*next)(api_call_t *call, const char *org);
    char value[CM_TOKEN_MAX]; /* a created token, for its one answer */
} member_t;

static void write_vtoken(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    const member_t *m = call->state;
    const char *value = m && m->value[0] ? m->value : NULL;
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_VT_ID));
    if (value) {
        cm_json_key(w, "token");
        cm_json_str_cstr(w, value);
    }
    cm_json_key(w, "mask_value");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_VT_MASK));
    cm_json_key(w, "cimd_url");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_VT_URL));
    cm_json_key(w, "created_at");
    api_json_time(w, cm_db_value(res, 0, row, API_VT_CREATED));
    cm_json_end_object(w);
}

static void on_memberships(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    member_t *m = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    for (size_t i = 0; i < cm_db_nrows(res, 1); i++) {
        if (strcmp(cm_db_value(res, 1, i, 0), m->org) != 0)
            continue;
        if (atoi(cm_db_value(res, 1, i, 2)) < 8) {
            cm_api_error_t e;
            cm_api_error_set(&e, 403, "permission_denied", NULL,
                             "Only the organization's admins can manage verification tokens.");
            api_respond_error(call, &e);
            return;
        }
        m->next(call, m->org);
        return;
    }
    api_respond_not_found(call);
}

static void member_then(api_call_t *call, void (*next)(api_call_t *call, const char *org))
{
    cm_slice_t id = cm_http_req_param(call->req, "org_id");
    member_t *m = cm_xcalloc(1, sizeof(*m));
    call->state = m;
    call->state_free = free;
    if (!cm_uuid_valid(id.p, id.len)) {
        api_respond_not_found(call);
        return;
    }
    snprintf(m->org, sizeof(m->org), "%.*s", (int)id.len, id.p);
    if (call->cred_orgs && !api_access_list_has(call->cred_orgs, m->org)) {
        api_respond_not_found(call);
        return;
    }
    m->next = next;
    api_store_user_get(call->ctx->db, call->user_id, on_memberships, call);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_results((api_call_t *)ud, status, res, write_vtoken);
}

static void list(api_call_t *call, const char *org)
{
    api_store_vtokens_list(call->ctx->db, org, call->user_id, on_list, call);
}

void api_vtokens_list(api_call_t *call)
{
    member_then(call, list);
}

static void on_created(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status == 0 && cm_db_nrows(res, 0) == 0) {
        cm_api_error_t e;
        cm_api_error_set(&e, 403, "permission_denied", NULL,
                         "Only the organization's admins can create verification tokens.");
        api_respond_error(call, &e);
        return;
    }
    api_respond_row(call, status, res, 201, write_vtoken);
}

static void create(api_call_t *call, const char *org)
{
    if (api_call_body(call) != 0)
        return;
    char *url = NULL;
    int rc = api_body_string(call, "cimd_url", 10, 2048, NULL, NULL, &url);
    if (rc < 0)
        return;
    if (rc == 1) {
        api_respond_invalid(call, "cimd_url", "This field is required.");
        return;
    }
    char canon[2100];
    if (!api_oauth_client_url_canonical(url, canon, sizeof(canon))) {
        free(url);
        api_respond_invalid(call, "cimd_url",
                            "Expected the https URL of the app's client metadata document.");
        return;
    }
    free(url);
    member_t *m = call->state;
    cm_token_new("phvt_", m->value);
    char id[CM_UUID_STR_LEN + 1], hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_uuid_v7(id);
    cm_sha256_hex(m->value, strlen(m->value), hash);
    cm_token_mask(m->value, mask, sizeof(mask));
    api_store_vtoken_create(call->ctx->db, org, call->user_id, id, hash, mask, canon, on_created,
                            call);
}

void api_vtokens_create(api_call_t *call)
{
    member_then(call, create);
}

static void on_deleted(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_changes(res, 0) == 0) {
        api_respond_not_found(call);
        return;
    }
    api_respond_empty(call, 204);
}

static void delete (api_call_t *call, const char *org)
{
    char id[CM_UUID_STR_LEN + 1];
    cm_slice_t t = cm_http_req_param(call->req, "id");
    if (!cm_uuid_valid(t.p, t.len)) {
        api_respond_not_found(call);
        return;
    }
    snprintf(id, sizeof(id), "%.*s", (int)t.len, t.p);
    api_store_vtoken_delete(call->ctx->db, org, call->user_id, id, on_deleted, call);
}

void api_vtokens_delete(api_call_t *call)
{
    member_then(call, delete);
}
