/*
 * keys.c - `api admin keys list|create|revoke`: a user's personal API keys,
 * through the statements the HTTP routes use (store/keys.c). A new key is
 * made as resources/personal_api_keys.c makes one: "phx_" and 256 random
 * bits, shown once here, stored as its SHA-256 and a mask. Each change
 * queues the key table, so the serving api publishes it to the flags fleet.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"
#include "cm/digest.h"
#include "cm/timefmt.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "http/http.h"
#include "resources/resources.h"
#include "store/store.h"

#define DEFAULT_LABEL "api admin keys create"
#define MAX_LABEL     40 /* as the HTTP API's */

static char made_value[CM_TOKEN_MAX];
static cm_buf_t scopes_json;

static void time_text(const char *ms, char out[CM_ISO8601_MAX])
{
    if (ms == NULL)
        snprintf(out, CM_ISO8601_MAX, "never");
    else
        cm_iso8601_format(atoll(ms) * 1000, 0, out);
}

/* One key row as JSON: the HTTP answer's fields (resources/). */
static void key_json(cm_json_writer_t *w, const cm_db_res_t *res, size_t row, const char *value)
{
    cm_json_begin_object(w);
    api_key_json_fields(w, res, row, value);
    cm_json_end_object(w);
}

static void key_text(cm_buf_t *out, const cm_db_res_t *res, size_t row)
{
    char created[CM_ISO8601_MAX], used[CM_ISO8601_MAX];
    const char *orgs = cm_db_value(res, 0, row, API_KEYROW_SCOPED_ORGS);
    const char *teams = cm_db_value(res, 0, row, API_KEYROW_SCOPED_TEAMS);
    time_text(cm_db_value(res, 0, row, API_KEYROW_CREATED), created);
    time_text(cm_db_value(res, 0, row, API_KEYROW_LAST_USED), used);
    cm_buf_appendf(out, "%s  %s  \"%s\"  scopes %s%s%s%s%s  created %s  last used %s\n",
                   cm_db_value(res, 0, row, API_KEYROW_ID),
                   cm_db_value(res, 0, row, API_KEYROW_MASK),
                   cm_db_value(res, 0, row, API_KEYROW_LABEL),
                   cm_db_value(res, 0, row, API_KEYROW_SCOPES), orgs ? "  organizations " : "",
                   orgs ? orgs : "", teams ? "  projects " : "", teams ? teams : "", created, used);
}

/* ---- list ---- */

static void on_list(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("keys list", res);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    size_t n = cm_db_nrows(res, 0);
    if (admin_cmd.json) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        cm_json_begin_object(&w);
        cm_json_key(&w, "email");
        cm_json_str_cstr(&w, admin_cmd.email);
        cm_json_key(&w, "results");
        cm_json_begin_array(&w);
        for (size_t i = 0; i < n; i++)
            key_json(&w, res, i, NULL);
        cm_json_end_array(&w);
        cm_json_end_object(&w);
    } else if (n == 0) {
        cm_buf_appendf(&out, "%s has no personal API key (`api admin keys create %s` makes one)",
                       admin_cmd.email, admin_cmd.email);
    } else {
        for (size_t i = 0; i < n; i++)
            key_text(&out, res, i);
    }
    admin_print(&out);
}

static void list_user(const char *user_id)
{
    /* the HTTP list's statement, with the HTTP API's largest page */
    api_store_keys_list(admin_cmd.ctx->db, user_id, "1000", "0", on_list, NULL);
}

void admin_keys_list(void)
{
    admin_with_user(list_user);
}

/* ---- create ---- */

static void on_created(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    cm_buf_free(&scopes_json);
    if (rc != 0 || cm_db_nrows(res, 0) != 1) {
        explicit_bzero(made_value, sizeof(made_value));
        admin_fail_db("keys create", res);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    if (admin_cmd.json) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        cm_json_begin_object(&w);
        cm_json_key(&w, "email");
        cm_json_str_cstr(&w, admin_cmd.email);
        cm_json_key(&w, "personal_api_key");
        key_json(&w, res, 0, made_value);
        cm_json_end_object(&w);
    } else {
        cm_buf_appendf(&out,
                       "a new personal API key for %s (shown only now: the store keeps its "
                       "hash):\n%s\n",
                       admin_cmd.email, made_value);
        key_text(&out, res, 0);
    }
    explicit_bzero(made_value, sizeof(made_value));
    admin_print(&out);
}

static void create_for(const char *user_id)
{
    char id[CM_UUID_STR_LEN + 1], hash[CM_SHA256_HEX_LEN + 1], mask[32];
    cm_uuid_v7(id);
    cm_token_new("phx_", made_value);
    cm_sha256_hex(made_value, strlen(made_value), hash);
    cm_token_mask(made_value, mask, sizeof(mask));
    api_store_key_create(admin_cmd.ctx->db, id, user_id, admin_cmd.label, hash, mask,
                         cm_buf_cstr(&scopes_json), NULL, NULL, on_created, NULL);
}

void admin_keys_create(void)
{
    if (admin_cmd.label == NULL)
        admin_cmd.label = DEFAULT_LABEL;
    size_t label_len = strlen(admin_cmd.label);
    if (label_len == 0 || label_len > MAX_LABEL) {
        admin_fail("the label has 1 to %d bytes", MAX_LABEL);
        return;
    }
    if (admin_cmd.nscopes == 0)
        admin_cmd.scopes[admin_cmd.nscopes++] = "*";
    cm_json_writer_t w;
    cm_json_writer_init(&w, &scopes_json);
    cm_json_begin_array(&w);
    for (size_t i = 0; i < admin_cmd.nscopes; i++) {
        cm_slice_t s = {admin_cmd.scopes[i], strlen(admin_cmd.scopes[i])};
        if (!api_scope_valid(s)) {
            cm_buf_free(&scopes_json);
            admin_fail("not a scope: %s (\"*\", or OBJECT:read or OBJECT:write as the HTTP API "
                       "takes them: docs/api.md)",
                       admin_cmd.scopes[i]);
            return;
        }
        cm_json_str_s(&w, s);
    }
    cm_json_end_array(&w);
    admin_with_user(create_for);
}

/* ---- revoke ---- */

static char found_id[CM_UUID_STR_LEN + 1], found_email[256], found_mask[32];

static void on_revoked(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("keys revoke", res);
        return;
    }
    if (cm_db_changes(res, 0) == 0) { /* deleted meanwhile by someone else */
        admin_fail("the key %s is already gone", found_id);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    if (admin_cmd.json) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        cm_json_begin_object(&w);
        cm_json_key(&w, "revoked");
        cm_json_str_cstr(&w, found_id);
        cm_json_key(&w, "mask_value");
        cm_json_str_cstr(&w, found_mask);
        cm_json_key(&w, "email");
        cm_json_str_cstr(&w, found_email);
        cm_json_end_object(&w);
    } else {
        cm_buf_appendf(&out, "revoked %s (%s) of %s", found_id, found_mask, found_email);
    }
    admin_print(&out);
}

static void on_found(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("keys revoke", res);
        return;
    }
    size_t n = cm_db_nrows(res, 0);
    if (n == 0) {
        admin_fail("no personal API key is %s (`api admin keys list EMAIL` shows a user's)",
                   admin_cmd.target);
        return;
    }
    if (n > 1) {
        admin_fail("%s is the start of more than one key's id (%s, %s...): give more of it",
                   admin_cmd.target, cm_db_value(res, 0, 0, API_KEYFIND_ID),
                   cm_db_value(res, 0, 1, API_KEYFIND_ID));
        return;
    }
    snprintf(found_id, sizeof(found_id), "%s", cm_db_value(res, 0, 0, API_KEYFIND_ID));
    snprintf(found_email, sizeof(found_email), "%s", cm_db_value(res, 0, 0, API_KEYFIND_EMAIL));
    snprintf(found_mask, sizeof(found_mask), "%s", cm_db_value(res, 0, 0, API_KEYFIND_MASK));
    api_store_key_delete(admin_cmd.ctx->db, cm_db_value(res, 0, 0, API_KEYFIND_USER), found_id,
                         on_revoked, NULL);
}

void admin_keys_revoke(void)
{
    const char *t = admin_cmd.target;
    size_t n = strlen(t);
    if (strncmp(t, "phx_", 4) == 0) { /* the key itself: found by its hash */
        char hash[CM_SHA256_HEX_LEN + 1];
        cm_sha256_hex(t, n, hash);
        api_store_key_find(admin_cmd.ctx->db, NULL, hash, on_found, NULL);
        return;
    }
    /* an id or its start: hex digits and dashes only (no LIKE wildcard) */
    char pattern[CM_UUID_STR_LEN + 2];
    bool ok = n >= 8 && n <= CM_UUID_STR_LEN;
    for (size_t i = 0; ok && i < n; i++) {
        ok = isxdigit((unsigned char)t[i]) || t[i] == '-';
        pattern[i] = (char)tolower((unsigned char)t[i]);
    }
    if (!ok) {
        admin_fail("%s is neither a key (phx_...) nor a key's id or its first 8+ characters", t);
        return;
    }
    pattern[n] = '%';
    pattern[n + 1] = '\0';
    api_store_key_find(admin_cmd.ctx->db, pattern, NULL, on_found, NULL);
}
