/*
 * store_error.c - what a user is told when the event store fails a query
 * that the compiler accepted (docs/endpoints.md, "Run", the mapping table).
 *
 * The store's own text never reaches the user: ClickHouse quotes the
 * printed SQL and the compiler's internal names (properties_keys, c1_0,
 * the project filter), SQLite its function names. PostHog shows the
 * exception of a user-safe ClickHouse code and a fixed text for the rest;
 * here every known code gets a fixed text of ours, written for the HogQL
 * the user wrote, under PostHog's code name (lower case, as its
 * validation errors carry it), and the same failure on SQLite gets the
 * same answer. The raw text is the caller's to log, with the request id.
 */
#include <string.h>

#include "endpoints/endpoints_int.h"

#define PARSE_TEXT                                                                                 \
    "a value cannot be converted to the type asked for. Use the OrNull or OrZero form of the "     \
    "conversion (toInt64OrNull, toFloatOrZero, ...) to get NULL or 0 for such values."
#define TYPE_TEXT                                                                                  \
    "a function was given an argument of a type it does not take. Convert the argument first "     \
    "(toString, toFloat, toDateTime, ...)."
#define RANGE_TEXT "a function was given an argument outside the values it takes."
#define DATA_TEXT                                                                                  \
    "the query reads or builds more data than the limit allows. Use a shorter date range, add "    \
    "filters, or add a LIMIT."
#define COMPLEX_TEXT                                                                               \
    "the query is too complex to run. Use fewer nested subqueries, conditions, or values in IN "   \
    "lists."
#define MEMORY_TEXT                                                                                \
    "the query reached the memory limit before completing. Narrow the date range, or "             \
    "materialize the endpoint."

/* ClickHouse's codes (its ErrorCodes.cpp) that a query of accepted HogQL
 * can meet at run time. The compiler's own faults (SYNTAX_ERROR,
 * UNKNOWN_IDENTIFIER, ...) are not here: they get the generic answer
 * naming the request, for the operator to look up. */
static const api_endpoints__store_error_t ch_codes[] = {
    {6, 400, "cannot_parse_text", PARSE_TEXT},
    {27, 400, "cannot_parse_input_assertion_failed", PARSE_TEXT},
    {32, 400, "attempt_to_read_after_eof", PARSE_TEXT},
    {36, 400, "bad_arguments", RANGE_TEXT},
    {38, 400, "cannot_parse_date", PARSE_TEXT},
    {41, 400, "cannot_parse_datetime", PARSE_TEXT},
    {43, 400, "illegal_type_of_argument", TYPE_TEXT},
    {44, 400, "illegal_column", TYPE_TEXT},
    {53, 400, "type_mismatch",
     "values of different types are compared or combined. Convert one side first."},
    {69, 400, "argument_out_of_bound", RANGE_TEXT},
    {70, 400, "cannot_convert_type", PARSE_TEXT},
    {72, 400, "cannot_parse_number", PARSE_TEXT},
    {128, 400, "too_large_array_size", "an array is larger than the event store allows."},
    {135, 400, "zero_array_or_tuple_index",
     "an index is 0: SQL indexes start from one (substring, arrays, tuples)."},
    {153, 400, "illegal_division",
     "integer division by zero (intDiv or modulo). Guard the divisor, or use / which answers "
     "inf or nan."},
    {160, 400, "too_slow",
     "the query's estimated execution time is too long. Try reducing its scope by changing the "
     "time range."},
    {167, 400, "too_deep_ast", COMPLEX_TEXT},
    {168, 400, "too_big_ast", COMPLEX_TEXT},
    {191, 400, "set_size_limit_exceeded", DATA_TEXT},
    {202, 503, "too_many_simultaneous_queries",
     "the event store is too busy right now. Try again shortly."},
    {241, 400, "memory_limit_exceeded", MEMORY_TEXT},
    {306, 400, "too_deep_recursion", COMPLEX_TEXT},
    {376, 400, "cannot_parse_uuid", PARSE_TEXT},
    {386, 400, "no_common_type",
     "values without a common type are combined (the branches of if or CASE, the elements of an "
     "array, the columns of a UNION). Convert them to one type first."},
    {394, 400, "query_was_cancelled",
     "the event store stopped the query before it finished. Run the query again."},
    {427, 400, "cannot_compile_regexp",
     "a regular expression cannot be compiled. Check its syntax (RE2's)."},
    {467, 400, "cannot_parse_bool", PARSE_TEXT},
};

/* Failures known by their words, not a code: SQLite's messages
 * (sqlite3_errmsg's, and the ones the evstore's functions raise) and the
 * exceptions ClickHouse prints without an error code of its own. An entry
 * whose ch_code is set answers as that code; its own text otherwise. */
static const struct {
    const char *words;
    api_endpoints__store_error_t e;
} by_words[] = {
    {"string or blob too big", {191, 0, NULL, NULL}},
    {"too many terms in compound", {168, 0, NULL, NULL}},
    {"Expression tree is too large", {167, 0, NULL, NULL}},
    {"parser stack overflow", {167, 0, NULL, NULL}},
    {"too many columns", {168, 0, NULL, NULL}},
    {"too many SQL variables", {168, 0, NULL, NULL}},
    {"out of memory", {241, 0, NULL, NULL}},
    {"database is locked", {202, 0, NULL, NULL}},
    {"regular expression", {427, 0, NULL, NULL}},
    {"Cannot parse", {6, 0, NULL, NULL}},
    {"Illegal type", {43, 0, NULL, NULL}},
    {"Division by zero", {153, 0, NULL, NULL}},
    /* ClickHouse: SYNTAX_ERROR, but the query's size, not the compiler's
     * fault (PostHog: "Query size exceeded.") */
    {"query size exceeded",
     {0, 400, "query_size_exceeded",
      "the query is too large to run. Use fewer values in IN lists, or fewer conditions."}},
    /* ClickHouse wraps an Int64 sum around; SQLite stops: refused, never a
     * wrapped number */
    {"integer overflow",
     {0, 400, "integer_overflow",
      "an integer result is past the 64-bit range. Compute it on floats (toFloat) instead."}},
    /* ClickHouse 18.16: "Poco::Exception. Code: 1000, ... Cannot load time zone X" */
    {"Cannot load time zone",
     {0, 400, "bad_arguments",
      "a time zone is not known. Use an IANA name such as Europe/Berlin."}},
};

static const api_endpoints__store_error_t *by_code(int code)
{
    for (size_t i = 0; i < sizeof(ch_codes) / sizeof(ch_codes[0]); i++)
        if (ch_codes[i].ch_code == code)
            return &ch_codes[i];
    return NULL;
}

const api_endpoints__store_error_t *api_endpoints__store_error(const char *err)
{
    if (err == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof(by_words) / sizeof(by_words[0]); i++)
        if (strstr(err, by_words[i].words) != NULL)
            return by_words[i].e.ch_code ? by_code(by_words[i].e.ch_code) : &by_words[i].e;
    /* ClickHouse: "HTTP 500: Code: 43, e.displayText() = DB::Exception: ..."
     * (18.16) or "Code: 43. DB::Exception: ..." (newer) */
    const char *c = strstr(err, "Code: ");
    if (c == NULL)
        return NULL;
    int code = 0; /* ClickHouse's codes have at most 4 digits: more is no code */
    size_t n = 0;
    for (c += 6; c[n] >= '0' && c[n] <= '9' && n < 6; n++)
        code = code * 10 + (c[n] - '0');
    return n > 0 && n < 6 ? by_code(code) : NULL;
}
