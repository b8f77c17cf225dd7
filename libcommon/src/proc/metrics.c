/*
 * metrics.c - counters, gauges and histograms, rendered for Prometheus.
 *
 * The registry is a list of families (one per metric name, in registration
 * order), each holding its series (one per label set). Lookups are linear
 * string compares: a service has tens of families with a handful of series
 * each, handles are looked up once and cached by callers, and a flat list
 * keeps the render order stable without a separate index.
 *
 * Series are allocated one by one so handles stay valid while the arrays
 * that point at them grow.
 */
#include "cm/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"

/* KIND_SET_COUNTER: a counter kept elsewhere (CPU seconds read from
 * /proc), stored as a gauge's double and rendered as a counter. */
typedef enum { KIND_COUNTER, KIND_GAUGE, KIND_HISTOGRAM, KIND_SET_COUNTER } kind_t;

struct cm_counter {
    uint64_t value;
};

struct cm_gauge {
    double value;
};

struct cm_histogram {
    double *bounds;   /* ascending upper bounds, +Inf implicit */
    uint64_t *counts; /* per bucket, not cumulative; nbounds entries */
    size_t nbounds;
    uint64_t count;
    double sum;
};

typedef struct {
    char *labels; /* "" when none */
    union {
        struct cm_counter counter;
        struct cm_gauge gauge;
        struct cm_histogram hist;
    } u;
} series_t;

typedef struct {
    char *name;
    char *help;
    kind_t kind;
    series_t **series;
    size_t nseries, cap;
} family_t;

struct cm_metrics {
    family_t **families;
    size_t nfamilies, cap;
};

const double cm_metrics_latency_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
const size_t cm_metrics_latency_nbuckets = CM_ARRAY_LEN(cm_metrics_latency_buckets);

static const char *kind_name(kind_t k)
{
    return k == KIND_COUNTER || k == KIND_SET_COUNTER ? "counter"
           : k == KIND_GAUGE                          ? "gauge"
                                                      : "histogram";
}

/* ---- registry ------------------------------------------------------------ */

cm_metrics_t *cm_metrics_new(void)
{
    return cm_xcalloc(1, sizeof(cm_metrics_t));
}

static void series_free(series_t *s, kind_t kind)
{
    if (kind == KIND_HISTOGRAM) {
        free(s->u.hist.bounds);
        free(s->u.hist.counts);
    }
    free(s->labels);
    free(s);
}

void cm_metrics_free(cm_metrics_t *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nfamilies; i++) {
        family_t *f = m->families[i];
        for (size_t j = 0; j < f->nseries; j++)
            series_free(f->series[j], f->kind);
        free(f->series);
        free(f->name);
        free(f->help);
        free(f);
    }
    free(m->families);
    free(m);
}

/* Makes room for one more element in a (pointer, count, capacity) array. */
#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 8;                                                           \
            (arr) = cm_xrealloc((arr), (cap) * sizeof(*(arr)));                                    \
        }                                                                                          \
    } while (0)

static family_t *family_get(cm_metrics_t *m, const char *name, const char *help, kind_t kind)
{
    for (size_t i = 0; i < m->nfamilies; i++) {
        family_t *f = m->families[i];
        if (strcmp(f->name, name) != 0)
            continue;
        if (f->kind != kind) {
            /* A programming error that would otherwise emit a family
             * Prometheus rejects; fail loudly at registration time. */
            fprintf(stderr, "{\"level\":\"fatal\",\"msg\":\"metric %s registered as %s and %s\"}\n",
                    name, kind_name(f->kind), kind_name(kind));
            abort();
        }
        return f;
    }
    family_t *f = cm_xcalloc(1, sizeof(*f));
    f->name = cm_xstrdup(name);
    f->help = cm_xstrdup(help ? help : "");
    f->kind = kind;
    GROW(m->families, m->nfamilies, m->cap);
    m->families[m->nfamilies++] = f;
    return f;
}

/* Returns the series for labels, creating it (zeroed) if new; *created says which. */
static series_t *series_get(family_t *f, const char *labels, bool *created)
{
    if (labels == NULL)
        labels = "";
    for (size_t i = 0; i < f->nseries; i++) {
        if (strcmp(f->series[i]->labels, labels) == 0) {
            *created = false;
            return f->series[i];
        }
    }
    series_t *s = cm_xcalloc(1, sizeof(*s));
    s->labels = cm_xstrdup(labels);
    GROW(f->series, f->nseries, f->cap);
    f->series[f->nseries++] = s;
    *created = true;
    return s;
}

cm_counter_t *cm_metrics_counter(cm_metrics_t *m, const char *name, const char *help,
                                 const char *labels)
{
    bool created;
    return &series_get(family_get(m, name, help, KIND_COUNTER), labels, &created)->u.counter;
}

cm_gauge_t *cm_metrics_gauge(cm_metrics_t *m, const char *name, const char *help,
                             const char *labels)
{
    bool created;
    return &series_get(family_get(m, name, help, KIND_GAUGE), labels, &created)->u.gauge;
}

cm_gauge_t *cm_metrics_counter_set(cm_metrics_t *m, const char *name, const char *help,
                                   const char *labels)
{
    bool created;
    return &series_get(family_get(m, name, help, KIND_SET_COUNTER), labels, &created)->u.gauge;
}

cm_histogram_t *cm_metrics_histogram(cm_metrics_t *m, const char *name, const char *help,
                                     const char *labels, const double *buckets, size_t nbuckets)
{
    bool created;
    series_t *s = series_get(family_get(m, name, help, KIND_HISTOGRAM), labels, &created);
    cm_histogram_t *h = &s->u.hist;
    if (created) {
        h->nbounds = nbuckets;
        h->bounds = cm_xmalloc(nbuckets * sizeof(double));
        if (nbuckets)
            memcpy(h->bounds, buckets, nbuckets * sizeof(double));
        h->counts = cm_xcalloc(nbuckets ? nbuckets : 1, sizeof(uint64_t));
    }
    return h;
}

/* ---- updates ------------------------------------------------------------- */

void cm_counter_add(cm_counter_t *c, uint64_t n)
{
    c->value += n;
}
uint64_t cm_counter_value(const cm_counter_t *c)
{
    return c->value;
}
void cm_gauge_set(cm_gauge_t *g, double v)
{
    g->value = v;
}
void cm_gauge_add(cm_gauge_t *g, double v)
{
    g->value += v;
}
double cm_gauge_value(const cm_gauge_t *g)
{
    return g->value;
}

void cm_histogram_observe(cm_histogram_t *h, double v)
{
    /* Bucket i counts le bounds[i]; values above every bound (and NaN)
     * land only in the implicit +Inf bucket, i.e. in count. */
    for (size_t i = 0; i < h->nbounds; i++) {
        if (v <= h->bounds[i]) {
            h->counts[i]++;
            break;
        }
    }
    h->count++;
    h->sum += v;
}

/* ---- rendering ----------------------------------------------------------- */

/* Shortest text that reads back as the same double; Prometheus spellings
 * for the non-finite values. */
static void format_double(double v, char out[32])
{
    if (isnan(v)) {
        strcpy(out, "NaN");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* %g would write 10 as "1e+01"; whole numbers read better plain and
     * match what other clients put in le="..." labels. */
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(out, 32, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static void put_help(cm_buf_t *out, const family_t *f)
{
    cm_buf_appendf(out, "# HELP %s ", f->name);
    for (const char *p = f->help; *p; p++) {
        if (*p == '\\')
            cm_buf_append_cstr(out, "\\\\");
        else if (*p == '\n')
            cm_buf_append_cstr(out, "\\n");
        else
            cm_buf_putc(out, *p);
    }
    cm_buf_appendf(out, "\n# TYPE %s %s\n", f->name, kind_name(f->kind));
}

/* name[suffix]{labels[,le="x"]} */
static void put_series_name(cm_buf_t *out, const char *name, const char *suffix, const char *labels,
                            const char *le)
{
    cm_buf_append_cstr(out, name);
    cm_buf_append_cstr(out, suffix);
    if (!*labels && !le)
        return;
    cm_buf_putc(out, '{');
    cm_buf_append_cstr(out, labels);
    if (le)
        cm_buf_appendf(out, "%sle=\"%s\"", *labels ? "," : "", le);
    cm_buf_putc(out, '}');
}

static void put_histogram(cm_buf_t *out, const char *name, const series_t *s)
{
    const cm_histogram_t *h = &s->u.hist;
    char num[32];
    uint64_t cum = 0;
    for (size_t i = 0; i < h->nbounds; i++) {
        cum += h->counts[i];
        format_double(h->bounds[i], num);
        put_series_name(out, name, "_bucket", s->labels, num);
        cm_buf_appendf(out, " %" PRIu64 "\n", cum);
    }
    put_series_name(out, name, "_bucket", s->labels, "+Inf");
    cm_buf_appendf(out, " %" PRIu64 "\n", h->count);
    format_double(h->sum, num);
    put_series_name(out, name, "_sum", s->labels, NULL);
    cm_buf_appendf(out, " %s\n", num);
    put_series_name(out, name, "_count", s->labels, NULL);
    cm_buf_appendf(out, " %" PRIu64 "\n", h->count);
}

static void put_family(cm_buf_t *out, const family_t *f)
{
    char num[32];
    put_help(out, f);
    for (size_t i = 0; i < f->nseries; i++) {
        const series_t *s = f->series[i];
        switch (f->kind) {
        case KIND_COUNTER:
            put_series_name(out, f->name, "", s->labels, NULL);
            cm_buf_appendf(out, " %" PRIu64 "\n", s->u.counter.value);
            break;
        case KIND_GAUGE:
        case KIND_SET_COUNTER:
            format_double(s->u.gauge.value, num);
            put_series_name(out, f->name, "", s->labels, NULL);
            cm_buf_appendf(out, " %s\n", num);
            break;
        case KIND_HISTOGRAM: put_histogram(out, f->name, s); break;
        }
    }
}

void cm_metrics_render(const cm_metrics_t *m, cm_buf_t *out)
{
    for (size_t i = 0; i < m->nfamilies; i++)
        put_family(out, m->families[i]);
}
