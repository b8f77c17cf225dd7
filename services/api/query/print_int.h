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
    const q_select_t *top;  /* its columns keep the query's names (none do: see query.c) */
    bool in_join_on;        /* a JOIN's ON: comparisons print plain, as HogQL prints them there */
    const q_window_t *over; /* print_fn_agg.c: the OVER an aggregate being printed still owes */
    const q_select_t *root; /* the query: its columns are the answer's */
    const q_from_t *outer_join; /* print_join.c: the SELECT's outer JOIN, on 18.16 */
    /* print_select.c: the answer's column, or a GROUP BY / ORDER BY key, being
     * printed (its value is used as it is: cityHash64's digits on SQLite) */
    const q_expr_t *as_is;
    const q_select_t *cur; /* print_select.c: the plain SELECT being printed, if any */
} q_printer_t;

/* ClickHouse 21.8 or later (API_QUERY_CH_21, API_QUERY_CH_24): what 18.16
 * refuses prints; q_ch_24: the new analyzer's rules and 24's functions. */
static inline bool q_ch_modern(const q_printer_t *pr)
{
    return pr->o->clickhouse_version >= API_QUERY_CH_21;
}
static inline bool q_ch_24(const q_printer_t *pr)
{
    return pr->o->clickhouse_version >= API_QUERY_CH_24;
}

void q_pfail(q_printer_t *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void q_pexpr(q_printer_t *pr, const q_expr_t *e);
void q_pselect(q_printer_t *pr, const q_select_t *s, bool top);
bool q_is_output(const q_printer_t *pr, const q_select_t *s);
void q_pstring(q_printer_t *pr, cm_slice_t s);
void q_pident(q_printer_t *pr, cm_slice_t name);
/* The name column k of s gets in the SQL: c<id>_<k>, unique in the whole
 * query (ClickHouse 18.16 takes an alias as the whole query's, so two
 * subqueries' "c", or two columns a user named alike, would clash); the
 * runner names the columns from api_query_sql_t, not from the SQL. A
 * select set as pr->top would keep the query's own names. */
void q_pcolname(q_printer_t *pr, const q_select_t *s, size_t k);
/* e as a DateTime (a string or number is converted as toDateTime would,
 * in the project's zone); a stored DateTime column (print_tz.c). */
void q_pdatetime(q_printer_t *pr, const q_expr_t *e);
void q_pstored_datetime(q_printer_t *pr, unsigned source, const char *column);
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
/* Part S (print_s.c): a set's parts joined by its operators; numbers(n)
 * as a derived table named s<id>; a window's frame. */
void q_pset(q_printer_t *pr, const q_select_t *s, bool answer);
/* A set's part: answer says its columns are the answer's (print_select.c). */
void q_pselect_part(q_printer_t *pr, const q_select_t *s, bool answer);
void q_pnumbers(q_printer_t *pr, const q_from_t *f);
void q_pframe(q_printer_t *pr, const q_window_t *w);
/* lagInFrame / leadInFrame and their OVER on SQLite, ClickHouse's answer. */
void q_plag_sqlite(q_printer_t *pr, const q_expr_t *e, bool lead);
/* first_value / last_value where both stores agree (else a failure). */
bool q_pvalue_window_ok(q_printer_t *pr, const q_expr_t *e);
/* Time zones (print_tz.c): a DateTime's zone (the project's unless a
 * function names one); SQLite's wall clock of x in its zone (q_plocal) and
 * the UTC instant of a wall-clock text printed between q_putc_open/close. */
bool q_zone_is_utc(cm_slice_t zone);
cm_slice_t q_project_zone(const q_printer_t *pr);
cm_slice_t q_zone_of(const q_printer_t *pr, const q_expr_t *e);
cm_slice_t q_fn_zone_arg(const q_expr_t *e);
bool q_zone_arg(q_printer_t *pr, const q_expr_t *e, cm_slice_t *out);
void q_plocal(q_printer_t *pr, const q_expr_t *x);
void q_plocal_in(q_printer_t *pr, const q_expr_t *x, cm_slice_t zone);
void q_putc_open(q_printer_t *pr, cm_slice_t zone);
void q_putc_close(q_printer_t *pr, cm_slice_t zone);
/* Dates (print_fn_date.c): an interval (INTERVAL n unit, toIntervalDay(n)),
 * and a +/- interval; the zone a call computes in (its argument i, else
 * its value's); SQLite's pre, x's wall clock, post (its $x x again); the
 * conversions (print_fn_date_conv.c). */
bool q_is_interval(const q_expr_t *e);
void q_pinterval_math(q_printer_t *pr, const q_expr_t *e);
bool q_pdate_call_zone(q_printer_t *pr, const q_expr_t *e, size_t i, cm_slice_t *zone);
void q_pdate_lite_part(q_printer_t *pr, const char *pre, const char *post, const q_expr_t *x,
                       cm_slice_t zone);
bool q_pcall_date_conv(q_printer_t *pr, const q_expr_t *e);
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
/* Whether e (through its aliases, not its subqueries) calls arrayJoin. */
bool q_has_array_join(const q_expr_t *e);
void q_parray_join_clause(q_printer_t *pr, const q_from_t *f);
/* The value of a placeholder, or NULL (the failure is reported). */
const api_query_value_t *q_pvalue(q_printer_t *pr, const q_expr_t *e);
/* A scalar value: a bound parameter on SQLite, an escaped literal on ClickHouse. */
void q_pvalue_scalar(q_printer_t *pr, const api_query_value_t *v);
/* The type e will have where it is printed (a placeholder: its value's). */
q_type_t q_ptype_of(q_printer_t *pr, const q_expr_t *e);
/* One side of a comparison, converted to the other side's type as ClickHouse would. */
void q_pcompared(q_printer_t *pr, const q_expr_t *e, q_type_t other);
/* print_join.c, ClickHouse 18.16: the outer JOIN of s (else NULL); the
 * source id whose marker e, a key of the JOIN's NULL side, is read
 * through (else 0); whether side f gets the marker column. */
const q_from_t *q_outer_join(const q_printer_t *pr, const q_select_t *s);
unsigned q_join_null_key(const q_printer_t *pr, const q_expr_t *e);
bool q_join_marked(const q_printer_t *pr, const q_from_t *f);
/* The divisor of intDiv or % as ClickHouse has it: a 0 fails the query. */
void q_pdivisor(q_printer_t *pr, const q_expr_t *e);
/* print_compare.c: comparisons, LIKE, IN, BETWEEN and || printed two-valued,
 * as HogQL prints them (a NULL side never makes the answer NULL). */
void q_pcompare(q_printer_t *pr, const q_expr_t *e);
void q_pbetween(q_printer_t *pr, const q_expr_t *e);
/* A call lowered from a match operator (e->op_form: a =~ b is match(a, b),
 * a =~* b match(a, concat('(?i)', b)); !~ is NOT of it): printed by
 * q_pcall, two-valued as =: both sides NULL give 1, one gives 0. */
void q_pcall_op(q_printer_t *pr, const q_expr_t *e);

#endif
