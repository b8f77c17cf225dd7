/*
 * redis_url.c - parsing of redis://[[user]:password@]host[:port][/db].
 *
 * Kept apart from redis.c because it is pure string work, tested without a
 * server. The parser is strict on purpose: a typo in a configured URL should
 * fail at start-up, not turn into a client that never connects. So there is
 * no TLS scheme (rediss://), no unix socket and no query string.
 *
 * The userinfo ends at the LAST '@' of the URL: the path may only hold a
 * database number, so a '@' or '/' before it can only belong to the password
 * and need not be percent-encoded (but may be: %XX is decoded in userinfo).
 */
#include "cm/redis.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

#define SCHEME       "redis://"
#define DEFAULT_PORT 6379
#define MAX_DB       65535 /* far above any "databases" setting in use */

/* Copies [p, p+n) with %XX decoded; NULL on a malformed escape or a NUL. */
static char *pct_decode(const char *p, size_t n)
{
    char *out = cm_xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            *o++ = p[i];
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

/* "user:password", ":password" or "" (then no AUTH). */
static int parse_userinfo(const char *p, size_t n, cm_redis_url_t *u)
{
    const char *colon = memchr(p, ':', n);
    if (n == 0)
        return CM_OK;
    if (colon == NULL)
        return CM_EINVAL; /* a username alone cannot authenticate */
    size_t ulen = (size_t)(colon - p), plen = n - ulen - 1;
    if (ulen > 0 && plen == 0)
        return CM_EINVAL;
    if (ulen > 0 && (u->username = pct_decode(p, ulen)) == NULL)
        return CM_EINVAL;
    if (plen > 0 && (u->password = pct_decode(colon + 1, plen)) == NULL)
        return CM_EINVAL;
    return CM_OK;
}

/* "host", "host:port", "[v6]" or "[v6]:port". */
static int parse_hostport(const char *p, size_t n, cm_redis_url_t *u)
{
    const char *host = p, *end = p + n, *port = NULL;
    bool bracketed = n > 0 && p[0] == '[';
    size_t hlen;

    if (bracketed) {
        const char *close = memchr(p, ']', n);
        if (close == NULL)
            return CM_EINVAL;
        host = p + 1;
        hlen = (size_t)(close - host);
        if (close + 1 < end) {
            if (close[1] != ':')
                return CM_EINVAL;
            port = close + 2;
        }
    } else {
        const char *colon = memchr(p, ':', n);
        hlen = colon ? (size_t)(colon - p) : n;
        port = colon ? colon + 1 : NULL;
    }
    if (hlen == 0)
        return CM_EINVAL;
    for (size_t i = 0; i < hlen; i++)
        if (!host_char_ok(host[i], bracketed))
            return CM_EINVAL;
    u->port = DEFAULT_PORT;
    if (port && parse_uint(port, (size_t)(end - port), 1, 65535, &u->port) != CM_OK)
        return CM_EINVAL;
    u->host = cm_xmemdup(host, hlen);
    return CM_OK;
}

int cm_redis_url_parse(const char *url, cm_redis_url_t *out)
{
    cm_redis_url_t u = {0};
    size_t slen = strlen(SCHEME);

    if (url == NULL || strncasecmp(url, SCHEME, slen) != 0)
        return CM_EINVAL;
    const char *p = url + slen, *end = p + strlen(p);
    const char *at = strrchr(p, '@');
    const char *hp = at ? at + 1 : p;
    const char *slash = strchr(hp, '/');
    const char *hp_end = slash ? slash : end;

    if (at && parse_userinfo(p, (size_t)(at - p), &u) != CM_OK)
        goto fail;
    if (parse_hostport(hp, (size_t)(hp_end - hp), &u) != CM_OK)
        goto fail;
    /* "" and "/" select db 0; anything else must be a number. */
    if (slash && slash + 1 < end &&
        parse_uint(slash + 1, (size_t)(end - slash - 1), 0, MAX_DB, &u.db) != CM_OK)
        goto fail;
    *out = u;
    return CM_OK;

fail:
    cm_redis_url_free(&u);
    return CM_EINVAL;
}

void cm_redis_url_free(cm_redis_url_t *u)
{
    free(u->host);
    free(u->username);
    free(u->password);
    *u = (cm_redis_url_t){0};
}
