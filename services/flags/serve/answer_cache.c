/*
 * answer_cache.c - see answer_cache.h.
 *
 * A cm_strset from the whole key to the answer (keys are compared whole,
 * so a hash collision can never serve another request's answer), with the
 * bytes held counted against the bound.
 */
#include "serve/answer_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/strset.h"

/* What an entry costs beside its key and answer (its slot, the copy of the
 * key the set keeps, malloc's own), so that the bound holds for small ones. */
#define ENTRY_OVERHEAD 64

typedef struct {
    size_t len;
    char bytes[]; /* the answer */
} answer_t;

struct flg_answer_cache {
    cm_strset_t *answers; /* key -> answer_t, each owned here */
    size_t used, max_bytes;
    cm_counter_t *hits, *misses, *flushes;
};

flg_answer_cache_t *flg_answer_cache_new(size_t max_bytes, cm_metrics_t *metrics)
{
    if (max_bytes == 0)
        return NULL;
    flg_answer_cache_t *c = cm_xcalloc(1, sizeof(*c));
    c->max_bytes = max_bytes;
    c->answers = cm_strset_new(256);
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

void flg_answer_cache_free(flg_answer_cache_t *c)
{
    if (c == NULL)
        return;
    cm_strset_free_with(c->answers, free);
    free(c);
}

cm_slice_t flg_answer_cache_get(flg_answer_cache_t *c, cm_slice_t key)
{
    if (c == NULL)
        return CM_SLICE_NULL;
    const answer_t *a = cm_strset_get(c->answers, key);
    if (a == NULL) {
        count(c->misses);
        return CM_SLICE_NULL;
    }
    count(c->hits);
    return (cm_slice_t){a->bytes, a->len};
}

void flg_answer_cache_put(flg_answer_cache_t *c, cm_slice_t key, cm_slice_t answer)
{
    if (c == NULL)
        return;
    size_t cost = ENTRY_OVERHEAD + key.len;
    size_t size = cost + answer.len;
    if (size > c->max_bytes / 4)
        return; /* one answer may not push out most of the others */
    const answer_t *old = cm_strset_get(c->answers, key);
    size_t after = c->used - (old ? cost + old->len : 0) + size;
    if (after > c->max_bytes) { /* full: start over rather than track ages */
        cm_strset_free_with(c->answers, free);
        c->answers = cm_strset_new(256);
        c->used = 0;
        count(c->flushes);
    }
    answer_t *a = cm_xmalloc(sizeof(*a) + answer.len);
    a->len = answer.len;
    memcpy(a->bytes, answer.p, answer.len);
    answer_t *replaced = cm_strset_put(c->answers, key, a); /* an equal key's, if kept */
    if (replaced != NULL) {
        c->used -= cost + replaced->len;
        free(replaced);
    }
    c->used += size;
}

void flg_answer_key_add(cm_buf_t *key, cm_slice_t field)
{
    uint32_t n = (uint32_t)field.len;
    cm_buf_append(key, (const char *)&n, sizeof(n));
    cm_buf_append(key, field.p ? field.p : "", field.len);
}
