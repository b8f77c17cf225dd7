/*
 * print_s.c - part S's syntax printed for both stores: set operators,
 * numbers(n) in FROM, window frames. The rules are print.c's: one answer
 * on both stores, ClickHouse's semantics, SQLite made to agree.
 *
 * Set operators, as ClickHouse runs them: UNION ALL keeps every row,
 * UNION DISTINCT drops duplicates; INTERSECT and EXCEPT (ClickHouse's
 * default mode, ALL) keep the left side's rows, duplicates included, that
 * are (INTERSECT) or are not (EXCEPT) among the right side's, and their
 * DISTINCT forms then drop duplicates. Rows compare NULLs as equal. A
 * chain is read left to right, explicitly nested wherever the operator
 * changes, so neither store's precedence decides.
 */
#include <inttypes.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)

/* ---- set operators ------------------------------------------------------------------ */

static bool semi(q_setop_t op)
{
    return op == QS_INTERSECT || op == QS_EXCEPT;
}

/* ClickHouse 21.8 to 23.x: INTERSECT DISTINCT and EXCEPT DISTINCT are
 * 22.9's (ClickHouse pull request 40792): there the left side is made
 * distinct and the ALL form applied, which is the same (the rows kept are
 * some of the left side's; 24 prints the DISTINCT forms). */
static bool distinct_over_left(const q_printer_t *pr, q_setop_t op)
{
    return pr->ch && q_ch_modern(pr) && !q_ch_24(pr) &&
           (op == QS_INTERSECT_DISTINCT || op == QS_EXCEPT_DISTINCT);
}

/* Whether step k (joining parts[k] to what is before it) is printed as a
 * SELECT around the left side: SQLite's INTERSECT and EXCEPT that keep
 * duplicates (a semi-join), 18.16's UNION DISTINCT (DISTINCT over UNION
 * ALL), and wherever the operator changes. */
static bool wraps(const q_printer_t *pr, const q_select_t *s, size_t k)
{
    q_setop_t op = s->ops[k];
    if (!pr->ch && semi(op))
        return true;
    if (pr->ch && !q_ch_modern(pr) && op == QS_UNION_DISTINCT)
        return true;
    if (distinct_over_left(pr, op))
        return true;
    return k >= 2 && op != s->ops[k - 1];
}

/* __l.a IS __r.b AND ...: SQLite's IS is equality with NULL equal to NULL */
static void pcolumn_list(q_printer_t *pr, const q_select_t *left, const q_select_t *right)
{
    for (size_t c = 0; c < left->nout; c++) {
        if (c)
            P(" AND ");
        PF("__l.");
        q_pcolname(pr, left, c);
        PF(" IS __r.");
        q_pcolname(pr, right, c);
    }
}

static const char *ch_op(q_setop_t op)
{
    switch (op) {
    case QS_UNION_ALL: return " UNION ALL ";
    case QS_UNION_DISTINCT: return " UNION DISTINCT ";
    case QS_INTERSECT: return " INTERSECT "; /* its default mode, ALL: PostHog prints it so */
    case QS_INTERSECT_DISTINCT: return " INTERSECT DISTINCT ";
    case QS_EXCEPT: return " EXCEPT ";
    case QS_EXCEPT_DISTINCT: return " EXCEPT DISTINCT ";
    case QS_UNION: break;
    }
    return " UNION ALL ";
}

static const char *sqlite_op(q_setop_t op)
{
    switch (op) {
    case QS_UNION_ALL: return " UNION ALL ";
    case QS_UNION_DISTINCT: return " UNION ";
    case QS_INTERSECT_DISTINCT: return " INTERSECT ";
    case QS_EXCEPT_DISTINCT: return " EXCEPT ";
    default: return " UNION ALL "; /* the semi-joins are printed apart */
    }
}

void q_pset(q_printer_t *pr, const q_select_t *s, bool answer)
{
    for (size_t k = 1; k < s->nparts; k++) {
        q_setop_t op = s->ops[k];
        if (pr->ch && !q_ch_modern(pr) && op != QS_UNION_ALL && op != QS_UNION_DISTINCT) {
            q_pfail(pr, "%s needs ClickHouse 21.8 or later (this store runs 18.16)",
                    op == QS_INTERSECT || op == QS_INTERSECT_DISTINCT ? "INTERSECT" : "EXCEPT");
            return;
        }
    }
    /* the SELECTs around the left sides, outermost (the last step's) first */
    for (size_t k = s->nparts - 1; k >= 1; k--) {
        if (!wraps(pr, s, k))
            continue;
        if (!pr->ch && semi(s->ops[k]))
            P("SELECT * FROM (");
        else if ((pr->ch && !q_ch_modern(pr) && s->ops[k] == QS_UNION_DISTINCT) ||
                 distinct_over_left(pr, s->ops[k]))
            P("SELECT DISTINCT * FROM (");
        else
            P("SELECT * FROM (");
    }
    P("SELECT * FROM (");
    q_pselect_part(pr, s->parts[0], answer);
    P(")");
    for (size_t k = 1; k < s->nparts && !pr->failed; k++) {
        q_setop_t op = s->ops[k];
        const q_select_t *part = s->parts[k];
        if (!pr->ch && semi(op)) {
            /* left rows kept, duplicates too, where a right row equals them */
            PF(") AS __l WHERE %sEXISTS (SELECT 1 FROM (", op == QS_EXCEPT ? "NOT " : "");
            q_pselect(pr, part, false);
            P(") AS __r WHERE ");
            pcolumn_list(pr, s->parts[0], part);
            P(")");
            continue;
        }
        if (wraps(pr, s, k) && !(pr->ch && !q_ch_modern(pr)))
            P(")");
        if (pr->ch && !q_ch_modern(pr)) {
            /* 18.16: UNION ALL only; DISTINCT over it for UNION DISTINCT */
            P(" UNION ALL SELECT * FROM (");
            q_pselect_part(pr, part, answer);
            P(wraps(pr, s, k) ? "))" : ")");
            continue;
        }
        if (distinct_over_left(pr, op))
            P(op == QS_INTERSECT_DISTINCT ? " INTERSECT " : " EXCEPT ");
        else
            P(pr->ch ? ch_op(op) : sqlite_op(op));
        P("SELECT * FROM (");
        q_pselect_part(pr, part, answer);
        P(")");
    }
}

/* ---- numbers(n) ------------------------------------------------------------------------ */

void q_pnumbers(q_printer_t *pr, const q_from_t *f)
{
    int64_t a = f->num_start, n = f->num_count;
    if (pr->ch && n == 0) /* ClickHouse 18.16 reads numbers(0) as no limit at all */
        P("(SELECT toInt64(number) AS num FROM numbers(1) WHERE 0)");
    else if (pr->ch) /* Int64, as every integer here */
        PF("(SELECT toInt64(number) + %" PRId64 " AS num FROM numbers(%" PRId64 "))", a, n);
    else
        PF("(WITH RECURSIVE n%u(number) AS (SELECT %" PRId64 " WHERE %" PRId64
           " > 0 UNION ALL SELECT number + 1 FROM n%u WHERE number < %" PRId64
           ") SELECT number AS num FROM n%u)",
           f->entry->id, a, n, f->entry->id, a + n - 1, f->entry->id);
    PF(" AS s%u", f->entry->id);
}

/* ---- window frames ----------------------------------------------------------------------- */

void q_pframe(q_printer_t *pr, const q_window_t *w)
{
    q_print_hogql_frame(&w->frame, pr->out);
}

/* ---- lagInFrame, leadInFrame on SQLite ------------------------------------------------- */

/* OVER (PARTITION BY ... ORDER BY ...) without a frame (lag and lead
 * ignore frames on SQLite). */
static void pover_plain(q_printer_t *pr, const q_window_t *w)
{
    P(" OVER (");
    for (size_t i = 0; i < w->partition.n; i++) {
        P(i ? ", " : "PARTITION BY ");
        q_pexpr(pr, w->partition.v[i]);
    }
    for (size_t i = 0; i < w->norder; i++) {
        P(i ? ", " : w->partition.n ? " ORDER BY " : "ORDER BY ");
        q_pexpr(pr, w->order[i].expr);
        P(w->order[i].desc ? " DESC" : " ASC");
        P(w->order[i].nulls == Q_NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST");
    }
    P(")");
}

/* ClickHouse's default for a type: what its InFrame functions give for a
 * row outside the frame (NULL for a nullable one); NULL if unknown. */
static const char *type_default(const q_expr_t *x)
{
    if (x->nullable)
        return "NULL";
    switch (x->type) {
    case Q_T_STRING: return "''";
    case Q_T_UUID: return "'00000000-0000-0000-0000-000000000000'";
    case Q_T_DATETIME: return "'1970-01-01 00:00:00'";
    case Q_T_DATE: return "'1970-01-01'";
    case Q_T_FLOAT: return "0.0";
    case Q_T_INT:
    case Q_T_BOOL: return "0";
    default: return NULL;
    }
}

/* The frame a window has: its own, else ClickHouse's default (RANGE from
 * the partition's start to the current row's last peer with ORDER BY, the
 * whole partition without). */
static q_frame_t frame_of(const q_window_t *w)
{
    if (w->frame.kind != QW_NONE)
        return w->frame;
    if (w->norder > 0)
        return (q_frame_t){QW_RANGE, {QW_UNBOUNDED_PRECEDING, 0}, {QW_CURRENT, 0}};
    return (q_frame_t){QW_ROWS, {QW_UNBOUNDED_PRECEDING, 0}, {QW_UNBOUNDED_FOLLOWING, 0}};
}

/* A ROWS bound as an offset from the current row (unbounded: past any). */
static int64_t bound_offset(const q_bound_t *b)
{
    switch (b->kind) {
    case QW_UNBOUNDED_PRECEDING: return INT64_MIN;
    case QW_UNBOUNDED_FOLLOWING: return INT64_MAX;
    case QW_PRECEDING: return -b->n;
    case QW_FOLLOWING: return b->n;
    default: return 0;
    }
}

/* lagInFrame(x, k, d): the value k rows before (leadInFrame: after) if
 * that row is in the frame, else d or the type's default, as ClickHouse.
 * SQLite's lag and lead read the whole partition, so the frame is checked
 * here: the row exists (row_number and count), and the bounds admit a
 * row k away (constants, but RANGE ... CURRENT ROW, where the row must be
 * a peer: its ORDER BY values the same). */
void q_plag_sqlite(q_printer_t *pr, const q_expr_t *e, bool lead)
{
    const q_window_t *w = e->over;
    const q_expr_t *x = e->args.v[0];
    int64_t k = 1;
    if (e->args.n >= 2) {
        const q_expr_t *ke = e->args.v[1];
        if (ke->kind != QE_INT || ke->ival < 0) {
            q_pfail(pr, "%s takes a whole number of rows as its offset on the SQLite store",
                    lead ? "leadInFrame" : "lagInFrame");
            return;
        }
        k = ke->ival;
    }
    const char *dflt = e->args.n == 3 ? NULL : type_default(x);
    if (e->args.n < 3 && dflt == NULL) {
        q_pfail(pr, "%s of this value needs a default (its third argument) on the SQLite store",
                lead ? "leadInFrame" : "lagInFrame");
        return;
    }
    q_frame_t f = frame_of(w);
    int64_t d = lead ? k : -k; /* the row wanted, from the current one */
    bool in, peer = false;     /* whether it can be in the frame; must be a peer */
    if (f.kind == QW_RANGE) {
        /* bounds UNBOUNDED or CURRENT ROW (resolve_s.c): all rows on an
         * unbounded side; the current row's peers at a CURRENT ROW side */
        in = true;
        peer = (d < 0 && f.lo.kind == QW_CURRENT) || (d > 0 && f.hi.kind == QW_CURRENT);
    } else {
        in = bound_offset(&f.lo) <= d && d <= bound_offset(&f.hi);
    }
    if (!in) {
        P("(");
        if (dflt != NULL)
            P(dflt);
        else
            q_pexpr(pr, e->args.v[2]);
        P(")");
        return;
    }
    P("(CASE WHEN ");
    if (lead) {
        P("row_number()");
        pover_plain(pr, w);
        PF(" + %" PRId64 " <= count(*)", k);
        q_window_t whole = *w;
        whole.norder = 0;
        pover_plain(pr, &whole);
    } else {
        P("row_number()");
        pover_plain(pr, w);
        PF(" > %" PRId64, k);
    }
    for (size_t i = 0; peer && i < w->norder; i++) {
        PF(" AND %s(", lead ? "lead" : "lag");
        q_pexpr(pr, w->order[i].expr);
        PF(", %" PRId64 ")", k);
        pover_plain(pr, w);
        P(" IS ");
        q_pexpr(pr, w->order[i].expr);
    }
    PF(" THEN %s(", lead ? "lead" : "lag");
    q_pexpr(pr, x);
    PF(", %" PRId64 ")", k);
    pover_plain(pr, w);
    P(" ELSE ");
    if (dflt != NULL)
        P(dflt);
    else
        q_pexpr(pr, e->args.v[2]);
    P(" END)");
}

/* ClickHouse's first_value and last_value skip NULLs and give the type's
 * default for an empty frame; SQLite's take the frame's first or last row.
 * They agree for a value that is never NULL over a frame that holds the
 * current row, which is what is accepted. */
bool q_pvalue_window_ok(q_printer_t *pr, const q_expr_t *e)
{
    q_frame_t f = frame_of(e->over);
    bool holds_current =
        f.kind == QW_RANGE || (bound_offset(&f.lo) <= 0 && bound_offset(&f.hi) >= 0);
    if (e->args.v[0]->nullable || !holds_current) {
        q_pfail(pr,
                "%.*s needs a value that is never NULL and a frame holding the current row "
                "(the stores skip NULLs and fill empty frames differently)",
                (int)e->text.len, e->text.p);
        return false;
    }
    return true;
}
