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

static void pfrom(q_printer_t *pr, const q_from_t *f)
{
    static const char *const joins[] = {
        [QJ_INNER] = " INNER JOIN ", [QJ_LEFT] = " LEFT JOIN ",   [QJ_RIGHT] = " RIGHT JOIN ",
        [QJ_FULL] = " FULL JOIN ",   [QJ_CROSS] = " CROSS JOIN ",
    };
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
    case QJ_JOIN:
        pfrom(pr, f->left);
        P(joins[f->join]);
        pfrom(pr, f->right);
        if (f->on != NULL) {
            P(" ON ");
            q_pexpr(pr, f->on);
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

/* Every output column, * expanded; each named `as` says (NULL: its out name). */
static void pcolumns(q_printer_t *pr, const q_select_t *s, const char *as)
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
                    PF("s%u.", src->id);
                    if (src->table != NULL)
                        P(src->table->cols[c].column);
                    else
                        q_pcolname(pr, src->sub, c);
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
        q_pexpr(pr, e);
        if (as != NULL)
            PF(" AS %s%zu", as, k);
        else {
            P(" AS ");
            q_pcolname(pr, s, k);
        }
        k++;
    }
}

static void plist(q_printer_t *pr, const q_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            P(", ");
        q_pexpr(pr, l->v[i]);
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
        P(i ? ", " : " ORDER BY ");
        q_pexpr(pr, order[i].expr);
        porder_item(pr, &order[i]);
    }
}

/* FROM, WHERE, GROUP BY, HAVING */
static void pbody(q_printer_t *pr, const q_select_t *s)
{
    if (s->from != NULL) {
        if (pr->ch && !pr->o->clickhouse_modern && count_joins(s->from) > 1)
            q_pfail(
                pr,
                "A second JOIN in one SELECT needs ClickHouse 20 or later (this store runs 18.16): nest the others in a subquery");
        P(" FROM ");
        pfrom(pr, s->from);
    }
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
 * the BY values, in the query's order, and the wanted numbers kept. */
static void plimit_by_sqlite(q_printer_t *pr, const q_select_t *s, bool top)
{
    if (s->distinct) {
        q_pfail(pr, "DISTINCT with LIMIT BY is not supported on the SQLite store");
        return;
    }
    P("SELECT ");
    for (size_t k = 0; k < s->nout; k++) {
        PF("%s__c%zu AS ", k ? ", " : "", k);
        q_pcolname(pr, s, k);
    }
    P(" FROM (SELECT ");
    pcolumns(pr, s, "__c");
    for (size_t i = 0; i < s->norder; i++) {
        P(", ");
        q_pexpr(pr, s->order[i].expr);
        PF(" AS __o%zu", i);
    }
    P(", row_number() OVER (PARTITION BY ");
    plist(pr, &s->limit_by);
    porder(pr, s->order, s->norder);
    P(") AS __rn");
    pbody(pr, s);
    int64_t off = s->limit_by_offset != NULL ? s->limit_by_offset->ival : 0;
    PF(") WHERE __rn > %" PRId64 " AND __rn <= %" PRId64, off, off + s->limit_by_n->ival);
    for (size_t i = 0; i < s->norder; i++) {
        PF("%s__o%zu", i ? ", " : " ORDER BY ", i);
        porder_item(pr, &s->order[i]);
    }
    plimits(pr, limits_of(pr, s, top));
}

/* ---- SELECT -------------------------------------------------------------------------------- */

void q_pselect(q_printer_t *pr, const q_select_t *s, bool top)
{
    if (pr->failed)
        return;
    if (s->nparts > 0) {
        /* Each part in its own SELECT * (its ORDER BY and LIMIT stay its own). */
        if (top)
            P("SELECT * FROM (");
        for (size_t i = 0; i < s->nparts; i++) {
            P(i ? " UNION ALL SELECT * FROM (" : "SELECT * FROM (");
            q_pselect(pr, s->parts[i], false);
            P(")");
        }
        if (top) {
            P(")");
            plimits(pr, limits_of(pr, s, true));
        }
        return;
    }
    if (s->limit_by_n != NULL && !pr->ch) {
        plimit_by_sqlite(pr, s, top);
        return;
    }
    P(s->distinct ? "SELECT DISTINCT " : "SELECT ");
    pcolumns(pr, s, NULL);
    pbody(pr, s);
    porder(pr, s->order, s->norder);
    if (s->limit_by_n != NULL) {
        if (s->limit_by_offset != NULL && !pr->o->clickhouse_modern) {
            q_pfail(pr, "LIMIT n OFFSET m BY needs ClickHouse 19 or later (this store runs 18.16)");
            return;
        }
        PF(" LIMIT %" PRId64, s->limit_by_n->ival);
        if (s->limit_by_offset != NULL)
            PF(" OFFSET %" PRId64, s->limit_by_offset->ival);
        P(" BY ");
        plist(pr, &s->limit_by);
    }
    plimits(pr, limits_of(pr, s, top));
}
