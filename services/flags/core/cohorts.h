/*
 * cohorts.h - cohort filters ({"type": "cohort", "value": <id>}) and the
 * property groups that define cohorts.
 *
 * A cohort present in the definitions is matched by walking its property
 * group: AND / OR over nested groups or over leaf filters, each leaf
 * inverted by its `negation`. posthog-node's rules are kept exactly: {} or
 * null matches everyone; an empty AND is true and an empty OR false; an
 * inconclusive leaf is skipped but leaves the group inconclusive unless a
 * decisive leaf settles it; a group type other than AND/OR (or "property")
 * and a cohort missing from the definitions (a static cohort) need the
 * server. The server reading of a missing cohort is a membership test
 * against the caller's list of the person's static cohorts; without that
 * list the filter cannot be computed.
 *
 * Leaves that are not cohorts (person properties, flag dependencies) are
 * delegated to the caller through env->leaf, so this file knows nothing of
 * flags or requests. Recursion is bounded (depth) and so is the total work
 * of one evaluation (budget), which turns cyclic or explosive cohort
 * definitions into an error instead of a hang.
 */
#ifndef FLG_COHORTS_H
#define FLG_COHORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model.h"
#include "core/props.h"

#define FLG_COHORT_MAX_DEPTH 32

typedef struct {
    /* A non-cohort leaf, posthog-node's reading (server false) or the hybrid one. */
    flg_match_t (*leaf)(void *ud, const flg_filter_t *f, bool server);
    /* 1: the person is in this static cohort, 0: not, -1: not known. */
    int (*static_member)(void *ud, const flg_filter_t *f);
    void *ud;
    uint32_t depth;
    uint64_t *budget; /* leaves left for this evaluation; 0 => FLG_M_ERROR */
} flg_cohort_env_t;

/* posthog-node (server false) or the service's own reading (server true). */
flg_match_t flg_cohort_match(const flg_filter_t *f, flg_cohort_env_t *env, bool server);
flg_match_t flg_pgroup_match(const flg_pgroup_t *g, flg_cohort_env_t *env, bool server);

#endif
