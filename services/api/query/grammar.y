/*
 * grammar.y - HogQL's SELECT, as a lemon (LALR(1)) grammar. The build runs
 * Debian's `lemon` on it into build/.../gen/ (grammar.c, grammar.h); the
 * tokens come from tokenize.re.
 *
 * What it accepts is PostHog's HogQL SELECT (its ANTLR grammar,
 * HogQLParser.g4, read for the syntax) minus what neither store here can
 * run: SAMPLE, FINAL, SETTINGS,
 * ANY/ASOF/SEMI/ANTI joins. Those are syntax errors. A lambda (x -> body)
 * parses as an expression; resolve.c accepts it only where an array
 * function takes one. Names are not checked here: resolve.c decides what a
 * table, field or function is; parse_s.c lowers the spellings HogQL adds
 * (operators as calls, ??, regex operators).
 *
 * Precedence, lowest first, follows HogQL's: ternary, OR, AND, NOT, ??,
 * the comparisons (=, !=, <, LIKE, IN, IS, BETWEEN, =~ and the other
 * regex operators), + - ||, * / %, unary minus, then postfix a[i], a.b,
 * a?.b and a?.[i].
 *
 * The parser's stack is fixed (%stack_size): a query nested deeper than
 * it fails with a clear error instead of growing without bound; parse.c
 * bounds the tree's depth as well.
 */

%include {
#include <assert.h>
#include <string.h>

#include "query/query_int.h"
}

%name qParse
%token_prefix QT_
%token_type {q_token_t}
%extra_argument {q_parse_t *p}
%stack_size 400
%start_symbol query

%syntax_error {
    (void)yymajor;
    q_syntax_error(p, &TOKEN);
}
%stack_overflow {
    q_fail(p, "the query is nested too deeply");
}
%parse_failure {
    if (!p->failed)
        q_fail(p, "syntax error");
}

%token SELECT DISTINCT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET WITH AS UNION ALL
       JOIN INNER LEFT RIGHT FULL OUTER CROSS ON USING CASE WHEN THEN ELSE END INTERVAL
       CAST OVER PARTITION NULL TRUE FALSE ASC DESC NULLS FIRST LAST.
%token PREWHERE.
%token INTERSECT EXCEPT WINDOW ROWS RANGE UNBOUNDED PRECEDING FOLLOWING CURRENT ROW TIES
       COHORT LEADING TRAILING BOTH.

/* Keywords that are also usable as names where no keyword fits (not WINDOW:
 * after a table it would be read as the alias). */
%fallback ID FIRST LAST NULLS ASC DESC PARTITION OVER.
%fallback ID ROWS RANGE UNBOUNDED PRECEDING FOLLOWING CURRENT ROW TIES COHORT LEADING
          TRAILING BOTH.
/* ARRAY JOIN (part A of issue 28): a keyword, not a name (as a fallback
 * to a name, "FROM t ARRAY JOIN" would read ARRAY as t's alias) */
%token ARRAY.

%right ARROW.
%right QUESTION COLON.
%left OR.
%left AND.
%right NOT.
%left NULLISH.
%left IS LIKE ILIKE BETWEEN IN EQ NE REGEX IREGEX NREGEX NIREGEX.
%left LT LE GT GE.
%left PLUS MINUS CONCAT.
%left STAR SLASH PERCENT.
%right UMINUS.
%left LB DOT NULLDOT FLOAT.

query ::= qset(S). { p->result = S; }

/* ---- SELECT and set operations ----------------------------------------------------- */

/* A chain of SELECTs joined by set operators, read left to right as
 * HogQL does. A part may be a parenthesized chain; a chain that ends with
 * one may take ORDER BY and LIMIT for the whole (a chain that ends with a
 * plain SELECT gives them to that SELECT, as HogQL does). Expressions
 * take only plain chains ((SELECT ...) in parentheses is already a
 * subquery there). */
%type set {q_select_t *}
set(A) ::= select(B). { A = B; }
set(A) ::= set(B) setop(K) select(C). { A = q_setop(p, B, K, C); }

%type pset {q_select_t *}
pset(A) ::= LP qset(B) RP. { A = q_paren(p, B); }
pset(A) ::= set(B) setop(K) LP qset(C) RP. { A = q_setop(p, B, K, q_paren(p, C)); }
pset(A) ::= pset(B) setop(K) LP qset(C) RP. { A = q_setop(p, B, K, q_paren(p, C)); }

%type qset {q_select_t *}
qset(A) ::= set(B). { A = B; }
qset(A) ::= pset(B) order_opt(O) limits(L). { A = q_set_tail(p, B, &O, &L); }
qset(A) ::= pset(B) setop(K) select(C). { A = q_setop(p, B, K, C); }

%type setop {int}
setop(A) ::= UNION ALL. { A = QS_UNION_ALL; }
setop(A) ::= UNION DISTINCT. { A = QS_UNION_DISTINCT; }
setop(A) ::= UNION. { A = QS_UNION; }
setop(A) ::= INTERSECT. { A = QS_INTERSECT; }
setop(A) ::= INTERSECT ALL. { A = QS_INTERSECT; }
setop(A) ::= INTERSECT DISTINCT. { A = QS_INTERSECT_DISTINCT; }
setop(A) ::= EXCEPT. { A = QS_EXCEPT; }
setop(A) ::= EXCEPT ALL. { A = QS_EXCEPT; }
setop(A) ::= EXCEPT DISTINCT. { A = QS_EXCEPT_DISTINCT; }

%type select {q_select_t *}
select(A) ::= with_opt(W) SELECT distinct_opt(D) columns(C) from_opt(F) where_opt(WH)
              group_opt(G) having_opt(H) windows_opt(N) order_opt(O) limits(L). {
    A = q_select(p, &W, D, &C, F, WH, &G, H, &O, &L);
    q_select_windows(p, A, &N);
}

/* WINDOW w AS (...), ...: named windows for OVER w. */
%type windows_opt {q_wdefs_t}
windows_opt(A) ::= . { A = (q_wdefs_t){0}; }
windows_opt(A) ::= WINDOW wdefs(B). { A = B; }

%type wdefs {q_wdefs_t}
wdefs(A) ::= name(N) AS LP window(W) RP. { A = (q_wdefs_t){0}; q_add_wdef(p, &A, N, W); }
wdefs(A) ::= wdefs(B) COMMA name(N) AS LP window(W) RP. { A = B; q_add_wdef(p, &A, N, W); }

%type with_opt {q_ctes_t}
with_opt(A) ::= . { A = (q_ctes_t){0}; }
with_opt(A) ::= WITH ctes(B). { A = B; }

%type ctes {q_ctes_t}
ctes(A) ::= cte(B). { A = (q_ctes_t){0}; q_add_cte(p, &A, &B); }
ctes(A) ::= ctes(B) COMMA cte(C). { A = B; q_add_cte(p, &A, &C); }

/* name AS (SELECT ...), or expr AS name. Both start with an expression, so
 * which one is told by what follows AS. */
%type cte {q_cte_t}
cte(A) ::= expr(E) AS LP qset(S) RP. { A = q_cte_sub(p, E, S); }
cte(A) ::= expr(E) AS name(N). { A = (q_cte_t){.name = N, .expr = E}; }

%type distinct_opt {bool}
distinct_opt(A) ::= . { A = false; }
distinct_opt(A) ::= DISTINCT. { A = true; }

%type columns {q_cols_t}
columns(A) ::= column(B). { A = (q_cols_t){0}; q_add_col(p, &A, &B); }
columns(A) ::= columns(B) COMMA column(C). { A = B; q_add_col(p, &A, &C); }

%type column {q_column_t}
column(A) ::= expr(E). { A = (q_column_t){.expr = E}; }
column(A) ::= expr(E) AS name(N). { A = (q_column_t){.expr = E, .alias = N}; }
column(A) ::= expr(E) ID(N). { A = (q_column_t){.expr = E, .alias = q_ident(p, N.text)}; }
column(A) ::= expr(E) QIDENT(N). { A = (q_column_t){.expr = E, .alias = q_ident(p, N.text)}; }
column(A) ::= STAR. { A = (q_column_t){.expr = q_star(p, NULL)}; }
column(A) ::= expr(T) DOT STAR. { A = (q_column_t){.expr = q_star(p, T)}; }

%type name {cm_slice_t}
name(A) ::= ID(T). { A = q_ident(p, T.text); }
name(A) ::= QIDENT(T). { A = q_ident(p, T.text); }

/* ---- FROM and JOIN --------------------------------------------------------------- */

%type from_opt {q_from_t *}
from_opt(A) ::= . { A = NULL; }
from_opt(A) ::= FROM joined(B). { A = B; }
/* [LEFT] ARRAY JOIN arr [AS x]: a row per element, at the end of FROM */
from_opt(A) ::= FROM array_joined(B). { A = B; }

/* several arrays in one clause are zipped: ARRAY JOIN a AS x, b AS y */
%type array_joined {q_from_t *}
array_joined(A) ::= joined(B) ARRAY JOIN expr(E) alias_opt(N). { A = q_array_join(p, false, B, E, N); }
array_joined(A) ::= joined(B) LEFT ARRAY JOIN expr(E) alias_opt(N). { A = q_array_join(p, true, B, E, N); }
array_joined(A) ::= joined(B) INNER ARRAY JOIN expr(E) alias_opt(N). { A = q_array_join(p, false, B, E, N); }
array_joined(A) ::= array_joined(B) COMMA expr(E) alias_opt(N). { A = q_array_join_zip(p, B, E, N); }

%type joined {q_from_t *}
joined(A) ::= table_ref(B). { A = B; }
joined(A) ::= joined(L) join_op(J) JOIN table_ref(R) ON expr(E). {
    A = q_join(p, J, L, R, E, NULL);
}
joined(A) ::= joined(L) join_op(J) JOIN table_ref(R) USING LP exprs(U) RP. {
    A = q_join(p, J, L, R, NULL, &U);
}
joined(A) ::= joined(L) CROSS JOIN table_ref(R). { A = q_join(p, QJ_CROSS, L, R, NULL, NULL); }
joined(A) ::= joined(L) COMMA table_ref(R). { A = q_join(p, QJ_CROSS, L, R, NULL, NULL); }

%type join_op {int}
join_op(A) ::= . { A = QJ_INNER; }
join_op(A) ::= INNER. { A = QJ_INNER; }
join_op(A) ::= LEFT. { A = QJ_LEFT; }
join_op(A) ::= LEFT OUTER. { A = QJ_LEFT; }
join_op(A) ::= RIGHT. { A = QJ_RIGHT; }
join_op(A) ::= RIGHT OUTER. { A = QJ_RIGHT; }
join_op(A) ::= FULL. { A = QJ_FULL; }
join_op(A) ::= FULL OUTER. { A = QJ_FULL; }

%type table_ref {q_from_t *}
table_ref(A) ::= table_name(N) alias_opt(L). { A = q_table(p, N, L); }
table_ref(A) ::= LP qset(S) RP alias_opt(L). { A = q_from_sub(p, S, L); }
/* numbers(n), numbers(a, n): a table function (resolve.c allows only these) */
table_ref(A) ::= name(N) LP exprs(X) RP alias_opt(L). { A = q_table_fn(p, N, &X, L); }

/* db.table is accepted here so that the resolver can refuse it by name. */
%type table_name {cm_slice_t}
table_name(A) ::= name(B). { A = B; }
table_name(A) ::= name(B) DOT name(C). { A = q_dotted(p, B, C); }

%type alias_opt {cm_slice_t}
alias_opt(A) ::= . { A = (cm_slice_t){0}; }
alias_opt(A) ::= AS name(B). { A = B; }
alias_opt(A) ::= name(B). { A = B; }

/* ---- WHERE, GROUP BY, HAVING, ORDER BY, LIMIT ---------------------------------------- */

%type where_opt {q_expr_t *}
where_opt(A) ::= . { A = NULL; }
where_opt(A) ::= WHERE expr(B). { A = B; }
/* PREWHERE is ClickHouse's hint to read its columns first: the rows are
 * WHERE's, so it is one more condition */
where_opt(A) ::= PREWHERE expr(B). { A = B; }
where_opt(A) ::= PREWHERE expr(B) WHERE expr(C). { A = q_binary(p, QB_AND, B, C); }

%type group_opt {q_list_t}
group_opt(A) ::= . { A = (q_list_t){0}; }
group_opt(A) ::= GROUP BY exprs(B). { A = B; }

%type having_opt {q_expr_t *}
having_opt(A) ::= . { A = NULL; }
having_opt(A) ::= HAVING expr(B). { A = B; }

%type order_opt {q_orders_t}
order_opt(A) ::= . { A = (q_orders_t){0}; }
order_opt(A) ::= ORDER BY orders(B). { A = B; }

%type orders {q_orders_t}
orders(A) ::= order(B). { A = (q_orders_t){0}; q_add_order(p, &A, &B); }
orders(A) ::= orders(B) COMMA order(C). { A = B; q_add_order(p, &A, &C); }

%type order {q_order_t}
order(A) ::= expr(E) dir(D) nulls(N). { A = (q_order_t){.expr = E, .desc = D, .nulls = N}; }

/* ClickHouse puts NULLs last whatever the direction, SQLite first in
 * ascending order; the printers write the order out (see print.c). */
%type nulls {int}
nulls(A) ::= . { A = Q_NULLS_DEFAULT; }
nulls(A) ::= NULLS FIRST. { A = Q_NULLS_FIRST; }
nulls(A) ::= NULLS LAST. { A = Q_NULLS_LAST; }

%type dir {bool}
dir(A) ::= . { A = false; }
dir(A) ::= ASC. { A = false; }
dir(A) ::= DESC. { A = true; }

/* LIMIT n BY x comes before the plain LIMIT; both start with LIMIT n, so
 * they are told apart after it. */
%type limits {q_limits_t}
limits(A) ::= plain_limit(B). { A = B; }
limits(A) ::= LIMIT expr(N) BY exprs(X) plain_limit(B). {
    A = B; A.by_n = N; A.by = X;
}
limits(A) ::= LIMIT expr(N) OFFSET expr(O) BY exprs(X) plain_limit(B). {
    A = B; A.by_n = N; A.by_offset = O; A.by = X;
}
limits(A) ::= LIMIT expr(N) COMMA expr(M) BY exprs(X) plain_limit(B). {
    A = B; A.by_n = M; A.by_offset = N; A.by = X;
}

%type plain_limit {q_limits_t}
plain_limit(A) ::= . { A = (q_limits_t){0}; }
plain_limit(A) ::= OFFSET expr(O). { A = (q_limits_t){.offset = O}; }
plain_limit(A) ::= LIMIT expr(N) plain_offset(O). { A = (q_limits_t){.n = N, .offset = O}; }
plain_limit(A) ::= LIMIT expr(O) COMMA expr(N). { A = (q_limits_t){.n = N, .offset = O}; }
plain_limit(A) ::= LIMIT expr(N) WITH TIES plain_offset(O). {
    A = (q_limits_t){.n = N, .offset = O, .ties = true};
}
plain_limit(A) ::= LIMIT expr(O) COMMA expr(N) WITH TIES. {
    A = (q_limits_t){.n = N, .offset = O, .ties = true};
}

%type plain_offset {q_expr_t *}
plain_offset(A) ::= . { A = NULL; }
plain_offset(A) ::= OFFSET expr(O). { A = O; }

/* ---- expressions ------------------------------------------------------------------- */

%type exprs {q_list_t}
exprs(A) ::= expr(B). { A = (q_list_t){0}; q_push(p, &A, B); }
exprs(A) ::= exprs(B) COMMA expr(C). { A = B; q_push(p, &A, C); }

%type expr {q_expr_t *}
expr(A) ::= expr(B) OR expr(C). { A = q_binary(p, QB_OR, B, C); }
expr(A) ::= expr(B) AND expr(C). { A = q_binary(p, QB_AND, B, C); }
expr(A) ::= NOT expr(B). { A = q_unary(p, QE_NOT, B); }
expr(A) ::= expr(B) EQ expr(C). { A = q_binary(p, QB_EQ, B, C); }
expr(A) ::= expr(B) NE expr(C). { A = q_binary(p, QB_NE, B, C); }
expr(A) ::= expr(B) LT expr(C). { A = q_binary(p, QB_LT, B, C); }
expr(A) ::= expr(B) LE expr(C). { A = q_binary(p, QB_LE, B, C); }
expr(A) ::= expr(B) GT expr(C). { A = q_binary(p, QB_GT, B, C); }
expr(A) ::= expr(B) GE expr(C). { A = q_binary(p, QB_GE, B, C); }
expr(A) ::= expr(B) LIKE expr(C). { A = q_binary(p, QB_LIKE, B, C); }
expr(A) ::= expr(B) NOT LIKE expr(C). [LIKE] { A = q_binary(p, QB_NOT_LIKE, B, C); }
expr(A) ::= expr(B) ILIKE expr(C). { A = q_binary(p, QB_ILIKE, B, C); }
expr(A) ::= expr(B) NOT ILIKE expr(C). [ILIKE] { A = q_binary(p, QB_NOT_ILIKE, B, C); }
expr(A) ::= expr(B) IN expr(C). { A = q_binary(p, QB_IN, B, C); }
expr(A) ::= expr(B) NOT IN expr(C). [IN] { A = q_binary(p, QB_NOT_IN, B, C); }
expr(A) ::= expr(B) IN COHORT expr(C). [IN] { A = q_cohort(p, B, C, false); }
expr(A) ::= expr(B) NOT IN COHORT expr(C). [IN] { A = q_cohort(p, B, C, true); }
expr(A) ::= expr(B) REGEX expr(C). { A = q_regex(p, B, C, false, false); }
expr(A) ::= expr(B) IREGEX expr(C). { A = q_regex(p, B, C, true, false); }
expr(A) ::= expr(B) NREGEX expr(C). { A = q_regex(p, B, C, false, true); }
expr(A) ::= expr(B) NIREGEX expr(C). { A = q_regex(p, B, C, true, true); }
expr(A) ::= expr(B) NULLISH expr(C). { A = q_nullish(p, B, C); }
expr(A) ::= expr(B) IS NULL. { A = q_unary(p, QE_IS_NULL, B); }
expr(A) ::= expr(B) IS NOT NULL. [IS] { A = q_unary(p, QE_IS_NULL, B); A->negated = true; }
expr(A) ::= expr(B) BETWEEN expr(C) AND expr(D). [BETWEEN] { A = q_between(p, B, C, D, false); }
expr(A) ::= expr(B) NOT BETWEEN expr(C) AND expr(D). [BETWEEN] { A = q_between(p, B, C, D, true); }
expr(A) ::= expr(B) PLUS expr(C). { A = q_binary(p, QB_PLUS, B, C); }
expr(A) ::= expr(B) MINUS expr(C). { A = q_binary(p, QB_MINUS, B, C); }
expr(A) ::= expr(B) CONCAT expr(C). { A = q_binary(p, QB_CONCAT, B, C); }
expr(A) ::= expr(B) STAR expr(C). { A = q_binary(p, QB_MUL, B, C); }
expr(A) ::= expr(B) SLASH expr(C). { A = q_binary(p, QB_DIV, B, C); }
expr(A) ::= expr(B) PERCENT expr(C). { A = q_binary(p, QB_MOD, B, C); }
expr(A) ::= MINUS expr(B). [UMINUS] { A = q_negate(p, B); }
expr(A) ::= PLUS expr(B). [UMINUS] { A = B; }
expr(A) ::= expr(B) QUESTION expr(C) COLON expr(D). [QUESTION] { A = q_ternary(p, B, C, D); }
expr(A) ::= expr(B) LB expr(C) RB. { A = q_index(p, B, C); }
expr(A) ::= expr(B) DOT name(N). { A = q_field_append(p, B, N); }
/* a?.b, a?.[i]: null-safe access; a missing value is NULL here anyway */
expr(A) ::= expr(B) NULLDOT name(N). { A = q_field_append(p, B, N); }
expr(A) ::= expr(B) NULLDOT LB expr(C) RB. [LB] { A = q_index(p, B, C); }
/* t?.2: the tokenizer reads "?." then 2; the member's text is ".2" */
expr(A) ::= expr(B) NULLDOT INTEGER(T). [DOT] { A = q_tuple_member(p, B, (cm_slice_t){T.text.p - 1, T.text.len + 1}); }
/* t.1: the tokenizer reads ".1" as a number */
expr(A) ::= expr(B) FLOAT(T). [DOT] { A = q_tuple_member(p, B, T.text); }
expr(A) ::= LP expr(B) RP. { A = B; }
/* x -> body, (x, y) -> body: q_lambda checks the left side is names */
expr(A) ::= expr(B) ARROW expr(C). { A = q_lambda(p, B, C); }
expr(A) ::= LP exprs(B) COMMA expr(C) RP. { A = q_list_expr(p, QE_TUPLE, &B, C); }
expr(A) ::= LP set(S) RP. { A = q_subquery(p, S); }
/* Operators written as calls whose names are keywords: and(a, b), or(),
 * in(), like(), ilike() (not(x) is NOT (x) already); parse.c lowers them
 * and equals(), plus(), ... to the operators' nodes. */
expr(A) ::= AND(T) LP exprs(X) RP. { A = q_call(p, T.text, NULL, &X, false); }
expr(A) ::= OR(T) LP exprs(X) RP. { A = q_call(p, T.text, NULL, &X, false); }
expr(A) ::= IN(T) LP exprs(X) RP. { A = q_call(p, T.text, NULL, &X, false); }
expr(A) ::= LIKE(T) LP exprs(X) RP. { A = q_call(p, T.text, NULL, &X, false); }
expr(A) ::= ILIKE(T) LP exprs(X) RP. { A = q_call(p, T.text, NULL, &X, false); }
/* trim(LEADING x FROM y), TRAILING, BOTH */
expr(A) ::= name(N) LP trim_side(D) expr(X) FROM expr(Y) RP. { A = q_trim(p, N, D, X, Y); }
expr(A) ::= LB RB. { A = q_list_expr(p, QE_ARRAY, NULL, NULL); }
expr(A) ::= LB exprs(B) RB. { A = q_list_expr(p, QE_ARRAY, &B, NULL); }
expr(A) ::= LC expr(B) RC. { A = q_placeholder(p, B); }
expr(A) ::= name(N). { A = q_field(p, N); }
expr(A) ::= INTEGER(T). { A = q_number(p, T.text); }
expr(A) ::= FLOAT(T). { A = q_number(p, T.text); }
expr(A) ::= STRING(T). { A = q_string(p, T.text); }
expr(A) ::= NULL. { A = q_new(p, QE_NULL); }
expr(A) ::= TRUE. { A = q_new(p, QE_BOOL); if (A) A->ival = 1; }
expr(A) ::= FALSE. { A = q_new(p, QE_BOOL); }
expr(A) ::= INTERVAL expr(N) ID(U). [UMINUS] { A = q_interval(p, N, U.text); }
expr(A) ::= CAST LP expr(B) AS name(T) RP. { A = q_cast(p, B, T); }
expr(A) ::= CASE case_operand(O) whens(W) else_opt(E) END. { A = q_case(p, O, &W, E); }

/* Calls: f(), f(args), f(DISTINCT args), f(*), f(params)(args), and any of
 * them OVER (window). */
expr(A) ::= call(B). { A = B; }
expr(A) ::= call(B) OVER LP window(W) RP. { A = q_over(p, B, W); }
expr(A) ::= call(B) OVER name(N). { A = q_over(p, B, q_window_ref(p, N)); }

%type trim_side {int}
trim_side(A) ::= LEADING. { A = 1; }
trim_side(A) ::= TRAILING. { A = 2; }
trim_side(A) ::= BOTH. { A = 3; }

%type call {q_expr_t *}
call(A) ::= name(N) LP RP. { A = q_call(p, N, NULL, NULL, false); }
call(A) ::= name(N) LP exprs(X) RP. { A = q_call(p, N, NULL, &X, false); }
call(A) ::= name(N) LP DISTINCT exprs(X) RP. { A = q_call(p, N, NULL, &X, true); }
call(A) ::= name(N) LP STAR RP. { A = q_call(p, N, NULL, NULL, false); if (A) A->ival = 1; }
call(A) ::= name(N) LP exprs(P) RP LP exprs(X) RP. { A = q_call(p, N, &P, &X, false); }
call(A) ::= name(N) LP exprs(P) RP LP RP. { A = q_call(p, N, &P, NULL, false); }

%type window {q_window_t *}
window(A) ::= partition_opt(P) order_opt(O) frame_opt(F). { A = q_window(p, &P, &O); A->frame = F; }

/* ROWS|RANGE bound, or ROWS|RANGE BETWEEN bound AND bound */
%type frame_opt {q_frame_t}
frame_opt(A) ::= . { A = (q_frame_t){0}; }
frame_opt(A) ::= frame_kind(K) bound(B). {
    A = (q_frame_t){.kind = K, .lo = B, .hi = {.kind = QW_CURRENT}};
}
frame_opt(A) ::= frame_kind(K) BETWEEN bound(B) AND bound(C). {
    A = (q_frame_t){.kind = K, .lo = B, .hi = C};
}

%type frame_kind {int}
frame_kind(A) ::= ROWS. { A = QW_ROWS; }
frame_kind(A) ::= RANGE. { A = QW_RANGE; }

%type bound {q_bound_t}
bound(A) ::= CURRENT ROW. { A = (q_bound_t){.kind = QW_CURRENT}; }
bound(A) ::= UNBOUNDED PRECEDING. { A = (q_bound_t){.kind = QW_UNBOUNDED_PRECEDING}; }
bound(A) ::= UNBOUNDED FOLLOWING. { A = (q_bound_t){.kind = QW_UNBOUNDED_FOLLOWING}; }
bound(A) ::= INTEGER(T) PRECEDING. { A = q_bound(p, T.text, QW_PRECEDING); }
bound(A) ::= INTEGER(T) FOLLOWING. { A = q_bound(p, T.text, QW_FOLLOWING); }

%type partition_opt {q_list_t}
partition_opt(A) ::= . { A = (q_list_t){0}; }
partition_opt(A) ::= PARTITION BY exprs(B). { A = B; }

%type case_operand {q_expr_t *}
case_operand(A) ::= . { A = NULL; }
case_operand(A) ::= expr(B). { A = B; }

%type whens {q_list_t}
whens(A) ::= WHEN expr(W) THEN expr(T). { A = (q_list_t){0}; q_push(p, &A, W); q_push(p, &A, T); }
whens(A) ::= whens(B) WHEN expr(W) THEN expr(T). { A = B; q_push(p, &A, W); q_push(p, &A, T); }

%type else_opt {q_expr_t *}
else_opt(A) ::= . { A = NULL; }
else_opt(A) ::= ELSE expr(B). { A = B; }
