/*
 * resolve_s.c - the resolver's checks for part S's syntax (resolve.h):
 * set operators, named windows and frames, numbers(n) in FROM.
 */
#include <inttypes.h>
#include <string.h>

#include "query/resolve.h"

#define SL(s) (int)((s).len > 60 ? 60 : (s).len), (s).p

/* numbers(n) yields at most this many rows: a table function is for
 * filling gaps (days, buckets), not for making work. */
#define Q_MAX_NUMBERS 100000

const char *q_setop_name(q_setop_t op)
{
    switch (op) {
    case QS_UNION_ALL: return " UNION ALL ";
    case QS_UNION_DISTINCT: return " UNION DISTINCT ";
    case QS_UNION: return " UNION ";
    case QS_INTERSECT: return " INTERSECT ";
    case QS_INTERSECT_DISTINCT: return " INTERSECT DISTINCT ";
    case QS_EXCEPT: return " EXCEPT ";
    case QS_EXCEPT_DISTINCT: return " EXCEPT DISTINCT ";
    }
    return " UNION ALL ";
}

static bool is_intersect(q_setop_t op)
{
    return op == QS_INTERSECT || op == QS_INTERSECT_DISTINCT;
}

/* HogQL reads a chain left to right, while ClickHouse binds INTERSECT
 * tighter than UNION and EXCEPT: a chain that mixes them would answer
 * differently depending on who reads it, so it needs parentheses. */
bool q_resolve_setops(const q_select_t *s, cm_buf_t *err)
{
    for (size_t i = 1; i < s->nparts; i++) {
        if (s->ops[i] == QS_UNION) {
            cm_buf_appendf(err, "UNION needs ALL or DISTINCT: UNION ALL keeps duplicate rows, "
                                "UNION DISTINCT drops them");
            return false;
        }
        if (i > 1 && is_intersect(s->ops[i]) != is_intersect(s->ops[1])) {
            cm_buf_appendf(err, "INTERSECT mixed with UNION or EXCEPT needs parentheses around "
                                "the parts it joins");
            return false;
        }
    }
    return true;
}

static bool check_frame(const q_frame_t *f, cm_buf_t *err)
{
    if (f->kind == QW_NONE)
        return true;
    if (f->lo.kind == QW_UNBOUNDED_FOLLOWING || f->hi.kind == QW_UNBOUNDED_PRECEDING) {
        cm_buf_appendf(err, "A window frame starts before it ends: UNBOUNDED PRECEDING starts "
                            "it, UNBOUNDED FOLLOWING ends it");
        return false;
    }
    bool offset = f->lo.kind == QW_PRECEDING || f->lo.kind == QW_FOLLOWING ||
                  f->hi.kind == QW_PRECEDING || f->hi.kind == QW_FOLLOWING;
    if (f->kind == QW_RANGE && offset) {
        /* a RANGE offset is a distance in the ORDER BY value, whose types
         * the stores compare differently */
        cm_buf_appendf(err, "RANGE frames take UNBOUNDED and CURRENT ROW bounds only; use ROWS "
                            "for a number of rows");
        return false;
    }
    /* the end may not come before the start (both stores refuse it) */
    int lo = f->lo.kind == QW_UNBOUNDED_PRECEDING ? -2
             : f->lo.kind == QW_PRECEDING         ? -1
             : f->lo.kind == QW_CURRENT           ? 0
                                                  : 1;
    int hi = f->hi.kind == QW_UNBOUNDED_FOLLOWING ? 2
             : f->hi.kind == QW_FOLLOWING         ? 1
             : f->hi.kind == QW_CURRENT           ? 0
                                                  : -1;
    if (lo > hi || (lo == hi && lo == -1 && f->lo.n < f->hi.n) ||
        (lo == hi && lo == 1 && f->lo.n > f->hi.n)) {
        cm_buf_appendf(err, "A window frame must not end before it starts");
        return false;
    }
    return true;
}

bool q_resolve_window(struct api_query *q, const q_select_t *s, q_expr_t *e, cm_buf_t *err)
{
    (void)q;
    const q_window_t *w = e->over;
    if (w->ref.len > 0) {
        const q_window_t *def = NULL;
        for (size_t i = 0; i < s->nwindows && def == NULL; i++)
            if (cm_slice_eq(s->windows[i].name, w->ref))
                def = s->windows[i].w;
        if (def == NULL) {
            cm_buf_appendf(err, "Window '%.*s' is not defined (WINDOW %.*s AS (...))", SL(w->ref),
                           SL(w->ref));
            return false;
        }
        e->over = (q_window_t *)def; /* the printers see the definition */
        w = def;
    }
    return check_frame(&w->frame, err);
}

/* The one column numbers(n) has. */
/* The one column numbers(n) has; printed as num (print_s.c): ClickHouse
 * 18.16 mistook a derived column named number for the function's own in a
 * JOIN and matched nothing. */
static const q_col_t numbers_cols[] = {{"number", "num", Q_T_INT, false, false}};
static const q_table_t numbers_table = {"numbers", NULL, numbers_cols, 1, false, false};

/* A constant whole number computed from literals with + - * % and
 * negation (numbers(10 * 24)); false for anything else or an overflow. */
static bool const_int(const q_expr_t *e, int64_t *v)
{
    int64_t a, b;
    switch (e->kind) {
    case QE_INT: *v = e->ival; return true;
    case QE_NEG:
        return e->args.n == 1 && const_int(e->args.v[0], &a) && !__builtin_sub_overflow(0, a, v);
    case QE_BINARY:
        if (e->args.n != 2 || !const_int(e->args.v[0], &a) || !const_int(e->args.v[1], &b))
            return false;
        switch (e->op) {
        case QB_PLUS: return !__builtin_add_overflow(a, b, v);
        case QB_MINUS: return !__builtin_sub_overflow(a, b, v);
        case QB_MUL: return !__builtin_mul_overflow(a, b, v);
        case QB_MOD:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return false;
            *v = a % b; /* truncated, as ClickHouse's modulo of integers */
            return true;
        default: return false;
        }
    default: return false;
    }
}

const q_table_t *q_resolve_numbers(q_from_t *f, cm_buf_t *err)
{
    const q_list_t *a = &f->fn_args;
    int64_t v[2] = {0, 0};
    if (a->n < 1 || a->n > 2) {
        cm_buf_appendf(err, "Table function 'numbers' expects 1 or 2 arguments, found %zu", a->n);
        return NULL;
    }
    for (size_t i = 0; i < a->n; i++)
        if (!const_int(a->v[i], &v[i]) || v[i] < 0) {
            cm_buf_appendf(err, "numbers() takes whole numbers, 0 or more, as in numbers(10) or "
                                "numbers(5, 10)");
            return NULL;
        }
    f->num_start = a->n == 2 ? v[0] : 0;
    f->num_count = v[a->n - 1];
    if (f->num_count > Q_MAX_NUMBERS || f->num_start > INT64_MAX - Q_MAX_NUMBERS) {
        cm_buf_appendf(err, "numbers() yields at most %d rows", Q_MAX_NUMBERS);
        return NULL;
    }
    return &numbers_table;
}

void q_print_hogql_frame(const q_frame_t *f, cm_buf_t *out)
{
    static const char *const names[] = {"CURRENT ROW", "UNBOUNDED PRECEDING", "UNBOUNDED FOLLOWING",
                                        " PRECEDING", " FOLLOWING"};
    if (f->kind == QW_NONE)
        return;
    cm_buf_appendf(out, " %s BETWEEN ", f->kind == QW_ROWS ? "ROWS" : "RANGE");
    const q_bound_t *b[2] = {&f->lo, &f->hi};
    for (int i = 0; i < 2; i++) {
        if (i)
            cm_buf_appendf(out, " AND ");
        if (b[i]->kind == QW_PRECEDING || b[i]->kind == QW_FOLLOWING)
            cm_buf_appendf(out, "%" PRId64, b[i]->n);
        cm_buf_appendf(out, "%s", names[b[i]->kind]);
    }
}
