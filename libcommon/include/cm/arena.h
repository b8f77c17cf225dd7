/*
 * arena.h - a bump allocator for data that lives exactly as long as its
 * owner (a flag definitions snapshot, a parsed query): many small
 * allocations, one free.
 */
#ifndef CM_ARENA_H
#define CM_ARENA_H

#include <stddef.h>

#include "cm/buf.h"

typedef struct cm_arena_chunk cm_arena_chunk_t;

typedef struct {
    cm_arena_chunk_t *head;
    size_t used; /* bytes used in head */
    size_t cap;  /* bytes available in head */
} cm_arena_t;

#define CM_ARENA_INIT ((cm_arena_t){NULL, 0, 0})

/* Zeroed, 16-byte aligned; aborts on OOM like cm_xmalloc. */
void *cm_arena_alloc(cm_arena_t *a, size_t n);
/* A copy with a NUL after it (not counted in len). */
cm_slice_t cm_arena_dup(cm_arena_t *a, cm_slice_t s);
void cm_arena_free(cm_arena_t *a);

#endif
