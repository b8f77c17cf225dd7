/*
 * bootstrap.c - `api bootstrap` (see main.c): the demo organization, user,
 * project and personal API key that `make run` starts with, printed as one
 * JSON object; `api adduser EMAIL` makes the same for another user, in an
 * organization of their own. The secrets (password, phs_ and phx_ tokens) exist only in
 * this output: the store keeps their hashes. Nothing is published here: the
 * serving api republishes every project when it starts.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "bootstrap.h"
#include "cm/digest.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "http/http.h"
#include "store/store.h"

#define DEMO_EMAIL "demo@example.com"

static int status;
static void (*finish_fn)(void *);
static const api_bootstrap_args_t *args; /* main.c's */
static char store_name[512];             /* which store: in every answer */

static struct {
    char email[256], org_name[300];
    char org[CM_UUID_STR_LEN + 1], user[CM_UUID_STR_LEN + 1], project[CM_UUID_STR_LEN + 1];
    char key_id[CM_UUID_STR_LEN + 1];
    char password[CM_TOKEN_MAX], token[CM_TOKEN_MAX], secret[CM_TOKEN_MAX], key[CM_TOKEN_MAX];
} made;

int api_bootstrap_status(void)
{
    return status;
}

/* Ends the command with exit status 1, after logging why (when given). */
static void fail(const char *what, const char *why)
{
    if (why)
        cm_log(CM_LOG_ERROR, NULL, "%s: %s", what, why);
    status = 1;
    finish_fn(NULL);
}

static void print(cm_buf_t *out)
{
    fwrite(out->p, 1, out->len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    cm_buf_free(out);
    finish_fn(NULL);
}

static void on_seeded(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        fail("bootstrap", cm_db_error(res));
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "created");
    cm_json_boolean(&w, true);
    cm_json_key(&w, "store");
    cm_json_str_cstr(&w, store_name);
    cm_json_key(&w, "organization_id");
    cm_json_str_cstr(&w, made.org);
    cm_json_key(&w, "project_id");
    cm_json_int(&w, atoll(cm_db_value(res, cm_db_ntables(res) - 1, 0, 0)));
    cm_json_key(&w, "project_api_token");
    cm_json_str_cstr(&w, made.token);
    cm_json_key(&w, "project_secret_api_token");
    cm_json_str_cstr(&w, made.secret);
    cm_json_key(&w, "email");
    cm_json_str_cstr(&w, made.email);
    cm_json_key(&w, "password");
    cm_json_str_cstr(&w, made.password);
    cm_json_key(&w, "personal_api_key");
    cm_json_str_cstr(&w, made.key);
    cm_json_end_object(&w);
    print(&out);
}

static void seed(api_ctx_t *ctx)
{
    char password_hash[128], secret_hash[CM_SHA256_HEX_LEN + 1], key_hash[CM_SHA256_HEX_LEN + 1];
    char secret_mask[32], key_mask[32];
    cm_uuid_v4(made.org);
    cm_uuid_v7(made.user);
    cm_uuid_v7(made.project);
    cm_uuid_v7(made.key_id);
    cm_token_new("", made.password);
    made.password[20] = '\0';
    cm_token_new("phc_", made.token);
    cm_token_new("phs_", made.secret);
    cm_token_new("phx_", made.key);
    /* a one-off command, not a server: hashing on this thread is fine */
    if (api_password_hash(made.password, password_hash, sizeof(password_hash)) != 0) {
        fail("bootstrap", "cannot hash the password");
        return;
    }
    cm_sha256_hex(made.secret, strlen(made.secret), secret_hash);
    cm_sha256_hex(made.key, strlen(made.key), key_hash);
    cm_token_mask(made.secret, secret_mask, sizeof(secret_mask));
    cm_token_mask(made.key, key_mask, sizeof(key_mask));
    api_store_seed_t s = {
        .org_id = made.org,
        .org_name = made.org_name,
        .user_uuid = made.user,
        .email = made.email,
        .password_hash = password_hash,
        .project_uuid = made.project,
        .project_name = "Demo project",
        .token = made.token,
        .secret_hash = secret_hash,
        .secret_mask = secret_mask,
        .key_id = made.key_id,
        .key_hash = key_hash,
        .key_mask = key_mask,
    };
    api_store_seed(ctx->db, &s, on_seeded, NULL);
}

static void on_summary(int rc, const cm_db_res_t *res, void *ud)
{
    api_ctx_t *ctx = ud;
    if (rc != 0) {
        fail("bootstrap", cm_db_error(res));
        return;
    }
    if (cm_db_nrows(res, 0) == 0) {
        seed(ctx);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "created");
    cm_json_boolean(&w, false);
    cm_json_key(&w, "store");
    cm_json_str_cstr(&w, store_name);
    cm_json_key(&w, "organizations");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 0); i++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "id");
        cm_json_str_cstr(&w, cm_db_value(res, 0, i, 0));
        cm_json_key(&w, "name");
        cm_json_str_cstr(&w, cm_db_value(res, 0, i, 1));
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "projects");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 1); i++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "id");
        cm_json_int(&w, atoll(cm_db_value(res, 1, i, 0)));
        cm_json_key(&w, "name");
        cm_json_str_cstr(&w, cm_db_value(res, 1, i, 1));
        cm_json_key(&w, "api_token");
        cm_json_str_cstr(&w, cm_db_value(res, 1, i, 2));
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "users");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 2); i++)
        cm_json_str_cstr(&w, cm_db_value(res, 2, i, 0));
    cm_json_end_array(&w);
    cm_json_end_object(&w);
    print(&out);
}

/* `api oauth-verify CLIENT_ID` / `api oauth-unverify CLIENT_ID`: an
 * operator's decision about an app, in this REGION (docs/oauth.md). */
static void on_verified(int status_, const cm_db_res_t *res, void *ud)
{
    api_ctx_t *ctx = ud;
    if (status_ != 0) {
        fail("oauth-verify", cm_db_error(res));
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "client_id");
    cm_json_str_cstr(&w, args->verify_client);
    cm_json_key(&w, "region");
    cm_json_str_cstr(&w, ctx->cfg.region);
    cm_json_key(&w, "verified");
    cm_json_boolean(&w, args->verify_value);
    cm_json_end_object(&w);
    print(&out);
}

void api_bootstrap_run(api_ctx_t *ctx, const api_bootstrap_args_t *a, void (*finish)(void *ud))
{
    finish_fn = finish;
    args = a;
    api_admin_store_name(ctx->cfg.database_url, store_name, sizeof(store_name));
    cm_log(CM_LOG_INFO, NULL, "store: %s", store_name);
    if (args->verify_client != NULL) {
        if (strncmp(args->verify_client, "https://", 8) != 0) {
            fail("oauth-verify", "the client_id is its document's https URL");
            return;
        }
        api_store_oauth_verify(ctx->db, args->verify_client, ctx->cfg.region, args->verify_value,
                               on_verified, ctx);
        return;
    }
    if (args->new_user_email == NULL) {
        snprintf(made.email, sizeof(made.email), "%s", DEMO_EMAIL);
        snprintf(made.org_name, sizeof(made.org_name), "Demo organization");
        api_store_summary(ctx->db, on_summary, ctx);
        return;
    }
    const char *e = args->new_user_email;
    if (!api_email_normalize((cm_slice_t){e, strlen(e)}, made.email, sizeof(made.email))) {
        fail("adduser: not an email address", args->new_user_email);
        return;
    }
    snprintf(made.org_name, sizeof(made.org_name), "%s's organization", made.email);
    seed(ctx);
}
