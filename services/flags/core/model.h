/*
 * model.h - the in-memory form of a project's flag definitions.
 *
 * Everything here is built once by snapshot.c and never changed afterwards, so
 * a snapshot can be read by any number of evaluations at once. JSON values
 * that are only read at evaluation time (filter values, payloads) stay as
 * cm_json_t handles into the snapshot's own parsed document; everything an
 * operator would otherwise recompute per request (String(value), numbers,
 * semver, dates, compiled regexes) is prepared here by props.c.
 */
#ifndef FLG_MODEL_H
#define FLG_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "core/regex.h"
#include "core/semver.h"

typedef enum {
    FLG_OP_EXACT,
    FLG_OP_IS_NOT,
    FLG_OP_ICONTAINS,
    FLG_OP_NOT_ICONTAINS,
    FLG_OP_ICONTAINS_MULTI,
    FLG_OP_NOT_ICONTAINS_MULTI,
    FLG_OP_STARTS_WITH,
    FLG_OP_NOT_STARTS_WITH,
    FLG_OP_ENDS_WITH,
    FLG_OP_NOT_ENDS_WITH,
    FLG_OP_REGEX,
    FLG_OP_NOT_REGEX,
    FLG_OP_GT,
    FLG_OP_GTE,
    FLG_OP_LT,
    FLG_OP_LTE,
    FLG_OP_BETWEEN,
    FLG_OP_NOT_BETWEEN,
    FLG_OP_IS_SET,
    FLG_OP_IS_NOT_SET,
    FLG_OP_IS_DATE_BEFORE,
    FLG_OP_IS_DATE_AFTER,
    FLG_OP_IS_DATE_EXACT,
    FLG_OP_SEMVER_EQ,
    FLG_OP_SEMVER_NEQ,
    FLG_OP_SEMVER_GT,
    FLG_OP_SEMVER_GTE,
    FLG_OP_SEMVER_LT,
    FLG_OP_SEMVER_LTE,
    FLG_OP_SEMVER_TILDE,
    FLG_OP_SEMVER_CARET,
    FLG_OP_SEMVER_WILDCARD,
    FLG_OP_IN,
    FLG_OP_NOT_IN,
    FLG_OP_FLAG_EVALUATES_TO,
    FLG_OP_UNKNOWN
} flg_op_t;

typedef enum {
    FLG_PT_PERSON,
    FLG_PT_GROUP,
    FLG_PT_COHORT,
    FLG_PT_FLAG,
    FLG_PT_PERSON_METADATA,
    FLG_PT_OTHER /* any other type string: matched like a person property */
} flg_ptype_t;

/* One element of an `exact` filter value as posthog-node and the server see it. */
typedef struct {
    bool js_ok;          /* false: posthog-node cannot stringify it (a whole number) */
    cm_slice_t js_lower; /* toLowerCase(exactMatchString(item)) */
    cm_slice_t sv_lower; /* lowercased server string */
} flg_exact_item_t;

/* A date filter value as one side reads it. */
typedef enum { FLG_DATE_BAD, FLG_DATE_RELATIVE, FLG_DATE_ABSOLUTE } flg_date_kind_t;
typedef struct {
    flg_date_kind_t kind;
    uint32_t n; /* RELATIVE */
    char unit;  /* RELATIVE */
    bool naive; /* ABSOLUTE: ms is wall clock in the project time zone */
    int64_t ms; /* ABSOLUTE */
} flg_date_t;

/* Operator-specific preparation of the filter value (props.c). */
typedef struct {
    cm_slice_t js_str;   /* String(value) */
    cm_slice_t js_lower; /* the same, ASCII-lowercased */
    double js_num;       /* Number for numbers, else parseFloat(String(value)) */

    /* exact / is_not */
    bool truthy_or_falsy, truthy, empty_array, is_array;
    uint32_t nitems;
    flg_exact_item_t *items; /* one item for a scalar value */

    /* icontains_multi: ASCII-lowercased server strings of the elements */
    uint32_t nneedles;
    cm_slice_t *needles;

    /* between */
    bool range_ok;
    double range_lo, range_hi;

    flg_regex_t *re;

    /* semver: posthog-node's reading, then the server's */
    bool node_sem_ok;
    flg_semtuple_t node_sem;
    flg_semrange_t node_range;
    bool full_sem_ok;
    flg_semver_t full_sem;
    flg_semreq_t full_req;

    flg_date_t node_date, server_date;
} flg_prep_t;

struct flg_pgroup;
struct flg_flag;

typedef struct {
    flg_ptype_t type;
    flg_op_t op;
    bool negation;
    int32_t group_type_index; /* -1: none */
    cm_slice_t key;           /* decoded */
    cm_json_t value;          /* none if absent */
    flg_prep_t prep;

    /* type == cohort */
    cm_slice_t cohort_id;            /* String(value) */
    const struct flg_pgroup *cohort; /* NULL: not in the definitions (static) */
    bool cohort_id_numeric;
    int64_t cohort_num;

    /* type == flag */
    bool has_chain; /* "dependency_chain" present */
    bool chain_is_array;
    cm_json_t chain_json;
    uint32_t nchain;
    int32_t *chain; /* flag indices, -1 for a key not in the snapshot */
    int32_t target; /* index of `key`, -1 if absent */
} flg_filter_t;

/* A cohort's property group: {"type": "AND"|"OR", "values": [...]}, or {}. */
typedef enum {
    FLG_PG_EMPTY,
    FLG_PG_AND,
    FLG_PG_OR,
    FLG_PG_BAD_TYPE,
    FLG_PG_MALFORMED
} flg_pg_kind_t;

typedef struct flg_pgroup {
    flg_pg_kind_t kind;
    bool nested; /* values are groups (decided by the first value, as the SDK does) */
    uint32_t n;
    struct flg_pgroup *groups;
    flg_filter_t *filters;
} flg_pgroup_t;

typedef enum { FLG_AGG_ABSENT, FLG_AGG_NULL, FLG_AGG_SET } flg_agg_state_t;

typedef struct {
    flg_filter_t *filters;
    uint32_t nfilters;
    bool has_rollout;
    double rollout;     /* percent */
    cm_slice_t variant; /* override; p == NULL when none */
    flg_agg_state_t agg_state;
    int32_t agg;
} flg_condition_t;

typedef struct {
    cm_slice_t key;
    double pct;
} flg_variant_t;

typedef enum { FLG_RT_ALL, FLG_RT_CLIENT, FLG_RT_SERVER } flg_flag_runtime_t;

typedef struct flg_flag {
    cm_slice_t key;
    int64_t id;
    int64_t version;
    const char *invalid; /* why the definition cannot be used; NULL if fine */
    bool active;
    bool deleted;
    bool shadowed; /* a later flag has the same key */
    bool experience_continuity;
    bool device_bucketing;
    bool has_experiment;
    bool early_exit;
    flg_flag_runtime_t runtime;
    cm_json_t contexts; /* evaluation_contexts ?? evaluation_tags */
    int32_t agg;        /* -1: person */

    flg_condition_t *conds;
    uint32_t nconds;
    flg_variant_t *variants;
    uint32_t nvariants;
    cm_json_t payloads;

    bool has_holdout;
    cm_slice_t holdout_variant; /* "holdout-<id>" */
    double holdout_pct;

    bool feature_enrollment;
    cm_slice_t enrollment_key;   /* "$feature_enrollment/<key>", when feature_enrollment */
    flg_condition_t *super_cond; /* super_groups[0], if any */
    bool missing_dependency;     /* a flag filter whose flag is not in the snapshot */
} flg_flag_t;

#endif
