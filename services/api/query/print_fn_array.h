/*
 * print_fn_array.h - what print_fn_array.c (arrays, tuples, array-valued
 * aggregates) and print_fn_lambda.c (lambdas, arrayJoin, ARRAY JOIN)
 * share; the printers' common state is print_int.h's.
 */
#ifndef API_QUERY_PRINT_FN_ARRAY_H
#define API_QUERY_PRINT_FN_ARRAY_H

#include "query/print_int.h"

/* SQLite: ClickHouse's default of an element type (an element past the end). */
const char *q_plite_default(q_type_t t);
/* SQLite: the column v of a subquery of elements, as json_group_array takes
 * it (an array or a tuple as JSON, not text). */
void q_plite_v(q_printer_t *pr, q_type_t t);
/* Whether e computes an aggregate of its SELECT (not inside a subquery). */
bool q_phas_aggregate(const q_expr_t *e);
/* arrayMap and the other functions that may take a lambda (print_fn_lambda.c). */
void q_plambda_call(q_printer_t *pr, const q_expr_t *e, int id);
/* sumMap(keys, values) (print_fn_map.c), and what opens its answer for the
 * reading on ClickHouse: the text closing it, or NULL (q_pout_open). */
void q_psum_map(q_printer_t *pr, const q_expr_t *e);
const char *q_psum_map_out_open(q_printer_t *pr, const q_expr_t *e);

#endif
