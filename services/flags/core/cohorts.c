/*
 * cohorts.c - see cohorts.h.
 *
 * In server mode every leaf comes back decided (or as an error), so the
 * same walk serves both readings; only the treatment of what posthog-node
 * would hand to the server differs. Where posthog-node skips an
 * inconclusive member and lets a later one settle the group, the server
 * mode does the same with a member that failed, so both readings agree
 * whenever posthog-node has an answer.
 */
#include "core/cohorts.h"

/* Accumulates the undecided members of one group. */
typedef struct {
    bool inc;
    bool regex;
    bool error; /* server mode: a member failed; fatal only if nothing settles the group */
} inc_t;

static void note_inc(inc_t *acc, flg_match_t m)
{
    acc->inc = true;
    acc->regex |= m == FLG_M_INC_REGEX;
}

static flg_match_t finish(const flg_pgroup_t *g, const inc_t *acc)
{
    if (acc->error)
        return FLG_M_ERROR;
    if (acc->inc)
        return acc->regex ? FLG_M_INC_REGEX : FLG_M_INC;
    return g->kind == FLG_PG_AND ? FLG_M_TRUE : FLG_M_FALSE;
}

/* What a decided member result means for the group: settle it, or go on. */
static bool settles(const flg_pgroup_t *g, bool matched)
{
    return g->kind == FLG_PG_AND ? !matched : matched;
}

static flg_match_t leaf_match(const flg_filter_t *f, flg_cohort_env_t *env, bool server)
{
    if (!*env->budget)
        return FLG_M_ERROR;
    (*env->budget)--;
    if (f->type == FLG_PT_COHORT)
        return flg_cohort_match(f, env, server);
    return env->leaf(env->ud, f, server);
}

flg_match_t flg_pgroup_match(const flg_pgroup_t *g, flg_cohort_env_t *env, bool server)
{
    switch (g->kind) {
    case FLG_PG_EMPTY: return FLG_M_TRUE;
    case FLG_PG_BAD_TYPE: return server ? FLG_M_ERROR : FLG_M_SERVER;
    case FLG_PG_MALFORMED: return FLG_M_ERROR;
    default: break;
    }
    if (env->depth >= FLG_COHORT_MAX_DEPTH)
        return FLG_M_ERROR;
    env->depth++;
    inc_t acc = {false, false, false};
    flg_match_t out = FLG_M_ERROR;
    uint32_t i;
    for (i = 0; i < g->n; i++) {
        flg_match_t m;
        bool negate = false;
        if (g->nested) {
            m = flg_pgroup_match(&g->groups[i], env, server);
        } else {
            m = leaf_match(&g->filters[i], env, server);
            negate = g->filters[i].negation;
        }
        if (m == FLG_M_ERROR && server) {
            acc.error = true; /* a later member may still settle the group */
            continue;
        }
        if (m == FLG_M_SERVER || m == FLG_M_ERROR) {
            out = m;
            break;
        }
        if (!flg_m_decided(m)) {
            note_inc(&acc, m);
            continue;
        }
        bool matched = (m == FLG_M_TRUE) != negate;
        if (settles(g, matched)) {
            out = matched ? FLG_M_TRUE : FLG_M_FALSE;
            break;
        }
    }
    if (i == g->n)
        out = finish(g, &acc);
    env->depth--;
    return out;
}

flg_match_t flg_cohort_match(const flg_filter_t *f, flg_cohort_env_t *env, bool server)
{
    bool not_in = f->op == FLG_OP_NOT_IN;
    if (server && f->op != FLG_OP_IN && f->op != FLG_OP_NOT_IN && f->op != FLG_OP_EXACT)
        return FLG_M_FALSE; /* the server only knows in / not_in (absent means in) */
    flg_match_t m;
    if (f->cohort) {
        m = flg_pgroup_match(f->cohort, env, server);
    } else if (!server) {
        return FLG_M_SERVER; /* a static cohort: only the server knows its members */
    } else {
        int member = env->static_member ? env->static_member(env->ud, f) : -1;
        if (member < 0)
            return FLG_M_ERROR;
        m = member ? FLG_M_TRUE : FLG_M_FALSE;
    }
    if (flg_m_decided(m) && not_in)
        m = m == FLG_M_TRUE ? FLG_M_FALSE : FLG_M_TRUE;
    return m;
}
