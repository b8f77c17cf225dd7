/*
 * functions.h - the functions a query may call: HogQL's names, how many
 * arguments, what they return, and whether they aggregate. A name not in
 * the table does not resolve (the allow-list of docs/endpoints.md); how
 * each prints for SQLite and ClickHouse is the printers' (print_*.c).
 */
#ifndef API_QUERY_FUNCTIONS_H
#define API_QUERY_FUNCTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "query/query_int.h"

/* What a call returns. */
typedef enum {
    QR_FIXED,    /* ret */
    QR_ARG0,     /* its first argument's type */
    QR_COMMON,   /* the common type of its arguments (coalesce, greatest) */
    QR_BRANCHES, /* if / multiIf: the common type of the branches */
} q_ret_rule_t;

typedef enum {
    QF_PLAIN,
    QF_AGGREGATE,
    QF_WINDOW, /* only with OVER (row_number, rank, ...) */
} q_fn_class_t;

typedef struct {
    const char *name; /* HogQL's spelling (case-sensitive but for a few: functions.c) */
    unsigned min_args, max_args;
    q_fn_class_t cls;
    q_ret_rule_t rule;
    q_type_t ret;
    bool nullable;   /* may return NULL whatever its arguments */
    unsigned params; /* parametric aggregates: quantile(0.5)(x) takes 1 */
    int id;          /* Q_FN_*: the printers switch on it */
} q_fn_t;

/* Grouped by the printer that prints them; each group ends with a marker
 * line, so that groups grow without touching each other. */
enum {
    /* aggregates: print_fn_agg.c */
    Q_FN_COUNT,
    Q_FN_COUNT_IF,
    Q_FN_SUM,
    Q_FN_SUM_IF,
    Q_FN_AVG,
    Q_FN_AVG_IF,
    Q_FN_MIN,
    Q_FN_MAX,
    Q_FN_MIN_IF,
    Q_FN_MAX_IF,
    Q_FN_UNIQ,
    Q_FN_UNIQ_IF,
    Q_FN_QUANTILE,
    Q_FN_MEDIAN,
    Q_FN_ANY,
    /* part F: argMax/argMin, anyLast, the -If forms, variances */
    Q_FN_ANY_IF,
    Q_FN_ANY_LAST,
    Q_FN_ANY_LAST_IF,
    Q_FN_ARG_MAX,
    Q_FN_ARG_MAX_IF,
    Q_FN_ARG_MIN,
    Q_FN_ARG_MIN_IF,
    Q_FN_VAR_POP,
    Q_FN_VAR_POP_IF,
    Q_FN_VAR_SAMP,
    Q_FN_VAR_SAMP_IF,
    Q_FN_STDDEV_POP,
    Q_FN_STDDEV_POP_IF,
    Q_FN_STDDEV_SAMP,
    Q_FN_STDDEV_SAMP_IF,
    Q_FN_MEDIAN_IF,
    Q_FN_COVAR_POP,
    Q_FN_COVAR_POP_IF,
    Q_FN_COVAR_SAMP,
    Q_FN_COVAR_SAMP_IF,
    Q_FN_CORR,
    Q_FN_QUANTILE_IF,
    Q_FN_QUANTILE_EXACT,
    Q_FN_MEDIAN_EXACT,
    Q_FN_MEDIAN_EXACT_IF,
    /* (more aggregates above this line) */
    Q_FN_AGGREGATES_END, /* not a function: the group's end (print_fn_agg.c) */

    /* dates: print_fn_date.c */
    Q_FN_TO_DATE,
    Q_FN_TO_DATETIME,
    Q_FN_START_OF_MINUTE,
    Q_FN_START_OF_HOUR,
    Q_FN_START_OF_DAY,
    Q_FN_START_OF_WEEK,
    Q_FN_START_OF_MONTH,
    Q_FN_START_OF_YEAR,
    Q_FN_TO_YEAR,
    Q_FN_TO_MONTH,
    Q_FN_TO_DAY_OF_MONTH,
    Q_FN_TO_DAY_OF_WEEK,
    Q_FN_TO_HOUR,
    Q_FN_TO_MINUTE,
    Q_FN_TO_TIMEZONE,
    Q_FN_DATE_DIFF,
    Q_FN_DATE_ADD,
    Q_FN_DATE_SUB,
    Q_FN_NOW,
    Q_FN_TODAY,
    Q_FN_TO_UNIX,
    Q_FN_FROM_UNIX,
    Q_FN_START_OF_QUARTER,
    Q_FN_START_OF_FIVE_MINUTES,
    Q_FN_START_OF_TEN_MINUTES,
    Q_FN_START_OF_FIFTEEN_MINUTES,
    Q_FN_START_OF_INTERVAL,
    Q_FN_DATE_TRUNC,
    Q_FN_TO_QUARTER,
    Q_FN_TO_DAY_OF_YEAR,
    Q_FN_TO_SECOND,
    Q_FN_TO_YYYYMM,
    Q_FN_TO_YYYYMMDD,
    Q_FN_FORMAT_DATETIME,
    Q_FN_YESTERDAY,
    Q_FN_PARSE_DATETIME,
    Q_FN_PARSE_DATETIME_OR_NULL,
    Q_FN_PARSE_DATETIME_OR_ZERO,
    Q_FN_ASSUME_NOT_NULL,
    /* by unit, second .. year, in this order (print_fn_date.c counts on it) */
    Q_FN_INTERVAL_SECOND,
    Q_FN_INTERVAL_MINUTE,
    Q_FN_INTERVAL_HOUR,
    Q_FN_INTERVAL_DAY,
    Q_FN_INTERVAL_WEEK,
    Q_FN_INTERVAL_MONTH,
    Q_FN_INTERVAL_QUARTER,
    Q_FN_INTERVAL_YEAR,
    Q_FN_ADD_SECONDS,
    Q_FN_ADD_MINUTES,
    Q_FN_ADD_HOURS,
    Q_FN_ADD_DAYS,
    Q_FN_ADD_WEEKS,
    Q_FN_ADD_MONTHS,
    Q_FN_ADD_QUARTERS,
    Q_FN_ADD_YEARS,
    Q_FN_SUB_SECONDS,
    Q_FN_SUB_MINUTES,
    Q_FN_SUB_HOURS,
    Q_FN_SUB_DAYS,
    Q_FN_SUB_WEEKS,
    Q_FN_SUB_MONTHS,
    Q_FN_SUB_QUARTERS,
    Q_FN_SUB_YEARS,
    Q_FN_TO_ISO_WEEK,
    Q_FN_TO_ISO_YEAR,
    Q_FN_TO_WEEK,
    /* (more dates above this line) */

    /* strings and JSON: print_fn_string.c */
    Q_FN_JSON_STRING,
    Q_FN_JSON_INT,
    Q_FN_JSON_FLOAT,
    Q_FN_JSON_BOOL,
    Q_FN_JSON_RAW,
    Q_FN_JSON_HAS,
    Q_FN_LOWER,
    Q_FN_UPPER,
    Q_FN_LENGTH,
    Q_FN_CONCAT,
    Q_FN_SUBSTRING,
    Q_FN_TRIM,
    Q_FN_REPLACE_ALL,
    Q_FN_POSITION,
    Q_FN_STARTS_WITH,
    Q_FN_ENDS_WITH,
    /* part F: trims, URLs, case-blind position, UTF-8 length, replaceOne */
    Q_FN_TRIM_LEFT,
    Q_FN_TRIM_RIGHT,
    Q_FN_DOMAIN,
    Q_FN_PATH,
    Q_FN_URL_PARAM,
    Q_FN_CUT_QUERY,
    Q_FN_POSITION_CI,
    Q_FN_LENGTH_UTF8,
    Q_FN_REPLACE_ONE,
    Q_FN_MATCH,
    Q_FN_EXTRACT,
    Q_FN_REPLACE_RE_ONE,
    Q_FN_REPLACE_RE_ALL,
    Q_FN_DECODE_URL,
    Q_FN_SUBSTRING_UTF8,
    Q_FN_REVERSE,
    Q_FN_LEFT_PAD,
    Q_FN_RIGHT_PAD,
    Q_FN_REPEAT,
    Q_FN_HEX,
    Q_FN_BASE64_ENCODE,
    Q_FN_BASE64_DECODE,
    Q_FN_TRY_BASE64_DECODE,
    Q_FN_LOWER_UTF8,
    Q_FN_UPPER_UTF8,
    Q_FN_ENCODE_URL,
    /* (more strings above this line) */

    /* conditions, numbers, conversions: print_fn.c */
    Q_FN_COALESCE,
    Q_FN_IF_NULL,
    Q_FN_NULL_IF,
    Q_FN_IS_NULL,
    Q_FN_IS_NOT_NULL,
    Q_FN_IF,
    Q_FN_MULTI_IF,
    Q_FN_ROUND,
    Q_FN_FLOOR,
    Q_FN_CEIL,
    Q_FN_ABS,
    Q_FN_GREATEST,
    Q_FN_LEAST,
    Q_FN_TO_INT,
    Q_FN_TO_FLOAT,
    Q_FN_TO_STRING,
    Q_FN_INTDIV,
    Q_FN_BOOL_OF_STRING, /* not callable: a string compared with true/false (resolve.c) */
    /* part F: math (non-finite answers are NULL), conversions to 0 */
    Q_FN_POW,
    Q_FN_SQRT,
    Q_FN_EXP,
    Q_FN_LOG,
    Q_FN_LOG2,
    Q_FN_LOG10,
    Q_FN_EXP2,
    Q_FN_EXP10,
    Q_FN_SIN,
    Q_FN_COS,
    Q_FN_TAN,
    Q_FN_ASIN,
    Q_FN_ACOS,
    Q_FN_ATAN,
    Q_FN_PI,
    Q_FN_E,
    Q_FN_TO_INT_OR_ZERO,
    Q_FN_TO_FLOAT_OR_ZERO,
    Q_FN_SIGN,
    Q_FN_CITY_HASH64,
    Q_FN_TO_UUID,
    Q_FN_TO_BOOL,
    /* (more conditions and numbers above this line) */

    /* window functions: print_fn_agg.c */
    Q_FN_ROW_NUMBER,
    Q_FN_RANK,
    Q_FN_DENSE_RANK,
    Q_FN_LAG,
    Q_FN_LEAD,
    Q_FN_FIRST_VALUE,
    Q_FN_LAST_VALUE,
    /* (more window functions above this line) */

    /* arrays, tuples, lambdas: print_fn_array.c */
    Q_FN_HAS,
    Q_FN_HAS_ALL,
    Q_FN_HAS_ANY,
    Q_FN_INDEX_OF,
    Q_FN_COUNT_EQUAL,
    Q_FN_RANGE,
    Q_FN_ARRAY_CONCAT,
    Q_FN_ARRAY_SLICE,
    Q_FN_ARRAY_REVERSE,
    Q_FN_ARRAY_DISTINCT,
    Q_FN_ARRAY_COMPACT,
    Q_FN_ARRAY_ENUMERATE,
    Q_FN_ARRAY_STRING_CONCAT,
    Q_FN_ARRAY_ELEMENT,
    Q_FN_ARRAY_MAP, /* the lambda functions: a lambda first (optional where marked) */
    Q_FN_ARRAY_FILTER,
    Q_FN_ARRAY_EXISTS,
    Q_FN_ARRAY_ALL,
    Q_FN_ARRAY_COUNT,        /* optional */
    Q_FN_ARRAY_SUM,          /* optional */
    Q_FN_ARRAY_SORT,         /* optional */
    Q_FN_ARRAY_REVERSE_SORT, /* optional */
    Q_FN_ARRAY_FIRST,
    Q_FN_GROUP_ARRAY, /* array-valued aggregates */
    Q_FN_GROUP_UNIQ_ARRAY,
    Q_FN_QUANTILES,
    Q_FN_TOP_K,
    Q_FN_ARRAY_JOIN, /* arrayJoin(a): a row per element */
    Q_FN_TUPLE,      /* tuples: tuple(a, b), tupleElement(t, n), arrayZip(a, b) */
    Q_FN_TUPLE_ELEMENT,
    Q_FN_ARRAY_ZIP,
    Q_FN_ARRAY_LENGTH, /* length(), empty(), notEmpty() of an array (resolve_array.c maps them) */
    Q_FN_ARRAY_EMPTY,
    Q_FN_ARRAY_NOT_EMPTY,
    Q_FN_SPLIT_BY_CHAR, /* strings into arrays */
    Q_FN_SPLIT_BY_STRING,
    Q_FN_SUM_MAP, /* sumMap(keys, values): an aggregate answering a tuple of two arrays */
    /* (more arrays above this line) */

    /* strings (cont.) */
    Q_FN_EMPTY,
    Q_FN_NOT_EMPTY,
};

/* The function called name, or NULL. */
const q_fn_t *q_fn_lookup(cm_slice_t name);
/* The spelling of a function named name in another case, or NULL (for
 * "Perhaps you meant 'toString(...)'?"). */
const char *q_fn_suggest(cm_slice_t name);

#endif
