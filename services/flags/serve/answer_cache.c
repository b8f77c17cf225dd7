/*
 * answer_cache.c - see answer_cache.h.
 *
 * A chained hash table of entries that hold their key and answer in one
 * allocation. Keys are compared whole after the hash, so a hash collision
 * can never serve another request's answer.
 */
#include "serve/answer_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/hashfn.h"

#define NBUCKETS 4096 /* a power of two */

typedef struct entry {
    struct entry *next;
    uint64_t hash;
    size_t key_len, answer_len;
    char bytes[]; /* key, then answer */
} entry_t;

struct flg_answer_cache {
    entry_t *buckets[NBUCKETS];
    size_t used, max_bytes;
    cm_counter_t *hits, *misses, *flushes;
};

flg_answer_cache_t *flg_answer_cache_new(size_t max_bytes, cm_metrics_t *metrics)
{
    if (max_bytes == 0)
        return NULL;
    flg_answer_cache_t *c = cm_xcalloc(1, sizeof(*c));
    c->max_bytes = max_bytes;
    if (metrics != NULL) {
        c->hits = cm_metrics_counter(metrics, "flags_answer_cache_hits_total",
                                     "/flags answers served from the answer cache", NULL);
        c->misses = cm_metrics_counter(metrics, "flags_answer_cache_misses_total",
                                       "/flags answers the answer cache did not hold", NULL);
        c->flushes = cm_metrics_counter(metrics, "flags_answer_cache_flushes_total",
                                        "Times the answer cache was full and emptied", NULL);
    }
    return c;
}

static void count(cm_counter_t *counter)
{
    if (counter != NULL)
        cm_counter_inc(counter);
}

static void clear(flg_answer_cache_t *c)
{
    for (size_t i = 0; i < NBUCKETS; i++) {
        entry_t *e = c->buckets[i];
        while (e != NULL) {
            entry_t *next = e->next;
            free(e);
            e = next;
        }
        c->buckets[i] = NULL;
    }
    c->used = 0;
}

void flg_answer_cache_free(flg_answer_cache_t *c)
{
    if (c == NULL)
        return;
    clear(c);
    free(c);
}

static entry_t **find(flg_answer_cache_t *c, uint64_t h, cm_slice_t key)
{
    entry_t **pe = &c->buckets[h & (NBUCKETS - 1)];
    for (; *pe != NULL; pe = &(*pe)->next) {
        const entry_t *e = *pe;
        if (e->hash == h && e->key_len == key.len && memcmp(e->bytes, key.p, key.len) == 0)
            break;
    }
    return pe;
}

cm_slice_t flg_answer_cache_get(flg_answer_cache_t *c, cm_slice_t key)
{
    if (c == NULL)
        return CM_SLICE_NULL;
    const entry_t *e = *find(c, cm_fnv1a_64(key), key);
    if (e == NULL) {
        count(c->misses);
        return CM_SLICE_NULL;
    }
    count(c->hits);
    return (cm_slice_t){e->bytes + e->key_len, e->answer_len};
}

void flg_answer_cache_put(flg_answer_cache_t *c, cm_slice_t key, cm_slice_t answer)
{
    if (c == NULL)
        return;
    size_t size = sizeof(entry_t) + key.len + answer.len;
    if (size > c->max_bytes / 4)
        return; /* one answer may not push out most of the others */
    uint64_t h = cm_fnv1a_64(key);
    entry_t **pe = find(c, h, key);
    if (*pe != NULL) { /* an equal key: the newer answer replaces it */
        entry_t *old = *pe;
        *pe = old->next;
        c->used -= sizeof(entry_t) + old->key_len + old->answer_len;
        free(old);
    }
    if (c->used + size > c->max_bytes) {
        clear(c);
        count(c->flushes);
    }
    entry_t *e = cm_xmalloc(size);
    e->hash = h;
    e->key_len = key.len;
    e->answer_len = answer.len;
    memcpy(e->bytes, key.p, key.len);
    memcpy(e->bytes + key.len, answer.p, answer.len);
    e->next = c->buckets[h & (NBUCKETS - 1)];
    c->buckets[h & (NBUCKETS - 1)] = e;
    c->used += size;
}

void flg_answer_key_add(cm_buf_t *key, cm_slice_t field)
{
    uint32_t n = (uint32_t)field.len;
    cm_buf_append(key, (const char *)&n, sizeof(n));
    cm_buf_append(key, field.p ? field.p : "", field.len);
}
