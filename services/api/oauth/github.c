/*
 * github.c - GitHub's secret-scanning partner call (docs/oauth.md):
 * POST /api/alerts/github with a JSON array of found secrets, signed with
 * ECDSA P-256 over SHA-256 of the raw body; the key named by
 * Github-Public-Key-Identifier comes from GITHUB_KEYS_FILE (the JSON of
 * GitHub's keys endpoint, read at start: this server makes no call out).
 *
 * Each secret is judged by its prefix, whatever "type" says (GitHub's two key
 * type names are known to be swapped): pha_/phr_ revoke their
 * whole OAuth family, phx_ rolls the personal key (a new value nobody
 * knows), phs_ rolls the project secret (the fleet drops the old one). The
 * answer is one {token_hash, token_type, label} per item, true_positive
 * when it was one of ours.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>
#include <mbedtls/pk.h>

#include "cm/alloc.h"
#include "cm/base64.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/token.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

#define MAX_ITEMS     100
#define MAX_KEYS_FILE (256 * 1024)

struct github_key {
    char *id;
    mbedtls_pk_context pk;
};

static const char *const TYPES[] = {"posthog_personal_api_key",
                                    "posthog_feature_flags_secure_api_key",
                                    "posthog_oauth_access_token", "posthog_oauth_refresh_token"};

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = cm_xmalloc(MAX_KEYS_FILE + 1);
    *len = fread(buf, 1, MAX_KEYS_FILE, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* A P-256 public key from its PEM; 0 or -1. */
static int load_key(github_key_t *k, const char *pem)
{
    mbedtls_pk_init(&k->pk);
    if (mbedtls_pk_parse_public_key(&k->pk, (const unsigned char *)pem, strlen(pem) + 1) != 0 ||
        mbedtls_pk_get_type(&k->pk) != MBEDTLS_PK_ECKEY ||
        mbedtls_pk_ec(k->pk)->grp.id != MBEDTLS_ECP_DP_SECP256R1) {
        mbedtls_pk_free(&k->pk);
        return -1;
    }
    return 0;
}

void api_oauth__github_keys_load(api_oauth_t *o)
{
    const char *path = o->ctx->cfg.github_keys_file;
    if (path == NULL || path[0] == '\0')
        return;
    size_t len = 0;
    char *text = read_file(path, &len);
    cm_json_doc_t *doc = NULL;
    if (text == NULL || cm_json_parse(text, len, NULL, &doc, NULL) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "GITHUB_KEYS_FILE %s cannot be read as JSON", path);
        goto done;
    }
    cm_json_t keys = cm_json_get(cm_json_root(doc), "public_keys");
    o->github_keys = cm_xcalloc(cm_json_len(keys) + 1, sizeof(github_key_t));
    for (size_t i = 0; i < cm_json_len(keys); i++) {
        cm_json_t k = cm_json_at(keys, i);
        cm_buf_t id = CM_BUF_INIT, pem = CM_BUF_INIT;
        github_key_t *g = &o->github_keys[o->ngithub_keys];
        if (cm_json_str_append(cm_json_get(k, "key_identifier"), &id) == 0 &&
            cm_json_str_append(cm_json_get(k, "key"), &pem) == 0 &&
            load_key(g, cm_buf_cstr(&pem)) == 0) {
            g->id = cm_xstrdup(cm_buf_cstr(&id));
            o->ngithub_keys++;
        } else {
            cm_log(CM_LOG_WARN, NULL, "GITHUB_KEYS_FILE: key %zu is not a P-256 public key", i);
        }
        cm_buf_free(&id);
        cm_buf_free(&pem);
    }
    cm_log(CM_LOG_INFO, NULL, "secret scanning: %zu GitHub key(s) loaded", o->ngithub_keys);
done:
    cm_json_doc_free(doc);
    free(text);
}

void api_oauth__github_keys_free(api_oauth_t *o)
{
    for (size_t i = 0; i < o->ngithub_keys; i++) {
        free(o->github_keys[i].id);
        mbedtls_pk_free(&o->github_keys[i].pk);
    }
    free(o->github_keys);
    o->github_keys = NULL;
    o->ngithub_keys = 0;
}

bool api_oauth__github_verify(const api_oauth_t *o, cm_slice_t key_id, cm_slice_t signature,
                              cm_slice_t body)
{
    const github_key_t *k = NULL;
    for (size_t i = 0; i < o->ngithub_keys && k == NULL; i++)
        if (cm_slice_eq_cstr(key_id, o->github_keys[i].id))
            k = &o->github_keys[i];
    cm_buf_t der = CM_BUF_INIT;
    bool ok = false;
    if (k != NULL && cm_base64_decode(signature.p, signature.len, CM_B64_STD, 256, &der) == 0 &&
        der.len >= 8 && der.len <= 72) {
        unsigned char hash[32];
        cm_sha256(body.p, body.len, hash);
        ok = mbedtls_pk_verify((mbedtls_pk_context *)&k->pk, MBEDTLS_MD_SHA256, hash, sizeof(hash),
                               (const unsigned char *)der.p, der.len) == 0;
    }
    cm_buf_free(&der);
    return ok;
}

/* ---- the call ---- */

typedef struct {
    size_t n;
    char hash[MAX_ITEMS][CM_SHA256_HEX_LEN + 1];
    char fresh[MAX_ITEMS][CM_SHA256_HEX_LEN + 1];
    char type[MAX_ITEMS][48];
    int kind[MAX_ITEMS];
} alert_t;

static int kind_of(cm_slice_t token)
{
    if (token.len > 4 && (memcmp(token.p, "pha_", 4) == 0 || memcmp(token.p, "phr_", 4) == 0))
        return API_LEAK_OAUTH;
    if (token.len > 4 && memcmp(token.p, "phx_", 4) == 0)
        return API_LEAK_PERSONAL_KEY;
    if (token.len > 4 && memcmp(token.p, "phs_", 4) == 0)
        return API_LEAK_PROJECT_SECRET;
    return API_LEAK_NONE;
}

static void on_revoked(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    alert_t *a = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_array(&w);
    size_t table = 0;
    for (size_t i = 0; i < a->n; i++) {
        bool ours = a->kind[i] != API_LEAK_NONE && cm_db_changes(res, table) > 0;
        table += a->kind[i] == API_LEAK_PROJECT_SECRET ? 2 : 1;
        if (ours)
            cm_log(CM_LOG_WARN, cm_http_req_id(call->req),
                   "secret scanning: a %s found in public was revoked (sha256 %s)", a->type[i],
                   a->hash[i]);
        cm_json_begin_object(&w);
        cm_json_key(&w, "token_hash");
        cm_json_str_cstr(&w, a->hash[i]);
        cm_json_key(&w, "token_type");
        cm_json_str_cstr(&w, a->type[i]);
        cm_json_key(&w, "label");
        cm_json_str_cstr(&w, ours ? "true_positive" : "false_positive");
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    api_respond_json(call, 200, &b);
}

static void detail(api_call_t *call, int status, const char *code, const char *text)
{
    cm_api_error_t e;
    cm_api_error_set(&e, status, code, NULL, "%s", text);
    api_respond_error(call, &e);
}

/* Each item {token, type (one of ours), url, source}; 0 or the detail. */
static const char *read_items(cm_json_t list, alert_t *a)
{
    if (cm_json_type(list) != CM_JSON_ARRAY || cm_json_len(list) == 0)
        return "Expected a non-empty JSON array.";
    if (cm_json_len(list) > MAX_ITEMS)
        return "Too many items in one alert.";
    for (size_t i = 0; i < cm_json_len(list); i++) {
        cm_json_t it = cm_json_at(list, i);
        cm_json_t token = cm_json_get(it, "token"), type = cm_json_get(it, "type");
        if (cm_json_type(token) != CM_JSON_STRING || cm_json_type(type) != CM_JSON_STRING ||
            cm_json_type(cm_json_get(it, "url")) != CM_JSON_STRING ||
            cm_json_type(cm_json_get(it, "source")) != CM_JSON_STRING)
            return "Each item needs token, type, url and source strings.";
        bool known = false;
        for (size_t k = 0; k < sizeof(TYPES) / sizeof(TYPES[0]); k++)
            known |= cm_json_str_eq(type, cm_slice_from_cstr(TYPES[k]));
        if (!known)
            return "Unknown token type.";
        cm_buf_t t = CM_BUF_INIT;
        cm_json_str_append(token, &t);
        cm_slice_t s = cm_slice_trim(cm_buf_slice(&t));
        cm_sha256_hex(s.p ? s.p : "", s.len, a->hash[a->n]);
        a->kind[a->n] = kind_of(s);
        char fresh[CM_TOKEN_MAX];
        cm_token_new("rolled_", fresh); /* the replacement nobody is ever shown */
        cm_sha256_hex(fresh, strlen(fresh), a->fresh[a->n]);
        cm_buf_free(&t);
        cm_slice_t ty = cm_json_str_inner(type);
        snprintf(a->type[a->n], sizeof(a->type[a->n]), "%.*s", (int)ty.len, ty.p);
        a->n++;
    }
    return NULL;
}

void api_oauth_github_alert(api_call_t *call)
{
    api_oauth_t *o = call->ctx->oauth;
    cm_slice_t id = cm_http_req_header(call->req, "Github-Public-Key-Identifier");
    cm_slice_t sig = cm_http_req_header(call->req, "Github-Public-Key-Signature");
    cm_slice_t body = cm_http_req_body(call->req);
    if (id.len == 0 || sig.len == 0) {
        detail(call, 400, "invalid_request",
               "Github-Public-Key-Identifier and Github-Public-Key-Signature are required.");
        return;
    }
    if (o->ngithub_keys == 0) {
        detail(call, 503, "not_configured", "Secret scanning is not configured here.");
        return;
    }
    if (!api_oauth__github_verify(o, id, sig, body)) {
        detail(call, 401, "invalid_signature", "Invalid signature");
        return;
    }
    cm_json_doc_t *doc = NULL;
    if (!cm_json_utf8_valid(body.p, body.len) ||
        cm_json_parse(body.p, body.len, NULL, &doc, NULL) != 0) {
        detail(call, 400, "invalid_request", "The body is not JSON.");
        return;
    }
    alert_t *a = cm_xcalloc(1, sizeof(*a));
    call->state = a;
    call->state_free = free;
    const char *bad = read_items(cm_json_root(doc), a);
    cm_json_doc_free(doc);
    if (bad != NULL) {
        detail(call, 400, "invalid_request", bad);
        return;
    }
    api_store_leak_t leaks[MAX_ITEMS];
    for (size_t i = 0; i < a->n; i++)
        leaks[i] = (api_store_leak_t){a->kind[i], a->hash[i], a->fresh[i]};
    api_store_leaks_revoke(call->ctx->db, leaks, a->n, on_revoked, call);
}
