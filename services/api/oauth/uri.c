/*
 * uri.c - the URLs OAuth trusts: redirect URIs and CIMD client_ids
 * (docs/oauth.md "Redirect URIs", "Clients"). Pure: no I/O.
 *
 * Parsing is strict on purpose: anything a browser or a resolver could read
 * two ways (a backslash, an encoded '/', '?', '#', '@' or '\' in the
 * authority, whitespace, control bytes, non-ASCII) is refused rather than
 * normalised, so the host we check is the host that is reached.
 */
#include <string.h>
#include <strings.h>

#include "cm/err.h"
#include "oauth/oauth_int.h"

static size_t span_of(const char *p, size_t n, const char *set)
{
    size_t i = 0;
    while (i < n && strchr(set, p[i]) != NULL && p[i] != '\0')
        i++;
    return i;
}

static bool bad_byte(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>';
}

/* %5c %2f %3f %23 %40 (any case): separators in disguise. */
static bool encoded_separator(cm_slice_t s)
{
    static const char *const bad[] = {"%5c", "%2f", "%3f", "%23", "%40"};
    for (size_t i = 0; i + 3 <= s.len; i++)
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
            if (strncasecmp(s.p + i, bad[k], 3) == 0)
                return true;
    return false;
}

int api_oauth__uri_parse(cm_slice_t s, api_oauth_uri_t *u)
{
    memset(u, 0, sizeof(*u));
    if (s.len == 0 || s.len > API_OAUTH_URI_MAX)
        return CM_EINVAL;
    for (size_t i = 0; i < s.len; i++)
        if (bad_byte((unsigned char)s.p[i]))
            return CM_EINVAL;
    const char *end = s.p + s.len;
    const char *colon = memchr(s.p, ':', s.len);
    if (colon == NULL || colon == s.p || end - colon < 3 || colon[1] != '/' || colon[2] != '/')
        return CM_EINVAL; /* scheme://authority only: no private-use schemes */
    for (const char *p = s.p; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (p > s.p && ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.'))))
            return CM_EINVAL;
    u->scheme = (cm_slice_t){s.p, (size_t)(colon - s.p)};
    const char *a = colon + 3, *ae = a;
    while (ae < end && *ae != '/' && *ae != '?' && *ae != '#')
        ae++;
    cm_slice_t auth = {a, (size_t)(ae - a)};
    if (auth.len == 0 || encoded_separator(auth))
        return CM_EINVAL;
    if (memchr(auth.p, '@', auth.len)) {
        u->has_userinfo = true;
        return CM_EINVAL;
    }
    if (auth.p[0] == '[') { /* an IPv6 literal */
        const char *rb = memchr(auth.p, ']', auth.len);
        if (rb == NULL || rb == auth.p + 1)
            return CM_EINVAL;
        u->host = (cm_slice_t){auth.p + 1, (size_t)(rb - auth.p - 1)};
        u->ipv6 = true;
        if (span_of(u->host.p, u->host.len, "0123456789abcdefABCDEF:.") < u->host.len)
            return CM_EINVAL; /* no zone ids, no brackets in brackets */
        a = rb + 1;
        if (a < ae && *a != ':')
            return CM_EINVAL;
    } else {
        const char *pc = memchr(auth.p, ':', auth.len);
        u->host = (cm_slice_t){auth.p, pc ? (size_t)(pc - auth.p) : auth.len};
        a = pc ? pc : ae;
        if (u->host.len == 0 || u->host.len > 253)
            return CM_EINVAL;
    }
    if (a < ae) { /* :port */
        cm_slice_t port = {a + 1, (size_t)(ae - a - 1)};
        if (port.len == 0 || port.len > 5 || cm_slice_span(port, "0123456789") < port.len)
            return CM_EINVAL;
        unsigned v = 0;
        for (size_t i = 0; i < port.len; i++)
            v = v * 10 + (unsigned)(port.p[i] - '0');
        if (v == 0 || v > 65535)
            return CM_EINVAL;
        u->port = v;
        u->has_port = true;
    }
    const char *p = ae;
    const char *q = p;
    while (q < end && *q != '?' && *q != '#')
        q++;
    u->path = (cm_slice_t){p, (size_t)(q - p)};
    if (q < end && *q == '?') {
        const char *f = memchr(q, '#', (size_t)(end - q));
        u->query = (cm_slice_t){q + 1, (size_t)((f ? f : end) - q - 1)};
        u->has_query = true;
        q = f ? f : end;
    }
    if (q < end && *q == '#')
        u->has_fragment = true;
    return 0;
}

static bool slice_ieq(cm_slice_t a, const char *b)
{
    size_t n = strlen(b);
    return a.len == n && strncasecmp(a.p, b, n) == 0;
}

static bool slices_ieq(cm_slice_t a, cm_slice_t b)
{
    return a.len == b.len && strncasecmp(a.p, b.p, a.len) == 0;
}

/* 127.0.0.1 and ::1 (in any spelling of ::1 a parser would accept). */
static bool loopback_ip(const api_oauth_uri_t *u)
{
    if (u->ipv6) {
        cm_slice_t h = u->host;
        size_t i = 0;
        while (i < h.len && (h.p[i] == '0' || h.p[i] == ':'))
            i++;
        return i + 1 == h.len && h.p[i] == '1' && memchr(h.p, ':', h.len) != NULL;
    }
    return slice_ieq(u->host, "127.0.0.1");
}

bool api_oauth__loopback(const api_oauth_uri_t *u)
{
    return loopback_ip(u) || (!u->ipv6 && slice_ieq(u->host, "localhost"));
}

static unsigned effective_port(const api_oauth_uri_t *u)
{
    if (u->has_port)
        return u->port;
    return slice_ieq(u->scheme, "https") ? 443 : 80;
}

static cm_slice_t path_of(const api_oauth_uri_t *u)
{
    return u->path.len ? u->path : CM_SLICE_LIT("/");
}

const char *api_oauth__redirect_shape(const api_oauth_uri_t *u)
{
    if (u->has_fragment)
        return "a redirect_uri may not have a fragment";
    if (slice_ieq(u->scheme, "https"))
        return NULL;
    if (slice_ieq(u->scheme, "http") && api_oauth__loopback(u))
        return NULL;
    return "a redirect_uri must use https, or http on a loopback address";
}

/* Seed 5.5-5.6: scheme, host, port and path equal (query too); a
 * registered loopback URI without a port takes any port; localhost with a
 * port needs that port; 127.0.0.1 and ::1 take any port. */
static bool one_matches(const api_oauth_uri_t *r, const api_oauth_uri_t *g)
{
    if (!slices_ieq(r->scheme, g->scheme) || r->ipv6 != g->ipv6 || !slices_ieq(r->host, g->host))
        return false;
    cm_slice_t rp = path_of(r), gp = path_of(g);
    if (rp.len != gp.len || memcmp(rp.p, gp.p, rp.len) != 0)
        return false;
    if (r->has_query != g->has_query ||
        (r->has_query &&
         (r->query.len != g->query.len || memcmp(r->query.p, g->query.p, r->query.len) != 0)))
        return false;
    bool any_port = loopback_ip(g) || (api_oauth__loopback(g) && !g->has_port);
    return any_port || effective_port(r) == effective_port(g);
}

bool api_oauth__redirect_allowed(cm_slice_t requested, const cm_slice_t *registered, size_t n)
{
    api_oauth_uri_t r;
    if (api_oauth__uri_parse(requested, &r) != 0 || api_oauth__redirect_shape(&r) != NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        api_oauth_uri_t g;
        if (api_oauth__uri_parse(registered[i], &g) == 0 && api_oauth__redirect_shape(&g) == NULL &&
            one_matches(&r, &g))
            return true;
    }
    return false;
}

/* A label of digits (decimal or octal) or 0x-hex: a number to inet_aton. */
static bool numeric_label(const char *p, size_t n)
{
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return span_of(p + 2, n - 2, "0123456789abcdefABCDEF") == n - 2;
    return n > 0 && span_of(p, n, "0123456789") == n;
}

/* Every label numeric: an IPv4 address in some form. Only the canonical
 * dotted quad is let through (2130706433, 0177.0.0.1, 0x7f.1 are not). */
static bool odd_numeric_host(cm_slice_t h)
{
    size_t labels = 0;
    bool canonical = true;
    for (size_t i = 0; i <= h.len;) {
        size_t j = i;
        while (j < h.len && h.p[j] != '.')
            j++;
        if (!numeric_label(h.p + i, j - i))
            return false; /* a name */
        size_t n = j - i;
        unsigned v = 0;
        for (size_t k = 0; k < n && canonical; k++) {
            if (h.p[i + k] < '0' || h.p[i + k] > '9')
                canonical = false;
            else
                v = v * 10 + (unsigned)(h.p[i + k] - '0');
        }
        if (n > 3 || v > 255 || (n > 1 && h.p[i] == '0'))
            canonical = false;
        labels++;
        i = j + 1;
    }
    return !(canonical && labels == 4);
}

bool api_oauth__host_blocked(cm_slice_t host)
{
    static const char *const names[] = {"localhost", "metadata.google.internal"};
    static const char *const suffixes[] = {
        ".localhost",   ".local",     ".internal", ".consul", ".lan",  ".home", ".corp",
        ".localdomain", ".home.arpa", ".intranet", ".priv",   ".arpa", ".test", ".invalid",
    };
    if (host.len && host.p[host.len - 1] == '.')
        host.len--; /* "localhost." is localhost */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (slice_ieq(host, names[i]))
            return true;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t n = strlen(suffixes[i]);
        if (host.len > n && strncasecmp(host.p + host.len - n, suffixes[i], n) == 0)
            return true;
    }
    return false;
}

const char *api_oauth__client_id_check(cm_slice_t id, api_oauth_uri_t *u, bool allow_loopback)
{
    if (api_oauth__uri_parse(id, u) != 0)
        return "client_id is not a well-formed URL";
    if (!slice_ieq(u->scheme, "https"))
        return "client_id must be an https URL";
    if (u->has_query || u->has_fragment)
        return "client_id may not have a query or a fragment";
    if (u->path.len <= 1)
        return "client_id must have a path";
    cm_slice_t p = u->path;
    for (size_t i = 0; i < p.len; i++) {
        if (p.p[i] != '/')
            continue;
        size_t j = i + 1;
        while (j < p.len && p.p[j] != '/')
            j++;
        size_t seg = j - i - 1;
        if ((seg == 1 && p.p[i + 1] == '.') || (seg == 2 && p.p[i + 1] == '.' && p.p[i + 2] == '.'))
            return "client_id may not have . or .. path segments";
    }
    if (encoded_separator(p))
        return "client_id may not have encoded separators";
    for (size_t i = 0; i + 3 <= p.len; i++) /* an encoded '.' could hide a dot segment */
        if (strncasecmp(p.p + i, "%2e", 3) == 0)
            return "client_id may not have encoded dots";
    if (loopback_ip(u))
        return allow_loopback ? NULL : "client_id must name a public host";
    if (u->ipv6)
        return NULL; /* the address filter judges it */
    if (odd_numeric_host(u->host))
        return "client_id's host is not a canonical address";
    if (api_oauth__host_blocked(u->host) || memchr(u->host.p, '.', u->host.len) == NULL)
        return "client_id must name a public host";
    return NULL;
}
