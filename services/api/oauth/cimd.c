/*
 * cimd.c - OAuth clients known by their Client ID Metadata Documents
 * (docs/oauth.md "Clients: metadata documents").
 *
 * A client_id is a URL; its shape is checked before any I/O (uri.c). A
 * client seen before is read from the store: fresh, it is used; stale, it
 * is used while one background fetch refreshes it. A new one is fetched at
 * once, within the provisioning limits (limits.c: every fetch counts) and
 * the caps on fetches in flight, overall (OAUTH_CIMD_FETCHES) and per client
 * address (OAUTH_CIMD_FETCHES_PER_ADDRESS): past them the answer is the
 * limits' own, at once, so a crowd of never-answering URLs holds no more
 * than the caps' sockets and timers. A fetch goes through
 * libcommon's HTTP client: one resolution, every address checked against
 * special-use ranges before a connection is made to it (the checked
 * address is the one connected to), TLS against OAUTH_CIMD_CA_FILE, no
 * redirects, 200 only, 5 KB at most (Content-Length first, then as it
 * streams), 5 s to connect, 5 s between bytes, 10 s in all. A valid document is stored
 * with its Cache-Control max-age clamped to [300 s, 86400 s]; an invalid
 * one, or a failure, is never stored. Concurrent asks for one client_id
 * share one fetch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "cm/uuid.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

#define MAX_AGE_MIN     300
#define MAX_AGE_MAX     86400
#define MAX_AGE_DEFAULT 3600
#define MAX_REDIRECTS   20

typedef struct waiter {
    struct waiter *next;
    api_oauth_app_cb cb;
    void *ud;
} waiter_t;

struct cimd_fetch {
    cimd_fetch_t *next;
    api_oauth_t *o;
    char *client_id;
    char ip[CM_IP_BUFLEN];
    waiter_t *waiters; /* none: a background refresh */
    bool known;        /* the store has it (a refresh, not a provisioning) */
    int limit;         /* API_OAUTH_NEW_APP_* when not known */
    api_oauth_app_t app;
    char *vtoken; /* the document's verification token */
    char *fresh_until;
};

typedef struct {
    api_oauth_t *o;
    char *client_id;
    char ip[CM_IP_BUFLEN];
    api_oauth_app_cb cb;
    void *ud;
} lookup_t;

void api_oauth__app_clear(api_oauth_app_t *a)
{
    free(a->client_id);
    free(a->name);
    free(a->logo_uri);
    free(a->redirects_json);
    free(a->ceiling_json);
    free(a->org);
    for (size_t i = 0; i < a->nredirects; i++)
        free(a->redirects[i]);
    free(a->redirects);
    memset(a, 0, sizeof(*a));
}

static char *dup_or_null(const char *s)
{
    return s ? cm_xstrdup(s) : NULL;
}

/* ---- the document (pure) ---- */

int64_t api_oauth__max_age(cm_slice_t cache_control)
{
    int64_t age = MAX_AGE_DEFAULT;
    /* no-store / no-cache: as short as this server keeps anything */
    for (size_t i = 0; i + 8 <= cache_control.len; i++)
        if (strncasecmp(cache_control.p + i, "no-store", 8) == 0 ||
            strncasecmp(cache_control.p + i, "no-cache", 8) == 0)
            return MAX_AGE_MIN;
    for (size_t i = 0; i + 8 <= cache_control.len; i++) {
        if (strncasecmp(cache_control.p + i, "max-age=", 8) != 0 ||
            (i > 0 && cache_control.p[i - 1] != ' ' && cache_control.p[i - 1] != ','))
            continue;
        int64_t v = 0;
        size_t k = i + 8;
        bool digits = false;
        while (k < cache_control.len && cache_control.p[k] >= '0' && cache_control.p[k] <= '9' &&
               v < 100000000) {
            v = v * 10 + (cache_control.p[k++] - '0');
            digits = true;
        }
        if (digits)
            age = v;
        break;
    }
    return age < MAX_AGE_MIN ? MAX_AGE_MIN : age > MAX_AGE_MAX ? MAX_AGE_MAX : age;
}

static char *str_of(cm_json_t v)
{
    cm_buf_t b = CM_BUF_INIT;
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_str_append(v, &b) != 0 ||
        (b.len && memchr(b.p, '\0', b.len) != NULL)) {
        cm_buf_free(&b);
        return NULL;
    }
    char *s = cm_xstrdup(cm_buf_cstr(&b));
    cm_buf_free(&b);
    return s;
}

static const char *read_redirects(cm_json_t list, api_oauth_app_t *a)
{
    if (cm_json_type(list) != CM_JSON_ARRAY || cm_json_len(list) == 0)
        return "redirect_uris must be a non-empty array";
    if (cm_json_len(list) > MAX_REDIRECTS)
        return "redirect_uris has too many entries";
    a->redirects = cm_xcalloc(cm_json_len(list), sizeof(char *));
    cm_buf_t j = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &j);
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_json_len(list); i++) {
        char *u = str_of(cm_json_at(list, i));
        api_oauth_uri_t p;
        if (u == NULL || u[0] == '\0' || api_oauth__uri_parse(cm_slice_from_cstr(u), &p) != 0 ||
            api_oauth__redirect_shape(&p) != NULL) {
            free(u);
            cm_buf_free(&j);
            return "every redirect_uri must be an https URL, or http on loopback, without a "
                   "fragment";
        }
        a->redirects[a->nredirects++] = u;
        cm_json_str_cstr(&w, u);
    }
    cm_json_end_array(&w);
    a->redirects_json = cm_buf_detach(&j, NULL);
    return NULL;
}

/* com.<vendor>.scopes: the app's ceiling, unknown and privileged scopes
 * dropped (a document cannot grant itself an admin's scope). */
static void read_ceiling(cm_json_t list, api_oauth_app_t *a)
{
    if (cm_json_type(list) != CM_JSON_ARRAY)
        return;
    cm_buf_t j = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &j);
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_json_len(list) && i < 512; i++) {
        char *s = str_of(cm_json_at(list, i));
        if (s && api_scope_oauth(cm_slice_from_cstr(s)) == API_SCOPE_GRANTABLE)
            cm_json_str_cstr(&w, s);
        free(s);
    }
    cm_json_end_array(&w);
    a->ceiling_json = cm_buf_detach(&j, NULL);
}

const char *api_oauth__doc_validate(cm_slice_t url, cm_slice_t body, const char *vendor,
                                    bool allow_loopback, api_oauth_app_t *a, char **vtoken)
{
    cm_json_doc_t *doc = NULL;
    const char *why = NULL;
    char key[96];
    memset(a, 0, sizeof(*a));
    *vtoken = NULL;
    if (!cm_json_utf8_valid(body.p, body.len) ||
        cm_json_parse(body.p, body.len, NULL, &doc, NULL) != 0 ||
        cm_json_type(cm_json_root(doc)) != CM_JSON_OBJECT) {
        why = "the document is not a JSON object";
        goto done;
    }
    cm_json_t d = cm_json_root(doc);
    a->client_id = str_of(cm_json_get(d, "client_id"));
    if (a->client_id == NULL || strlen(a->client_id) != url.len ||
        memcmp(a->client_id, url.p, url.len) != 0) {
        why = "the document's client_id is not the URL it was fetched from";
        goto done;
    }
    if ((why = read_redirects(cm_json_get(d, "redirect_uris"), a)) != NULL)
        goto done;
    cm_json_t method = cm_json_get(d, "token_endpoint_auth_method");
    if (cm_json_exists(method) && !cm_json_str_eq(method, CM_SLICE_LIT("none"))) {
        why = "only public clients (token_endpoint_auth_method none) are supported";
        goto done;
    }
    if (cm_json_exists(cm_json_get(d, "client_secret")) ||
        cm_json_exists(cm_json_get(d, "client_secret_expires_at"))) {
        why = "a client document may not carry a client_secret";
        goto done;
    }
    a->name = str_of(cm_json_get(d, "client_name"));
    if (a->name == NULL || a->name[0] == '\0' || strlen(a->name) > 200) {
        why = "client_name must be a string of 1 to 200 characters";
        goto done;
    }
    char *logo = str_of(cm_json_get(d, "logo_uri"));
    api_oauth_uri_t lu;
    if (logo && api_oauth__client_id_check(cm_slice_from_cstr(logo), &lu, allow_loopback) == NULL)
        a->logo_uri = logo; /* https on a public-looking host, else dropped */
    else
        free(logo);
    snprintf(key, sizeof(key), "com.%s.scopes", vendor);
    read_ceiling(cm_json_get(d, key), a);
    snprintf(key, sizeof(key), "com.%s.verification_token", vendor);
    *vtoken = str_of(cm_json_get(d, key));
done:
    cm_json_doc_free(doc);
    if (why != NULL) {
        api_oauth__app_clear(a);
        free(*vtoken);
        *vtoken = NULL;
    }
    return why;
}

/* ---- delivery ---- */

static void deliver(cimd_fetch_t *f, int status, const char *error)
{
    api_oauth_t *o = f->o;
    for (cimd_fetch_t **pp = &o->fetches; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    bool background = f->waiters == NULL;
    waiter_t *w = f->waiters;
    while (w) {
        waiter_t *next = w->next;
        w->cb(status, status == 0 ? &f->app : NULL, error, w->ud);
        free(w);
        w = next;
    }
    if (status != 0 && background)
        cm_log(CM_LOG_WARN, NULL, "client document %s not refreshed: %s", f->client_id, error);
    api_oauth__app_clear(&f->app);
    free(f->client_id);
    free(f->vtoken);
    free(f->fresh_until);
    free(f);
}

static void app_from_row(const cm_db_res_t *res, api_oauth_app_t *a)
{
#define V(c) cm_db_value(res, 0, 0, c)
    memset(a, 0, sizeof(*a));
    a->client_id = cm_xstrdup(V(API_APP_CLIENT_ID));
    a->name = cm_xstrdup(V(API_APP_NAME));
    a->logo_uri = dup_or_null(V(API_APP_LOGO));
    a->redirects_json = cm_xstrdup(V(API_APP_REDIRECTS));
    a->ceiling_json = dup_or_null(V(API_APP_CEILING));
    a->org = dup_or_null(V(API_APP_ORG));
    a->verified = V(API_APP_VERIFIED) && atoi(V(API_APP_VERIFIED)) == 1;
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(a->redirects_json, strlen(a->redirects_json), NULL, &doc, NULL) == 0) {
        cm_json_t l = cm_json_root(doc);
        a->redirects = cm_xcalloc(cm_json_len(l) + 1, sizeof(char *));
        for (size_t i = 0; i < cm_json_len(l); i++) {
            char *u = str_of(cm_json_at(l, i));
            if (u)
                a->redirects[a->nredirects++] = u;
        }
    }
    cm_json_doc_free(doc);
#undef V
}

static void on_stored_read(int status, const cm_db_res_t *res, void *ud)
{
    cimd_fetch_t *f = ud;
    if (status != 0 || cm_db_nrows(res, 0) != 1) {
        deliver(f, CM_EUNAVAIL, "the metadata store cannot be reached");
        return;
    }
    api_oauth__app_clear(&f->app);
    app_from_row(res, &f->app);
    deliver(f, 0, NULL);
}

static void on_stored(int status, const cm_db_res_t *res, void *ud)
{
    cimd_fetch_t *f = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "storing client %s: %s", f->client_id, cm_db_error(res));
        deliver(f, CM_EUNAVAIL, "the metadata store cannot be reached");
        return;
    }
    if (!f->known && f->limit == API_OAUTH_NEW_APP_OK && f->app.org != NULL)
        api_oauth__limits_relink(f->o, f->ip); /* counted unlinked when it began */
    /* read back, with this region's verification */
    api_store_oauth_app_get(f->o->ctx->db, f->client_id, f->o->ctx->cfg.region, on_stored_read, f);
}

static void store(cimd_fetch_t *f)
{
    if (!f->known && f->limit == API_OAUTH_NEW_APP_LINKED_ONLY && f->app.org == NULL) {
        deliver(f, CM_EAGAIN, "too many new applications from this address; try again later");
        return;
    }
    char id[CM_UUID_STR_LEN + 1];
    cm_uuid_v7(id);
    api_store_oauth_app_t a = {
        .id = id,
        .client_id = f->client_id,
        .client_name = f->app.name,
        .logo_uri = f->app.logo_uri,
        .redirects = f->app.redirects_json,
        .scope_ceiling = f->app.ceiling_json,
        .organization_id = f->app.org,
        .fresh_until = f->fresh_until,
    };
    api_store_oauth_app_put(f->o->ctx->db, &a, on_stored, f);
}

/* The verification token links the app to its organization when it was
 * made for this very document (its URL, normalised). */
static void on_vtoken(int status, const cm_db_res_t *res, void *ud)
{
    cimd_fetch_t *f = ud;
    if (status == 0 && cm_db_nrows(res, 0) == 1) {
        cm_buf_t mine = CM_BUF_INIT;
        api_oauth__canonical(cm_slice_from_cstr(f->client_id), &mine);
        const char *bound = cm_db_value(res, 0, 0, API_VT_URL);
        if (bound && strlen(bound) == mine.len && memcmp(bound, mine.p, mine.len) == 0)
            f->app.org = cm_xstrdup(cm_db_value(res, 0, 0, API_VT_ORG));
        cm_buf_free(&mine);
    }
    store(f);
}

static void on_fetched(int status, const cm_http_client_res_t *res, void *ud)
{
    cimd_fetch_t *f = ud;
    char why[200];
    if (status != 0) {
        snprintf(why, sizeof(why), "the client metadata document could not be read: %s",
                 status == CM_EFORBIDDEN  ? "its host resolves to a special-use address"
                 : status == CM_ETOOBIG   ? "it is larger than 5 KB"
                 : status == CM_ETIMEDOUT ? res->error /* which deadline, in words */
                                          : res->error);
        deliver(f, status == CM_EFORBIDDEN ? CM_EFORBIDDEN : CM_EUNAVAIL, why);
        return;
    }
    cm_slice_t len = cm_http_client_res_header(res, "Content-Length");
    if (res->status != 200) {
        snprintf(why, sizeof(why),
                 "the client metadata document could not be read: HTTP %d (only 200 is "
                 "accepted; redirects are not followed)",
                 res->status);
        deliver(f, CM_EINVAL, why);
        return;
    }
    if ((len.len && (len.len > 6 || atoi(len.p) > API_OAUTH_FETCH_MAX_BYTES)) ||
        res->body.len > API_OAUTH_FETCH_MAX_BYTES) {
        deliver(f, CM_EINVAL, "the client metadata document is larger than 5 KB");
        return;
    }
    const char *bad = api_oauth__doc_validate(cm_slice_from_cstr(f->client_id), res->body,
                                              f->o->ctx->cfg.oauth_vendor, f->o->loopback != NULL,
                                              &f->app, &f->vtoken);
    if (bad != NULL) {
        snprintf(why, sizeof(why), "the client metadata document is invalid: %s", bad);
        deliver(f, CM_EINVAL, why);
        return;
    }
    int64_t age = api_oauth__max_age(cm_http_client_res_header(res, "Cache-Control"));
    char until[24];
    snprintf(until, sizeof(until), "%lld", (long long)(cm_now_us() / 1000 + age * 1000));
    f->fresh_until = cm_xstrdup(until);
    if (f->vtoken == NULL) {
        store(f);
        return;
    }
    char hash[CM_SHA256_HEX_LEN + 1];
    cm_sha256_hex(f->vtoken, strlen(f->vtoken), hash);
    api_store_vtoken_lookup(f->o->ctx->db, hash, on_vtoken, f);
}

static void start_fetch(cimd_fetch_t *f)
{
    api_oauth_t *o = f->o;
    api_oauth_uri_t u;
    api_oauth__uri_parse(cm_slice_from_cstr(f->client_id), &u);
    cm_http_client_t *c = o->fetch;
    if (o->loopback && api_oauth__loopback(&u) && !cm_slice_eq_cstr(u.host, "localhost"))
        c = o->loopback; /* the test switch: 127.0.0.1 and [::1] literals only */
    static const char *const headers[] = {"Accept", "application/json", NULL};
    cm_http_client_req_t req = {.url = f->client_id, .headers = headers};
    cm_http_client_request(c, &req, on_fetched, f);
}

static cimd_fetch_t *fetch_new(api_oauth_t *o, const char *client_id, const char *ip)
{
    cimd_fetch_t *f = cm_xcalloc(1, sizeof(*f));
    f->o = o;
    f->client_id = cm_xstrdup(client_id);
    snprintf(f->ip, sizeof(f->ip), "%s", ip ? ip : "");
    f->next = o->fetches;
    o->fetches = f;
    return f;
}

static cimd_fetch_t *in_flight(api_oauth_t *o, const char *client_id)
{
    for (cimd_fetch_t *f = o->fetches; f; f = f->next)
        if (strcmp(f->client_id, client_id) == 0)
            return f;
    return NULL;
}

/* Whether one more fetch may start (ip: for a new app; NULL: a refresh,
 * held to the overall cap only). */
static bool fetch_room(api_oauth_t *o, const char *ip)
{
    long long all = 0, mine = 0;
    for (cimd_fetch_t *f = o->fetches; f; f = f->next) {
        all++;
        mine += ip && !f->known && strcmp(f->ip, ip) == 0;
    }
    return all < o->ctx->cfg.cimd_fetches && mine < o->ctx->cfg.cimd_fetches_per_address;
}

static void wait_on(cimd_fetch_t *f, api_oauth_app_cb cb, void *ud)
{
    waiter_t *w = cm_xcalloc(1, sizeof(*w));
    w->cb = cb;
    w->ud = ud;
    w->next = f->waiters;
    f->waiters = w;
}

/* ---- resolving a client_id ---- */

static void lookup_free(lookup_t *l)
{
    free(l->client_id);
    free(l);
}

static void on_app_row(int status, const cm_db_res_t *res, void *ud)
{
    lookup_t *l = ud;
    api_oauth_t *o = l->o;
    if (status != 0) {
        if (l->cb)
            l->cb(CM_EUNAVAIL, NULL, "the metadata store cannot be reached", l->ud);
        lookup_free(l);
        return;
    }
    if (cm_db_nrows(res, 0) == 1) {
        api_oauth_app_t a;
        app_from_row(res, &a);
        const char *until = cm_db_value(res, 0, 0, API_APP_FRESH_UNTIL);
        bool stale = until == NULL || (int64_t)(cm_now_us() / 1000) >= atoll(until);
        if (stale && in_flight(o, l->client_id) == NULL &&
            fetch_room(o, NULL)) { /* served stale, refreshed behind (a later ask if full) */
            cimd_fetch_t *f = fetch_new(o, l->client_id, l->ip);
            f->known = true;
            start_fetch(f);
        }
        if (l->cb)
            l->cb(0, &a, NULL, l->ud);
        api_oauth__app_clear(&a);
        lookup_free(l);
        return;
    }
    if (l->cb == NULL) { /* api_oauth__app_touch: never provisions */
        lookup_free(l);
        return;
    }
    cimd_fetch_t *f = in_flight(o, l->client_id);
    if (f == NULL) {
        int limit = api_oauth__limits_check(o, l->ip);
        if (limit == API_OAUTH_NEW_APP_REFUSED) {
            l->cb(CM_EAGAIN, NULL, "too many new applications; try again later", l->ud);
            lookup_free(l);
            return;
        }
        if (!fetch_room(o, l->ip)) {
            l->cb(CM_EAGAIN, NULL, "too many new applications are being fetched; try again later",
                  l->ud);
            lookup_free(l);
            return;
        }
        /* counted now: a fetch that fails costs as much as one that succeeds */
        api_oauth__limits_count(o, l->ip, limit == API_OAUTH_NEW_APP_LINKED_ONLY);
        f = fetch_new(o, l->client_id, l->ip);
        f->limit = limit;
        wait_on(f, l->cb, l->ud);
        start_fetch(f);
    } else {
        wait_on(f, l->cb, l->ud);
    }
    lookup_free(l);
}

void api_oauth__app_resolve(api_oauth_t *o, const char *client_id, const char *ip,
                            api_oauth_app_cb cb, void *ud)
{
    api_oauth_uri_t u;
    const char *why =
        api_oauth__client_id_check(cm_slice_from_cstr(client_id), &u, o->loopback != NULL);
    if (why != NULL) {
        cb(CM_EINVAL, NULL, why, ud);
        return;
    }
    lookup_t *l = cm_xcalloc(1, sizeof(*l));
    l->o = o;
    l->client_id = cm_xstrdup(client_id);
    snprintf(l->ip, sizeof(l->ip), "%s", ip ? ip : "");
    l->cb = cb;
    l->ud = ud;
    api_store_oauth_app_get(o->ctx->db, client_id, o->ctx->cfg.region, on_app_row, l);
}

void api_oauth__app_touch(api_oauth_t *o, const char *client_id)
{
    api_oauth_uri_t u;
    if (api_oauth__client_id_check(cm_slice_from_cstr(client_id), &u, o->loopback != NULL))
        return;
    lookup_t *l = cm_xcalloc(1, sizeof(*l));
    l->o = o;
    l->client_id = cm_xstrdup(client_id);
    api_store_oauth_app_get(o->ctx->db, client_id, o->ctx->cfg.region, on_app_row, l);
}
