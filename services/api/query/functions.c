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
    A("countIf", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_COUNT_IF),
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
    /* part F: an aggregate's -If form takes the condition last */
    A("countDistinct", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ),
    A("countDistinctIf", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ_IF),
    A("uniqExactIf", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_UNIQ_IF),
    A("medianIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_MEDIAN_IF),
    A("anyIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ANY_IF),
    A("anyLast", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_ANY_LAST),
    A("anyLastIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ANY_LAST_IF),
    A("argMax", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ARG_MAX),
    A("argMaxIf", 3, 3, QR_ARG0, Q_T_ANY, false, Q_FN_ARG_MAX_IF),
    A("argMin", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ARG_MIN),
    A("argMinIf", 3, 3, QR_ARG0, Q_T_ANY, false, Q_FN_ARG_MIN_IF),
    /* NULL where ClickHouse answers nan (no values; one for the Samp forms) */
    A("varPop", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_VAR_POP),
    A("varPopIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_VAR_POP_IF),
    A("varSamp", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_VAR_SAMP),
    A("varSampIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_VAR_SAMP_IF),
    A("stddevPop", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_STDDEV_POP),
    A("stddevPopIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_STDDEV_POP_IF),
    A("stddevSamp", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_STDDEV_SAMP),
    A("stddevSampIf", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_STDDEV_SAMP_IF),
    A("covarPop", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_COVAR_POP),
    A("covarPopIf", 3, 3, QR_FIXED, Q_T_FLOAT, true, Q_FN_COVAR_POP_IF),
    A("covarSamp", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_COVAR_SAMP),
    A("covarSampIf", 3, 3, QR_FIXED, Q_T_FLOAT, true, Q_FN_COVAR_SAMP_IF),
    A("corr", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_CORR),
    {"quantileIf", 2, 2, QF_AGGREGATE, QR_FIXED, Q_T_FLOAT, true, 1, Q_FN_QUANTILE_IF},
    /* the value at position floor(level * n) of the sorted values, not interpolated */
    {"quantileExact", 1, 1, QF_AGGREGATE, QR_ARG0, Q_T_ANY, false, 1, Q_FN_QUANTILE_EXACT},
    A("medianExact", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_MEDIAN_EXACT),
    A("medianExactIf", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_MEDIAN_EXACT_IF),
    /* (more aggregates above this line) */

    /* dates and times: in the project's zone unless one is named (a last
     * 'zone' argument); PostHog's names and arities (its mapping.py) */
    F("toDate", 1, 2, QR_FIXED, Q_T_DATE, false, Q_FN_TO_DATE),
    F("toDateTime", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_TO_DATETIME),
    F("toStartOfMinute", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_MINUTE),
    F("toStartOfHour", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_HOUR),
    F("toStartOfDay", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_DAY),
    F("toStartOfWeek", 1, 3, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_WEEK),
    F("toStartOfMonth", 1, 2, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_MONTH),
    F("toStartOfYear", 1, 2, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_YEAR),
    F("toYear", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_YEAR),
    F("toMonth", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_MONTH),
    F("toDayOfMonth", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_DAY_OF_MONTH),
    F("toDayOfWeek", 1, 3, QR_FIXED, Q_T_INT, false, Q_FN_TO_DAY_OF_WEEK),
    F("toHour", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_HOUR),
    F("toMinute", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_MINUTE),
    F("toTimeZone", 2, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_TO_TIMEZONE),
    F("dateDiff", 3, 4, QR_FIXED, Q_T_INT, false, Q_FN_DATE_DIFF),
    F("date_diff", 3, 4, QR_FIXED, Q_T_INT, false, Q_FN_DATE_DIFF),
    F("dateAdd", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_ADD),
    F("date_add", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_ADD),
    F("dateSub", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_SUB),
    F("date_subtract", 2, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_SUB),
    F("date_sub", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_SUB),
    F("now", 0, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_NOW),
    F("today", 0, 0, QR_FIXED, Q_T_DATE, false, Q_FN_TODAY),
    F("current_date", 0, 0, QR_FIXED, Q_T_DATE, false, Q_FN_TODAY),
    F("current_timestamp", 0, 0, QR_FIXED, Q_T_DATETIME, false, Q_FN_NOW),
    F("toUnixTimestamp", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_UNIX),
    F("fromUnixTimestamp", 1, 1, QR_FIXED, Q_T_DATETIME, false, Q_FN_FROM_UNIX),
    F("toStartOfQuarter", 1, 2, QR_FIXED, Q_T_DATE, false, Q_FN_START_OF_QUARTER),
    F("toStartOfFiveMinutes", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_FIVE_MINUTES),
    F("toStartOfTenMinutes", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_TEN_MINUTES),
    F("toStartOfFifteenMinutes", 1, 2, QR_FIXED, Q_T_DATETIME, false,
      Q_FN_START_OF_FIFTEEN_MINUTES),
    F("toStartOfInterval", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_START_OF_INTERVAL),
    F("dateTrunc", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_TRUNC),
    F("date_trunc", 2, 3, QR_FIXED, Q_T_DATETIME, false, Q_FN_DATE_TRUNC),
    F("toQuarter", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_QUARTER),
    F("toDayOfYear", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_DAY_OF_YEAR),
    F("toSecond", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_SECOND),
    F("toYYYYMM", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_YYYYMM),
    F("toYYYYMMDD", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_YYYYMMDD),
    F("formatDateTime", 2, 3, QR_FIXED, Q_T_STRING, false, Q_FN_FORMAT_DATETIME),
    F("yesterday", 0, 0, QR_FIXED, Q_T_DATE, false, Q_FN_YESTERDAY),
    F("parseDateTimeBestEffort", 1, 2, QR_FIXED, Q_T_DATETIME, false, Q_FN_PARSE_DATETIME),
    F("parseDateTimeBestEffortOrNull", 1, 2, QR_FIXED, Q_T_DATETIME, true,
      Q_FN_PARSE_DATETIME_OR_NULL),
    F("parseDateTimeBestEffortOrZero", 1, 2, QR_FIXED, Q_T_DATETIME, false,
      Q_FN_PARSE_DATETIME_OR_ZERO),
    F("assumeNotNull", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_ASSUME_NOT_NULL),
    F("toIntervalSecond", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_SECOND),
    F("toIntervalMinute", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_MINUTE),
    F("toIntervalHour", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_HOUR),
    F("toIntervalDay", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_DAY),
    F("toIntervalWeek", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_WEEK),
    F("toIntervalMonth", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_MONTH),
    F("toIntervalQuarter", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_QUARTER),
    F("toIntervalYear", 1, 1, QR_FIXED, Q_T_ANY, false, Q_FN_INTERVAL_YEAR),
    F("addSeconds", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_SECONDS),
    F("addMinutes", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_MINUTES),
    F("addHours", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_HOURS),
    F("addDays", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_DAYS),
    F("addWeeks", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_WEEKS),
    F("addMonths", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_MONTHS),
    F("addQuarters", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_QUARTERS),
    F("addYears", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_ADD_YEARS),
    F("subtractSeconds", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_SECONDS),
    F("subtractMinutes", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_MINUTES),
    F("subtractHours", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_HOURS),
    F("subtractDays", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_DAYS),
    F("subtractWeeks", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_WEEKS),
    F("subtractMonths", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_MONTHS),
    F("subtractQuarters", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_QUARTERS),
    F("subtractYears", 2, 2, QR_ARG0, Q_T_ANY, false, Q_FN_SUB_YEARS),
    F("toISOWeek", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_ISO_WEEK),
    F("toISOYear", 1, 2, QR_FIXED, Q_T_INT, false, Q_FN_TO_ISO_YEAR),
    /* toWeek(x[, mode[, zone]]): MySQL's modes 0..7 (SQLite's cm_to_week); 8, 9 ClickHouse 21+ */
    F("toWeek", 1, 3, QR_FIXED, Q_T_INT, false, Q_FN_TO_WEEK),
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
    F("trim", 1, 2, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM),
    F("replaceAll", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_REPLACE_ALL),
    F("position", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_POSITION),
    F("startsWith", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_STARTS_WITH),
    F("endsWith", 2, 2, QR_FIXED, Q_T_BOOL, false, Q_FN_ENDS_WITH),
    F("empty", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_EMPTY),
    F("notEmpty", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_NOT_EMPTY),
    /* part F: spaces only, as trim; URLs as ClickHouse 18.16 reads them */
    F("trimLeft", 1, 2, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM_LEFT),
    F("trimRight", 1, 2, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM_RIGHT),
    F("ltrim", 1, 2, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM_LEFT),
    F("rtrim", 1, 2, QR_ARG0, Q_T_STRING, false, Q_FN_TRIM_RIGHT),
    F("domain", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_DOMAIN),
    F("path", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_PATH),
    F("extractURLParameter", 2, 2, QR_ARG0, Q_T_STRING, false, Q_FN_URL_PARAM),
    F("cutQueryString", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_CUT_QUERY),
    F("positionCaseInsensitive", 2, 2, QR_FIXED, Q_T_INT, false, Q_FN_POSITION_CI),
    F("lengthUTF8", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_LENGTH_UTF8),
    F("replaceOne", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_REPLACE_ONE),
    /* regular expressions: RE2's syntax, constant patterns (query/regex.c) */
    F("match", 2, 2, QR_FIXED, Q_T_BOOL, true, Q_FN_MATCH),
    F("extract", 2, 2, QR_ARG0, Q_T_STRING, false, Q_FN_EXTRACT),
    F("replaceRegexpOne", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_REPLACE_RE_ONE),
    F("replaceRegexpAll", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_REPLACE_RE_ALL),
    F("decodeURLComponent", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_DECODE_URL),
    F("substringUTF8", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_SUBSTRING_UTF8),
    F("reverse", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_REVERSE),
    /* ClickHouse 21.8+ and SQLite (18.16 has none of them) */
    F("leftPad", 2, 3, QR_ARG0, Q_T_STRING, false, Q_FN_LEFT_PAD),
    F("rightPad", 2, 3, QR_ARG0, Q_T_STRING, false, Q_FN_RIGHT_PAD),
    F("repeat", 2, 2, QR_ARG0, Q_T_STRING, false, Q_FN_REPEAT),
    F("lpad", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_LEFT_PAD),
    F("rpad", 3, 3, QR_ARG0, Q_T_STRING, false, Q_FN_RIGHT_PAD),
    F("hex", 1, 1, QR_FIXED, Q_T_STRING, true, Q_FN_HEX),
    /* ClickHouse 21.3+ (Debian's 18.16 is built without them) and SQLite */
    F("base64Encode", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_BASE64_ENCODE),
    F("base64Decode", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_BASE64_DECODE),
    F("tryBase64Decode", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_TRY_BASE64_DECODE),
    /* code points' simple case mappings of the same UTF-8 length (db_sqlite_text.c) */
    F("lowerUTF8", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_LOWER_UTF8),
    F("upperUTF8", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_UPPER_UTF8),
    /* ClickHouse 21+ (not in 18.16) and SQLite */
    F("encodeURLComponent", 1, 1, QR_ARG0, Q_T_STRING, false, Q_FN_ENCODE_URL),
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
    /* part F: toInt/toFloat already answer NULL for text that is no number */
    F("toIntOrNull", 1, 1, QR_FIXED, Q_T_INT, true, Q_FN_TO_INT),
    F("toInt64OrNull", 1, 1, QR_FIXED, Q_T_INT, true, Q_FN_TO_INT),
    F("toFloatOrNull", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_TO_FLOAT),
    F("toFloat64OrNull", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_TO_FLOAT),
    F("toIntOrZero", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_INT_OR_ZERO),
    F("toInt64OrZero", 1, 1, QR_FIXED, Q_T_INT, false, Q_FN_TO_INT_OR_ZERO),
    F("toFloatOrZero", 1, 1, QR_FIXED, Q_T_FLOAT, false, Q_FN_TO_FLOAT_OR_ZERO),
    F("toFloat64OrZero", 1, 1, QR_FIXED, Q_T_FLOAT, false, Q_FN_TO_FLOAT_OR_ZERO),
    /* math as doubles; NULL where ClickHouse answers nan or an infinity */
    F("pow", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_POW),
    F("power", 2, 2, QR_FIXED, Q_T_FLOAT, true, Q_FN_POW),
    F("sqrt", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_SQRT),
    F("exp", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_EXP),
    F("log", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_LOG),
    F("ln", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_LOG),
    F("log2", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_LOG2),
    F("log10", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_LOG10),
    F("exp2", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_EXP2),
    F("exp10", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_EXP10),
    F("sin", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_SIN),
    F("cos", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_COS),
    F("tan", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_TAN),
    F("asin", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_ASIN),
    F("acos", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_ACOS),
    F("atan", 1, 1, QR_FIXED, Q_T_FLOAT, true, Q_FN_ATAN),
    F("pi", 0, 0, QR_FIXED, Q_T_FLOAT, false, Q_FN_PI),
    F("e", 0, 0, QR_FIXED, Q_T_FLOAT, false, Q_FN_E),
    F("sign", 1, 1, QR_FIXED, Q_T_INT, true, Q_FN_SIGN),
    /* ClickHouse only: a UInt64 SQLite cannot hold */
    F("cityHash64", 1, 16, QR_FIXED, Q_T_INT, false, Q_FN_CITY_HASH64),
    /* NULL for text that is no UUID (18.16 would read garbage, 21+ fail) */
    F("toUUID", 1, 1, QR_FIXED, Q_T_UUID, true, Q_FN_TO_UUID),
    /* a number's x != 0 (a string's reading differs between ClickHouse versions) */
    F("toBool", 1, 1, QR_FIXED, Q_T_BOOL, false, Q_FN_TO_BOOL),
    /* (more conditions and numbers above this line) */

    /* window functions */
    W("row_number", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_ROW_NUMBER),
    W("rank", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_RANK),
    W("dense_rank", 0, 0, QR_FIXED, Q_T_INT, false, Q_FN_DENSE_RANK),
    W("lagInFrame", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LAG),
    W("leadInFrame", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LEAD),
    /* PostHog's PostgreSQL-style names for ClickHouse's InFrame functions */
    W("lag", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LAG),
    W("lead", 1, 3, QR_ARG0, Q_T_ANY, true, Q_FN_LEAD),
    W("first_value", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_FIRST_VALUE),
    W("last_value", 1, 1, QR_ARG0, Q_T_ANY, false, Q_FN_LAST_VALUE),
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
    /* a string cut at a constant separator: Array(String) */
    F("splitByChar", 2, 2, QR_FIXED, Q_T_ARRAY, false, Q_FN_SPLIT_BY_CHAR),
    F("splitByString", 2, 2, QR_FIXED, Q_T_ARRAY, false, Q_FN_SPLIT_BY_STRING),
    /* the values summed per key: a tuple (keys sorted, values), zero sums dropped */
    A("sumMap", 2, 2, QR_FIXED, Q_T_TUPLE, false, Q_FN_SUM_MAP),
    /* (more arrays above this line) */
};

/* Names are case-sensitive, as PostHog's, but for the ones PostHog also
 * takes in any letter case (its functions marked case-insensitive, keyed
 * in lower case: COUNT, SuM, IFNULL, isnull, ...). */
static bool any_case(cm_slice_t name)
{
    static const char *const names[] = {
        "not",     "if",     "least",   "greatest", "count",     "min",     "max",      "sum",
        "avg",     "abs",    "max2",    "min2",     "length",    "reverse", "isnull",   "coalesce",
        "ifnull",  "nullif", "now",     "exp",      "log",       "ln",      "log2",     "log10",
        "sqrt",    "sin",    "cos",     "tan",      "asin",      "acos",    "atan",     "pow",
        "power",   "sign",   "degrees", "radians",  "factorial", "floor",   "ceil",     "trunc",
        "round",   "lower",  "upper",   "concat",   "substring", "ascii",   "position", "extract",
        "replace", "btrim",  "trim",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == name.len && strncasecmp(names[i], name.p, name.len) == 0)
            return true;
    return false;
}

const q_fn_t *q_fn_lookup(cm_slice_t name)
{
    if (name.len == 0)
        return NULL;
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) /* first letters first: cheap */
        if (fns[i].name[0] == name.p[0] && strlen(fns[i].name) == name.len &&
            memcmp(fns[i].name, name.p, name.len) == 0)
            return &fns[i];
    if (!any_case(name))
        return NULL;
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (strlen(fns[i].name) == name.len && strncasecmp(fns[i].name, name.p, name.len) == 0)
            return &fns[i];
    return NULL;
}

const char *q_fn_suggest(cm_slice_t name)
{
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (strlen(fns[i].name) == name.len && strncasecmp(fns[i].name, name.p, name.len) == 0)
            return fns[i].name;
    return NULL;
}
