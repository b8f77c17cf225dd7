/*
 * arena.c - see arena.h. Chunks grow geometrically from 4 KiB; a request
 * larger than a chunk gets a chunk of its own.
 */
#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"

struct flg_arena_chunk {
    flg_arena_chunk_t *next;
    size_t size;
    max_align_t data[];
};

void *flg_arena_alloc(flg_arena_t *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!n)
        n = 16;
    if (!a->head || a->cap - a->used < n) {
        size_t size = a->head ? a->head->size * 2 : 4096;
        if (size > (size_t)1 << 20)
            size = (size_t)1 << 20;
        if (size < n)
            size = n;
        flg_arena_chunk_t *c = cm_xmalloc(sizeof *c + size);
        c->size = size;
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->cap = size;
    }
    void *p = (char *)a->head->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

cm_slice_t flg_arena_dup(flg_arena_t *a, cm_slice_t s)
{
    char *p = flg_arena_alloc(a, s.len + 1);
    if (s.len)
        memcpy(p, s.p, s.len);
    return (cm_slice_t){p, s.len};
}

void flg_arena_free(flg_arena_t *a)
{
    flg_arena_chunk_t *c = a->head;
    while (c) {
        flg_arena_chunk_t *next = c->next;
        free(c);
        c = next;
    }
    *a = FLG_ARENA_INIT;
}
