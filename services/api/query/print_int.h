/*
 * print_int.h - the printers' shared state (print.c: SELECT, FROM and
 * operators for both stores; print_fn.c: function calls; print_hogql.c:
 * HogQL text for column names).
 */
#ifndef API_QUERY_PRINT_INT_H
#define API_QUERY_PRINT_INT_H

#include "query/functions.h"
#include "query/resolve.h"

#define Q_MAX_SQL (4u << 20) /* printed text: CTEs are inlined, so it may outgrow the query */

typedef struct {
    const api_query_print_opts_t *o;
    bool ch; /* ClickHouse, else SQLite */
    cm_buf_t *out;
    api_query_sql_t *res;
    cm_buf_t *err;
    bool failed;
    const q_select_t *top; /* its columns keep the query's names (none do: see query.c) */
} q_printer_t;

void q_pfail(q_printer_t *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void q_pexpr(q_printer_t *pr, const q_expr_t *e);
void q_pselect(q_printer_t *pr, const q_select_t *s, bool top);
void q_pstring(q_printer_t *pr, cm_slice_t s);
void q_pident(q_printer_t *pr, cm_slice_t name);
/* The name column k of s gets in the SQL: c<id>_<k>, unique in the whole
 * query (ClickHouse 18.16 takes an alias as the whole query's, so two
 * subqueries' "c", or two columns a user named alike, would clash); the
 * runner names the columns from api_query_sql_t, not from the SQL. A
 * select set as pr->top would keep the query's own names. */
void q_pcolname(q_printer_t *pr, const q_select_t *s, size_t k);
/* e as a DateTime (a string or number is converted as toDateTime would). */
void q_pdatetime(q_printer_t *pr, const q_expr_t *e);
/* Prints a function call (print_fn.c), through the family files, each
 * true when the call was one of its functions: print_fn_agg.c (aggregates
 * and windows), print_fn_date.c, print_fn_string.c (strings and JSON),
 * print_fn_array.c; print_fn.c keeps conditions, numbers and conversions. */
void q_pcall(q_printer_t *pr, const q_expr_t *e);
bool q_pcall_agg(q_printer_t *pr, const q_expr_t *e);
bool q_pcall_date(q_printer_t *pr, const q_expr_t *e);
bool q_pcall_string(q_printer_t *pr, const q_expr_t *e);
bool q_pcall_array(q_printer_t *pr, const q_expr_t *e);
/* Shared by the family files: the arguments from one on, comma-separated;
 * name(args) as written; a string constant argument or a failure saying
 * what must be one. */
void q_pargs(q_printer_t *pr, const q_expr_t *e, size_t from);
void q_psame(q_printer_t *pr, const char *name, const q_expr_t *e);
bool q_pconst_string(q_printer_t *pr, const q_expr_t *e, const char *what, cm_slice_t *out);
/* print_fn_array.c: an array or tuple literal, a[i] and t.1, a lambda's
 * parameter; and the opening of an answer's column e, with the text that
 * closes it (NULL: nothing opened). */
void q_parray(q_printer_t *pr, const q_expr_t *e);
void q_pindex(q_printer_t *pr, const q_expr_t *e);
void q_plambda_param(q_printer_t *pr, const q_expr_t *e);
const char *q_pout_open(q_printer_t *pr, const q_expr_t *e);
/* SQLite: the json_each a SELECT's arrayJoin calls read, after its FROM;
 * [LEFT] ARRAY JOIN on both stores. */
void q_parray_joins(q_printer_t *pr, const q_select_t *s);
void q_parray_join_clause(q_printer_t *pr, const q_from_t *f);
/* The value of a placeholder, or NULL (the failure is reported). */
const api_query_value_t *q_pvalue(q_printer_t *pr, const q_expr_t *e);

#endif
