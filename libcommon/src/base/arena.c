/*
 * arena.c - see arena.h. Chunks grow geometrically from 4 KiB; a request
 * larger than a chunk gets a chunk of its own.
 */
#include "cm/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"

struct cm_arena_chunk {
    cm_arena_chunk_t *next;
    size_t size;
    max_align_t data[];
};

void *cm_arena_alloc(cm_arena_t *a, size_t n)
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
        cm_arena_chunk_t *c = cm_xmalloc(sizeof *c + size);
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

cm_slice_t cm_arena_dup(cm_arena_t *a, cm_slice_t s)
{
    char *p = cm_arena_alloc(a, s.len + 1);
    if (s.len)
        memcpy(p, s.p, s.len);
    return (cm_slice_t){p, s.len};
}

void cm_arena_free(cm_arena_t *a)
{
    cm_arena_chunk_t *c = a->head;
    while (c) {
        cm_arena_chunk_t *next = c->next;
        free(c);
        c = next;
    }
    *a = CM_ARENA_INIT;
}
