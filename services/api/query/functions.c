/*
 * functions.c - the allow-list of functions (see functions.h). Each one
 * is here because both stores can give the same answer for it (print_*.c
 * say how); HogQL's many others are left out rather than answered
 * differently by the two.
 */
#include "query/functions.h"

#include <string.h>
#include <strings.h>

#define A(n, lo, hi, rule, ret, null, id)                                                          \
    {                                                                                              \
        n, lo, hi, QF_AGGREGATE, rule, ret, null, 0, id                                            \
    }
#define F(n, lo, hi, rule, ret, null, id)                                                          \
    {                                                                                              \
        n, lo, hi, QF_PLAIN, rule, ret, null, 0, id                                                \
    }
#define W(n, lo, hi, rule, ret, null, id)                                                          \
    {                                                                                              \
        n, lo, hi, QF_WINDOW, rule, ret, null, 0, id                                               \
    }

static const q_fn_t fns[] = {
    /* aggregates */
    A("count", 0, 1, QR_FIXED, Q_T_INT, false, Q_FN_COUNT),
    A("countIf", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_COUNT_IF),
    A("sum", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_SUM),
    A("sumIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUM_IF),
    A("avg", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_AVG),
    A("avgIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_AVG_IF),
    A("min", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_MIN),
    A("max", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_MAX),
    A("minIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_MIN_IF),
    A("maxIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_MAX_IF),
    A("uniq", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ),
    A("uniqExact", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ),
    A("uniqIf", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ_IF),
    A("any", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_ANY),
    /* quantile(level)(x): exact, interpolated between the two nearest
     * values (ClickHouse's quantile() samples past 8,192 values) */
    {"quantile", 1, 1, QF_AGGREGATE, QR_FIXED, Q_T_FLOAT, true, 1, Q_FN_QUANTILE},
    A("median", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_MEDIAN),
    /* (more aggregates above this line) */

    /* dates and times (UTC unless a zone is given) */
    F("toDate", 1, 1, QR_FIXED, Q_T_DATE, false, Q_FN_TO_DATE),
    F("toDateTime", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_TO_DATETIME),
    F("toStartOfMinute", 1, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_MINUTE),
    F("toStartOfHour", 1, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_HOUR),
    F("toStartOfDay", 1, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_DAY),
    F("toStartOfWeek", 1, 2, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_WEEK),
    F("toStartOfMonth", 1, 1, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_MONTH),
    F("toStartOfYear", 1, 1, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_YEAR),
    F("toYear", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_YEAR),
    F("toMonth", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_MONTH),
    F("toDayOfMonth", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_DAY_OF_MONTH),
    F("toDayOfWeek", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_DAY_OF_WEEK),
    F("toHour", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_HOUR),
    F("toMinute", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_MINUTE),
    F("toTimeZone", 2, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_TO_TIMEZONE),
    F("dateDiff", 3, 3, QR_FIXED, Q_T_INT, false, Q_FN_DATE_DIFF),
    F("dateAdd", 3, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_ADD),
    F("dateSub", 3, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_SUB),
    F("now", 0, 0, QR_FIXED, Q_T_DATETIME, false, Q_FN_NOW),
    F("today", 0, 0, QR_FIXED, Q_T_DATE, false, Q_FN_TODAY),
    F("toUnixTimestamp", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_UNIX),
    F("fromUnixTimestamp", 1, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_FROM_UNIX),
    /* (more dates above this line) */

    /* JSON (a properties column or a string holding JSON; then key names) */
    F("JSONExtractString", 2, 8, QR_FIXED, Q_T_STRING, false, Q_FN_JSON_STRING),
    F("JSONExtractInt", 2, 8, QR_FIXED, Q_T_INT, false, Q_FN_JSON_INT),
    F("JSONExtractFloat", 2, 8, QR_FIXED, Q_T_FLOAT, false, Q_FN_JSON_FLOAT),
    F("JSONExtractBool", 2, 8, QR_FIXED, Q_T_BOOL, false, Q_FN_JSON_BOOL),
    F("JSONExtractRaw", 2, 8, QR_FIXED, Q_T_STRING, false, Q_FN_JSON_RAW),
    F("JSONHas", 2, 8, QR_FIXED, Q_T_BOOL, false, Q_FN_JSON_HAS),
    /* strings */
    F("lower", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_LOWER),
    F("upper", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_UPPER),
    F("length", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_LENGTH),
    F("concat", 2, 16, QR_FIXED, Q_T_STRING, false, Q_FN_CONCAT),
    F("substring", 2, 3, QR_ARG0, Q_T_STRING, false, Q_FN_SUBSTRING),
    F("trim", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM),
    F("replaceAll", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_REPLACE_ALL),
    F("position", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_POSITION),
    F("startsWith", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_STARTS_WITH),
    F("endsWith", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_ENDS_WITH),
    F("empty", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_EMPTY),
    F("notEmpty", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_NOT_EMPTY),
    /* (more strings above this line) */

    /* NULLs and conditions */
    F("coalesce", 1, 16, QR_COMMON, Q_T_ANY, false, Q_FN_COALESCE),
    F("ifNull", 2, 2, QR_COMMON, Q_T_ANY, false, Q_FN_IF_NULL),
    F("nullIf", 2, 2, QR_ARG0, Q_T_ANY, true, Q_FN_NULL_IF),
    F("isNull", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_IS_NULL),
    F("isNotNull", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_IS_NOT_NULL),
    F("if", 3, 3, QR_BRANCHES, Q_T_ANY, false, Q_FN_IF),
    F("multiIf", 3, 63, QR_BRANCHES, Q_T_ANY, false, Q_FN_MULTI_IF),
    /* numbers and conversions */
    F("round", 1, 2, QR_FIXED, Q_T_FLOAT, false, Q_FN_ROUND),
    F("floor", 1, 1, QR_FIXED, Q_T_FLOAT, false, Q_FN_FLOOR),
    F("ceil", 1, 1, QR_FIXED, Q_T_FLOAT, false, Q_FN_CEIL),
    F("abs", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_ABS),
    F("greatest", 2, 16, QR_COMMON, Q_T_ANY, false, Q_FN_GREATEST),
    F("least", 2, 16, QR_COMMON, Q_T_ANY, false, Q_FN_LEAST),
    F("intDiv", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_INTDIV),
    F("toInt", 1, 1, QR_FIXED, Q_T_INT, true, Q_FN_TO_INT),
    F("toInt64", 1, 1, QR_FIXED, Q_T_INT, true, Q_FN_TO_INT),
    F("toFloat", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_TO_FLOAT),
    F("toFloat64", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_TO_FLOAT),
    F("toString", 1, 1, QR_FIXED, Q_T_STRING, false, Q_FN_TO_STRING),
    /* (more conditions and numbers above this line) */

    /* window functions */
    W("row_number", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_ROW_NUMBER),
    W("rank", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_RANK),
    W("dense_rank", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_DENSE_RANK),
    W("lagInFrame", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LAG),
    W("leadInFrame", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LEAD),
    /* (more window functions above this line) */

    /* arrays, tuples, lambdas: an array is native on ClickHouse, JSON text on
     * SQLite (print_fn_array.c); the element type is resolve_array.c's */
    F("has", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_HAS),
    F("hasAll", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_HAS_ALL),
    F("hasAny", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_HAS_ANY),
    F("indexOf", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_INDEX_OF),
    F("countEqual", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_COUNT_EQUAL),
    F("range", 1, 3, QR_FIXED, Q_T_ARRAY, false, Q_FN_RANGE),
    F("arrayConcat", 1, 16, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_CONCAT),
    F("arraySlice", 2, 3, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_SLICE),
    F("arrayReverse", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_REVERSE),
    F("arrayDistinct", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_DISTINCT),
    F("arrayCompact", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_COMPACT),
    F("arrayEnumerate", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_ENUMERATE),
    F("arrayStringConcat", 1, 2, QR_FIXED, Q_T_STRING, false, Q_FN_ARRAY_STRING_CONCAT),
    F("arrayElement", 2, 2, QR_FIXED, Q_T_ANY, false, Q_FN_ARRAY_ELEMENT),
    F("arrayMap", 2, 9, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_MAP),
    F("arrayFilter", 2, 9, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_FILTER),
    F("arrayExists", 1, 9, QR_FIXED, Q_T_BOOL, false, Q_FN_ARRAY_EXISTS),
    F("arrayAll", 1, 9, QR_FIXED, Q_T_BOOL, false, Q_FN_ARRAY_ALL),
    F("arrayCount", 1, 9, QR_FIXED, Q_T_INT, false, Q_FN_ARRAY_COUNT),
    F("arraySum", 1, 9, QR_FIXED, Q_T_INT, false, Q_FN_ARRAY_SUM),
    F("arraySort", 1, 2, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_SORT),
    F("arrayReverseSort", 1, 2, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_REVERSE_SORT),
    F("arrayFirst", 2, 9, QR_FIXED, Q_T_ANY, false, Q_FN_ARRAY_FIRST),
    F("arrayJoin", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_ARRAY_JOIN),
    F("tuple", 1, 16, QR_FIXED, Q_T_TUPLE, false, Q_FN_TUPLE),
    F("tupleElement", 2, 2, QR_FIXED, Q_T_ANY, false, Q_FN_TUPLE_ELEMENT),
    F("arrayZip", 1, 16, QR_FIXED, Q_T_ARRAY, false, Q_FN_ARRAY_ZIP),
    /* array-valued aggregates: in a stated order on both (docs/endpoints.md) */
    A("groupArray", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_GROUP_ARRAY),
    A("groupUniqArray", 1, 1, QR_FIXED, Q_T_ARRAY, false, Q_FN_GROUP_UNIQ_ARRAY),
    {"quantiles", 1, 1, QF_AGGREGATE, QR_FIXED, Q_T_ARRAY, false, 1, Q_FN_QUANTILES},
    {"topK", 1, 1, QF_AGGREGATE, QR_FIXED, Q_T_ARRAY, false, 1, Q_FN_TOP_K},
    /* (more arrays above this line) */
};

const q_fn_t *q_fn_lookup(cm_slice_t name)
{
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (strlen(fns[i].name) == name.len && strncasecmp(fns[i].name, name.p, name.len) == 0)
            return &fns[i];
    return NULL;
}
