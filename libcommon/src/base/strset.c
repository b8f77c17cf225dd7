/*
 * strset.c - open-addressing string set (see strset.h).
 *
 * Linear probing over a power-of-two table kept at most half full, so a
 * lookup is one or two probes. Each slot stores the hash beside the pointer,
 * so most mismatches are rejected without touching the string.
 */
#include "cm/strset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/hashfn.h"

typedef struct {
    uint64_t hash;
    char *key; /* NULL: empty slot */
    size_t len;
    void *value;
} slot_t;

struct cm_strset {
    slot_t *slots;
    size_t cap; /* power of two */
    size_t count;
};

cm_strset_t *cm_strset_new(size_t expected)
{
    cm_strset_t *s = cm_xcalloc(1, sizeof(*s));
    s->cap = 16;
    while (s->cap < expected * 2)
        s->cap *= 2;
    s->slots = cm_xcalloc(s->cap, sizeof(slot_t));
    return s;
}

void cm_strset_free_with(cm_strset_t *s, void (*free_value)(void *value))
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->cap; i++) {
        if (free_value && s->slots[i].value)
            free_value(s->slots[i].value);
        free(s->slots[i].key);
    }
    free(s->slots);
    free(s);
}

void cm_strset_free(cm_strset_t *s)
{
    cm_strset_free_with(s, NULL);
}

static slot_t *find(const cm_strset_t *s, cm_slice_t key, uint64_t h)
{
    size_t mask = s->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        slot_t *sl = &s->slots[i];
        if (sl->key == NULL)
            return sl;
        if (sl->hash == h && sl->len == key.len && memcmp(sl->key, key.p, key.len) == 0)
            return sl;
    }
}

static void grow(cm_strset_t *s)
{
    slot_t *old = s->slots;
    size_t oldcap = s->cap;
    s->cap *= 2;
    s->slots = cm_xcalloc(s->cap, sizeof(slot_t));
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].key == NULL)
            continue;
        *find(s, (cm_slice_t){old[i].key, old[i].len}, old[i].hash) = old[i];
    }
    free(old);
}

/* The slot for key, added (empty-valued) when missing; *added says which. */
static slot_t *upsert(cm_strset_t *s, cm_slice_t key, bool *added)
{
    if ((s->count + 1) * 2 > s->cap)
        grow(s);
    uint64_t h = cm_fnv1a_64(key);
    slot_t *sl = find(s, key, h);
    *added = sl->key == NULL;
    if (*added) {
        sl->key = cm_xmemdup(key.p, key.len);
        sl->len = key.len;
        sl->hash = h;
        sl->value = NULL;
        s->count++;
    }
    return sl;
}

bool cm_strset_add(cm_strset_t *s, cm_slice_t key)
{
    bool added;
    upsert(s, key, &added);
    return added;
}

void *cm_strset_put(cm_strset_t *s, cm_slice_t key, void *value)
{
    bool added;
    slot_t *sl = upsert(s, key, &added);
    void *old = sl->value;
    sl->value = value;
    return old;
}

void *cm_strset_get(const cm_strset_t *s, cm_slice_t key)
{
    if (s == NULL || s->count == 0)
        return NULL;
    return find(s, key, cm_fnv1a_64(key))->value;
}

void cm_strset_each(const cm_strset_t *s, void (*fn)(cm_slice_t key, void *value, void *ud),
                    void *ud)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].key)
            fn((cm_slice_t){s->slots[i].key, s->slots[i].len}, s->slots[i].value, ud);
}

bool cm_strset_has(const cm_strset_t *s, cm_slice_t key)
{
    if (s == NULL || s->count == 0)
        return false;
    return find(s, key, cm_fnv1a_64(key))->key != NULL;
}

size_t cm_strset_count(const cm_strset_t *s)
{
    return s ? s->count : 0;
}
