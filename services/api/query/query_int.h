/*
 * query_int.h - inside the HogQL compiler: the syntax tree, the tokenizer
 * and the parser's actions (see query.h for the whole pipeline).
 *
 * Every node lives in the query's arena and is freed with it. Nodes are
 * plain data: the resolver annotates them in place (types, what a field
 * refers to) and the printers only read them.
 *
 * Depth. The parser's own stack is bounded (grammar.y), but a long chain
 * of left-associative operators (1+1+1+...) builds a deep tree with a
 * shallow parse stack; every node records its depth and the parser
 * refuses a tree deeper than Q_MAX_DEPTH, so every recursive walk after it
 * is bounded.
 */
#ifndef API_QUERY_INT_H
#define API_QUERY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/arena.h"
#include "cm/buf.h"
#include "query/query.h"

#define Q_MAX_DEPTH 256         /* nesting of expressions and subqueries */
#define Q_MAX_NODES 200000      /* nodes of one query */
#define Q_MAX_TEXT  (512 << 10) /* bytes of query text: the widest parses and prints in ~20 ms */

typedef struct q_expr q_expr_t;
typedef struct q_select q_select_t;
typedef struct q_from q_from_t;

typedef struct {
    q_expr_t **v;
    size_t n;
} q_list_t;

/* Value types the resolver infers; Q_T_ANY when it cannot tell. */
typedef enum {
    Q_T_ANY,
    Q_T_NULL,
    Q_T_BOOL, /* comparisons: 0 or 1, as ClickHouse's UInt8 */
    Q_T_INT,
    Q_T_FLOAT,
    Q_T_STRING,
    Q_T_DATE,
    Q_T_DATETIME,
    Q_T_UUID,
    Q_T_ARRAY,
    Q_T_TUPLE,
    Q_T_JSON, /* a raw JSON column (properties): only reachable through a field chain */
} q_type_t;

typedef enum {
    QE_NULL,
    QE_BOOL,   /* ival 0/1 */
    QE_INT,    /* text as written (digits, maybe 0x...), ival */
    QE_FLOAT,  /* text as written, fval */
    QE_STRING, /* text: the decoded bytes (may hold NUL) */
    QE_FIELD,  /* chain of names: a.b.c, properties['x'] folded in */
    QE_STAR,   /* * or t.* (chain holds t) */
    QE_CALL,   /* name(args), name(params)(args), count(DISTINCT x), OVER window */
    QE_BINARY,
    QE_NOT,
    QE_NEG,
    QE_IS_NULL, /* negated: IS NOT NULL */
    QE_BETWEEN, /* a BETWEEN b AND c; negated: NOT BETWEEN */
    QE_CASE,    /* [operand] WHEN.. THEN.. [ELSE]; args: when,then pairs */
    QE_ARRAY,
    QE_TUPLE,
    QE_INDEX,       /* a[b] (1-based, as ClickHouse); negated: t.1, a tuple's member */
    QE_SUBQUERY,    /* (SELECT ...) as a value or an IN list */
    QE_PLACEHOLDER, /* {variables.x}: chain holds "variables", "x" */
    QE_INTERVAL,    /* INTERVAL n unit */
    QE_CAST,        /* CAST(x AS type) */
    QE_VALUE,       /* a variable's value, bound at print time (see query.h) */
    QE_LAMBDA,      /* x -> body, (x, y) -> body: chain holds the names, operand the body */
} q_expr_kind_t;

typedef enum {
    QB_PLUS,
    QB_MINUS,
    QB_MUL,
    QB_DIV,
    QB_MOD,
    QB_CONCAT,
    QB_EQ,
    QB_NE,
    QB_LT,
    QB_LE,
    QB_GT,
    QB_GE,
    QB_LIKE,
    QB_NOT_LIKE,
    QB_ILIKE,
    QB_NOT_ILIKE,
    QB_IN,
    QB_NOT_IN,
    QB_AND,
    QB_OR,
} q_binop_t;

typedef enum {
    QU_SECOND,
    QU_MINUTE,
    QU_HOUR,
    QU_DAY,
    QU_WEEK,
    QU_MONTH,
    QU_QUARTER,
    QU_YEAR
} q_unit_t;

enum { Q_NULLS_DEFAULT, Q_NULLS_FIRST, Q_NULLS_LAST };

typedef struct {
    q_expr_t *expr;
    bool desc;
    int nulls; /* Q_NULLS_*: the default is last, as HogQL on ClickHouse */
} q_order_t;

/* Window frames (part S): ROWS|RANGE BETWEEN lo AND hi. */
enum { QW_NONE, QW_ROWS, QW_RANGE };
enum {
    QW_CURRENT,
    QW_UNBOUNDED_PRECEDING,
    QW_UNBOUNDED_FOLLOWING,
    QW_PRECEDING, /* n PRECEDING */
    QW_FOLLOWING, /* n FOLLOWING */
};
typedef struct {
    int kind;  /* QW_CURRENT, ... */
    int64_t n; /* QW_PRECEDING, QW_FOLLOWING */
} q_bound_t;
typedef struct {
    int kind; /* QW_NONE: the default frame */
    q_bound_t lo, hi;
} q_frame_t;

typedef struct {
    q_list_t partition;
    q_order_t *order;
    size_t norder;
    q_frame_t frame;
    cm_slice_t ref; /* OVER w: the named window, until resolve.c copies it in */
} q_window_t;

/* What a field chain turned out to be (resolve.c). */
typedef enum {
    QF_UNRESOLVED,
    QF_COLUMN,   /* a column of a table or subquery in scope */
    QF_PROPERTY, /* a key path inside a JSON column: json column + path */
    QF_ALIAS,    /* a SELECT alias of the same query */
    QF_LAMBDA,
} q_field_kind_t;

struct q_expr {
    q_expr_kind_t kind;
    uint16_t depth;
    q_type_t type;      /* resolve.c */
    q_type_t elem;      /* resolve.c: Q_T_ARRAY's element type (Q_T_ANY: unknown) */
    bool elem_nullable; /* resolve_array.c: its elements may be NULL (Array(Nullable(T))) */
    /* resolve_array.c: a tuple's member types (or those of an array's tuple
     * elements); NULL: not known */
    const q_type_t *members;
    size_t nmembers;
    bool nullable; /* resolve.c: may be NULL */
    bool visiting; /* resolve.c: an alias being resolved (cycles) */
    bool resolved; /* resolve.c: done (an alias's expression is reached again) */
    bool negated;  /* IS NOT NULL, NOT BETWEEN */
    bool distinct; /* count(DISTINCT x) */
    bool op_form;  /* a call lowered from an operator (a =~ b is match(a, b)): two-valued, as the
                      operator */
    q_binop_t op;
    int64_t ival;
    double fval;
    q_unit_t unit;
    cm_slice_t text;   /* string value, number text, function or type name */
    cm_slice_t *chain; /* QE_FIELD, QE_STAR, QE_PLACEHOLDER */
    size_t nchain;
    q_list_t args;     /* operands, call arguments, array items, CASE pairs */
    q_list_t params;   /* quantile(0.5)(x): the 0.5 */
    q_expr_t *operand; /* CASE x WHEN..., the base of a[i] */
    q_expr_t *else_;   /* CASE ... ELSE */
    q_window_t *over;  /* name(...) OVER (...) */
    q_select_t *sub;   /* QE_SUBQUERY */
    size_t value;      /* QE_VALUE: index into the print call's values */
    /* resolve.c: for QE_FIELD */
    q_field_kind_t fkind;
    const struct q_scope_entry *source; /* the table it reads */
    const char *column;                 /* the real column it reads */
    size_t path_from;                   /* QF_PROPERTY: chain[path_from..] is the key path */
    q_expr_t *alias_of;                 /* QF_ALIAS */
    /* parse_s.c: the call an operator was written as (equals(a, b), and(a,
     * b, c): every node of the chain), for its column name, as PostHog's */
    const char *spelled;
};

typedef struct {
    q_expr_t *expr;
    cm_slice_t alias; /* empty: none */
} q_column_t;

/* QJ_NUMBERS: numbers(n) (resolve_s.c). QJ_ARRAY: left [LEFT] ARRAY JOIN on AS alias (join QJ_LEFT
 * or QJ_INNER), only at the end of a FROM; element is the alias's value (resolve.c). */
typedef enum { QJ_TABLE, QJ_SUBQUERY, QJ_JOIN, QJ_NUMBERS, QJ_ARRAY } q_from_kind_t;
typedef enum { QJ_INNER, QJ_LEFT, QJ_RIGHT, QJ_FULL, QJ_CROSS } q_join_t;

struct q_from {
    q_from_kind_t kind;
    cm_slice_t name;  /* QJ_TABLE: the table (or CTE) name */
    cm_slice_t alias; /* QJ_TABLE, QJ_SUBQUERY */
    q_select_t *sub;  /* QJ_SUBQUERY */
    q_join_t join;    /* QJ_JOIN */
    q_from_t *left, *right;
    q_expr_t *on;    /* ON */
    q_list_t using_; /* USING (a, b) */
    /* resolve.c: QJ_TABLE and QJ_SUBQUERY */
    const struct q_scope_entry *entry;
    q_expr_t *element;       /* QJ_ARRAY: the element, an arrayJoin call marked negated */
    bool zipped;             /* QJ_ARRAY: in the same clause as the ARRAY JOIN on its left */
    const struct q_cte *cte; /* QJ_TABLE naming a CTE */
    /* QJ_NUMBERS: numbers(n) or numbers(start, n); name holds the function */
    q_list_t fn_args;
    int64_t num_start, num_count; /* resolve.c: the constant arguments */
};

/* Set operators between the parts of a set (q_select_t.ops). INTERSECT and
 * EXCEPT without DISTINCT keep duplicates (ClickHouse's ALL), as HogQL's
 * plain spelling does on ClickHouse. */
typedef enum {
    QS_UNION_ALL,
    QS_UNION_DISTINCT,
    QS_UNION, /* refused: say ALL or DISTINCT */
    QS_INTERSECT,
    QS_INTERSECT_DISTINCT,
    QS_EXCEPT,
    QS_EXCEPT_DISTINCT,
} q_setop_t;

/* WINDOW name AS (...) */
typedef struct {
    cm_slice_t name;
    q_window_t *w;
} q_wdef_t;

/* WITH name AS (SELECT ...) or WITH expr AS name. */
typedef struct q_cte {
    cm_slice_t name;
    q_select_t *sub; /* a subquery CTE */
    q_expr_t *expr;  /* an expression CTE */
} q_cte_t;

struct q_select {
    uint16_t depth;
    /* A set: parts joined by UNION ALL; nparts 0 for a plain SELECT. */
    q_select_t **parts;
    size_t nparts;
    q_cte_t *with;
    size_t nwith;
    bool distinct;
    q_column_t *cols;
    size_t ncols;
    q_from_t *from;
    q_expr_t *where;
    q_list_t group_by;
    q_expr_t *having;
    q_order_t *order;
    size_t norder;
    q_expr_t *limit, *offset;
    q_expr_t *limit_by_n, *limit_by_offset;
    q_list_t limit_by;
    /* resolve.c: the output columns' names and types (a set: its first
     * part's), the sources in scope, whether it aggregates */
    cm_slice_t *out_names;
    q_type_t *out_types;
    q_type_t *out_elems;        /* an array column's element type */
    const q_expr_t **out_exprs; /* each column's expression (NULL: a stored table's) */
    bool *out_nullable;
    size_t nout;
    struct q_scope_entry *sources;
    size_t nsources;
    unsigned alias_id;    /* its columns print as c<alias_id>_<k> below the top */
    struct q_select *set; /* the UNION ALL it is a part of, if any */
    size_t nwith_visible; /* CTEs visible while resolving (a CTE sees the earlier ones) */
    bool aggregates;
    /* part S: a set's operators (ops[i] joins parts[i]; ops[0] unused), a
     * parenthesized chain (never merged into the chain around it), LIMIT n
     * WITH TIES, named windows */
    q_setop_t *ops;
    bool paren;
    bool with_ties;
    q_wdef_t *windows;
    size_t nwindows;
};

/* ---- the parser's state and actions (parse.c) ------------------------------------- */

/* Growing lists the grammar's actions build (arrays in the arena). */
typedef struct {
    q_column_t *v;
    size_t n;
} q_cols_t;
typedef struct {
    q_order_t *v;
    size_t n;
} q_orders_t;
typedef struct {
    q_cte_t *v;
    size_t n;
} q_ctes_t;
/* LIMIT n [OFFSET m], LIMIT m, n, OFFSET m, and LIMIT n BY exprs before them. */
typedef struct {
    q_expr_t *n, *offset;
    q_expr_t *by_n, *by_offset;
    q_list_t by;
    bool ties; /* LIMIT n WITH TIES */
} q_limits_t;
typedef struct {
    q_wdef_t *v;
    size_t n;
} q_wdefs_t;

typedef struct {
    int id; /* grammar.h's token ids; 0 at the end */
    cm_slice_t text;
    size_t offset;
} q_token_t;

typedef struct q_parse {
    cm_arena_t *arena;
    const char *src;
    size_t len;
    size_t pos; /* the tokenizer's cursor */
    size_t nodes;
    bool failed;
    cm_buf_t *err; /* the first error, for the user */
    q_select_t *result;
    q_token_t last; /* for error messages */
} q_parse_t;

/* tokenize.re: the next token from p->pos; id 0 at the end, -1 on a bad one (p->err set). */
q_token_t q_next_token(q_parse_t *p);
/* A string or quoted identifier's body decoded (escapes), into the arena; false on a bad escape. */
bool q_unquote(q_parse_t *p, cm_slice_t quoted, cm_slice_t *out);

void q_fail(q_parse_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void q_syntax_error(q_parse_t *p, const q_token_t *t);
/* Runs the parser over p->src; the tree, or NULL with p->err set. */
q_select_t *q_parse_text(q_parse_t *p);

/* The grammar's actions (parse.c). */
q_expr_t *q_new(q_parse_t *p, q_expr_kind_t kind);
void q_push(q_parse_t *p, q_list_t *l, q_expr_t *e);
void q_add_col(q_parse_t *p, q_cols_t *l, const q_column_t *c);
void q_add_order(q_parse_t *p, q_orders_t *l, const q_order_t *o);
void q_add_cte(q_parse_t *p, q_ctes_t *l, const q_cte_t *c);
cm_slice_t q_ident(q_parse_t *p, cm_slice_t tok);
cm_slice_t q_dotted(q_parse_t *p, cm_slice_t a, cm_slice_t b);
q_expr_t *q_binary(q_parse_t *p, q_binop_t op, q_expr_t *a, q_expr_t *b);
q_expr_t *q_unary(q_parse_t *p, q_expr_kind_t kind, q_expr_t *a);
q_expr_t *q_between(q_parse_t *p, q_expr_t *a, q_expr_t *lo, q_expr_t *hi, bool negated);
q_expr_t *q_negate(q_parse_t *p, q_expr_t *a);
q_expr_t *q_number(q_parse_t *p, cm_slice_t text);
q_expr_t *q_string(q_parse_t *p, cm_slice_t quoted);
q_expr_t *q_field(q_parse_t *p, cm_slice_t name);
q_expr_t *q_field_append(q_parse_t *p, q_expr_t *base, cm_slice_t name);
q_expr_t *q_index(q_parse_t *p, q_expr_t *base, q_expr_t *index);
q_expr_t *q_star(q_parse_t *p, q_expr_t *table);
q_expr_t *q_list_expr(q_parse_t *p, q_expr_kind_t kind, q_list_t *items, q_expr_t *last);
q_expr_t *q_subquery(q_parse_t *p, q_select_t *s);
q_expr_t *q_placeholder(q_parse_t *p, q_expr_t *inner);
q_expr_t *q_interval(q_parse_t *p, q_expr_t *n, cm_slice_t unit);
q_expr_t *q_cast(q_parse_t *p, q_expr_t *a, cm_slice_t type);
q_expr_t *q_ternary(q_parse_t *p, q_expr_t *c, q_expr_t *a, q_expr_t *b);
q_expr_t *q_case(q_parse_t *p, q_expr_t *operand, q_list_t *whens, q_expr_t *else_);
q_expr_t *q_call(q_parse_t *p, cm_slice_t name, q_list_t *params, q_list_t *args, bool distinct);
q_window_t *q_window(q_parse_t *p, q_list_t *partition, q_orders_t *order);
q_expr_t *q_over(q_parse_t *p, q_expr_t *call, q_window_t *w);
q_expr_t *q_lambda(q_parse_t *p, q_expr_t *params, q_expr_t *body);
q_expr_t *q_tuple_member(q_parse_t *p, q_expr_t *base, cm_slice_t dot_digits);
q_select_t *q_select(q_parse_t *p, q_ctes_t *with, bool distinct, q_cols_t *cols, q_from_t *from,
                     q_expr_t *where, q_list_t *group, q_expr_t *having, q_orders_t *order,
                     q_limits_t *lim);
q_select_t *q_union(q_parse_t *p, q_select_t *a, q_select_t *b);
/* part S (parse_s.c): set operators, named windows and frames, numbers(n),
 * the operators' own spellings (regex, ??, IN COHORT, trim(LEADING ...)),
 * and operators written as calls (equals(a, b), and(a, b, c), ...). */
q_select_t *q_setop(q_parse_t *p, q_select_t *a, int op, q_select_t *b);
q_select_t *q_paren(q_parse_t *p, q_select_t *s);
q_select_t *q_set_tail(q_parse_t *p, q_select_t *set, q_orders_t *order, q_limits_t *lim);
void q_select_windows(q_parse_t *p, q_select_t *s, q_wdefs_t *w);
void q_add_wdef(q_parse_t *p, q_wdefs_t *l, cm_slice_t name, q_window_t *w);
q_window_t *q_window_ref(q_parse_t *p, cm_slice_t name);
q_bound_t q_bound(q_parse_t *p, cm_slice_t n, int kind);
q_from_t *q_table_fn(q_parse_t *p, cm_slice_t name, q_list_t *args, cm_slice_t alias);
q_expr_t *q_cohort(q_parse_t *p, q_expr_t *a, q_expr_t *b, bool negated);
q_expr_t *q_regex(q_parse_t *p, q_expr_t *a, q_expr_t *b, bool icase, bool negated);
q_expr_t *q_nullish(q_parse_t *p, q_expr_t *a, q_expr_t *b);
q_expr_t *q_trim(q_parse_t *p, cm_slice_t name, int side, q_expr_t *chars, q_expr_t *s);
/* The operator a call such as equals(a, b) spells, as its node; NULL when
 * name is no operator's (q_call then builds the call). */
q_expr_t *q_lower_call(q_parse_t *p, cm_slice_t name, q_list_t *args);
/* A node's depth from its children's (parse.c). */
void q_below_list(q_parse_t *p, q_expr_t *e, const q_list_t *l);
q_cte_t q_cte_sub(q_parse_t *p, q_expr_t *name, q_select_t *s);
q_from_t *q_table(q_parse_t *p, cm_slice_t name, cm_slice_t alias);
q_from_t *q_from_sub(q_parse_t *p, q_select_t *s, cm_slice_t alias);
q_from_t *q_join(q_parse_t *p, int join, q_from_t *l, q_from_t *r, q_expr_t *on, q_list_t *using_);
q_from_t *q_array_join(q_parse_t *p, bool left, q_from_t *l, q_expr_t *array, cm_slice_t alias);
/* one more array in l's ARRAY JOIN clause (zipped with the ones before) */
q_from_t *q_array_join_zip(q_parse_t *p, q_from_t *l, q_expr_t *array, cm_slice_t alias);

#endif
