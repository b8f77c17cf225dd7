/*
 * resolve.h - names to meanings: which table or subquery a field reads,
 * which function a call is, what type each expression has, which
 * variables the query uses. Runs once after parsing (api_query_parse);
 * the printers read what it wrote into the tree.
 *
 * Scopes. A SELECT sees its FROM sources (by alias, or by table name
 * without one), the CTEs of its own and enclosing WITH clauses, and its
 * own SELECT aliases. A subquery does not see the enclosing SELECT's
 * sources: correlated subqueries are refused (ClickHouse cannot run them).
 */
#ifndef API_QUERY_RESOLVE_H
#define API_QUERY_RESOLVE_H

#include "query/query_int.h"

typedef struct {
    const char *name;   /* HogQL's */
    const char *column; /* the event store's */
    q_type_t type;
    bool nullable;
    bool hidden; /* not in SELECT *, nor by its own name */
} q_col_t;

typedef struct q_table {
    const char *name;  /* HogQL's */
    const char *store; /* the event store's */
    const q_col_t *cols;
    size_t ncols;
    bool final_;     /* ClickHouse: ReplacingMergeTree, read with FINAL */
    bool deletable_; /* has is_deleted: deleted rows are never seen */
} q_table_t;

const q_table_t *q_table_lookup(cm_slice_t name);
const q_col_t *q_table_col(const q_table_t *t, cm_slice_t name);

/* One FROM source of a SELECT. */
typedef struct q_scope_entry {
    cm_slice_t name;        /* how the query names it: alias, else table or CTE name */
    const q_table_t *table; /* a stored table */
    const q_select_t *sub;  /* or a subquery / CTE: its output columns */
    unsigned id;            /* unique in the query: printers name it s<id> */
} q_scope_entry_t;

/* The parsed query (query.h's api_query_t). */
struct api_query {
    cm_arena_t arena;
    q_select_t *root;
    const char **vars; /* code names, each once */
    size_t nvars;
    unsigned nsources;
    unsigned nselects;
    unsigned narray_joins; /* arrayJoin calls: each is numbered (q_expr_t.value) */
};

/* 0, or CM_EINVAL with a message in err. */
int q_resolve(struct api_query *q, cm_buf_t *err);

/* Part S's checks (resolve_s.c), each false with a message in err: a
 * set's operators; e's window (OVER w found among s's named windows, the
 * frame checked); numbers(n)'s arguments, and its one-column table. */
bool q_resolve_setops(const q_select_t *s, cm_buf_t *err);
bool q_resolve_window(struct api_query *q, const q_select_t *s, q_expr_t *e, cm_buf_t *err);
const q_table_t *q_resolve_numbers(q_from_t *f, cm_buf_t *err);

/* resolve_array.c: arrays' element types. For a call whose arguments are
 * resolved: the type of an array function (and length/empty/notEmpty of an
 * array become Q_FN_ARRAY_*); for QE_ARRAY, QE_TUPLE and QE_INDEX likewise
 * (a tuple's member types in the arena). False
 * with the user's message in err. */
bool q_resolve_array_call(q_expr_t *e, cm_arena_t *arena, cm_buf_t *err);
bool q_resolve_array_expr(q_expr_t *e, cm_arena_t *arena, cm_buf_t *err);
/* Whether function id takes a lambda as its first argument. */
bool q_fn_takes_lambda(int id);
/* A call's lambda (args[0]) given one typed node per parameter (its args),
 * each an element of the array argument after it; false with a message. */
bool q_lambda_params(q_expr_t *call, cm_arena_t *arena, cm_buf_t *err);
/* Field e names parameter i of lambda. */
void q_bind_lambda_param(q_expr_t *e, q_expr_t *lambda, size_t i);
/* ARRAY JOIN's element: an arrayJoin(f->on) marked negated (the clause's),
 * LEFT as distinct, numbered id. */
q_expr_t *q_array_join_element(cm_arena_t *arena, const q_from_t *f, unsigned id);
/* Whether field e names the element of s's ARRAY JOIN (bound if so). */
bool q_bind_array_join(q_expr_t *e, const q_select_t *s);

/* The output name HogQL gives an expression without an alias (print_hogql.c). */
void q_print_hogql_expr(const q_expr_t *e, cm_buf_t *out);

/* A whole query printed back as HogQL (print_hogql.c), changed on the way
 * as materialize.c needs: some nodes printed as true (a predicate left
 * out), columns added to the top SELECT (and its GROUP BY), its LIMIT and
 * OFFSET left out. */
typedef struct {
    const q_expr_t *const *skip;
    size_t nskip;
    const q_select_t *top;
    const char *const *extra;       /* HogQL text: "expr AS name" */
    const char *const *extra_group; /* expressions for GROUP BY (NULL: none) */
    size_t nextra, ngroup;
    bool drop_limit;
} q_hogql_opts_t;
void q_print_hogql_select(const q_select_t *s, const q_hogql_opts_t *o, cm_buf_t *out);
/* Part S's syntax as HogQL text (resolve_s.c): " UNION ALL " and the other
 * set operators; a window frame (" ROWS BETWEEN ..."; nothing for none). */
const char *q_setop_name(q_setop_t op);
void q_print_hogql_frame(const q_frame_t *f, cm_buf_t *out);

#endif
