/*
 * flagdefs.h - feature flag definitions as the api stores them: checking a
 * flag's filters before it is stored, and the references between flags and
 * cohorts. Pure (no I/O): used by resources/ and publish/.
 */
#ifndef API_FLAGDEFS_H
#define API_FLAGDEFS_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/api_error.h"
#include "cm/json.h"

#define API_FLAGDEFS_MAX_REFS 64

/* Cohort and flag ids the filters point at (distinct, at most
 * API_FLAGDEFS_MAX_REFS of each; more are not collected). */
typedef struct {
    long long cohorts[API_FLAGDEFS_MAX_REFS];
    size_t ncohorts;
    long long flags[API_FLAGDEFS_MAX_REFS];
    size_t nflags;
} api_flagdefs_refs_t;

extern const char *const api_flagdefs_operators[]; /* NULL-terminated */

/* 0, or -1 with e filled (400, attr "filters", a detail naming the place). */
int api_flagdefs_check(cm_json_t filters, api_flagdefs_refs_t *refs, cm_api_error_t *e);
/* A cohort's property group (nested AND/OR, property filters at the
 * leaves); refs gets the cohorts it points at. 0, or -1 with e filled. */
int api_flagdefs_check_cohort(cm_json_t group, api_flagdefs_refs_t *refs, cm_api_error_t *e);
/* The references of stored filters (JSON text); none when it does not parse. */
void api_flagdefs_refs_of(const char *filters, api_flagdefs_refs_t *refs);

/* The cohorts a stored cohort group (JSON text) points at. */
void api_flagdefs_cohort_refs_of(const char *group, api_flagdefs_refs_t *refs);

/*
 * graph.c: the references between a project's flags (or its cohorts), each
 * node's read once when it is added; walks are linear however references
 * share or loop. Add each id once.
 */
typedef struct api_flagdefs_graph api_flagdefs_graph_t;
api_flagdefs_graph_t *api_flagdefs_graph_new(size_t hint);
void api_flagdefs_graph_free(api_flagdefs_graph_t *g);
/* key is borrowed (it must outlive the graph); deps beyond
 * API_FLAGDEFS_MAX_REFS are dropped. */
void api_flagdefs_graph_add(api_flagdefs_graph_t *g, long long id, const char *key,
                            const long long *deps, size_t ndeps);
const char *api_flagdefs_graph_key(api_flagdefs_graph_t *g, long long id);
/* Is there a path of references from `from` to `target` (or are they one)? */
bool api_flagdefs_graph_reaches(api_flagdefs_graph_t *g, long long from, long long target);
/* The keys to evaluate before and including id, dependencies first, into
 * chain; 0 when a node on the way is missing or in a cycle. */
size_t api_flagdefs_graph_chain(api_flagdefs_graph_t *g, long long id, const char **chain,
                                size_t max);

#endif
