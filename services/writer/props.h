/*
 * props.h - a JSON object that can be changed in place: person and group
 * properties under $set, $set_once and $unset.
 *
 * Members keep their first position; a value is kept as raw JSON text (it
 * came out of a validated document, so it is written back as it was). An
 * unset member keeps its slot, empty, so that setting it again is cheap.
 */
#ifndef WR_PROPS_H
#define WR_PROPS_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "cm/strset.h"

typedef struct {
    char *key; /* decoded, owned */
    size_t klen;
    char *val; /* raw JSON, owned; NULL once unset */
    size_t vlen;
} wr_prop_t;

typedef struct {
    wr_prop_t *v;
    size_t n, cap;
    size_t live;     /* members with a value */
    cm_strset_t *ix; /* key -> slot index + 1 */
} wr_props_t;

void wr_props_init(wr_props_t *p);
void wr_props_free(wr_props_t *p);
void wr_props_copy(wr_props_t *dst, const wr_props_t *src); /* dst initialised */

/* Adds obj's members with set semantics; CM_EINVAL (nothing added) when
 * obj is not an object. */
int wr_props_merge_json(wr_props_t *p, cm_json_t obj);
/* The same from JSON text (a stored row). */
int wr_props_load(wr_props_t *p, cm_slice_t json);

/* Each returns true when it changed p. Values are raw JSON. */
bool wr_props_set(wr_props_t *p, cm_slice_t key, cm_slice_t value);
bool wr_props_set_once(wr_props_t *p, cm_slice_t key, cm_slice_t value);
bool wr_props_unset(wr_props_t *p, cm_slice_t key);
/* The member's raw value, or a NULL slice. */
cm_slice_t wr_props_get(const wr_props_t *p, cm_slice_t key);
static inline bool wr_props_has(const wr_props_t *p, cm_slice_t key)
{
    return wr_props_get(p, key).p != NULL;
}

/* Appends the object as JSON text. */
void wr_props_write(const wr_props_t *p, cm_buf_t *out);

#endif
