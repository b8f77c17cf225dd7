/*
 * snapshot.h - a project's flag definitions, loaded into an immutable snapshot.
 *
 * Input: the local-evaluation envelope PostHog serves at /flags/definitions
 *
 *   {"flags": [...], "group_type_mapping": {"0": "company"},
 *    "cohorts": {"<id>": <property group>}, "property_matching_version": 2}
 *
 * (camelCase aliases groupTypeMapping / propertyMatchingVersion accepted,
 * the snake_case spelling wins). Only a document that is not JSON, not an
 * object, or has no "flags" array is rejected as a whole. A flag whose
 * definition cannot be understood is kept, marked invalid (flg_flag_t
 * .invalid says why), and evaluates to an error for that flag alone; deleted
 * flags are dropped as if absent. The snapshot copies its input, so the
 * caller's buffer may go away. It is reference counted: a new request takes
 * a reference, a reload drops the old snapshot's.
 */
#ifndef FLG_SNAPSHOT_H
#define FLG_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/json.h"
#include "core/model.h"

typedef struct flg_snapshot flg_snapshot_t;

/* 0, or CM_EINVAL / CM_ETOOBIG (err filled when not NULL). Refcount starts at 1. */
int flg_snapshot_load(const void *json, size_t len, flg_snapshot_t **out, cm_json_error_t *err);
flg_snapshot_t *flg_snapshot_ref(flg_snapshot_t *s);
void flg_snapshot_unref(flg_snapshot_t *s); /* frees at zero; NULL is fine */

/* Flags in stored order (deleted ones removed). */
uint32_t flg_snapshot_nflags(const flg_snapshot_t *s);
const flg_flag_t *flg_snapshot_flag(const flg_snapshot_t *s, uint32_t i);
/* Index of the flag with this key (the last one if repeated), or -1. */
int32_t flg_snapshot_find(const flg_snapshot_t *s, cm_slice_t key);

/* Group type name for an aggregation index, or a NULL slice. */
cm_slice_t flg_snapshot_group_type(const flg_snapshot_t *s, int32_t index);
/* The aggregation index of a group type name, or -1. */
int32_t flg_snapshot_group_type_index(const flg_snapshot_t *s, cm_slice_t name);
/* A cohort's property group by id text, or NULL (e.g. a static cohort). */
const flg_pgroup_t *flg_snapshot_cohort(const flg_snapshot_t *s, cm_slice_t id);

/* property_matching_version == 2: explicit `exact` matching. */
bool flg_snapshot_explicit_exact(const flg_snapshot_t *s);

#endif
