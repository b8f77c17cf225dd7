/*
 * props_memo.h - stored persons' properties, parsed once and kept across
 * batches.
 *
 * Every batch loads the persons its events reach from the persons store
 * and, before this, parsed each one's properties and their change times
 * again (a fifth of the writer's loop thread: the same few hundred persons,
 * their text unchanged since the last batch). The memo keeps the parsed
 * maps keyed by person; a load whose two texts are byte for byte the ones
 * parsed before gets a copy of that map instead of a parse. It memoises a
 * pure function of the text, so it is never stale: a person changed by
 * anyone (another writer, an erasure, this writer) comes back as other
 * text and is parsed again. The store is still read for every person
 * (the version check and the text itself).
 *
 * Memory: two generations of at most WR_PROPS_MEMO_BYTES / 2 each; when
 * the current one is full the older one is dropped and the current one
 * becomes the older. A hit in the older generation moves the entry to the
 * current one, so persons seen every few batches stay.
 */
#ifndef WR_PROPS_MEMO_H
#define WR_PROPS_MEMO_H

#include "cm/buf.h"
#include "props.h"

#define WR_PROPS_MEMO_BYTES (16u << 20)

typedef struct wr_props_memo wr_props_memo_t;

wr_props_memo_t *wr_props_memo_new(size_t max_bytes);
void wr_props_memo_free(wr_props_memo_t *m); /* NULL is fine */

/* Fills p (initialised, empty) with the properties in `properties` and the
 * change times in `times` (may be empty), as wr_props_load and then
 * wr_props_load_times would, from the memo when key's texts are the same
 * as last time. */
void wr_props_memo_load(wr_props_memo_t *m, cm_slice_t key, cm_slice_t properties, cm_slice_t times,
                        wr_props_t *p);

/* Loads answered from the memo, and parsed (for /metrics and tests). */
void wr_props_memo_counts(const wr_props_memo_t *m, unsigned long long *hits,
                          unsigned long long *misses);

#endif
