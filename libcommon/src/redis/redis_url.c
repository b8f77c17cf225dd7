/*
 * redis_url.c - parsing of the Redis URL forms redis-py documents:
 *
 *   redis://[[user]:password@]host[:port][/db][?query]     plain TCP
 *   rediss://[[user]:password@]host[:port][/db][?query]    TLS (redis_tls.c)
 *   unix://[[user]:password@]/path/to/redis.sock[?query]   a unix socket
 *
 * query: name=value pairs joined by '&', values percent-decoded ('+' is a
 * space, as Python's parse_qs reads it): db, username, password, and for
 * rediss:// ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_cert_reqs
 * (required | none), the names redis-py passes on to its SSL connection.
 *
 * Kept apart from redis.c because it is pure string work, tested without a
 * server. The parser is strict on purpose: a typo in a configured URL should
 * fail at start-up with a reason, not turn into a client that never
 * connects, so an unknown query parameter is an error, not ignored. The
 * reasons never quote the URL: it may hold a password.
 *
 * The userinfo ends at the LAST '@' of the URL: the path may only hold a
 * database number (or a socket path), so a '@', '/' or '?' before it can
 * only belong to the password and need not be percent-encoded (but may be:
 * %XX is decoded in userinfo). A '@' in a query value must be written %40.
 * The query starts at the first '?' after the userinfo.
 */
#include "cm/redis.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

#define DEFAULT_PORT 6379
#define MAX_DB       65535 /* far above any "databases" setting in use */

/* Copies [p, p+n) with %XX decoded (and '+' as a space when plus_space);
 * NULL on a malformed escape or a NUL. */
static char *pct_decode(const char *p, size_t n, bool plus_space)
{
    char *out = cm_xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            *o++ = plus_space && p[i] == '+' ? ' ' : p[i];
            continue;
        }
        int hi = i + 2 < n ? cm_hex_value((unsigned char)p[i + 1]) : -1;
        int lo = i + 2 < n ? cm_hex_value((unsigned char)p[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(out);
            return NULL;
        }
        *o++ = (char)(hi << 4 | lo);
        i += 2;
    }
    *o = '\0';
    return out;
}

/* Digits only, value in [min, max]. */
static int parse_uint(const char *p, size_t n, int min, int max, int *out)
{
    long v = 0;
    if (n == 0 || n > 9)
        return CM_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return CM_EINVAL;
        v = v * 10 + (p[i] - '0');
    }
    if (v < min || v > max)
        return CM_EINVAL;
    *out = (int)v;
    return CM_OK;
}

static bool host_char_ok(char c, bool bracketed)
{
    if (bracketed)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
               c == ':' || c == '.';
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '.' || c == '_';
}

/* "user:password", ":password", "user" (its password then comes from the
 * query) or "" (no AUTH). */
static const char *parse_userinfo(const char *p, size_t n, cm_redis_url_t *u)
{
    const char *colon = memchr(p, ':', n);
    size_t ulen = colon ? (size_t)(colon - p) : n;
    size_t plen = colon ? n - ulen - 1 : 0;

    if (ulen > 0 && (u->username = pct_decode(p, ulen, false)) == NULL)
        return "bad percent-escape in the user name";
    if (plen > 0 && (u->password = pct_decode(colon + 1, plen, false)) == NULL)
        return "bad percent-escape in the password";
    return NULL;
}

/* "host", "host:port", "[v6]" or "[v6]:port". */
static const char *parse_hostport(const char *p, size_t n, cm_redis_url_t *u)
{
    const char *host = p, *end = p + n, *port = NULL;
    bool bracketed = n > 0 && p[0] == '[';
    size_t hlen;

    if (bracketed) {
        const char *close = memchr(p, ']', n);
        if (close == NULL)
            return "unclosed '[' in the host";
        host = p + 1;
        hlen = (size_t)(close - host);
        if (close + 1 < end) {
            if (close[1] != ':')
                return "junk after the IPv6 address";
            port = close + 2;
        }
    } else {
        const char *colon = memchr(p, ':', n);
        hlen = colon ? (size_t)(colon - p) : n;
        port = colon ? colon + 1 : NULL;
    }
    if (hlen == 0)
        return "no host";
    for (size_t i = 0; i < hlen; i++)
        if (!host_char_ok(host[i], bracketed))
            return "bad character in the host";
    u->port = DEFAULT_PORT;
    if (port && parse_uint(port, (size_t)(end - port), 1, 65535, &u->port) != CM_OK)
        return "the port is not a number in 1-65535";
    u->host = cm_xmemdup(host, hlen);
    return NULL;
}

/* Sets *slot to the decoded value; a second value for it is an error. */
static const char *take(char **slot, const char *v, size_t n, const char *twice)
{
    if (*slot != NULL)
        return twice;
    if ((*slot = pct_decode(v, n, true)) == NULL)
        return "bad percent-escape in a query value";
    if ((*slot)[0] == '\0') {
        free(*slot);
        *slot = NULL;
        return "empty query value";
    }
    return NULL;
}

static const char *query_param(cm_redis_url_t *u, cm_slice_t name, const char *v, size_t n)
{
    char *s = NULL;
    const char *why = NULL;

    if (cm_slice_eq_cstr(name, "db"))
        return parse_uint(v, n, 0, MAX_DB, &u->db) == CM_OK ? NULL
                                                            : "db is not a number in 0-65535";
    if (cm_slice_eq_cstr(name, "password"))
        return take(&u->password, v, n, "the password is given twice");
    if (cm_slice_eq_cstr(name, "username"))
        return take(&u->username, v, n, "the user name is given twice");
    if (name.len > 4 && memcmp(name.p, "ssl_", 4) == 0 && !u->tls)
        return "ssl_* parameters need a rediss:// URL";
    if (cm_slice_eq_cstr(name, "ssl_ca_certs"))
        return take(&u->tls_ca_file, v, n, "ssl_ca_certs is given twice");
    if (cm_slice_eq_cstr(name, "ssl_certfile"))
        return take(&u->tls_cert_file, v, n, "ssl_certfile is given twice");
    if (cm_slice_eq_cstr(name, "ssl_keyfile"))
        return take(&u->tls_key_file, v, n, "ssl_keyfile is given twice");
    if (cm_slice_eq_cstr(name, "ssl_cert_reqs")) {
        if ((why = take(&s, v, n, NULL)) != NULL)
            return why;
        if (strcasecmp(s, "none") == 0)
            u->tls_insecure = true;
        else if (strcasecmp(s, "required") != 0)
            why = "ssl_cert_reqs must be required or none";
        free(s);
        return why;
    }
    return "unknown query parameter (known: db, username, password, ssl_ca_certs, "
           "ssl_certfile, ssl_keyfile, ssl_cert_reqs)";
}

static const char *parse_query(const char *p, const char *end, cm_redis_url_t *u)
{
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(stop - p));
        if (eq == NULL)
            return "a query parameter without '='";
        const char *why =
            query_param(u, (cm_slice_t){p, (size_t)(eq - p)}, eq + 1, (size_t)(stop - eq - 1));
        if (why != NULL)
            return why;
        p = amp ? amp + 1 : end;
    }
    return NULL;
}

/* The part after the userinfo and before the query: host[:port][/db] or,
 * for unix://, the absolute socket path. */
static const char *parse_location(const char *p, const char *end, bool unix_path, cm_redis_url_t *u)
{
    if (unix_path) {
        if (p == end || *p != '/')
            return "unix:// needs an absolute socket path (unix:///path/to/redis.sock)";
        if ((u->path = pct_decode(p, (size_t)(end - p), false)) == NULL)
            return "bad percent-escape in the socket path";
        if (strlen(u->path) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
            return "the socket path is too long";
        return NULL;
    }
    const char *slash = memchr(p, '/', (size_t)(end - p));
    const char *why = parse_hostport(p, (size_t)((slash ? slash : end) - p), u);
    if (why != NULL)
        return why;
    /* "" and "/" select db 0; anything else must be a number. */
    if (slash && slash + 1 < end &&
        parse_uint(slash + 1, (size_t)(end - slash - 1), 0, MAX_DB, &u->db) != CM_OK)
        return "the path is not a database number in 0-65535";
    return NULL;
}

static const char *parse(const char *url, cm_redis_url_t *u)
{
    static const struct {
        const char *scheme;
        bool tls, unix_path;
    } schemes[] = {
        {"redis://", false, false}, {"rediss://", true, false}, {"unix://", false, true}};
    const char *p = NULL;
    bool unix_path = false;

    for (size_t i = 0; url != NULL && i < CM_ARRAY_LEN(schemes); i++) {
        size_t n = strlen(schemes[i].scheme);
        if (strncasecmp(url, schemes[i].scheme, n) == 0) {
            p = url + n;
            u->tls = schemes[i].tls;
            unix_path = schemes[i].unix_path;
        }
    }
    if (p == NULL)
        return "the scheme is not redis://, rediss:// or unix://";

    const char *end = p + strlen(p), *at = strrchr(p, '@');
    const char *loc = at ? at + 1 : p;
    const char *q = strchr(loc, '?');
    const char *why;

    if (at && (why = parse_userinfo(p, (size_t)(at - p), u)) != NULL)
        return why;
    if ((why = parse_location(loc, q ? q : end, unix_path, u)) != NULL)
        return why;
    if (q && (why = parse_query(q + 1, end, u)) != NULL)
        return why;
    if (u->username != NULL && u->password == NULL)
        return "a user name without a password cannot authenticate";
    if ((u->tls_cert_file == NULL) != (u->tls_key_file == NULL))
        return "ssl_certfile and ssl_keyfile go together";
    return NULL;
}

int cm_redis_url_parse_why(const char *url, cm_redis_url_t *out, const char **why)
{
    cm_redis_url_t u = {0};
    const char *err = parse(url, &u);

    if (why != NULL)
        *why = err;
    if (err != NULL) {
        cm_redis_url_free(&u);
        return CM_EINVAL;
    }
    *out = u;
    return CM_OK;
}

int cm_redis_url_parse(const char *url, cm_redis_url_t *out)
{
    return cm_redis_url_parse_why(url, out, NULL);
}

void cm_redis_url_free(cm_redis_url_t *u)
{
    free(u->host);
    free(u->path);
    free(u->username);
    free(u->password);
    free(u->tls_ca_file);
    free(u->tls_cert_file);
    free(u->tls_key_file);
    *u = (cm_redis_url_t){0};
}
