/*
 * eval.h - evaluating every flag of a snapshot for one person.
 *
 * flg_evaluate() is a pure function of (snapshot, context): no I/O, no
 * globals, no clock (the context carries `now`). For each flag, in stored
 * order, it decides enabled / variant / reason / payload:
 *
 *   1. if posthog-node 5.70's local evaluation reaches a value for the
 *      flag, that value (and the condition that produced it) is the answer;
 *   2. otherwise the flags server's algorithm decides: missing properties
 *      are absent, static cohorts are looked up in the caller's membership
 *      list, experience continuity uses the caller's hash-key overrides;
 *   3. a flag neither can compute (a dependency cycle, a regex over its
 *      match limit, static cohort membership that was not supplied, an
 *      invalid definition) is an error: it is left out of the response and
 *      errorsWhileComputingFlags becomes true. Other flags are unaffected.
 *
 * Early access (feature_enrollment / super_groups), which posthog-node does
 * not implement, follows the server in both readings. docs/flags.md lists
 * every rule and where PostHog's components disagree.
 */
#ifndef FLG_EVAL_H
#define FLG_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/json.h"
#include "core/dates.h"
#include "core/snapshot.h"

/* What the request's runtime detection decided (spec section 4.3). */
typedef enum {
    FLG_RUNTIME_ALL,    /* keep every flag */
    FLG_RUNTIME_CLIENT, /* drop server-only flags */
    FLG_RUNTIME_SERVER, /* drop client-only flags */
    FLG_RUNTIME_UNKNOWN /* keep only flags without a runtime requirement */
} flg_runtime_t;

/* One group's stored properties: its type ("company") and the object. */
typedef struct {
    cm_slice_t type;
    cm_json_t properties;
} flg_group_props_t;

/*
 * One request. JSON handles may be none (CM_JSON_NONE_VALUE) when the
 * request did not carry the field; slices with p == NULL likewise.
 */
typedef struct {
    cm_slice_t distinct_id;
    cm_slice_t device_id;        /* top-level $device_id / device_id */
    cm_slice_t anon_distinct_id; /* $anon_distinct_id */
    cm_json_t groups;            /* {"company": "acme"} */
    /* Properties come in layers, read top down: a key is taken from the
     * first layer that has it, so nothing is merged or copied. */
    cm_json_t person_properties;        /* the request's: the top layer */
    cm_json_t geoip_properties;         /* $geoip_* from the client address: below the request's */
    cm_json_t stored_person_properties; /* the stored person's: the bottom layer */
    cm_json_t group_properties;         /* the request's {"company": {...}}: over the stored ones */
    const flg_group_props_t *stored_groups; /* a type's properties from the store */
    uint32_t nstored_groups;                /* (the last of a repeated type is read) */
    cm_json_t hash_key_overrides;  /* {"<flag key>": "<hash key>"} for experience continuity */
    cm_json_t static_cohorts;      /* [ids] of static cohorts the person is in; none = unknown */
    cm_json_t flag_keys;           /* ["key", ...] to return; none = all */
    cm_json_t evaluation_contexts; /* ["tag", ...]; none or empty = no filtering */
    flg_runtime_t runtime;
    int64_t now_us;           /* for relative dates */
    const flg_tz_t *tz;       /* project time zone; NULL = UTC */
    uint64_t regex_budget_ns; /* regex time for the whole evaluation; 0 = unbounded */
} flg_context_t;

typedef enum {
    FLG_REASON_CONDITION_MATCH,
    FLG_REASON_NO_CONDITION_MATCH,
    FLG_REASON_OUT_OF_ROLLOUT_BOUND,
    FLG_REASON_NO_GROUP_TYPE,
    FLG_REASON_SUPER_CONDITION_VALUE,
    FLG_REASON_HOLDOUT_CONDITION_VALUE,
    FLG_REASON_FLAG_DISABLED,
    FLG_REASON_MISSING_DEPENDENCY
} flg_reason_t;

typedef enum {
    FLG_RES_SKIPPED, /* not part of the response (filtered out, not asked for, shadowed) */
    FLG_RES_OK,
    FLG_RES_ERROR /* could not be computed: left out, errors flag set */
} flg_res_state_t;

typedef struct {
    flg_res_state_t state;
    bool enabled;
    cm_slice_t variant; /* p == NULL: none */
    flg_reason_t reason;
    int32_t condition_index; /* -1: null */
    bool groups_skipped;     /* some group condition lacked its group */
    cm_json_t payload;       /* the stored payload value; none = null */
    const char *error;       /* FLG_RES_ERROR: a short static explanation */
} flg_result_t;

typedef struct {
    const flg_snapshot_t *snap;
    flg_result_t *results; /* one per snapshot flag, stored order */
    uint32_t n;
    bool errors;             /* errorsWhileComputingFlags */
    bool regex_budget_spent; /* some regex condition was not run for want of budget */
} flg_eval_t;

/* Fills *out (free with flg_eval_free). The snapshot must outlive *out. */
void flg_evaluate(const flg_snapshot_t *s, const flg_context_t *ctx, flg_eval_t *out);
void flg_eval_free(flg_eval_t *e);

/* "condition_match", ... */
const char *flg_reason_code(flg_reason_t r);
/* The server's description, e.g. "Matched condition set 2"; uses buf when
 * needed. Plain ASCII without quotes or backslashes: the v2 writer puts it
 * into JSON unescaped. */
const char *flg_reason_description(const flg_result_t *r, char buf[48]);

#endif
