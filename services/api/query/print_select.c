/*
 * print_select.c - SELECT, UNION ALL, FROM and JOIN for both stores (the
 * rules are at the top of print.c). The project filter lives here: a
 * stored table is only ever printed as a derived table that keeps the
 * project's rows, whatever the query around it does.
 */
#include <inttypes.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)

/* ---- FROM ------------------------------------------------------------------------------ */

static void ptable(q_printer_t *pr, const q_table_t *t)
{
    PF("(SELECT * FROM %s%s WHERE project_id = %" PRId64 "%s)", t->store,
       pr->ch && t->final_ ? " FINAL" : "", pr->o->project_id,
       t->deletable_ ? " AND is_deleted = 0" : "");
}

static unsigned count_joins(const q_from_t *f)
{
    if (f != NULL && f->kind == QJ_ARRAY)
        return count_joins(f->left);
    return f == NULL || f->kind != QJ_JOIN ? 0 : 1 + count_joins(f->left) + count_joins(f->right);
}

void q_pcolname(q_printer_t *pr, const q_select_t *s, size_t k)
{
    if (s == pr->top || (s->set != NULL && s->set == pr->top))
        q_pident(pr, s->out_names[k]);
    else
        PF("c%u_%zu", s->alias_id, k);
}

/* The source in f's subtree with HogQL column name, for USING (*col its
 * stored column, or NULL and *k the subquery's column). */
static const q_scope_entry_t *find_with(const q_from_t *f, cm_slice_t name, const char **col,
                                        size_t *k)
{
    if (f->kind == QJ_JOIN) {
        const q_scope_entry_t *s = find_with(f->left, name, col, k);
        return s != NULL ? s : find_with(f->right, name, col, k);
    }
    const q_scope_entry_t *s = f->entry;
    if (s->table != NULL) {
        const q_col_t *c = q_table_col(s->table, name);
        if (c != NULL && !c->hidden) {
            *col = c->column;
            return s;
        }
        return NULL;
    }
    for (size_t i = 0; i < s->sub->nout; i++)
        if (cm_slice_eq(s->sub->out_names[i], name)) {
            *col = NULL;
            *k = i;
            return s;
        }
    return NULL;
}

static void pusing_side(q_printer_t *pr, const q_scope_entry_t *s, const char *col, size_t k)
{
    PF("s%u.", s->id);
    if (col != NULL)
        P(col);
    else
        q_pcolname(pr, s->sub, k);
}

/* A table or subquery without its alias. */
static void pfrom_side(q_printer_t *pr, const q_from_t *f)
{
    if (f->kind == QJ_SUBQUERY || f->cte != NULL) {
        P("(");
        q_pselect(pr, f->kind == QJ_SUBQUERY ? f->sub : f->cte->sub, false);
        P(")");
    } else {
        ptable(pr, f->entry->table);
    }
}

static void pfrom(q_printer_t *pr, const q_from_t *f)
{
    static const char *const joins[] = {
        [QJ_INNER] = " INNER JOIN ", [QJ_LEFT] = " LEFT JOIN ",   [QJ_RIGHT] = " RIGHT JOIN ",
        [QJ_FULL] = " FULL JOIN ",   [QJ_CROSS] = " CROSS JOIN ",
    };
    if (q_join_marked(pr, f)) { /* print_join.c */
        PF("(SELECT *, 1 AS m%u FROM ", f->entry->id);
        pfrom_side(pr, f);
        PF(") AS s%u", f->entry->id);
        return;
    }
    switch (f->kind) {
    case QJ_TABLE:
        if (f->cte != NULL) {
            P("(");
            q_pselect(pr, f->cte->sub, false);
            P(")");
        } else {
            ptable(pr, f->entry->table);
        }
        PF(" AS s%u", f->entry->id);
        return;
    case QJ_SUBQUERY:
        P("(");
        q_pselect(pr, f->sub, false);
        PF(") AS s%u", f->entry->id);
        return;
    case QJ_NUMBERS: q_pnumbers(pr, f); return;
    case QJ_ARRAY:
        pfrom(pr, f->left);
        q_parray_join_clause(pr, f);
        return;
    case QJ_JOIN:
        pfrom(pr, f->left);
        P(joins[f->join]);
        pfrom(pr, f->right);
        if (f->on != NULL) {
            P(" ON ");
            pr->in_join_on = true; /* print_compare.c: plain comparisons, as HogQL */
            q_pexpr(pr, f->on);
            pr->in_join_on = false;
        } else if (f->using_.n > 0) {
            /* USING (a) is ON l.a = r.a: the sides' columns are named s<id>.x here */
            P(" ON ");
            for (size_t i = 0; i < f->using_.n; i++) {
                cm_slice_t name = f->using_.v[i]->chain[0];
                const char *lc = NULL, *rc = NULL;
                size_t lk = 0, rk = 0;
                const q_scope_entry_t *l = find_with(f->left, name, &lc, &lk);
                const q_scope_entry_t *r = find_with(f->right, name, &rc, &rk);
                if (l == NULL || r == NULL) {
                    q_pfail(pr, "USING (%.*s): both sides need that column", (int)name.len, name.p);
                    return;
                }
                if (i)
                    P(" AND ");
                pusing_side(pr, l, lc, lk);
                P(" = ");
                pusing_side(pr, r, rc, rk);
            }
        } else if (f->join != QJ_CROSS) {
            q_pfail(pr, "JOIN needs ON or USING");
        }
        return;
    }
}

/* ---- columns ----------------------------------------------------------------------------- */

/* Whether s's columns are the answer's: the query's, or a part of its UNION. */
bool q_is_output(const q_printer_t *pr, const q_select_t *s)
{
    return s == pr->root || (s->set != NULL && s->set == pr->root);
}

/* Every output column, * expanded; each named `as` says (NULL: its out name).
 * top: the answer's columns (an array's strings escaped for the reading). */
static void pcolumns(q_printer_t *pr, const q_select_t *s, const char *as, bool top)
{
    size_t k = 0;
    for (size_t i = 0; i < s->ncols; i++) {
        const q_expr_t *e = s->cols[i].expr;
        if (e->kind == QE_STAR) {
            for (size_t j = 0; j < s->nsources; j++) {
                const q_scope_entry_t *src = &s->sources[j];
                if (e->nchain == 1 && !cm_slice_eq(src->name, e->chain[0]))
                    continue;
                size_t m = src->table != NULL ? src->table->ncols : src->sub->nout;
                for (size_t c = 0; c < m; c++) {
                    if (src->table != NULL && src->table->cols[c].hidden)
                        continue;
                    if (k)
                        P(", ");
                    if (src->table != NULL && src->table->cols[c].type == Q_T_DATETIME &&
                        !q_is_output(pr, s)) {
                        q_pstored_datetime(pr, src->id, src->table->cols[c].column);
                    } else {
                        /* a subquery's array column, as an answer's (q_pout_open) */
                        const q_expr_t *sub = src->table ? NULL : src->sub->out_exprs[c];
                        const char *close = top && sub != NULL ? q_pout_open(pr, sub) : NULL;
                        PF("s%u.", src->id);
                        if (src->table != NULL)
                            P(src->table->cols[c].column);
                        else
                            q_pcolname(pr, src->sub, c);
                        if (close != NULL)
                            P(close);
                    }
                    if (as != NULL)
                        PF(" AS %s%zu", as, k);
                    else {
                        P(" AS ");
                        q_pcolname(pr, s, k);
                    }
                    k++;
                }
            }
            continue;
        }
        if (k)
            P(", ");
        /* the answer's DateTimes leave ClickHouse as UTC instants (their
         * zone is in the column's type: query.c); an answer's arrays are
         * opened for the reading (q_pout_open) */
        bool utc = pr->ch && q_is_output(pr, s) && e->type == Q_T_DATETIME &&
                   !q_zone_is_utc(q_zone_of(pr, e));
        const char *close = top ? q_pout_open(pr, e) : NULL;
        if (utc)
            P("toTimeZone(");
        pr->as_is = top ? e : NULL;
        q_pexpr(pr, e);
        pr->as_is = NULL;
        if (utc)
            P(", 'UTC')");
        if (close != NULL)
            P(close);
        if (as != NULL)
            PF(" AS %s%zu", as, k);
        else {
            P(" AS ");
            q_pcolname(pr, s, k);
        }
        k++;
    }
}

/* A GROUP BY, LIMIT BY or ORDER BY key: its value used as it is (q_printer_t.as_is). */
static void pkey(q_printer_t *pr, const q_expr_t *e)
{
    pr->as_is = e->kind == QE_FIELD && e->fkind == QF_ALIAS ? e->alias_of : e;
    q_pexpr(pr, e);
    pr->as_is = NULL;
}

static void plist(q_printer_t *pr, const q_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            P(", ");
        pkey(pr, l->v[i]);
    }
}

static void porder_item(q_printer_t *pr, const q_order_t *o)
{
    P(o->desc ? " DESC" : " ASC");
    P(o->nulls == Q_NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST");
}

static void porder(q_printer_t *pr, const q_order_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        q_type_t t = order[i].expr->type;
        if (!pr->ch && (t == Q_T_ARRAY || t == Q_T_TUPLE)) /* JSON text does not sort as values */
            q_pfail(pr, "Ordering by an array or a tuple is not supported on the SQLite store");
        P(i ? ", " : " ORDER BY ");
        pkey(pr, order[i].expr);
        porder_item(pr, &order[i]);
    }
}

/* FROM, WHERE, GROUP BY, HAVING */
static void pbody(q_printer_t *pr, const q_select_t *s)
{
    if (s->from != NULL) {
        if (pr->ch && !q_ch_modern(pr) && count_joins(s->from) > 1)
            q_pfail(
                pr,
                "A second JOIN in one SELECT needs ClickHouse 20 or later (this store runs 18.16): nest the others in a subquery");
        P(" FROM ");
        pfrom(pr, s->from);
    }
    q_parray_joins(pr, s);
    if (s->where != NULL) {
        P(" WHERE ");
        q_pexpr(pr, s->where);
    }
    if (s->group_by.n > 0) {
        P(" GROUP BY ");
        plist(pr, &s->group_by);
    }
    if (s->having != NULL) {
        P(" HAVING ");
        q_pexpr(pr, s->having);
    }
}

/* ---- LIMIT -------------------------------------------------------------------------------- */

typedef struct {
    bool any;
    int64_t limit; /* -1: none */
    int64_t offset;
} limits_t;

/* The query's LIMIT/OFFSET, and on top of it the page the caller asked for. */
static limits_t limits_of(q_printer_t *pr, const q_select_t *s, bool top)
{
    limits_t l = {false, s->limit != NULL ? s->limit->ival : -1,
                  s->offset != NULL ? s->offset->ival : 0};
    l.any = s->limit != NULL || s->offset != NULL;
    if (!top || pr->res->whole)
        return l;
    int64_t page = pr->res->limit, skip = pr->res->offset;
    int64_t want = page + 1; /* one more says hasMore */
    if (l.limit >= 0) {
        int64_t left = l.limit - skip;
        if (left < 0)
            left = 0;
        if (left < want)
            want = left;
    }
    l.any = true;
    l.limit = want;
    l.offset += skip;
    return l;
}

static void plimits(q_printer_t *pr, limits_t l)
{
    if (!l.any)
        return;
    if (l.limit >= 0)
        PF(" LIMIT %" PRId64, l.limit);
    else if (pr->ch)
        P(" LIMIT 18446744073709551615");
    else
        P(" LIMIT -1");
    if (l.offset > 0)
        PF(" OFFSET %" PRId64, l.offset);
}

/* SQLite has no LIMIT n BY: the rows are numbered within each group of
 * the BY values, in the query's order, and the wanted numbers kept.
 * LIMIT n WITH TIES is the same on both stores: the rows ranked by the
 * query's order (rank() gives tied rows one rank), those ranked n or
 * better kept: the first n and every row tied with the n-th. */
static void plimit_ranked(q_printer_t *pr, const q_select_t *s, bool top)
{
    bool ties = s->limit_by_n == NULL;
    if (s->distinct) {
        q_pfail(pr, ties ? "DISTINCT with LIMIT ... WITH TIES is not supported"
                         : "DISTINCT with LIMIT BY is not supported on the SQLite store");
        return;
    }
    if (ties && pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "LIMIT ... WITH TIES needs ClickHouse 21.3 or later (this store runs 18.16)");
        return;
    }
    if (ties && s->offset != NULL) {
        q_pfail(pr, "LIMIT ... WITH TIES takes no OFFSET here");
        return;
    }
    P("SELECT ");
    for (size_t k = 0; k < s->nout; k++) {
        PF("%s__c%zu AS ", k ? ", " : "", k);
        q_pcolname(pr, s, k);
    }
    P(" FROM (SELECT ");
    pcolumns(pr, s, "__c", false);
    for (size_t i = 0; i < s->norder; i++) {
        P(", ");
        q_pexpr(pr, s->order[i].expr);
        PF(" AS __o%zu", i);
    }
    if (ties) {
        P(", rank() OVER (");
        porder(pr, s->order, s->norder);
        P(") AS __rn");
    } else {
        P(", row_number() OVER (PARTITION BY ");
        plist(pr, &s->limit_by);
        porder(pr, s->order, s->norder);
        P(") AS __rn");
    }
    pbody(pr, s);
    int64_t off = s->limit_by_offset != NULL ? s->limit_by_offset->ival : 0;
    if (ties)
        PF(") WHERE __rn <= %" PRId64, s->limit->ival);
    else
        PF(") WHERE __rn > %" PRId64 " AND __rn <= %" PRId64, off, off + s->limit_by_n->ival);
    for (size_t i = 0; i < s->norder; i++) {
        PF("%s__o%zu", i ? ", " : " ORDER BY ", i);
        porder_item(pr, &s->order[i]);
    }
    limits_t l = limits_of(pr, s, top);
    if (ties) { /* the ranks did the query's own LIMIT; only the page is left */
        q_select_t plain = *s;
        plain.limit = NULL;
        l = limits_of(pr, &plain, top);
    }
    plimits(pr, l);
}

/* ---- SELECT -------------------------------------------------------------------------------- */

/* top: the query's own SELECT (its limits take the page); answer: its
 * columns are the answer's (also a top UNION's parts). */
static void pselect(q_printer_t *pr, const q_select_t *s, bool top, bool answer)
{
    if (pr->failed)
        return;
    if (s->nparts > 0) {
        /* Each part in its own SELECT * (its ORDER BY and LIMIT stay its own). */
        if (top)
            P("SELECT * FROM (");
        q_pset(pr, s, answer); /* print_s.c: its parts answer as the set does */
        if (top) {
            P(")");
            plimits(pr, limits_of(pr, s, true));
        }
        return;
    }
    if ((s->limit_by_n != NULL && !pr->ch) || s->with_ties) {
        plimit_ranked(pr, s, top);
        return;
    }
    const q_from_t *outer = pr->outer_join;
    const q_select_t *cur = pr->cur;
    pr->outer_join = q_outer_join(pr, s);
    pr->cur = s;
    P(s->distinct ? "SELECT DISTINCT " : "SELECT ");
    pcolumns(pr, s, NULL, answer);
    pbody(pr, s);
    porder(pr, s->order, s->norder);
    if (s->limit_by_n != NULL) {
        if (s->limit_by_offset != NULL && !q_ch_modern(pr)) {
            q_pfail(pr, "LIMIT n OFFSET m BY needs ClickHouse 19 or later (this store runs 18.16)");
            pr->outer_join = outer;
            pr->cur = cur;
            return;
        }
        PF(" LIMIT %" PRId64, s->limit_by_n->ival);
        if (s->limit_by_offset != NULL)
            PF(" OFFSET %" PRId64, s->limit_by_offset->ival);
        P(" BY ");
        plist(pr, &s->limit_by);
    }
    pr->outer_join = outer;
    pr->cur = cur;
    plimits(pr, limits_of(pr, s, top));
}

void q_pselect_part(q_printer_t *pr, const q_select_t *s, bool answer)
{
    pselect(pr, s, false, answer);
}

void q_pselect(q_printer_t *pr, const q_select_t *s, bool top)
{
    pselect(pr, s, top, top);
}
