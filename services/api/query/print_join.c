/*
 * print_join.c - an outer JOIN's keys on ClickHouse 18.16.
 *
 * With join_use_nulls = 1, 18.16 gives NULL for the columns of the side a
 * LEFT (RIGHT, FULL) JOIN does not match, except the columns the ON
 * compares: those read as their type's default (0, ''), where SQLite and
 * newer ClickHouse answer NULL. So that side's derived table gets a marker
 * column, m<id> = 1, which a miss makes NULL, and each reading of one of
 * its ON keys outside the ON is printed as
 * if(isNull(s<id>.m<id>), NULL, key). Newer ClickHouse and SQLite print
 * as they are.
 */
#include <string.h>

#include "query/print_int.h"

/* Whether a miss of join j leaves side NULL. */
static bool null_side(const q_from_t *j, const q_from_t *side)
{
    return (side == j->right && (j->join == QJ_LEFT || j->join == QJ_FULL)) ||
           (side == j->left && (j->join == QJ_RIGHT || j->join == QJ_FULL));
}

const q_from_t *q_outer_join(const q_printer_t *pr, const q_select_t *s)
{
    const q_from_t *j = s->from;
    if (!pr->ch || q_ch_modern(pr) || j == NULL || j->kind != QJ_JOIN || j->on == NULL)
        return NULL;
    return j->join == QJ_LEFT || j->join == QJ_RIGHT || j->join == QJ_FULL ? j : NULL;
}

static bool same_column(const q_expr_t *a, const q_expr_t *b)
{
    if (a->kind != QE_FIELD || a->fkind != QF_COLUMN || a->source == NULL ||
        a->source->id != b->source->id)
        return false;
    if (a->column != NULL || b->column != NULL)
        return a->column != NULL && b->column != NULL && strcmp(a->column, b->column) == 0;
    return a->ival == b->ival;
}

/* Whether f is compared with = in the ON (through its ANDs). */
static bool is_key(const q_expr_t *on, const q_expr_t *f)
{
    if (on->kind != QE_BINARY)
        return false;
    if (on->op == QB_AND)
        return is_key(on->args.v[0], f) || is_key(on->args.v[1], f);
    return on->op == QB_EQ && (same_column(on->args.v[0], f) || same_column(on->args.v[1], f));
}

static bool has_id(const q_from_t *f, unsigned id)
{
    return (f->kind == QJ_TABLE || f->kind == QJ_SUBQUERY) && f->entry != NULL &&
           f->entry->id == id;
}

unsigned q_join_null_key(const q_printer_t *pr, const q_expr_t *e)
{
    const q_from_t *j = pr->outer_join;
    if (j == NULL || pr->in_join_on || e->source == NULL)
        return 0;
    /* by id: a side's entry may be a copy left behind when its SELECT's
     * sources grew (resolve.c's add_source) */
    const q_from_t *side = has_id(j->left, e->source->id)    ? j->left
                           : has_id(j->right, e->source->id) ? j->right
                                                             : NULL;
    if (side == NULL || !null_side(j, side) || !is_key(j->on, e))
        return 0;
    return e->source->id;
}

bool q_join_marked(const q_printer_t *pr, const q_from_t *f)
{
    const q_from_t *j = pr->outer_join;
    return j != NULL && (f == j->left || f == j->right) && null_side(j, f) &&
           (f->kind == QJ_TABLE || f->kind == QJ_SUBQUERY);
}
