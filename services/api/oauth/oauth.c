/*
 * oauth.c - the OAuth context (see oauth.h): the HTTP clients that fetch
 * client documents, the resources tokens may be issued for, the issuer a
 * request speaks to, and the small helpers every oauth/ file shares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/http_client.h"
#include "cm/log.h"
#include "oauth/oauth_int.h"

/* The test switch's filter: loopback addresses only (127/8, ::1). */
static bool loopback_only(const struct sockaddr *sa, void *ud)
{
    (void)ud;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        static const unsigned char one[16] = {[15] = 1};
        return memcmp(in6->sin6_addr.s6_addr, one, 16) == 0;
    }
    return false;
}

/* "https://Host:443/" and "https://host" name the same resource. */
void api_oauth__canonical(cm_slice_t url, cm_buf_t *out)
{
    api_oauth_uri_t u;
    cm_buf_reset(out);
    if (api_oauth__uri_parse(url, &u) != 0) {
        cm_buf_append(out, url.p, url.len);
        return;
    }
    for (size_t i = 0; i < u.scheme.len; i++)
        cm_buf_putc(out, (char)(u.scheme.p[i] | 0x20));
    cm_buf_append_cstr(out, "://");
    if (u.ipv6)
        cm_buf_putc(out, '[');
    for (size_t i = 0; i < u.host.len; i++)
        cm_buf_putc(out, (char)(u.host.p[i] >= 'A' && u.host.p[i] <= 'Z' ? u.host.p[i] | 0x20
                                                                         : u.host.p[i]));
    if (u.ipv6)
        cm_buf_putc(out, ']');
    bool https = u.scheme.len == 5 && strncasecmp(u.scheme.p, "https", 5) == 0;
    if (u.has_port && u.port != (https ? 443u : 80u))
        cm_buf_appendf(out, ":%u", u.port);
    cm_slice_t path = u.path;
    while (path.len && path.p[path.len - 1] == '/')
        path.len--;
    cm_buf_append(out, path.p, path.len);
    if (u.has_query) {
        cm_buf_putc(out, '?');
        cm_buf_append(out, u.query.p, u.query.len);
    }
}

static void add_resource(api_oauth_t *o, cm_slice_t url)
{
    cm_buf_t c = CM_BUF_INIT;
    api_oauth__canonical(url, &c);
    if (c.len && o->nresources < API_OAUTH_MAX_RESOURCES)
        o->resources[o->nresources++] = cm_buf_detach(&c, NULL);
    cm_buf_free(&c);
}

api_oauth_t *api_oauth_new(api_ctx_t *ctx)
{
    api_oauth_t *o = cm_xcalloc(1, sizeof(*o));
    o->ctx = ctx;
    const api_config_t *cfg = &ctx->cfg;
    cm_http_client_opts_t opts = {
        .connect_timeout_ms = API_OAUTH_FETCH_CONNECT_MS,
        .timeout_ms = API_OAUTH_FETCH_TOTAL_MS,
        .read_timeout_ms = API_OAUTH_FETCH_READ_MS,
        .max_response_bytes = API_OAUTH_FETCH_MAX_BYTES + 4096, /* the header section too */
        .ca_file = cfg->oauth_ca_file,
        .user_agent = "analytics-api (OAuth client metadata)",
        .filter = cm_http_client_public_only,
        .name = "cimd",
        .max_idle_per_host = 1,
    };
    if (cm_http_client_new(ctx->loop, &opts, &o->fetch) != CM_OK)
        abort(); /* only a negative option fails */
    if (cfg->oauth_allow_loopback) {
        opts.filter = loopback_only;
        opts.name = "cimd-loopback";
        if (cm_http_client_new(ctx->loop, &opts, &o->loopback) != CM_OK)
            abort();
        cm_log(CM_LOG_WARN, NULL,
               "OAUTH_CIMD_ALLOW_LOOPBACK is on: client documents on 127.0.0.1 are fetched "
               "(a test switch; never in production)");
    }
    add_resource(o, cm_slice_from_cstr(cfg->base_url));
    const char *r = cfg->oauth_resources;
    while (r && *r) {
        const char *comma = strchr(r, ',');
        cm_slice_t one = cm_slice_trim((cm_slice_t){r, comma ? (size_t)(comma - r) : strlen(r)});
        if (one.len)
            add_resource(o, one);
        r = comma ? comma + 1 : NULL;
    }
    api_oauth__github_keys_load(o);
    ctx->token_audience = o->resources[0];
    return o;
}

typedef struct {
    api_oauth_t *o;
    int pending;
    void (*done)(void *);
    void *ud;
} closing_t;

static void client_closed(void *p)
{
    closing_t *c = p;
    if (--c->pending > 0)
        return;
    api_oauth_t *o = c->o;
    for (size_t i = 0; i < o->nresources; i++)
        free(o->resources[i]);
    api_oauth__github_keys_free(o);
    api_oauth__limits_free(o);
    api_oauth__guesses_free(o);
    void (*done)(void *) = c->done;
    void *ud = c->ud;
    free(c);
    free(o);
    if (done)
        done(ud);
}

void api_oauth_close(api_oauth_t *o, void (*done)(void *ud), void *ud)
{
    closing_t *c = cm_xcalloc(1, sizeof(*c));
    c->o = o;
    c->done = done;
    c->ud = ud;
    c->pending = o->loopback ? 2 : 1;
    cm_http_client_t *loop = o->loopback;
    cm_http_client_close(o->fetch, client_closed, c);
    if (loop)
        cm_http_client_close(loop, client_closed, c);
}

/* The issuer the request speaks to: OAUTH_URL when it came to that host,
 * else BASE_URL (never the Host header itself: it is the client's to
 * write). */
const char *api_oauth__issuer(api_call_t *call)
{
    const api_config_t *cfg = &call->ctx->cfg;
    cm_slice_t host = cm_http_req_header(call->req, "Host");
    api_oauth_uri_t u;
    if (cfg->oauth_url[0] && host.len &&
        api_oauth__uri_parse(cm_slice_from_cstr(cfg->oauth_url), &u) == 0) {
        const char *h = u.host.p - (u.ipv6 ? 1 : 0);
        size_t n = (size_t)((u.path.p ? u.path.p : h + strlen(h)) - h);
        if (n == host.len && strncasecmp(h, host.p, n) == 0)
            return cfg->oauth_url;
    }
    return cfg->base_url;
}

bool api_oauth__resource_known(api_oauth_t *o, cm_slice_t resource, char **canonical)
{
    cm_buf_t c = CM_BUF_INIT;
    api_oauth__canonical(resource, &c);
    for (size_t i = 0; i < o->nresources; i++)
        if (strlen(o->resources[i]) == c.len && memcmp(o->resources[i], c.p, c.len) == 0) {
            *canonical = cm_buf_detach(&c, NULL);
            return true;
        }
    cm_buf_free(&c);
    return false;
}

bool api_oauth_client_url_canonical(const char *url, char *out, size_t size)
{
    api_oauth_uri_t u;
    if (api_oauth__client_id_check(cm_slice_from_cstr(url), &u, true) != NULL)
        return false;
    cm_buf_t c = CM_BUF_INIT;
    api_oauth__canonical(cm_slice_from_cstr(url), &c);
    bool ok = c.len < size;
    if (ok)
        snprintf(out, size, "%s", cm_buf_cstr(&c));
    cm_buf_free(&c);
    return ok;
}
