/*
 * print_fn_map.c - sumMap(keys, values): each key's values summed over the
 * rows, answered as a tuple of two arrays (the keys sorted, then their
 * sums), a key whose sum is zero left out, as ClickHouse answers it.
 * ClickHouse runs its own; SQLite gathers every row's two arrays with
 * json_group_array and libcommon's cm_sum_map (evstore_summap.c) sums them
 * in the same order (docs/endpoints.md "Arrays, tuples and lambdas").
 */
#include "query/print_fn_array.h"

#define ARG(i) (e->args.v[(i)])
#define P(s)   cm_buf_append_cstr(pr->out, (s))

/* ClickHouse's TabSeparated answer escapes a string key once more than the
 * reading undoes (print_fn_array.c's q_pout_open): doubled here. */
#define ESCAPED_KEYS                                                                               \
    "arrayMap(_t -> tuple(arrayMap(_e -> replaceAll(replaceAll(_e, '\\\\', '\\\\\\\\'), '\\'', "   \
    "'\\\\\\''), tupleElement(_t, 1)), tupleElement(_t, 2)), ["

void q_psum_map(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch && e->elem == Q_T_STRING && !q_ch_modern(pr)) {
        q_pfail(pr, "sumMap with string keys needs ClickHouse 21+ (this store runs 18.16)");
        return;
    }
    if (pr->ch) {
        q_psame(pr, "sumMap", e);
        return;
    }
    P("cm_sum_map(json_group_array(json_array(json(");
    q_pexpr(pr, ARG(0));
    P("), json(");
    q_pexpr(pr, ARG(1));
    P("))))");
}

const char *q_psum_map_out_open(q_printer_t *pr, const q_expr_t *e)
{
    if (e->kind == QE_CALL && e->ival == Q_FN_SUM_MAP) {
        if (e->elem != Q_T_STRING)
            return NULL;
        P(ESCAPED_KEYS);
        return "])[1]";
    }
    if (q_ch_modern(pr)) { /* 18.16 has no string keys: nothing to escape there */
        q_pfail(pr, "sumMap's answer can be answered on ClickHouse only from the SELECT that "
                    "computes it (its keys' type is not known through a subquery)");
    }
    return NULL;
}
