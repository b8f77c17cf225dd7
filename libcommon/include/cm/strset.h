/*
 * strset.h - a set of byte strings (open addressing, FNV-1a hash).
 *
 * Used for token registries and quota lists that are rebuilt whole from
 * Redis and then only read: build a new set, swap the pointer, free the old
 * one. Strings are copied in; lookups take slices and never allocate.
 */
#ifndef CM_STRSET_H
#define CM_STRSET_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"

typedef struct cm_strset cm_strset_t;

cm_strset_t *cm_strset_new(size_t expected);
void cm_strset_free(cm_strset_t *s); /* NULL is fine */
/* Adds a copy of key; returns false when it was already there. */
bool cm_strset_add(cm_strset_t *s, cm_slice_t key);
bool cm_strset_has(const cm_strset_t *s, cm_slice_t key); /* NULL set: false */
size_t cm_strset_count(const cm_strset_t *s);             /* NULL set: 0 */

#endif
