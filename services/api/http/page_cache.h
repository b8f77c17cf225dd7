/*
 * page_cache.h - rendered list pages kept in memory, each under the version
 * of what it shows (the project's flags_version for the flags list).
 *
 * A read first asks the store for the version (one indexed row), then asks
 * here for a page rendered at exactly that version: a hit is answered with
 * the kept bytes, a miss renders from the store and keeps the result under
 * the version read before the rows. Writes bump the version in the store in
 * the same transaction as the change, so no api process serves a page older
 * than a write any api process acknowledged (the version is read after it).
 */
#ifndef API_PAGE_CACHE_H
#define API_PAGE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"

typedef struct api_page_cache api_page_cache_t;

/* max_bytes: the pages' total size; past it the cache starts over empty.
 * 0: nothing is kept (every lookup misses). */
api_page_cache_t *api_page_cache_new(size_t max_bytes);
void api_page_cache_free(api_page_cache_t *c); /* NULL is fine */
/* The page kept for key at exactly version, or false. out borrows the
 * cache's bytes until the next put. */
bool api_page_cache_get(api_page_cache_t *c, cm_slice_t key, long long version, cm_slice_t *out);
/* Keeps a copy of body for key at version (replacing an older one). */
void api_page_cache_put(api_page_cache_t *c, cm_slice_t key, long long version, cm_slice_t body);
size_t api_page_cache_bytes(const api_page_cache_t *c);

#endif
