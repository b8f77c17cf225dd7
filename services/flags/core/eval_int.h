/*
 * eval_int.h - what eval.c, eval_local.c and eval_remote.c share. Not a
 * public interface.
 *
 * One evaluation keeps two memos per flag: the posthog-node reading
 * (decided, or why not) and the final result. Both are filled on demand,
 * because flags depend on each other, and a BUSY mark on each turns a
 * dependency cycle into an error instead of endless recursion.
 */
#ifndef FLG_EVAL_INT_H
#define FLG_EVAL_INT_H

#include "cm/arena.h"
#include "cm/strset.h"
#include "core/cohorts.h"
#include "core/eval.h"
#include "core/props.h"

#define EV_MAX_DEPTH    64      /* nested flag dependencies */
#define EV_BUDGET       200000u /* cohort leaves matched per evaluation */
#define EV_INDEX_MIN    16      /* members from which a property object is indexed */
#define EV_MAX_GROUP_IX 8       /* group types indexed (PostHog allows 5) */

typedef enum { EV_NONE, EV_BUSY, EV_DONE } ev_state_t;

/* Membership in one of the request's lists (flag_keys_to_evaluate,
 * evaluation_contexts, static_cohorts): the list is scanned when short,
 * and hashed once per evaluation when long, so that 10,000 flags against
 * a 50,000-entry list are not 10,000 scans of it. */
typedef struct {
    cm_json_t list;   /* the JSON array; strings compared decoded */
    cm_strset_t *set; /* NULL: scan list */
} ev_set_t;

typedef struct {
    ev_state_t node_state;
    flg_match_t node_m; /* FLG_M_TRUE: node_r holds posthog-node's answer */
    flg_result_t node_r;
    ev_state_t final_state;
    flg_result_t final_r;
} ev_slot_t;

typedef struct {
    const flg_snapshot_t *s;
    const flg_context_t *ctx;
    flg_pctx_t pc;
    ev_slot_t *slots;
    bool *filtered;     /* dropped by runtime / evaluation contexts: false as a dependency */
    cm_json_doc_t *aux; /* holds distinct_id as a JSON string */
    cm_json_t distinct_json;
    cm_arena_t arena; /* strings made during this evaluation */
    /* Indexes of the property objects that filters read, built once per
     * evaluation (10,000 flags over 50,000 properties would otherwise scan
     * the object once per filter); NULL for small objects, which a scan
     * reads faster. */
    cm_json_index_t *person_ix[1 + FLG_BAG_UNDER]; /* request, GeoIP, stored */
    cm_json_index_t **stored_group_ix;             /* one per ctx->stored_groups */
    cm_json_index_t *group_ix[EV_MAX_GROUP_IX];
    uint32_t group_obj[EV_MAX_GROUP_IX]; /* the node each group_ix indexes */
    uint32_t ngroup_ix;
    cm_json_index_t *group_props_ix; /* group_properties itself, by group type */
    cm_json_index_t *groups_ix;      /* groups: type -> key */
    cm_json_index_t *overrides_ix;   /* hash_key_overrides */
    /* The request's lists, as sets when long (see ev_set_t). */
    ev_set_t keys_set;     /* flag_keys */
    ev_set_t contexts_set; /* evaluation_contexts */
    ev_set_t cohort_strs;  /* static_cohorts: string ids */
    ev_set_t cohort_nums;  /* ... and integer ids, in decimal */
    uint64_t budget;
    uint32_t depth;
} ev_t;

/* Reason bookkeeping of the server: the best-scoring outcome so far. */
typedef struct {
    flg_reason_t reason;
    int32_t index;
    bool skipped; /* a group condition was skipped for want of its group */
} ev_track_t;

void ev_track_init(ev_track_t *t);
void ev_track(ev_track_t *t, flg_reason_t r, int32_t index);

/* The final result of flag i (memoized); FLG_RES_ERROR on a cycle. */
const flg_result_t *ev_final(ev_t *ev, int32_t i);

/* eval_index.c: the indexes and sets above, built once per evaluation. */
void ev_make_indexes(ev_t *ev);
void ev_free_indexes(ev_t *ev);
bool ev_set_has(const ev_set_t *s, cm_slice_t key);
/* The static cohort list holds this cohort (by string id, or by number). */
bool ev_static_member(const ev_t *ev, const flg_filter_t *f);
/* A member of obj, through ix when obj has one (NULL: a scan). */
static inline cm_json_t ev_lookup(cm_json_t obj, const cm_json_index_t *ix, cm_slice_t key)
{
    return ix ? cm_json_index_get(ix, key) : cm_json_get_s(obj, key);
}
/* Property bags and bucketing. */
flg_bag_t ev_person_bag(const ev_t *ev);
/* A person property from the first layer that has it, through the indexes. */
cm_json_t ev_person_get(const ev_t *ev, cm_slice_t key);
flg_bag_t ev_group_bag(const ev_t *ev, cm_slice_t name, cm_json_t key);
cm_slice_t ev_group_name(const ev_t *ev, int32_t agg);
cm_json_t ev_group_key(const ev_t *ev, cm_slice_t name); /* none if not passed */
cm_slice_t ev_js_string(ev_t *ev, cm_json_t v);          /* String(v), kept for the evaluation */
cm_slice_t ev_variant_for(const flg_flag_t *f, const flg_condition_t *c, cm_slice_t bucket);
bool ev_out_of_rollout(const flg_flag_t *f, const flg_condition_t *c, cm_slice_t bucket);

void ev_set_match(flg_result_t *r, const flg_flag_t *f, cm_slice_t variant, flg_reason_t reason,
                  int32_t index);
void ev_set_nomatch(flg_result_t *r, const ev_track_t *t);
void ev_set_error(flg_result_t *r, const char *why);

/* flag_evaluates_to: does the dependency's result satisfy the filter value? */
bool ev_dep_holds(cm_json_t expected, const flg_result_t *dep);

/* eval_local.c: posthog-node's reading of flag i, and of one dependency filter. */
flg_match_t ev_local_flag(ev_t *ev, int32_t i, const flg_result_t **out);
flg_match_t ev_local_dep(ev_t *ev, const flg_filter_t *f);
flg_match_t ev_local_cohort(ev_t *ev, const flg_filter_t *f, const flg_bag_t *bag);

/* eval_remote.c: the server's reading (using posthog-node's filter answers where it has them). */
void ev_remote_flag(ev_t *ev, int32_t i, flg_result_t *out);
/* Early access; true if it decides the flag (out set, or an error). */
bool ev_early_access(ev_t *ev, const flg_flag_t *f, flg_result_t *out);

#endif
