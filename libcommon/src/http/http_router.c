/*
 * http_router.c - path patterns with {param} segments, matched on method+path.
 *
 * Patterns are split into segments once, at registration. A request path is
 * compared segment by segment against every route (services have tens of
 * routes, so a linear scan over pre-split patterns is cheap and keeps the
 * rule simple). When several routes match, the one whose first differing
 * segment is literal wins, so "/api/projects/@current" beats
 * "/api/projects/{id}" whatever the registration order.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "http_internal.h"

void cm__route_compile(cm__route_t *r, const char *pattern)
{
    r->pattern = cm_xstrdup(pattern);
    r->segs = cm_xcalloc(CM__HTTP_MAX_SEGMENTS, sizeof(*r->segs));
    r->nsegs = 0;
    const char *p = pattern;
    while (*p) {
        if (*p == '/') {
            p++;
            continue;
        }
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (r->nsegs == CM__HTTP_MAX_SEGMENTS)
            break;
        cm__segment_t *s = &r->segs[r->nsegs++];
        if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
            s->param = true;
            s->text = cm_xmemdup(p + 1, len - 2);
            s->len = len - 2;
        } else {
            s->text = cm_xmemdup(p, len);
            s->len = len;
        }
        p += len;
    }
    /* A trailing slash is significant: it becomes an empty last segment. */
    size_t plen = strlen(pattern);
    if (plen > 1 && pattern[plen - 1] == '/' && r->nsegs < CM__HTTP_MAX_SEGMENTS) {
        cm__segment_t *s = &r->segs[r->nsegs++];
        s->text = cm_xstrdup("");
        s->len = 0;
    }
}

void cm__route_free(cm__route_t *r)
{
    for (size_t i = 0; i < r->nsegs; i++)
        free(r->segs[i].text);
    free(r->segs);
    free(r->pattern);
}

typedef struct {
    const char *p;
    uint32_t off, len;
} seg_view_t;

/* Splits path into segments the same way patterns are split. */
static size_t split_path(cm_slice_t path, seg_view_t *out, size_t max)
{
    size_t n = 0, i = 0;
    while (i < path.len) {
        if (path.p[i] == '/') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < path.len && path.p[i] != '/')
            i++;
        if (n == max)
            return max + 1;
        out[n++] = (seg_view_t){path.p + start, (uint32_t)start, (uint32_t)(i - start)};
    }
    if (path.len > 1 && path.p[path.len - 1] == '/') {
        if (n == max)
            return max + 1;
        out[n++] = (seg_view_t){path.p + path.len, (uint32_t)path.len, 0};
    }
    return n;
}

/* Returns a specificity score (higher is more literal, earlier segments
 * weigh more), or -1 when the route does not match. */
static long long match_score(const cm__route_t *r, const seg_view_t *segs, size_t n)
{
    if (r->nsegs != n)
        return -1;
    long long score = 0;
    for (size_t i = 0; i < n; i++) {
        const cm__segment_t *s = &r->segs[i];
        score <<= 1;
        if (s->param) {
            if (segs[i].len == 0)
                return -1;
            continue;
        }
        if (s->len != segs[i].len || memcmp(s->text, segs[i].p, s->len) != 0)
            return -1;
        score |= 1;
    }
    return score;
}

int cm__route_find(cm_http_server_t *srv, cm_http_req_t *req, unsigned *allowed)
{
    seg_view_t segs[CM__HTTP_MAX_SEGMENTS];
    cm_slice_t path = cm_http_req_path(req);
    size_t n = split_path(path, segs, CM__HTTP_MAX_SEGMENTS);
    *allowed = 0;
    req->route = NULL;
    if (n > CM__HTTP_MAX_SEGMENTS)
        return 404;
    unsigned bit = cm__method_bit(req->method);
    /* HEAD is served by GET routes (the body is left out). */
    unsigned want = bit == CM_HTTP_HEAD ? (CM_HTTP_HEAD | CM_HTTP_GET) : bit;
    const cm__route_t *best = NULL;
    long long best_score = -1;
    for (size_t i = 0; i < srv->nroutes; i++) {
        const cm__route_t *r = &srv->routes[i];
        long long sc = match_score(r, segs, n);
        if (sc < 0)
            continue;
        *allowed |= r->methods;
        if ((r->methods & want) && sc > best_score) {
            best = r;
            best_score = sc;
        }
    }
    if (best == NULL)
        return *allowed ? 405 : 404;
    req->route = best;
    req->nparams = 0;
    for (size_t i = 0; i < best->nsegs && req->nparams < CM__HTTP_MAX_PARAMS; i++) {
        if (!best->segs[i].param)
            continue;
        req->params[req->nparams++] = (cm__param_t){best->segs[i].text, segs[i].off, segs[i].len};
    }
    return 0;
}
