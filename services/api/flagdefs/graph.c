/*
 * graph.c - references between a project's flags (or between its cohorts)
 * as a graph read once: each node's outgoing ids come from its stored
 * filters, parsed when the node is added, and every walk marks the nodes it
 * has seen, so a query is linear in the graph however the references
 * share or loop.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "flagdefs/flagdefs.h"

typedef struct {
    long long id;
    const char *key;
    long long deps[API_FLAGDEFS_MAX_REFS];
    size_t ndeps;
    int mark; /* during a walk: 0 unseen, 1 on the current path, 2 done */
} node_t;

struct api_flagdefs_graph {
    node_t *nodes;
    size_t n, cap;
    bool sorted;
};

api_flagdefs_graph_t *api_flagdefs_graph_new(size_t hint)
{
    api_flagdefs_graph_t *g = cm_xcalloc(1, sizeof(*g));
    g->cap = hint ? hint : 1;
    g->nodes = cm_xcalloc(g->cap, sizeof(node_t));
    return g;
}

void api_flagdefs_graph_free(api_flagdefs_graph_t *g)
{
    if (g == NULL)
        return;
    free(g->nodes);
    free(g);
}

void api_flagdefs_graph_add(api_flagdefs_graph_t *g, long long id, const char *key,
                            const long long *deps, size_t ndeps)
{
    if (g->n == g->cap) {
        g->cap *= 2;
        g->nodes = cm_xrealloc(g->nodes, g->cap * sizeof(node_t));
    }
    node_t *n = &g->nodes[g->n++];
    memset(n, 0, sizeof(*n));
    n->id = id;
    n->key = key;
    n->ndeps = ndeps < API_FLAGDEFS_MAX_REFS ? ndeps : API_FLAGDEFS_MAX_REFS;
    if (n->ndeps)
        memcpy(n->deps, deps, n->ndeps * sizeof(*deps));
    g->sorted = false;
}

static int by_id(const void *a, const void *b)
{
    long long x = ((const node_t *)a)->id, y = ((const node_t *)b)->id;
    return (x > y) - (x < y);
}

/* The node of id (ids are added once each: a write adds its new references
 * in place of the stored row's). */
static node_t *find(api_flagdefs_graph_t *g, long long id)
{
    if (!g->sorted) {
        qsort(g->nodes, g->n, sizeof(node_t), by_id);
        g->sorted = true;
    }
    node_t key = {.id = id};
    return bsearch(&key, g->nodes, g->n, sizeof(node_t), by_id);
}

static void unmark(api_flagdefs_graph_t *g)
{
    for (size_t i = 0; i < g->n; i++)
        g->nodes[i].mark = 0;
}

const char *api_flagdefs_graph_key(api_flagdefs_graph_t *g, long long id)
{
    node_t *n = find(g, id);
    return n ? n->key : NULL;
}

static bool reach(api_flagdefs_graph_t *g, long long from, long long target)
{
    if (from == target)
        return true;
    node_t *n = find(g, from);
    if (n == NULL || n->mark)
        return false;
    n->mark = 2;
    for (size_t i = 0; i < n->ndeps; i++)
        if (reach(g, n->deps[i], target))
            return true;
    return false;
}

bool api_flagdefs_graph_reaches(api_flagdefs_graph_t *g, long long from, long long target)
{
    unmark(g);
    return reach(g, from, target);
}

/* Post-order from id: dependencies first. false on a missing node or a cycle. */
static bool walk(api_flagdefs_graph_t *g, long long id, const char **chain, size_t *len, size_t max)
{
    node_t *n = find(g, id);
    if (n == NULL || n->mark == 1)
        return false;
    if (n->mark == 2)
        return true;
    n->mark = 1;
    for (size_t i = 0; i < n->ndeps; i++)
        if (!walk(g, n->deps[i], chain, len, max))
            return false;
    n->mark = 2;
    if (*len < max)
        chain[(*len)++] = n->key;
    return true;
}

size_t api_flagdefs_graph_chain(api_flagdefs_graph_t *g, long long id, const char **chain,
                                size_t max)
{
    size_t len = 0;
    unmark(g);
    return walk(g, id, chain, &len, max) ? len : 0;
}
