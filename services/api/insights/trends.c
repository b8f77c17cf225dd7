/*
 * trends.c - TrendsQuery (see insights.h, docs/insights.md): each series
 * is one SELECT of (bucket, breakdown key, value) over the range; with a
 * breakdown, a first SELECT per series ranks the breakdown keys by the
 * series' own math over the whole range and keeps breakdown_limit of them,
 * the rest counted together as "Other" by the second.
 * The breakdown key: breakdown.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/civil.h"
#include "cm/err.h"
#include "insights/insights_int.h"

#define MAX_SERIES 20
#define OTHER      INS_OTHER
#define SEP        INS_KEY_SEP

typedef struct {
    char *key; /* the joined breakdown values (NULL: no breakdown) */
    double *data;
    double total;
} bucket_row_t;

typedef struct {
    cm_json_t node; /* the EventsNode (borrowed from the query's document) */
    char *event;    /* NULL: all events */
    char *math;
    char *math_property;
    const char *level; /* median, p75..p99: the quantile's */
    int window;        /* weekly_active 7, monthly_active 30 (days): else 0 */
    char **top;        /* stage 0's keys, ranked */
    size_t ntop;
    bool other;
    bucket_row_t *rows;
    size_t nrows, caprows;
} series_t;

struct ins_trends {
    ins_range_t range;
    series_t series[MAX_SERIES];
    size_t nseries;
    ins_breakdowns_t bd;
    ins_range_t wide; /* the days before too, for the active-users windows */
    const cm_tzone_t *zone;
    /* date_from "all": the range starts with the project's first event,
     * which a first query finds (stage -1); until then it is date_to's day */
    bool all;
    char *date_to;
    ins_interval_t iv;
    int64_t now;
    int monday;         /* weeks from Monday (the project's week_start_day 1) */
    cm_json_t props;    /* the query's properties, ANDed onto every series */
    cm_json_t vars;     /* the run's variables */
    int stage;          /* 0: rank breakdown keys; 1: count per bucket; 2: done */
    bool table;         /* building a materialized table: every key, no limit */
    char first_day[16]; /* date_from "all": the day it came to ("" before) */
    size_t cur;         /* the series the pending query is for */
    ins_sql_t q;
};

void api_insights__trends_free(ins_trends_t *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->nseries; i++) {
        series_t *s = &in->series[i];
        free(s->event);
        free(s->math);
        free(s->math_property);
        for (size_t j = 0; j < s->ntop; j++)
            free(s->top[j]);
        free(s->top);
        for (size_t j = 0; j < s->nrows; j++) {
            free(s->rows[j].key);
            free(s->rows[j].data);
        }
        free(s->rows);
    }
    api_insights__breakdowns_free(&in->bd);
    api_insights__range_free(&in->range);
    api_insights__range_free(&in->wide);
    free(in->date_to);
    api_insights__sql_free(&in->q);
    free(in);
}

/* ---- the query node ---- */

/* A series' math; those from sum on aggregate a numeric math_property. */
static const struct {
    const char *name;
    const char *level; /* the quantiles' */
} MATHS[] = {
    {"total", NULL},
    {"dau", NULL},
    {"weekly_active", NULL},
    {"monthly_active", NULL},
    {"unique_session", NULL},
    {"sum", NULL},
    {"avg", NULL},
    {"min", NULL},
    {"max", NULL},
    {"median", "0.5"},
    {"p75", "0.75"},
    {"p90", "0.9"},
    {"p95", "0.95"},
    {"p99", "0.99"},
};
#define FIRST_PROPERTY_MATH 5

static int read_series(ins_trends_t *in, cm_json_t list, cm_buf_t *err)
{
    if (cm_json_type(list) != CM_JSON_ARRAY || cm_json_len(list) == 0) {
        cm_buf_appendf(err, "A TrendsQuery needs series: a list of EventsNode");
        return CM_EINVAL;
    }
    if (cm_json_len(list) > MAX_SERIES) {
        cm_buf_appendf(err, "At most %d series", MAX_SERIES);
        return CM_EINVAL;
    }
    for (size_t i = 0; i < cm_json_len(list); i++) {
        cm_json_t n = cm_json_at(list, i);
        series_t *s = &in->series[in->nseries++];
        s->node = n;
        if (!cm_json_str_eq(cm_json_get(n, "kind"), CM_SLICE_LIT("EventsNode"))) {
            cm_buf_appendf(err, "series[%zu]: only EventsNode series are supported", i);
            return CM_EINVAL;
        }
        cm_json_t ev = cm_json_get(n, "event");
        if (!cm_json_is_null(ev) && cm_json_exists(ev) &&
            (s->event = api_insights__str_dup(ev)) == NULL) {
            cm_buf_appendf(err, "series[%zu]: event must be a string or null", i);
            return CM_EINVAL;
        }
        cm_json_t m = cm_json_get(n, "math");
        s->math = cm_json_exists(m) && !cm_json_is_null(m) ? api_insights__str_dup(m)
                                                           : cm_xstrdup("total");
        size_t k = s->math ? 0 : sizeof(MATHS) / sizeof(MATHS[0]); /* not a string: unknown */
        while (k < sizeof(MATHS) / sizeof(MATHS[0]) && strcmp(s->math, MATHS[k].name))
            k++;
        if (k == sizeof(MATHS) / sizeof(MATHS[0])) {
            cm_buf_appendf(err,
                           "series[%zu]: math '%s' is not supported: total, dau, "
                           "weekly_active, monthly_active, unique_session, sum, avg, min, "
                           "max, median, p75, p90, p95 or p99",
                           i, s->math ? s->math : "?");
            return CM_EINVAL;
        }
        s->level = MATHS[k].level;
        s->window = strcmp(s->math, "weekly_active") == 0    ? 7
                    : strcmp(s->math, "monthly_active") == 0 ? 30
                                                             : 0;
        if (k >= FIRST_PROPERTY_MATH) {
            s->math_property = api_insights__str_dup(cm_json_get(n, "math_property"));
            if (s->math_property == NULL || s->math_property[0] == '\0') {
                cm_buf_appendf(err, "series[%zu]: math '%s' needs a math_property", i, s->math);
                return CM_EINVAL;
            }
        }
    }
    return 0;
}

size_t api_insights__trends_variables(cm_json_t query, cm_slice_t *names, size_t max)
{
    size_t n = api_insights__breakdown_names(query, names, max);
    if (n < max)
        names[n++] = CM_SLICE_LIT("date_from");
    if (n < max)
        names[n++] = CM_SLICE_LIT("date_to");
    return n;
}

static int rank_query(ins_trends_t *in, const series_t *s, cm_buf_t *err);
static int count_query(ins_trends_t *in, const series_t *s, cm_buf_t *err);

static cm_slice_t date_var(cm_json_t vars, const char *name, cm_json_t dflt)
{
    cm_json_t v = cm_json_get(vars, name);
    if (cm_json_type(v) != CM_JSON_STRING)
        v = dflt;
    return cm_json_type(v) == CM_JSON_STRING ? cm_json_str_inner(v) : CM_SLICE_NULL;
}

static const char *const IV_NAMES[] = {"hourly", "daily", "weekly", "monthly"};

/* The answer's size, known before anything runs: buckets x breakdown
 * values kept (and "Other") x series, each a number of the answer and a
 * row of a count query. Past the answer-row cap (API_QUERY_MAX_ROWS) the
 * insight is refused at once, rather than run for its rows to be counted
 * (an hourly range of months by 10,000 values is 50 million). */
static int check_cells(const ins_trends_t *in, cm_buf_t *err)
{
    uint64_t values = in->bd.n ? (uint64_t)in->bd.limit + 1 : 1;
    uint64_t cells = (uint64_t)in->range.n * values * in->nseries;
    if (cells <= API_QUERY_MAX_ROWS)
        return 0;
    cm_buf_appendf(err,
                   "This insight would answer %llu values (%zu %s buckets x %llu breakdown "
                   "values x %zu series), more than %d: choose a longer interval, a shorter date "
                   "range or a lower breakdown_limit.",
                   (unsigned long long)cells, in->range.n, IV_NAMES[in->range.interval],
                   (unsigned long long)values, in->nseries, API_QUERY_MAX_ROWS);
    return CM_EINVAL;
}

int api_insights__trends_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone,
                              int64_t now_s, int monday, ins_trends_t **out, cm_buf_t *err,
                              const char **attr)
{
    ins_trends_t *in = cm_xcalloc(1, sizeof(*in));
    *attr = "query";
    int rc = read_series(in, cm_json_get(query, "series"), err);
    if (rc == 0)
        rc = api_insights__breakdowns_read(&in->bd, cm_json_get(query, "breakdownFilter"), err);
    int iv = api_insights__interval(cm_json_str_inner(cm_json_get(query, "interval")));
    if (rc == 0 && iv < 0) {
        cm_buf_appendf(err, "interval must be hour, day, week or month");
        rc = CM_EINVAL;
    }
    if (rc == 0) {
        cm_json_t dr = cm_json_get(query, "dateRange");
        bool by_var = cm_json_type(cm_json_get(vars, "date_from")) == CM_JSON_STRING ||
                      cm_json_type(cm_json_get(vars, "date_to")) == CM_JSON_STRING;
        cm_slice_t from = date_var(vars, "date_from", cm_json_get(dr, "date_from"));
        cm_slice_t to = date_var(vars, "date_to", cm_json_get(dr, "date_to"));
        in->iv = (ins_interval_t)iv;
        in->now = now_s;
        in->monday = monday;
        if (cm_slice_eq_cstr(from, "all")) {
            in->all = true;
            if (to.p != NULL) {
                in->date_to = cm_xmalloc(to.len + 1);
                memcpy(in->date_to, to.p, to.len);
                in->date_to[to.len] = '\0';
            }
            from = to.p != NULL ? to : CM_SLICE_LIT("dStart"); /* for now */
        }
        rc =
            api_insights__range(from, to, (ins_interval_t)iv, zone, now_s, monday, &in->range, err);
        if (rc == 0 && !in->all)
            rc = check_cells(in, err);
        if (rc != 0 && by_var)
            *attr = "variables";
    }
    if (rc != 0) {
        api_insights__trends_free(in);
        return CM_EINVAL;
    }
    in->props = cm_json_get(query, "properties");
    in->vars = vars;
    in->zone = zone;
    in->stage = in->all ? -1 : in->bd.n ? 0 : 1;
    int window = 0;
    for (size_t i = 0; i < in->nseries; i++)
        window = in->series[i].window > window ? in->series[i].window : window;
    if (window && (in->range.interval != INS_DAY ||
                   api_insights__days_before(&in->range, window - 1, zone, &in->wide, err) != 0)) {
        if (err->len == 0)
            cm_buf_appendf(err, "weekly_active and monthly_active need the day interval");
        api_insights__trends_free(in);
        return CM_EINVAL;
    }
    /* every series' queries once now, for both stores, so that a run
     * cannot fail on what the query node asks (a property name one store
     * cannot read, say) */
    for (size_t i = 0; i < in->nseries; i++) {
        for (int stage = in->bd.n ? 0 : 1; stage < 2; stage++) {
            int rc2 = stage == 0 ? rank_query(in, &in->series[i], err)
                                 : count_query(in, &in->series[i], err);
            if (rc2 == 0)
                rc2 = api_insights__compiles(&in->q, err);
            api_insights__sql_free(&in->q);
            if (rc2 != 0) {
                api_insights__trends_free(in);
                return CM_EINVAL;
            }
        }
    }
    *out = in;
    return 0;
}

/* ---- the queries ---- */

/* The series' math as an aggregate. */
static void aggregate(ins_sql_t *q, const series_t *s)
{
    if (strcmp(s->math, "total") == 0) {
        cm_buf_append_cstr(&q->sql, "count()");
    } else if (strcmp(s->math, "dau") == 0 || s->window) {
        cm_buf_append_cstr(&q->sql, "uniq(person_id)");
    } else if (strcmp(s->math, "unique_session") == 0) {
        cm_buf_append_cstr(&q->sql, "uniq(nullIf($session_id, ''))");
    } else if (s->level != NULL) {
        cm_buf_appendf(&q->sql, "ifNull(quantile(%s)(toFloat(", s->level);
        api_insights__property(q, cm_slice_from_cstr(s->math_property), CM_SLICE_NULL);
        cm_buf_append_cstr(&q->sql, ")), 0)");
    } else {
        cm_buf_appendf(&q->sql, "ifNull(%s(toFloat(", s->math);
        api_insights__property(q, cm_slice_from_cstr(s->math_property), CM_SLICE_NULL);
        cm_buf_append_cstr(&q->sql, ")), 0)");
    }
}

/* FROM events WHERE <range> [AND event] [AND filters] [AND variables]. */
static int where(ins_trends_t *in, const series_t *s, const ins_range_t *axis, cm_buf_t *err)
{
    ins_sql_t *q = &in->q;
    char from[24], to[24];
    api_insights__utc_text(axis->begin, from);
    api_insights__utc_text(in->range.end, to);
    cm_buf_appendf(&q->sql,
                   " FROM events WHERE timestamp >= toDateTime('%s') AND timestamp < "
                   "toDateTime('%s')",
                   from, to);
    if (s->event) {
        cm_buf_append_cstr(&q->sql, " AND event = ");
        api_insights__bind_str(q, cm_slice_from_cstr(s->event));
    }
    int rc = api_insights__filters(q, cm_json_get(s->node, "properties"), err);
    if (rc == 0)
        rc = api_insights__filters(q, in->props, err);
    if (rc == 0)
        api_insights__breakdown_filters(q, &in->bd, in->vars);
    return rc;
}

/* Stage 0: the series' breakdown keys, best first, one more than kept. */
static int rank_query(ins_trends_t *in, const series_t *s, cm_buf_t *err)
{
    cm_buf_append_cstr(&in->q.sql, "SELECT ");
    api_insights__breakdown_key(&in->q, &in->bd);
    cm_buf_append_cstr(&in->q.sql, " AS k, ");
    aggregate(&in->q, s);
    cm_buf_append_cstr(&in->q.sql, " AS v");
    int rc = where(in, s, &in->range, err);
    cm_buf_append_cstr(&in->q.sql, " GROUP BY k");
    if (!in->table)
        cm_buf_appendf(&in->q.sql, " ORDER BY v DESC, k LIMIT %zu", in->bd.limit + 1);
    return rc;
}

/* The breakdown key as the count query selects it: the key, the key or
 * Other when some were not kept, or nothing. */
static void key_select(ins_trends_t *in, const series_t *s)
{
    ins_sql_t *q = &in->q;
    if (in->bd.n && s->other) {
        cm_buf_append_cstr(&q->sql, "if(");
        api_insights__breakdown_key(&in->q, &in->bd);
        cm_buf_append_cstr(&q->sql, " IN (");
        for (size_t i = 0; i < s->ntop; i++) {
            if (i)
                cm_buf_append_cstr(&q->sql, ", ");
            api_insights__bind_str(q, cm_slice_from_cstr(s->top[i]));
        }
        cm_buf_append_cstr(&q->sql, "), ");
        api_insights__breakdown_key(&in->q, &in->bd);
        cm_buf_append_cstr(&q->sql, ", ");
        api_insights__bind_str(q, CM_SLICE_LIT(OTHER));
        cm_buf_append_cstr(&q->sql, ")");
    } else if (in->bd.n) {
        api_insights__breakdown_key(&in->q, &in->bd);
    } else {
        cm_buf_append_cstr(&q->sql, "''");
    }
}

/* weekly_active / monthly_active: day x's people count on days x to
 * x + window - 1 (each day's trailing window ends with it). The inner
 * query reads the days before the range too (in->wide: its day j is the
 * range's day j - shift); a cross join with 0..window-1 spreads each
 * (person, day) over the days it counts on. */
static int window_query(ins_trends_t *in, const series_t *s, cm_buf_t *err)
{
    ins_sql_t *q = &in->q;
    size_t shift = in->wide.n - in->range.n;
    cm_buf_appendf(&q->sql,
                   "SELECT e.d + n.o - %zu AS b, e.k AS k, uniq(e.person_id) AS v FROM "
                   "(SELECT person_id, ",
                   shift);
    api_insights__bucket(&q->sql, &in->wide, "timestamp");
    cm_buf_append_cstr(&q->sql, " AS d, ");
    key_select(in, s);
    cm_buf_append_cstr(&q->sql, " AS k");
    int rc = where(in, s, &in->wide, err);
    cm_buf_append_cstr(&q->sql, " GROUP BY person_id, d, k) AS e CROSS JOIN (SELECT 0 AS o");
    for (int i = 1; i < s->window; i++)
        cm_buf_appendf(&q->sql, " UNION ALL SELECT %d", i);
    cm_buf_appendf(&q->sql, ") AS n WHERE e.d + n.o >= %zu AND e.d + n.o < %zu GROUP BY b, k",
                   shift, shift + in->range.n);
    return rc;
}

/* Stage 1: the series per bucket (and kept key, or Other). */
static int count_query(ins_trends_t *in, const series_t *s, cm_buf_t *err)
{
    if (s->window)
        return window_query(in, s, err);
    ins_sql_t *q = &in->q;
    cm_buf_append_cstr(&q->sql, "SELECT ");
    api_insights__bucket(&q->sql, &in->range, "timestamp");
    cm_buf_append_cstr(&q->sql, " AS b, ");
    key_select(in, s);
    cm_buf_append_cstr(&q->sql, " AS k, ");
    aggregate(q, s);
    cm_buf_append_cstr(&q->sql, " AS v");
    int rc = where(in, s, &in->range, err);
    /* never a constant in GROUP BY (SQLite reads an integer as a position) */
    if (in->range.n > 1 || in->bd.n)
        cm_buf_appendf(&q->sql, " GROUP BY %s",
                       in->range.n > 1 && in->bd.n ? "b, k"
                       : in->range.n > 1           ? "b"
                                                   : "k");
    return rc;
}

const char *api_insights__trends_next(ins_trends_t *in, const char *const **names,
                                      const api_query_value_t **values, size_t *nvalues)
{
    if (in->stage > 1)
        return NULL;
    api_insights__sql_free(&in->q);
    if (in->stage == -1) { /* date_from "all": where the project's events begin */
        cm_buf_append_cstr(&in->q.sql, "SELECT min(timestamp) AS first FROM events");
        *names = NULL;
        *values = NULL;
        *nvalues = 0;
        return cm_buf_cstr(&in->q.sql);
    }
    cm_buf_t err = CM_BUF_INIT;
    const series_t *s = &in->series[in->cur];
    int rc = in->stage == 0 ? rank_query(in, s, &err) : count_query(in, s, &err);
    cm_buf_free(&err);
    if (rc != 0) /* filters were checked when planned: see api_insights__trends_plan */
        return NULL;
    *names = (const char *const *)in->q.names;
    *values = in->q.values;
    *nvalues = in->q.n;
    return cm_buf_cstr(&in->q.sql);
}

/* ---- the rows ---- */

static int cmp_rows(const void *a, const void *b)
{
    const bucket_row_t *x = a, *y = b;
    bool xo = strcmp(x->key, OTHER) == 0, yo = strcmp(y->key, OTHER) == 0;
    if (xo != yo)
        return xo ? 1 : -1; /* Other last */
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->key, y->key);
}

static bucket_row_t *row_for(ins_trends_t *in, series_t *s, const char *key)
{
    for (size_t i = 0; i < s->nrows; i++)
        if (strcmp(s->rows[i].key, key) == 0)
            return &s->rows[i];
    if (s->nrows == s->caprows) {
        s->caprows = s->caprows ? s->caprows * 2 : 8;
        s->rows = cm_xrealloc(s->rows, s->caprows * sizeof(*s->rows));
    }
    bucket_row_t *r = &s->rows[s->nrows++];
    r->key = cm_xstrdup(key);
    r->data = cm_xcalloc(in->range.n, sizeof(double));
    r->total = 0;
    return r;
}

/* date_from "all": the range from the first event's day (as the zone
 * sees it), or date_to's day when there is none. */
static int range_from_first(ins_trends_t *in, const char *first, cm_buf_t *err)
{
    char from[24] = "";
    int y, mo, d, h, mi, sec;
    if (first && sscanf(first, "%4d-%2d-%2d%*c%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) == 6) {
        int64_t utc = cm_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
        api_insights__utc_text(utc + cm_tzone_offset(in->zone, utc), from);
        from[10] = '\0'; /* its day */
    }
    cm_slice_t to = in->date_to ? cm_slice_from_cstr(in->date_to) : CM_SLICE_NULL;
    cm_slice_t f = from[0] ? cm_slice_from_cstr(from) : to.p ? to : CM_SLICE_LIT("dStart");
    snprintf(in->first_day, sizeof(in->first_day), "%.*s", (int)(f.len < 15 ? f.len : 15), f.p);
    api_insights__range_free(&in->range);
    int rc = api_insights__range(f, to, in->iv, in->zone, in->now, in->monday, &in->range, err);
    if (rc == 0 && in->wide.n) { /* the active-users windows' days before it too */
        int window = 0;
        for (size_t i = 0; i < in->nseries; i++)
            window = in->series[i].window > window ? in->series[i].window : window;
        api_insights__range_free(&in->wide);
        rc = api_insights__days_before(&in->range, window - 1, in->zone, &in->wide, err);
    }
    return rc != 0 ? rc : check_cells(in, err);
}

int api_insights__trends_rows(ins_trends_t *in, const void *rows, size_t nrows,
                              api_insight_cell_fn cell, cm_buf_t *err)
{
    if (in->stage == -1) {
        int rc = range_from_first(in, nrows ? cell(rows, 0, 0) : NULL, err);
        in->stage = in->bd.n ? 0 : 1;
        return rc;
    }
    series_t *s = &in->series[in->cur];
    if (in->stage == 0) {
        s->other = nrows > in->bd.limit;
        s->ntop = s->other ? in->bd.limit : nrows;
        s->top = cm_xcalloc(s->ntop + 1, sizeof(char *));
        for (size_t i = 0; i < s->ntop; i++) {
            const char *k = cell(rows, i, 0);
            s->top[i] = cm_xstrdup(k ? k : "");
        }
    } else {
        for (size_t i = 0; i < nrows; i++) {
            const char *b = cell(rows, i, 0), *k = cell(rows, i, 1), *v = cell(rows, i, 2);
            long long bi = b ? atoll(b) : -1;
            if (bi < 0 || (size_t)bi >= in->range.n) {
                cm_buf_appendf(err, "a bucket out of the range came back");
                return CM_EINVAL;
            }
            bucket_row_t *r = row_for(in, s, k ? k : "");
            r->data[bi] = v ? strtod(v, NULL) : 0;
            r->total += r->data[bi];
        }
        if (s->nrows > 1)
            qsort(s->rows, s->nrows, sizeof(*s->rows), cmp_rows);
    }
    /* next: every series ranked, then every series counted */
    if (++in->cur == in->nseries) {
        in->cur = 0;
        in->stage++;
    }
    return 0;
}

/* ---- materialization (insights.h) ---- */

/* Every query the plan runs, for every breakdown key and without a
 * variable, as one SELECT of (q, b, k, p, v) rows: q = series * 2 +
 * stage; a rank row (stage 0) has b = -1. Each leg's columns are cast
 * alike (ClickHouse 18.16 wants one type per column across UNION ALL). */
int api_insights__trends_table(ins_trends_t *in, const ins_sql_t **out, cm_buf_t *err)
{
    ins_sql_t *q = &in->q;
    api_insights__sql_free(q);
    in->table = true;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < in->nseries; i++) {
        for (int stage = in->bd.n ? 0 : 1; rc == 0 && stage < 2; stage++) {
            size_t code = i * 2 + (size_t)stage;
            cm_buf_appendf(&q->sql,
                           "%sSELECT toInt(%zu) AS q, %s AS b, ifNull(toString(k), '') AS k, "
                           "toInt(0) AS p, ifNull(toFloat(v), 0) AS v FROM (",
                           q->sql.len ? " UNION ALL " : "", code,
                           stage == 0 ? "toInt(-1)" : "ifNull(toInt(b), 0)");
            rc = stage == 0 ? rank_query(in, &in->series[i], err)
                            : count_query(in, &in->series[i], err);
            cm_buf_appendf(&q->sql, ") AS t%zu", code);
        }
    }
    in->table = false;
    *out = q;
    return rc;
}

/* The query api_insights__trends_next gave last: its code in the table
 * and where its columns are there (rank: k, v; count: b, k, v). */
int api_insights__trends_code(const ins_trends_t *in, int map[4])
{
    int stage = in->stage;
    map[0] = stage == 0 ? 2 : 1;
    map[1] = stage == 0 ? 4 : 2;
    map[2] = 4;
    map[3] = 4;
    return (int)in->cur * 2 + stage;
}

/* The table key a read's breakdown variables select (as where() filters
 * them, joined as breakdown_key() joins them); false without breakdowns. */
bool api_insights__trends_key(const ins_trends_t *in, cm_buf_t *key)
{
    return api_insights__breakdown_var_key(&in->bd, in->vars, key);
}

const char *api_insights__trends_first_day(const ins_trends_t *in)
{
    return in->all && in->first_day[0] ? in->first_day : NULL;
}

bool api_insights__trends_needs_first(const ins_trends_t *in)
{
    return in->stage == -1;
}

/* ---- the answer ---- */

static void label_of(const ins_trends_t *in, const series_t *s, const char *key, cm_buf_t *out)
{
    const char *name = s->event ? s->event : "All events";
    if (in->bd.n == 0) {
        cm_buf_append_cstr(out, name);
        return;
    }
    if (in->nseries > 1)
        cm_buf_appendf(out, "%s - ", name);
    if (strcmp(key, OTHER) == 0) {
        cm_buf_append_cstr(out, "Other");
        return;
    }
    for (const char *p = key;; p++) {
        const char *e = strchr(p, SEP);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0)
            cm_buf_append_cstr(out, "null");
        else
            cm_buf_append(out, p, n);
        if (!e)
            break;
        cm_buf_append_cstr(out, "::");
        p = e;
    }
}

static void write_action(const ins_trends_t *in, const series_t *s, size_t order,
                         cm_json_writer_t *w)
{
    cm_json_key(w, "action");
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    s->event ? cm_json_str_cstr(w, s->event) : cm_json_null(w);
    cm_json_key(w, "type");
    cm_json_str_cstr(w, "events");
    cm_json_key(w, "order");
    cm_json_int(w, (int64_t)order);
    cm_json_key(w, "name");
    cm_json_t name = cm_json_get(s->node, "name");
    if (cm_json_type(name) == CM_JSON_STRING)
        cm_json_value(w, name);
    else
        cm_json_str_cstr(w, s->event ? s->event : "All events");
    cm_json_key(w, "custom_name");
    cm_json_t custom = cm_json_get(s->node, "custom_name");
    cm_json_type(custom) == CM_JSON_STRING ? cm_json_value(w, custom) : cm_json_null(w);
    cm_json_key(w, "math");
    cm_json_str_cstr(w, s->math);
    cm_json_key(w, "math_property");
    s->math_property ? cm_json_str_cstr(w, s->math_property) : cm_json_null(w);
    cm_json_key(w, "math_hogql");
    cm_json_null(w);
    cm_json_key(w, "math_group_type_index");
    cm_json_null(w);
    cm_json_key(w, "days");
    cm_json_begin_array(w);
    cm_buf_t day = CM_BUF_INIT;
    for (size_t i = 0; i < in->range.n; i++) {
        cm_buf_reset(&day);
        api_insights__day(&in->range, i, &day);
        cm_json_str_s(w, cm_buf_slice(&day));
    }
    cm_buf_free(&day);
    cm_json_end_array(w);
    cm_json_key(w, "properties");
    cm_json_begin_object(w);
    cm_json_end_object(w);
    cm_json_end_object(w);
}

static void write_number(cm_json_writer_t *w, double d)
{
    if (!isfinite(d))
        cm_json_null(w);
    else if (d == floor(d) && fabs(d) < 9e15)
        cm_json_int(w, (int64_t)d);
    else
        cm_json_dbl(w, d);
}

static void write_one(const ins_trends_t *in, const series_t *s, size_t order,
                      const bucket_row_t *r, cm_json_writer_t *w)
{
    cm_buf_t text = CM_BUF_INIT;
    cm_json_begin_object(w);
    cm_json_key(w, "data");
    cm_json_begin_array(w);
    for (size_t i = 0; i < in->range.n; i++)
        write_number(w, r ? r->data[i] : 0);
    cm_json_end_array(w);
    cm_json_key(w, "labels");
    cm_json_begin_array(w);
    for (size_t i = 0; i < in->range.n; i++) {
        cm_buf_reset(&text);
        api_insights__label(&in->range, i, &text);
        cm_json_str_s(w, cm_buf_slice(&text));
    }
    cm_json_end_array(w);
    cm_json_key(w, "days");
    cm_json_begin_array(w);
    for (size_t i = 0; i < in->range.n; i++) {
        cm_buf_reset(&text);
        api_insights__day(&in->range, i, &text);
        cm_json_str_s(w, cm_buf_slice(&text));
    }
    cm_json_end_array(w);
    cm_json_key(w, "count");
    write_number(w, r ? r->total : 0);
    cm_json_key(w, "label");
    cm_buf_reset(&text);
    label_of(in, s, r ? r->key : "", &text);
    cm_json_str_s(w, cm_buf_slice(&text));
    if (in->bd.n) {
        cm_json_key(w, "breakdown_value");
        api_insights__breakdown_value(w, in->bd.n, r->key);
    }
    write_action(in, s, order, w);
    cm_json_end_object(w);
    cm_buf_free(&text);
}

void api_insights__trends_write(const ins_trends_t *in, cm_json_writer_t *w)
{
    cm_json_begin_array(w);
    for (size_t i = 0; i < in->nseries; i++) {
        const series_t *s = &in->series[i];
        if (in->bd.n == 0) {
            write_one(in, s, i, s->nrows ? &s->rows[0] : NULL, w);
            continue;
        }
        for (size_t j = 0; j < s->nrows; j++)
            write_one(in, s, i, &s->rows[j], w);
    }
    cm_json_end_array(w);
}

bool api_insights__trends_has_more(const ins_trends_t *in)
{
    for (size_t i = 0; i < in->nseries; i++)
        if (in->series[i].other)
            return true;
    return false;
}
