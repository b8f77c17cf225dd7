/*
 * insights.h - insight queries (TrendsQuery) for endpoints: the stored
 * query node -> HogQL SELECTs the query compiler prints for either store ->
 * the insight's answer in PostHog's shape. Pure: no I/O, no loop, no store;
 * the caller runs each query and hands back its rows.
 *
 *   api_insight_t *in;
 *   api_insight_plan(query, vars, zone, now, &in, &err);
 *   while ((hogql = api_insight_next(in, &values)) != NULL) {
 *       compile hogql with values (api_query_parse / api_query_print), run
 *       it, then api_insight_rows(in, rows...)
 *   }
 *   api_insight_write(in, &w);   the "results" array
 *
 * A query may need two rounds: with a breakdown, the first finds the top
 * breakdown_limit values of each series, the second counts them (and
 * "Other") per time bucket. Values reach the compiler as variables
 * ({variables.vN}), never inside the HogQL text.
 *
 * Time: buckets are the project zone's hours, days, weeks (from Sunday)
 * or months (DST included: a day is midnight to midnight, 23 or 25 hours
 * when the clocks change), computed here as UTC instants, so both stores
 * bucket alike without knowing zones. docs/insights.md has the rules.
 */
#ifndef API_INSIGHTS_H
#define API_INSIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "cm/tzone.h"
#include "query/query.h"

typedef struct api_insight api_insight_t;

/* The query's kind is one this module answers ("TrendsQuery"). */
bool api_insight_kind(cm_json_t query);

/* A plan for the stored query with the run's variables (an object, or
 * none: a breakdown property's value filters to it; date_from and date_to
 * replace the query's range), in zone (NULL: UTC) at now (UTC seconds),
 * weeks from the project's week_start (0 Sunday, 1 Monday).
 * 0, or CM_EINVAL with a message for the user in err (attr, if any, names
 * the field at fault: "query" or "variables"). */
int api_insight_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone, int64_t now_s,
                     int week_start, api_insight_t **out, cm_buf_t *err, const char **attr);
void api_insight_free(api_insight_t *in);

/* The variables a query of this kind accepts at run time, for checks and
 * the OpenAPI document: the breakdown properties, then "date_from" and
 * "date_to". n of them, borrowed from query's document. */
size_t api_insight_variables(cm_json_t query, cm_slice_t *names, size_t max);

/* The next query to run (HogQL text, NUL-terminated), with its variables
 * (names v0..vN-1, values) for api_query_print; NULL when the answer is
 * complete. Valid until the next call. */
const char *api_insight_next(api_insight_t *in, const char *const **names,
                             const api_query_value_t **values, size_t *nvalues);

/* The rows of the query api_insight_next gave: nrows rows of text cells
 * (NULL for NULL) read through cell(rows, r, c). 0, or CM_EINVAL with a
 * message in err (more rows than a plan allows). */
typedef const char *(*api_insight_cell_fn)(const void *rows, size_t r, size_t c);
int api_insight_rows(api_insight_t *in, const void *rows, size_t nrows, api_insight_cell_fn cell,
                     cm_buf_t *err);

/* The answer: the "results" array's value; true when "Other" holds values
 * past breakdown_limit (the response's hasMore). */
void api_insight_write(const api_insight_t *in, cm_json_writer_t *w);
bool api_insight_has_more(const api_insight_t *in);

/* ---- materialization (docs/insights.md) ----
 *
 * An insight's table holds the rows of every query its plan runs, for
 * every breakdown value (no ranking limit, no "Other") and without
 * variables, as (q, b, k, p, v): q which query, k the joined breakdown
 * key ('' without breakdowns), b p v its cells. A read plans with the
 * breakdown variables at the table's time and answers each query of the
 * plan from the table's rows of its code and key.
 *
 * Building: api_insight_plan with no variables; while
 * api_insight_needs_first, run api_insight_next's query and give its rows
 * (date_from "all" looks for the first event); then api_insight_table's
 * SELECT makes the table, and api_insight_first_day (non-NULL for "all")
 * is kept to plan reads with as their date_from. */
bool api_insight_needs_first(const api_insight_t *in);
const char *api_insight_table(api_insight_t *in, const char *const **names,
                              const api_query_value_t **values, size_t *nvalues, cm_buf_t *err);
const char *api_insight_first_day(const api_insight_t *in);
/* Reading: for the query api_insight_next gave last, its q and which
 * table columns (1 b, 2 k, 3 p, 4 v) its columns 0..3 are. */
int api_insight_table_code(const api_insight_t *in, int map[4]);
/* The k a read's breakdown variables select; false without breakdowns. */
bool api_insight_table_key(const api_insight_t *in, cm_buf_t *key);

#endif
