/*
 * users.c - /api/users/@me/: the key's user, as PostHog answers it (the
 * fields this service has), and PATCH of first_name, email and password.
 *
 * A new password needs current_password and at least 8 characters; both
 * the check and the new hash are argon2id (http/password.c), run on libuv's
 * thread pool because each takes tens of milliseconds. Only "@me" is a user
 * id here: PostHog's other ids are for staff, which this service has not.
 * Email and password (the user's sign-in) change only through a personal
 * key with all of the user: never an OAuth token, never a scoped key. A
 * current_password checked is a guess at the account, limited as sign-in's
 * (oauth/guesses.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "oauth/oauth.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char *first_name, *email, *password, *current;
    /* a current_password check is a guess like a sign-in (oauth/guesses.c) */
    char account[256], ip[CM_IP_BUFLEN];
} patch_t;

static void patch_free(void *v)
{
    patch_t *p = v;
    free(p->first_name);
    free(p->email);
    if (p->password)
        explicit_bzero(p->password, strlen(p->password));
    if (p->current)
        explicit_bzero(p->current, strlen(p->current));
    free(p->password);
    free(p->current);
    free(p);
}

static void write_user(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    (void)call;
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(cm_db_value(res, 0, row, API_USER_ID)));
    cm_json_key(w, "uuid");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_USER_UUID));
    cm_json_key(w, "distinct_id");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_USER_UUID));
    cm_json_key(w, "first_name");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_USER_FIRST_NAME));
    cm_json_key(w, "email");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_USER_EMAIL));
    cm_json_key(w, "date_joined");
    api_json_time(w, cm_db_value(res, 0, row, API_USER_CREATED));
    cm_json_key(w, "has_password");
    cm_json_boolean(w, true);
    cm_json_key(w, "organizations");
    cm_json_begin_array(w);
    for (size_t i = 0; i < cm_db_nrows(res, 1); i++) {
        cm_json_begin_object(w);
        cm_json_key(w, "id");
        cm_json_str_cstr(w, cm_db_value(res, 1, i, 0));
        cm_json_key(w, "name");
        cm_json_str_cstr(w, cm_db_value(res, 1, i, 1));
        cm_json_key(w, "membership_level");
        cm_json_int(w, atoll(cm_db_value(res, 1, i, 2)));
        cm_json_end_object(w);
    }
    cm_json_end_array(w);
    cm_json_end_object(w);
}

static void on_user(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, write_user);
}

void api_users_me(api_call_t *call)
{
    api_store_user_get(call->ctx->db, call->user_id, on_user, call);
}

static void on_updated(int status, const cm_db_res_t *res, void *ud)
{
    if (status != 0)
        api_respond_db_error(ud, status, res, "email", "A user with this email already exists.");
    else
        api_respond_row(ud, 0, res, 200, write_user);
}

static void update(api_call_t *call, const char *password_hash)
{
    patch_t *p = call->state;
    api_store_user_update(call->ctx->db, call->user_id, p->first_name, p->email, password_hash,
                          on_updated, call);
}

static void on_password(api_call_t *call, bool current_ok, const char *new_hash)
{
    patch_t *p = call->state;
    api_oauth_guess_end(call->ctx->oauth, p->account, p->ip, true, current_ok);
    if (!current_ok) {
        api_respond_invalid(call, "current_password", "Your current password is incorrect.");
        return;
    }
    if (new_hash == NULL) {
        cm_api_error_t e;
        cm_api_error_set(&e, 500, "error", NULL, "The password could not be hashed.");
        e.type = CM_ERR_SERVER;
        api_respond_error(call, &e);
        return;
    }
    update(call, new_hash);
}

static void on_stored(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    patch_t *p = call->state;
    if (status != 0 || cm_db_nrows(res, 0) != 1) {
        api_respond_row(call, status, res, 200, write_user); /* the error, or 404 */
        return;
    }
    if (!api_email_normalize(cm_slice_from_cstr(cm_db_value(res, 0, 0, API_USER_EMAIL)), p->account,
                             sizeof(p->account)))
        snprintf(p->account, sizeof(p->account), "user:%s", call->user_id);
    char buf[CM_IP_BUFLEN];
    const char *ip =
        cm_client_ip(cm_http_req_header(call->req, "X-Forwarded-For"), cm_http_req_peer(call->req),
                     call->ctx->cfg.svc.trusted_proxies, buf, sizeof(buf));
    snprintf(p->ip, sizeof(p->ip), "%s", ip ? ip : "");
    int64_t wait = api_oauth_guess_begin(call->ctx->oauth, p->account, p->ip);
    if (wait > 0) {
        char secs[24];
        snprintf(secs, sizeof(secs), "%lld", (long long)((wait + 999) / 1000));
        cm_http_res_header(call->req, "Retry-After", secs);
        cm_api_error_t e;
        cm_api_error_set(&e, 429, "throttled", "current_password",
                         "Too many wrong passwords for this account: try again in %s s.", secs);
        api_respond_error(call, &e);
        return;
    }
    if (!api_password_try(call, cm_db_value(res, 0, 0, API_USER_PASSWORD_HASH), p->current,
                          p->password, on_password)) {
        api_oauth_guess_end(call->ctx->oauth, p->account, p->ip, false, false);
        api_password_busy(call);
    }
}

/* Answers 403 unless the credential may change the user's email or
 * password. */
static bool sign_in_change_allowed(api_call_t *call)
{
    if (api_call_refuse_oauth(call, "change the user's email or password"))
        return false;
    if (api_call_full_user(call))
        return true;
    cm_api_error_t e;
    cm_api_error_set(&e, 403, "permission_denied", NULL,
                     "Changing the email or password needs a personal API key with '*' or "
                     "'user:write' and no scoped_teams or scoped_organizations.");
    api_respond_error(call, &e);
    return false;
}

void api_users_me_update(api_call_t *call)
{
    patch_t *p = cm_xcalloc(1, sizeof(*p));
    call->state = p;
    call->state_free = patch_free;
    if (api_call_body(call) != 0)
        return;
    if (api_body_string(call, "first_name", 0, 150, NULL, NULL, &p->first_name) < 0 ||
        api_body_email(call, "email", &p->email) < 0 ||
        api_body_string(call, "password", API_PASSWORD_MIN_BYTES, API_PASSWORD_MAX_BYTES, NULL,
                        NULL, &p->password) < 0 ||
        api_body_string(call, "current_password", 1, 128, NULL, NULL, &p->current) < 0)
        return;
    /* the sign-in itself: never through an OAuth grant, and only with a key
     * that has all of the user (docs/api.md) */
    if ((p->email || p->password) && !sign_in_change_allowed(call))
        return;
    if (p->password == NULL) {
        update(call, NULL);
        return;
    }
    if (p->current == NULL) {
        api_respond_invalid(call, "current_password",
                            "This field is required when updating your password.");
        return;
    }
    api_store_user_get(call->ctx->db, call->user_id, on_stored, call);
}
