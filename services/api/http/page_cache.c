/* page_cache.c - rendered list pages by key and version (see page_cache.h). */
#include "http/page_cache.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/strset.h"

/* What an entry costs beside its key and body (its slot, its header,
 * malloc's own): counted so that many tiny pages (every offset of an empty
 * list) stay inside the bound too. */
#define ENTRY_OVERHEAD 64

typedef struct {
    long long version;
    size_t len;
    char bytes[]; /* the page's body */
} page_t;

struct api_page_cache {
    cm_strset_t *pages; /* key -> page_t, each owned here */
    size_t bytes, max_bytes;
};

api_page_cache_t *api_page_cache_new(size_t max_bytes)
{
    api_page_cache_t *c = cm_xcalloc(1, sizeof(*c));
    c->max_bytes = max_bytes;
    c->pages = cm_strset_new(64);
    return c;
}

void api_page_cache_free(api_page_cache_t *c)
{
    if (c == NULL)
        return;
    cm_strset_free_with(c->pages, free);
    free(c);
}

bool api_page_cache_get(api_page_cache_t *c, cm_slice_t key, long long version, cm_slice_t *out)
{
    page_t *p = c ? cm_strset_get(c->pages, key) : NULL;
    if (p == NULL || p->version != version)
        return false;
    *out = (cm_slice_t){p->bytes, p->len};
    return true;
}

void api_page_cache_put(api_page_cache_t *c, cm_slice_t key, long long version, cm_slice_t body)
{
    size_t cost = key.len + ENTRY_OVERHEAD; /* the body's bytes are added below */
    if (c == NULL || body.len + cost > c->max_bytes)
        return;
    page_t *old = cm_strset_get(c->pages, key);
    if (old && old->version > version)
        return; /* a newer page is already kept: a slower, older read ended last */
    if (c->bytes - (old ? old->len + cost : 0) + body.len + cost > c->max_bytes) {
        /* full: start over rather than track ages; pages re-render on demand */
        cm_strset_free_with(c->pages, free);
        c->pages = cm_strset_new(64);
        c->bytes = 0;
        old = NULL;
    }
    page_t *p = cm_xmalloc(sizeof(*p) + body.len);
    p->version = version;
    p->len = body.len;
    memcpy(p->bytes, body.p, body.len);
    old = cm_strset_put(c->pages, key, p);
    if (old) {
        c->bytes -= old->len;
        free(old);
    } else {
        c->bytes += cost;
    }
    c->bytes += body.len;
}

size_t api_page_cache_bytes(const api_page_cache_t *c)
{
    return c ? c->bytes : 0;
}
