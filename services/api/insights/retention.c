/*
 * retention.c - RetentionQuery (docs/insights.md, Retention): of the
 * people who did the target event in a period (a cohort), how many did
 * the returning event k periods later, for the last totalIntervals
 * periods. Actors are persons (person_id).
 *
 *   retention_recurring   a person is in every cohort it did the target
 *                         event in (within the range)
 *   retention_first_time  a person is in the one cohort of its first target
 *                         event ever, if that falls within the range
 *
 * Two queries: the cohorts' sizes, then the returns (cohort, k, people)
 * from the target's (person, cohort) pairs joined with the returning
 * event's (person, period) pairs on the person, k > 0. Both are small
 * (n and n^2/2 rows): the join happens in the store.
 *
 * With a breakdown, each breakdown value's retention is the retention of
 * the events with that value, target and returning alike (as if the query
 * were filtered to it, which is what a breakdown variable does): the
 * pairs carry the key g and the join matches it too. The values are
 * ranked by their cohorts' total size, breakdown_limit kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "insights/insights_int.h"

#define DEFAULT_INTERVALS 11
#define MAX_INTERVALS     120
#define MAX_KEPT          100   /* breakdown values kept: each a triangle of n * n */
#define MAX_VALUES        10000 /* breakdown values ranked */

/* One breakdown value's triangle ('' without a breakdown). */
typedef struct {
    char *key;
    int64_t total;    /* its cohorts' sizes, summed: the ranking */
    int64_t *size;    /* n */
    int64_t *returns; /* n * n: [cohort][k] */
} ret_key_t;

struct ins_retention {
    ins_range_t range;
    bool first_time;
    char *target, *returning;
    cm_json_t props;
    cm_json_t vars;
    ins_breakdowns_t bd;
    int stage; /* 0 sizes, 1 returns, 2 done */
    ret_key_t *keys;
    size_t nkeys, capkeys;
    bool dropped; /* values past breakdown_limit */
    ins_sql_t q;
};

static const char *const PERIODS[] = {"Hour", "Day", "Week", "Month"}; /* as ins_interval_t */

static void key_free(ret_key_t *k)
{
    free(k->key);
    free(k->size);
    free(k->returns);
}

void api_insights__retention_free(ins_retention_t *r)
{
    if (!r)
        return;
    free(r->target);
    free(r->returning);
    for (size_t i = 0; i < r->nkeys; i++)
        key_free(&r->keys[i]);
    free(r->keys);
    api_insights__breakdowns_free(&r->bd);
    api_insights__range_free(&r->range);
    api_insights__sql_free(&r->q);
    free(r);
}

size_t api_insights__retention_variables(cm_json_t query, cm_slice_t *names, size_t max)
{
    size_t n = api_insights__breakdown_names(query, names, max);
    if (n < max)
        names[n++] = CM_SLICE_LIT("date_to");
    return n;
}

/* An entity {id, type: "events"}: its event name (absent: $pageview). */
static char *entity(cm_json_t e, const char *what, cm_buf_t *err)
{
    if (!cm_json_exists(e) || cm_json_is_null(e))
        return cm_xstrdup("$pageview");
    cm_json_t type = cm_json_get(e, "type");
    if (cm_json_exists(type) && !cm_json_str_eq(type, CM_SLICE_LIT("events"))) {
        cm_buf_appendf(err, "%s: only events entities are supported", what);
        return NULL;
    }
    cm_buf_t b = CM_BUF_INIT;
    cm_json_t id = cm_json_get(e, "id");
    char *s = NULL;
    if (cm_json_type(id) == CM_JSON_STRING && cm_json_str_append(id, &b) == 0 && b.len > 0)
        s = cm_xstrdup(cm_buf_cstr(&b));
    else
        cm_buf_appendf(err, "%s needs an event name as its id", what);
    cm_buf_free(&b);
    return s;
}

/* [, <key> AS g]: the breakdown key of each event, when there is one. */
static void key_column(ins_retention_t *r)
{
    if (r->bd.n == 0)
        return;
    cm_buf_append_cstr(&r->q.sql, ", ");
    api_insights__breakdown_key(&r->q, &r->bd);
    cm_buf_append_cstr(&r->q.sql, " AS g");
}

/* The query's properties and the breakdown variables, on both events. */
static int event_filters(ins_retention_t *r, cm_buf_t *err)
{
    int rc = api_insights__filters(&r->q, r->props, err);
    if (rc == 0)
        api_insights__breakdown_filters(&r->q, &r->bd, r->vars);
    return rc;
}

/* (person_id, cohort c[, key g]) of the target event. */
static int target_pairs(ins_retention_t *r, cm_buf_t *err)
{
    ins_sql_t *q = &r->q;
    char from[24], to[24];
    api_insights__utc_text(r->range.begin, from);
    api_insights__utc_text(r->range.end, to);
    cm_buf_append_cstr(&q->sql, "(SELECT person_id, ");
    api_insights__bucket(&q->sql, &r->range, r->first_time ? "min(timestamp)" : "timestamp");
    cm_buf_append_cstr(&q->sql, " AS c");
    key_column(r);
    cm_buf_append_cstr(&q->sql, " FROM events WHERE event = ");
    api_insights__bind_str(q, cm_slice_from_cstr(r->target));
    if (!r->first_time)
        cm_buf_appendf(&q->sql,
                       " AND timestamp >= toDateTime('%s') AND timestamp < toDateTime('%s')", from,
                       to);
    int rc = event_filters(r, err);
    if (r->first_time)
        cm_buf_appendf(&q->sql,
                       " GROUP BY person_id%s HAVING min(timestamp) >= toDateTime('%s') AND "
                       "min(timestamp) < toDateTime('%s'))",
                       r->bd.n ? ", g" : "", from, to);
    else
        cm_buf_appendf(&q->sql, " GROUP BY person_id, c%s)", r->bd.n ? ", g" : "");
    return rc;
}

/* (person_id, period b[, key g]) of the returning event, within the range. */
static int returning_pairs(ins_retention_t *r, cm_buf_t *err)
{
    ins_sql_t *q = &r->q;
    char from[24], to[24];
    api_insights__utc_text(r->range.begin, from);
    api_insights__utc_text(r->range.end, to);
    cm_buf_append_cstr(&q->sql, "(SELECT person_id, ");
    api_insights__bucket(&q->sql, &r->range, "timestamp");
    cm_buf_append_cstr(&q->sql, " AS b");
    key_column(r);
    cm_buf_append_cstr(&q->sql, " FROM events WHERE event = ");
    api_insights__bind_str(q, cm_slice_from_cstr(r->returning));
    cm_buf_appendf(&q->sql, " AND timestamp >= toDateTime('%s') AND timestamp < toDateTime('%s')",
                   from, to);
    int rc = event_filters(r, err);
    cm_buf_appendf(&q->sql, " GROUP BY person_id, b%s)", r->bd.n ? ", g" : "");
    return rc;
}

/* Appends the stage's query to r->q (its variables numbered on): sizes
 * (c, g, v), then returns (cohort, k, bk, v); the key is '' without a
 * breakdown. */
static int build_into(ins_retention_t *r, int stage, cm_buf_t *err)
{
    ins_sql_t *q = &r->q;
    bool bd = r->bd.n > 0;
    if (stage == 0) {
        cm_buf_appendf(&q->sql, "SELECT c, %s AS g, count() AS v FROM ", bd ? "g" : "''");
        int rc = target_pairs(r, err);
        cm_buf_appendf(&q->sql, " GROUP BY c%s", bd ? ", g" : "");
        return rc;
    }
    cm_buf_appendf(&q->sql, "SELECT t.c AS cohort, r.b - t.c AS k, %s AS bk, count() AS v FROM ",
                   bd ? "t.g" : "''");
    int rc = target_pairs(r, err);
    cm_buf_append_cstr(&q->sql, " AS t INNER JOIN ");
    if (rc == 0)
        rc = returning_pairs(r, err);
    cm_buf_appendf(&q->sql,
                   " AS r ON t.person_id = r.person_id WHERE r.b > t.c%s GROUP BY cohort, k%s",
                   bd ? " AND t.g = r.g" : "", bd ? ", bk" : "");
    return rc;
}

static int build(ins_retention_t *r, int stage, cm_buf_t *err)
{
    api_insights__sql_free(&r->q);
    return build_into(r, stage, err);
}

static ret_key_t *key_of(ins_retention_t *r, const char *key, bool make);
static void keep_top(ins_retention_t *r);

int api_insights__retention_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone,
                                 int64_t now_s, int monday, ins_retention_t **out, cm_buf_t *err,
                                 const char **attr)
{
    ins_retention_t *r = cm_xcalloc(1, sizeof(*r));
    cm_json_t f = cm_json_get(query, "retentionFilter");
    int rc = CM_EINVAL;
    *attr = "query";
    cm_json_t type = cm_json_get(f, "retentionType");
    if (!cm_json_exists(type) || cm_json_is_null(type) ||
        cm_json_str_eq(type, CM_SLICE_LIT("retention_recurring"))) {
        r->first_time = false;
    } else if (cm_json_str_eq(type, CM_SLICE_LIT("retention_first_time"))) {
        r->first_time = true;
    } else {
        cm_buf_appendf(err, "retentionType must be retention_first_time or retention_recurring");
        goto fail;
    }
    int64_t total = DEFAULT_INTERVALS;
    cm_json_t ti = cm_json_get(f, "totalIntervals");
    if (cm_json_exists(ti) && !cm_json_is_null(ti) &&
        (cm_json_as_int64(ti, &total) != 0 || total < 1 || total > MAX_INTERVALS)) {
        cm_buf_appendf(err, "totalIntervals must be 1 to %d", MAX_INTERVALS);
        goto fail;
    }
    int period = INS_DAY;
    cm_json_t p = cm_json_get(f, "period");
    if (cm_json_exists(p) && !cm_json_is_null(p)) {
        period = -1;
        for (int i = 0; i < 4; i++)
            if (cm_json_str_eq(p, cm_slice_from_cstr(PERIODS[i])))
                period = i;
        if (period < 0) {
            cm_buf_appendf(err, "period must be Hour, Day, Week or Month");
            goto fail;
        }
    }
    if ((r->target = entity(cm_json_get(f, "targetEntity"), "targetEntity", err)) == NULL ||
        (r->returning = entity(cm_json_get(f, "returningEntity"), "returningEntity", err)) == NULL)
        goto fail;
    if (api_insights__breakdowns_read(&r->bd, cm_json_get(query, "breakdownFilter"), err) != 0)
        goto fail;
    if (r->bd.limit > MAX_KEPT) {
        cm_buf_appendf(err, "breakdown_limit must be 1 to %d for a RetentionQuery", MAX_KEPT);
        goto fail;
    }
    /* the answer's size before anything runs: a triangle of total * (total
     * + 1) / 2 values per breakdown value kept, at most the answer-row cap
     * (docs/insights.md) */
    uint64_t cells =
        (uint64_t)(r->bd.n ? r->bd.limit : 1) * (uint64_t)total * (uint64_t)(total + 1) / 2;
    if (cells > API_QUERY_MAX_ROWS) {
        cm_buf_appendf(err,
                       "This insight would answer %llu values (%lld intervals' triangle x %zu "
                       "breakdown values), more than %d: choose fewer totalIntervals or a lower "
                       "breakdown_limit.",
                       (unsigned long long)cells, (long long)total, r->bd.n ? r->bd.limit : 1,
                       API_QUERY_MAX_ROWS);
        goto fail;
    }
    cm_json_t v = cm_json_get(vars, "date_to");
    cm_json_t to = cm_json_type(v) == CM_JSON_STRING
                       ? v
                       : cm_json_get(cm_json_get(query, "dateRange"), "date_to");
    if (api_insights__cohorts((ins_interval_t)period, (size_t)total,
                              cm_json_type(to) == CM_JSON_STRING ? cm_json_str_inner(to)
                                                                 : CM_SLICE_NULL,
                              zone, now_s, monday, &r->range, err) != 0) {
        if (cm_json_type(v) == CM_JSON_STRING)
            *attr = "variables";
        goto fail;
    }
    r->props = cm_json_get(query, "properties");
    r->vars = vars;
    for (int stage = 0; stage < 2; stage++)
        if (build(r, stage, err) != 0 || api_insights__compiles(&r->q, err) != 0)
            goto fail;
    api_insights__sql_free(&r->q);
    if (r->bd.n == 0) { /* one triangle, zeros included */
        key_of(r, "", true);
        keep_top(r);
    }
    *out = r;
    return 0;
fail:
    api_insights__retention_free(r);
    return rc;
}

/* Materialization (insights.h): both queries as one SELECT of (q, b, k,
 * p, v) rows: q the stage; b the cohort; k the breakdown key; p the
 * period (stage 1). */
int api_insights__retention_table(ins_retention_t *r, const ins_sql_t **out, cm_buf_t *err)
{
    api_insights__sql_free(&r->q);
    int rc = 0;
    for (int stage = 0; rc == 0 && stage < 2; stage++) {
        cm_buf_appendf(&r->q.sql,
                       "%sSELECT toInt(%d) AS q, ifNull(toInt(%s), 0) AS b, ifNull(toString(%s), "
                       "'') AS k, %s AS p, ifNull(toFloat(v), 0) AS v FROM (",
                       stage ? " UNION ALL " : "", stage, stage ? "cohort" : "c",
                       stage ? "bk" : "g", stage ? "ifNull(toInt(k), 0)" : "toInt(0)");
        rc = build_into(r, stage, err);
        cm_buf_appendf(&r->q.sql, ") AS t%d", stage);
    }
    *out = &r->q;
    return rc;
}

/* The query api_insights__retention_next gave last: its code and columns
 * in the table (sizes: b, k, v; returns: b, p, k, v). */
int api_insights__retention_code(const ins_retention_t *r, int map[4])
{
    map[0] = 1;
    map[1] = r->stage == 0 ? 2 : 3;
    map[2] = r->stage == 0 ? 4 : 2;
    map[3] = 4;
    return r->stage;
}

bool api_insights__retention_key(const ins_retention_t *r, cm_buf_t *key)
{
    return api_insights__breakdown_var_key(&r->bd, r->vars, key);
}

bool api_insights__retention_has_more(const ins_retention_t *r)
{
    return r->dropped;
}

const char *api_insights__retention_next(ins_retention_t *r, const char *const **names,
                                         const api_query_value_t **values, size_t *nvalues)
{
    if (r->stage > 1)
        return NULL;
    cm_buf_t err = CM_BUF_INIT;
    int rc = build(r, r->stage, &err); /* checked when planned */
    cm_buf_free(&err);
    if (rc != 0)
        return NULL;
    *names = (const char *const *)r->q.names;
    *values = r->q.values;
    *nvalues = r->q.n;
    return cm_buf_cstr(&r->q.sql);
}

/* The key's triangle; NULL when absent and not to be made. */
static ret_key_t *key_of(ins_retention_t *r, const char *key, bool make)
{
    for (size_t i = 0; i < r->nkeys; i++)
        if (strcmp(r->keys[i].key, key) == 0)
            return &r->keys[i];
    if (!make)
        return NULL;
    if (r->nkeys == r->capkeys) {
        r->capkeys = r->capkeys ? r->capkeys * 2 : 4;
        r->keys = cm_xrealloc(r->keys, r->capkeys * sizeof(*r->keys));
    }
    ret_key_t *k = &r->keys[r->nkeys++];
    k->key = cm_xstrdup(key);
    k->total = 0;
    k->size = cm_xcalloc(r->range.n, sizeof(int64_t));
    k->returns = NULL; /* once kept (keep_top) */
    return k;
}

static int cmp_keys(const void *a, const void *b)
{
    const ret_key_t *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* After the sizes: the values ranked, breakdown_limit kept. */
static void keep_top(ins_retention_t *r)
{
    if (r->nkeys > 1)
        qsort(r->keys, r->nkeys, sizeof(*r->keys), cmp_keys);
    while (r->bd.n && r->nkeys > r->bd.limit) {
        key_free(&r->keys[--r->nkeys]);
        r->dropped = true;
    }
    for (size_t i = 0; i < r->nkeys; i++)
        if (r->keys[i].returns == NULL)
            r->keys[i].returns = cm_xcalloc(r->range.n * r->range.n, sizeof(int64_t));
}

int api_insights__retention_rows(ins_retention_t *r, const void *rows, size_t nrows,
                                 api_insight_cell_fn cell, cm_buf_t *err)
{
    size_t n = r->range.n;
    for (size_t i = 0; i < nrows; i++) {
        const char *c = cell(rows, i, 0);
        long long ci = c ? atoll(c) : -1;
        long long k = 0;
        if (r->stage == 1) {
            const char *ks = cell(rows, i, 1);
            k = ks ? atoll(ks) : -1;
        }
        const char *g = cell(rows, i, r->stage == 0 ? 1 : 2);
        const char *v = cell(rows, i, r->stage == 0 ? 2 : 3);
        if (ci < 0 || (size_t)ci >= n || k < 0 || (size_t)(ci + k) >= n) {
            cm_buf_appendf(err, "a cohort out of the range came back");
            return CM_EINVAL;
        }
        /* sizes make the values; returns of a value not kept are dropped */
        ret_key_t *t = key_of(r, g ? g : "", r->stage == 0);
        if (t == NULL)
            continue;
        if (r->nkeys > MAX_VALUES) {
            cm_buf_appendf(err, "more than %d breakdown values: narrow the query", MAX_VALUES);
            return CM_EINVAL;
        }
        int64_t count = v ? atoll(v) : 0;
        if (r->stage == 0) {
            t->size[ci] = count;
            t->total += count;
        } else {
            t->returns[(size_t)ci * n + (size_t)k] = count;
        }
    }
    if (r->stage == 0)
        keep_top(r);
    r->stage++;
    return 0;
}

/* A cohort's start as the zone shows it: 2024-03-24T00:00:00+01:00 (Z in UTC). */
static void cohort_date(const ins_range_t *range, size_t i, cm_buf_t *out)
{
    char t[24];
    api_insights__utc_text(range->local[i], t);
    t[10] = 'T';
    int64_t off = range->local[i] - range->start[i];
    cm_buf_append_cstr(out, t);
    if (off == 0)
        cm_buf_putc(out, 'Z');
    else
        cm_buf_appendf(out, "%c%02d:%02d", off < 0 ? '-' : '+', (int)(llabs(off) / 3600),
                       (int)(llabs(off) / 60 % 60));
}

void api_insights__retention_write(const ins_retention_t *r, cm_json_writer_t *w)
{
    size_t n = r->range.n;
    cm_buf_t text = CM_BUF_INIT;
    cm_json_begin_array(w);
    for (size_t i = 0; i < r->nkeys; i++) {
        const ret_key_t *t = &r->keys[i];
        for (size_t c = 0; c < n; c++) {
            cm_json_begin_object(w);
            cm_json_key(w, "date");
            cm_buf_reset(&text);
            cohort_date(&r->range, c, &text);
            cm_json_str_s(w, cm_buf_slice(&text));
            cm_json_key(w, "label");
            cm_buf_reset(&text);
            cm_buf_appendf(&text, "%s %zu", PERIODS[r->range.interval], c);
            cm_json_str_s(w, cm_buf_slice(&text));
            cm_json_key(w, "values");
            cm_json_begin_array(w);
            for (size_t k = 0; c + k < n; k++) {
                cm_json_begin_object(w);
                cm_json_key(w, "count");
                cm_json_int(w, k == 0 ? t->size[c] : t->returns[c * n + k]);
                cm_json_end_object(w);
            }
            cm_json_end_array(w);
            if (r->bd.n) {
                cm_json_key(w, "breakdown_value");
                api_insights__breakdown_value(w, r->bd.n, t->key);
            }
            cm_json_end_object(w);
        }
    }
    cm_json_end_array(w);
    cm_buf_free(&text);
}
