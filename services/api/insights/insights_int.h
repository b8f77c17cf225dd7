/*
 * insights_int.h - what the insights files share (daterange.c: the time
 * axis; filters.c: property filters and breakdowns as HogQL; trends.c: the
 * TrendsQuery plan and its answer). Not seen outside insights/.
 */
#ifndef API_INSIGHTS_INT_H
#define API_INSIGHTS_INT_H

#include "insights/insights.h"

#define INS_MAX_BUCKETS 5000

typedef enum { INS_HOUR, INS_DAY, INS_WEEK, INS_MONTH } ins_interval_t;

/* The time axis: bucket i is [start[i], start[i + 1]) in UTC seconds; its
 * wall-clock start in the zone is local[i] (seconds as if local were UTC).
 * Events are read from begin (the start of date_from's day, or hour when
 * hourly: a week's or month's first bucket is partial, as its label says)
 * up to (not including) end (after date_to's day or hour). */
typedef struct {
    ins_interval_t interval;
    size_t n;
    int64_t *start; /* n + 1 */
    int64_t *local; /* n */
    int64_t begin, end;
    int64_t from_local, to_local; /* the range asked, wall clock, both ends in */
} ins_range_t;

/* insight.c: a JSON string's text, unescaped, in a new allocation; NULL
 * when v is not a string. */
char *api_insights__str_dup(cm_json_t v);

/* "hour", "day", "week", "month" (NULL or absent: day). -1 for another. */
int api_insights__interval(cm_slice_t name);
/* The axis for date_from / date_to (absent: "-7d" / now). 0, or CM_EINVAL
 * with a message in err. */
int api_insights__range(cm_slice_t date_from, cm_slice_t date_to, ins_interval_t iv,
                        const cm_tzone_t *zone, int64_t now_s, int monday, ins_range_t *r,
                        cm_buf_t *err);
void api_insights__range_free(ins_range_t *r);
/* The day axis r (interval day) with days more days before its first:
 * the same buckets, shifted by days (its begin is the first new day's). */
int api_insights__days_before(const ins_range_t *r, int days, const cm_tzone_t *zone,
                              ins_range_t *out, cm_buf_t *err);
/* Retention's axis: total periods ending with the one after date_to's day
 * (absent: today), each a cohort (PostHog's QueryDateRangeWithIntervals). */
int api_insights__cohorts(ins_interval_t period, size_t total, cm_slice_t date_to,
                          const cm_tzone_t *zone, int64_t now_s, int monday, ins_range_t *r,
                          cm_buf_t *err);
/* "YYYY-MM-DD" (hours: "YYYY-MM-DD HH:MM:SS") of bucket i. */
void api_insights__day(const ins_range_t *r, size_t i, cm_buf_t *out);
/* PostHog's label of bucket i ("1-Jan-2024", "1-Jan 13:00", "Jan 2024",
 * a week as "1–7 Jan" clipped to the range). */
void api_insights__label(const ins_range_t *r, size_t i, cm_buf_t *out);
/* A UTC instant as "YYYY-MM-DD HH:MM:SS". */
void api_insights__utc_text(int64_t utc_s, char out[24]);

/* ---- filters.c ---- */

/* The variables of one query being built: HogQL text grows in sql, each
 * value is bound as {variables.vN}. */
typedef struct {
    cm_buf_t sql;
    char **names;
    api_query_value_t *values;
    size_t n, cap; /* a STRING value's bytes are its own allocation */
} ins_sql_t;

void api_insights__sql_free(ins_sql_t *q);
/* Appends {variables.vN} bound to a string value. */
void api_insights__bind_str(ins_sql_t *q, cm_slice_t s);
void api_insights__bind_float(ins_sql_t *q, double d);
/* Appends a property's HogQL: properties.`key` or person.properties.`key`.
 * type: "event" (or absent) or "person"; -1 for another. */
int api_insights__property(ins_sql_t *q, cm_slice_t key, cm_slice_t type);
/* Appends " AND (...)" for a property filter list or group (absent:
 * nothing). 0, or CM_EINVAL with a message. */
int api_insights__filters(ins_sql_t *q, cm_json_t filters, cm_buf_t *err);

/* ---- breakdown.c ---- */

#define INS_MAX_BREAKDOWNS 3
#define INS_KEY_SEP        '\x1f' /* between the values of several breakdowns */
#define INS_OTHER          "$$_posthog_breakdown_other_$$"

typedef struct {
    char *property, *type; /* type: "event" (NULL: the same) or "person" */
} ins_breakdown_t;

typedef struct {
    ins_breakdown_t bd[INS_MAX_BREAKDOWNS];
    size_t n;
    size_t limit; /* breakdown_limit */
} ins_breakdowns_t;

/* breakdownFilter: breakdown + breakdown_type, or breakdowns (up to 3),
 * and breakdown_limit. 0, or CM_EINVAL with a message. */
int api_insights__breakdowns_read(ins_breakdowns_t *b, cm_json_t breakdown_filter, cm_buf_t *err);
void api_insights__breakdowns_free(ins_breakdowns_t *b);
/* The breakdown properties' names in a query (borrowed from it). */
size_t api_insights__breakdown_names(cm_json_t query, cm_slice_t *names, size_t max);
/* Appends the key: coalesce(toString(p1), '') [, '\x1f', ...] joined. */
void api_insights__breakdown_key(ins_sql_t *q, const ins_breakdowns_t *b);
/* Appends " AND coalesce(toString(p), '') = <value>" per variable given. */
void api_insights__breakdown_filters(ins_sql_t *q, const ins_breakdowns_t *b, cm_json_t vars);
/* The key the variables select, as the key expression would make it;
 * false without breakdowns. */
bool api_insights__breakdown_var_key(const ins_breakdowns_t *b, cm_json_t vars, cm_buf_t *key);
/* A key as the answer's breakdown_value: its value (null for ''; "Other"),
 * or with several breakdowns an array of them. */
void api_insights__breakdown_value(cm_json_writer_t *w, size_t nbd, const char *key);

/* ---- sql.c ---- */

/* Appends the bucket of the time expression ts (a column or an aggregate
 * of one) as an integer expression 0..n-1. */
void api_insights__bucket(cm_buf_t *b, const ins_range_t *r, const char *ts);
/* The query parses and prints for SQLite and both ClickHouse dialects:
 * 0, or CM_EINVAL with the compiler's message in err. */
int api_insights__compiles(const ins_sql_t *q, cm_buf_t *err);

/* ---- trends.c, retention.c: one plan per kind, behind insight.c ---- */

typedef struct ins_trends ins_trends_t;
int api_insights__trends_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone,
                              int64_t now_s, int monday, ins_trends_t **out, cm_buf_t *err,
                              const char **attr);
void api_insights__trends_free(ins_trends_t *t);
size_t api_insights__trends_variables(cm_json_t query, cm_slice_t *names, size_t max);
const char *api_insights__trends_next(ins_trends_t *t, const char *const **names,
                                      const api_query_value_t **values, size_t *nvalues);
int api_insights__trends_rows(ins_trends_t *t, const void *rows, size_t nrows,
                              api_insight_cell_fn cell, cm_buf_t *err);
void api_insights__trends_write(const ins_trends_t *t, cm_json_writer_t *w);
int api_insights__trends_table(ins_trends_t *t, const ins_sql_t **q, cm_buf_t *err);
int api_insights__trends_code(const ins_trends_t *t, int map[4]);
bool api_insights__trends_key(const ins_trends_t *t, cm_buf_t *key);
const char *api_insights__trends_first_day(const ins_trends_t *t);
bool api_insights__trends_needs_first(const ins_trends_t *t);
bool api_insights__trends_has_more(const ins_trends_t *t);

typedef struct ins_retention ins_retention_t;
int api_insights__retention_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone,
                                 int64_t now_s, int monday, ins_retention_t **out, cm_buf_t *err,
                                 const char **attr);
void api_insights__retention_free(ins_retention_t *r);
size_t api_insights__retention_variables(cm_json_t query, cm_slice_t *names, size_t max);
const char *api_insights__retention_next(ins_retention_t *r, const char *const **names,
                                         const api_query_value_t **values, size_t *nvalues);
int api_insights__retention_rows(ins_retention_t *r, const void *rows, size_t nrows,
                                 api_insight_cell_fn cell, cm_buf_t *err);
void api_insights__retention_write(const ins_retention_t *r, cm_json_writer_t *w);
int api_insights__retention_table(ins_retention_t *r, const ins_sql_t **q, cm_buf_t *err);
int api_insights__retention_code(const ins_retention_t *r, int map[4]);
bool api_insights__retention_has_more(const ins_retention_t *r);
bool api_insights__retention_key(const ins_retention_t *r, cm_buf_t *key);

#endif
