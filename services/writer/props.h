/*
 * props.h - a JSON object that can be changed in place: person and group
 * properties under $set, $set_once and $unset.
 *
 * Members keep their first position; a value is kept as raw JSON text (it
 * came out of a validated document, so it is written back as it was). An
 * unset member keeps its slot, empty, so that setting it again is cheap.
 *
 * Memory: the keys' and values' bytes are never freed one by one (a map is
 * changed a few times per event and then dropped whole). They live in an
 * arena: the map's own, or one the caller shares between many maps that
 * die together (wr_props_init_in: the writer's batch arena), which may
 * also hold bytes the map borrows instead of copying (wr_props_merge_borrowed).
 * The index is the map's own (slot numbers hashed by key), so a key is
 * stored once; with a shared arena the member array and the index are
 * there too, and freeing the map frees nothing.
 */
#ifndef WR_PROPS_H
#define WR_PROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/arena.h"
#include "cm/buf.h"
#include "cm/json.h"

typedef struct {
    char *key; /* decoded, in the map's arena (or borrowed) */
    size_t klen;
    char *val; /* raw JSON, in the map's arena (or borrowed); NULL once unset */
    size_t vlen;
    int64_t ts; /* the time of the event that last changed it (the _at calls) */
    char op;    /* and how: 's' $set, 'o' $set_once, 'u' $unset; 0 unknown */
} wr_prop_t;

typedef struct {
    wr_prop_t *v;
    size_t n, cap;
    size_t live;        /* members with a value */
    uint32_t *ix;       /* open addressing: slot index + 1, 0 empty */
    size_t ixcap;       /* a power of two, at least twice n; 0 before the first key */
    cm_arena_t own;     /* the bytes, unless shared is set */
    cm_arena_t *shared; /* the caller's arena, freed by the caller after the map */
} wr_props_t;

void wr_props_init(wr_props_t *p);
/* A map whose bytes go to arena, which must outlive it. */
void wr_props_init_in(wr_props_t *p, cm_arena_t *arena);
void wr_props_free(wr_props_t *p);                          /* keeps the map's arena choice */
void wr_props_copy(wr_props_t *dst, const wr_props_t *src); /* dst initialised */
/* src exactly (every slot, unset ones too, in its order, with its times),
 * its bytes copied into dst's arena; dst initialised and empty. */
void wr_props_clone(wr_props_t *dst, const wr_props_t *src);

/* Adds obj's members with set semantics; CM_EINVAL (nothing added) when
 * obj is not an object. */
int wr_props_merge_json(wr_props_t *p, cm_json_t obj);
/* The same, without copying the values (nor the keys without escapes): the
 * document's text must live as long as the map's arena (it is in it). */
int wr_props_merge_borrowed(wr_props_t *p, cm_json_t obj);
/* The same from JSON text (a stored row). */
int wr_props_load(wr_props_t *p, cm_slice_t json);

/* Each returns true when it changed p. Values are raw JSON. */
bool wr_props_set(wr_props_t *p, cm_slice_t key, cm_slice_t value);
bool wr_props_set_once(wr_props_t *p, cm_slice_t key, cm_slice_t value);
bool wr_props_unset(wr_props_t *p, cm_slice_t key);
/*
 * The same with the event's time, so that events taken in any order end as
 * if taken in time order (several writers on one stream, Kafka partitions):
 *   $set       applies unless a later $set or $unset already did; it always
 *              beats a $set_once (a $set_once after a $set changes nothing);
 *   $set_once  applies when the key is absent (and not removed later), or
 *              to replace a later $set_once: the earliest one wins;
 *   $unset     removes unless a later $set did; it leaves a marker with its
 *              time, so an older $set arriving afterwards stays out.
 * A value that does not change keeps its old time.
 */
bool wr_props_set_at(wr_props_t *p, cm_slice_t key, cm_slice_t value, int64_t ts);
bool wr_props_set_once_at(wr_props_t *p, cm_slice_t key, cm_slice_t value, int64_t ts);
bool wr_props_unset_at(wr_props_t *p, cm_slice_t key, int64_t ts);
/* The times and operations as JSON {"key": [ms, "s"], ...} (unset keys
 * included), and back onto the members of p (unknown keys become unset
 * markers). */
void wr_props_write_times(const wr_props_t *p, cm_buf_t *out);
int wr_props_load_times(wr_props_t *p, cm_slice_t json);

/* The member's raw value, or a NULL slice. */
cm_slice_t wr_props_get(const wr_props_t *p, cm_slice_t key);
static inline bool wr_props_has(const wr_props_t *p, cm_slice_t key)
{
    return wr_props_get(p, key).p != NULL;
}

/* Appends the object as JSON text. */
void wr_props_write(const wr_props_t *p, cm_buf_t *out);

#endif
