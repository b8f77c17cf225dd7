/*
 * arena.h - a bump allocator for data that lives exactly as long as its
 * owner (a definitions snapshot): many small allocations, one free.
 */
#ifndef FLG_ARENA_H
#define FLG_ARENA_H

#include <stddef.h>

#include "cm/buf.h"

typedef struct flg_arena_chunk flg_arena_chunk_t;

typedef struct {
    flg_arena_chunk_t *head;
    size_t used; /* bytes used in head */
    size_t cap;  /* bytes available in head */
} flg_arena_t;

#define FLG_ARENA_INIT ((flg_arena_t){NULL, 0, 0})

/* Zeroed, 16-byte aligned; aborts on OOM like cm_xmalloc. */
void *flg_arena_alloc(flg_arena_t *a, size_t n);
/* A copy with a NUL after it (not counted in len). */
cm_slice_t flg_arena_dup(flg_arena_t *a, cm_slice_t s);
void flg_arena_free(flg_arena_t *a);

#endif
