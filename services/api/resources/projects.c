/*
 * projects.c - /api/projects/: list, create, retrieve, PATCH (name,
 * timezone), and PostHog's token
 * actions (PATCH .../reset_token/, .../rotate_secret_token/,
 * .../delete_secret_token_backup/, for admins of the organization).
 *
 * A project has a public token (phc_, in every SDK) and a secret API token
 * (phs_, for definitions and server-side calls) that is shown once, when it
 * is made or rotated, and kept only as its SHA-256. Rotating keeps the
 * previous secret working as the backup until it is dropped (or rotated out
 * by the next rotation), so servers can be moved to the new one first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/token.h"
#include "cm/tzone.h"
#include "cm/uuid.h"
#include "publish/publish.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char *name, *timezone, *org;
    const char *week_start; /* NULL: unchanged, "": null (Sunday), "0", "1" */
    char secret[CM_TOKEN_MAX];
} create_t;

/* The secret token in full only in the answer that made it (call->state,
 * whose secret is empty for other writes). */
static void write_project(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    const create_t *made = call->state;
    const char *secret = made && made->secret[0] ? made->secret : NULL;
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(cm_db_value(res, 0, row, API_PROJECT_ID)));
    cm_json_key(w, "uuid");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_PROJECT_UUID));
    cm_json_key(w, "organization");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_PROJECT_ORG));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_PROJECT_NAME));
    cm_json_key(w, "api_token");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_PROJECT_TOKEN));
    cm_json_key(w, "secret_api_token");
    const char *mask = cm_db_value(res, 0, row, API_PROJECT_SECRET_MASK);
    if (secret)
        cm_json_str_cstr(w, secret);
    else if (mask)
        cm_json_str_cstr(w, mask);
    else
        cm_json_null(w);
    cm_json_key(w, "secret_api_token_backup");
    const char *backup = cm_db_value(res, 0, row, API_PROJECT_SECRET_BACKUP_MASK);
    if (backup)
        cm_json_str_cstr(w, backup);
    else
        cm_json_null(w);
    cm_json_key(w, "timezone");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_PROJECT_TIMEZONE));
    cm_json_key(w, "week_start_day");
    const char *ws = cm_db_value(res, 0, row, API_PROJECT_WEEK_START);
    if (ws)
        cm_json_int(w, atoll(ws));
    else
        cm_json_null(w);
    cm_json_key(w, "created_at");
    api_json_time(w, cm_db_value(res, 0, row, API_PROJECT_CREATED));
    cm_json_end_object(w);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_PROJECT_TOTAL, write_project);
}

void api_projects_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_projects_list(call->ctx->db, call->user_id, call->limit_text, call->offset_text,
                                on_list, call);
}

static void on_one(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, write_project);
}

void api_projects_retrieve(api_call_t *call)
{
    api_store_project_get(call->ctx->db, call->project_id, on_one, call);
}

static void create_free(void *p)
{
    create_t *c = p;
    free(c->name);
    free(c->timezone);
    free(c->org);
    free(c);
}

static void on_created(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) { /* not a member of that organization */
        api_respond_invalid(call, "organization", "Organization not found.");
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    api_respond_row(call, 0, res, 201, write_project);
}

#define TZ_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/+-"

static void on_patched(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status == 0 && cm_db_nrows(res, 0) == 1)
        api_publisher_kick(call->ctx->publisher);
    api_respond_row(call, status, res, 200, write_project);
}

/* week_start_day: 0 (Sunday), 1 (Monday) or null (Sunday), as PostHog's
 * team setting. 0, or -1 when it answered 400. */
static int read_week_start(api_call_t *call, create_t *c)
{
    cm_json_t v = cm_json_get(cm_json_root(call->body), "week_start_day");
    int64_t n;
    if (!cm_json_exists(v))
        return 0;
    if (cm_json_is_null(v)) {
        c->week_start = "";
        return 0;
    }
    if (cm_json_as_int64(v, &n) != 0 || (n != 0 && n != 1)) {
        api_respond_invalid(call, "week_start_day", "\"%s\" is not a valid choice.",
                            "0 (Sunday) or 1 (Monday)");
        return -1;
    }
    c->week_start = n ? "1" : "0";
    return 0;
}

/* The call's state, its body read and its settings (name, timezone, week start) taken;
 * NULL when it answered 400. */
static create_t *read_settings(api_call_t *call)
{
    create_t *c = cm_xcalloc(1, sizeof(*c));
    call->state = c;
    call->state_free = create_free;
    if (api_call_body(call) != 0 ||
        api_body_string(call, "name", 1, 200, NULL, NULL, &c->name) < 0 ||
        api_body_string(call, "timezone", 1, 64, TZ_CHARS, "Not a valid time zone name.",
                        &c->timezone) < 0 ||
        read_week_start(call, c) < 0)
        return NULL;
    if (c->timezone != NULL && strcmp(c->timezone, "UTC") != 0) {
        /* a zone the HogQL compiler and the insights can compute in (ICU's) */
        cm_tzone_t *z = cm_tzone_open(cm_slice_from_cstr(c->timezone));
        if (z == NULL) {
            api_respond_invalid(call, "timezone", "\"%s\" is not a valid choice.", c->timezone);
            return NULL;
        }
        cm_tzone_free(z);
    }
    return c;
}

void api_projects_update(api_call_t *call)
{
    create_t *c = read_settings(call);
    if (c == NULL)
        return;
    api_store_project_update(call->ctx->db, call->project_id, c->name, c->timezone, c->week_start,
                             on_patched, call);
}

void api_projects_create(api_call_t *call)
{
    create_t *c = read_settings(call);
    if (c == NULL || api_body_string(call, "organization", 1, 36, "0123456789abcdef-",
                                     "Not a valid organization id.", &c->org) < 0)
        return;
    char token[CM_TOKEN_MAX], hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_token_new("phc_", token);
    cm_token_new("phs_", c->secret);
    cm_sha256_hex(c->secret, strlen(c->secret), hash);
    cm_token_mask(c->secret, mask, sizeof(mask));
    api_store_project_create(call->ctx->db, call->user_id, c->org,
                             c->name ? c->name : "Default project", token, hash, mask,
                             c->timezone ? c->timezone : "UTC", c->week_start, on_created, call);
}

static void on_rotated(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) { /* a member, not an admin */
        cm_api_error_t e;
        cm_api_error_set(&e, 403, "permission_denied", NULL,
                         "You don't have edit permissions for this project.");
        api_respond_error(call, &e);
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    api_respond_row(call, 0, res, 200, write_project);
}

/* The token actions take no fields, but a body that is not a JSON object
 * is refused like anywhere else rather than ignored. */
void api_projects_reset_token(api_call_t *call)
{
    if (api_call_body(call) != 0)
        return;
    char token[CM_TOKEN_MAX];
    cm_token_new("phc_", token);
    api_store_project_reset_token(call->ctx->db, call->project_id, call->user_id, token, on_rotated,
                                  call);
}

void api_projects_rotate_secret(api_call_t *call)
{
    create_t *c = cm_xcalloc(1, sizeof(*c)); /* the new secret, answered once */
    call->state = c;
    call->state_free = create_free;
    if (api_call_body(call) != 0)
        return;
    char hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_token_new("phs_", c->secret);
    cm_sha256_hex(c->secret, strlen(c->secret), hash);
    cm_token_mask(c->secret, mask, sizeof(mask));
    api_store_project_rotate_secret(call->ctx->db, call->project_id, call->user_id, hash, mask,
                                    on_rotated, call);
}

void api_projects_drop_secret_backup(api_call_t *call)
{
    if (api_call_body(call) != 0)
        return;
    api_store_project_drop_secret_backup(call->ctx->db, call->project_id, call->user_id, on_rotated,
                                         call);
}
