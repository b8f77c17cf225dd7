/*
 * strset.h - a set of byte strings, each optionally carrying a value, so
 * also a string-keyed map (open addressing, FNV-1a hash).
 *
 * Used for token registries, quota lists and per-project tables that are
 * rebuilt whole from Redis and then only read: build a new one, swap the
 * pointer, free the old one. Keys are copied in; lookups take slices and
 * never allocate. Values are the caller's: cm_strset_free_with() hands each
 * one to a destructor.
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

/* Map use: sets key's value (adding the key if needed); returns the value it
 * replaced, or NULL. */
void *cm_strset_put(cm_strset_t *s, cm_slice_t key, void *value);
/* The value for key, or NULL (absent, or present without a value). */
void *cm_strset_get(const cm_strset_t *s, cm_slice_t key);
/* Calls fn(key, value, ud) for every entry, in no particular order. */
void cm_strset_each(const cm_strset_t *s, void (*fn)(cm_slice_t key, void *value, void *ud),
                    void *ud);
/* Frees the set and passes every non-NULL value to free_value. */
void cm_strset_free_with(cm_strset_t *s, void (*free_value)(void *value));

#endif
