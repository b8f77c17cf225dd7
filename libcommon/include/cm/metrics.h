/*
 * metrics.h - a Prometheus metrics registry rendered as text exposition 0.0.4.
 *
 * Handles are owned by the registry and live until cm_metrics_free(). Asking
 * again for the same (name, labels) returns the same handle, so callers may
 * look up per-status counters lazily. Updates are plain stores: call them on
 * the loop thread only. Registering one name as two different types aborts.
 *
 * labels is the inside of the braces, already escaped, e.g.
 *   "route=\"capture\",status=\"200\""   or NULL for none.
 */
#ifndef CM_METRICS_H
#define CM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"

typedef struct cm_metrics cm_metrics_t;
typedef struct cm_counter cm_counter_t;
typedef struct cm_gauge cm_gauge_t;
typedef struct cm_histogram cm_histogram_t;

cm_metrics_t *cm_metrics_new(void);
void cm_metrics_free(cm_metrics_t *m);

cm_counter_t *cm_metrics_counter(cm_metrics_t *m, const char *name, const char *help,
                                 const char *labels);
cm_gauge_t *cm_metrics_gauge(cm_metrics_t *m, const char *name, const char *help,
                             const char *labels);
/* A counter whose total is kept elsewhere and copied in with cm_gauge_set
 * (fractional, e.g. CPU seconds read from /proc): TYPE counter. */
cm_gauge_t *cm_metrics_counter_set(cm_metrics_t *m, const char *name, const char *help,
                                   const char *labels);
/* buckets: ascending upper bounds (the +Inf bucket is implicit); copied. */
cm_histogram_t *cm_metrics_histogram(cm_metrics_t *m, const char *name, const char *help,
                                     const char *labels, const double *buckets, size_t nbuckets);

void cm_counter_add(cm_counter_t *c, uint64_t n);
static inline void cm_counter_inc(cm_counter_t *c)
{
    cm_counter_add(c, 1);
}
uint64_t cm_counter_value(const cm_counter_t *c);
void cm_gauge_set(cm_gauge_t *g, double v);
void cm_gauge_add(cm_gauge_t *g, double v);
double cm_gauge_value(const cm_gauge_t *g);
void cm_histogram_observe(cm_histogram_t *h, double v);

/* Default latency buckets in seconds (0.0005 .. 10). */
extern const double cm_metrics_latency_buckets[];
extern const size_t cm_metrics_latency_nbuckets;

/*
 * The standard process series, read from /proc/self when called (the
 * /metrics route calls it before rendering): process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_open_fds, process_max_fds, process_start_time_seconds. Linux
 * only; a file that cannot be read leaves its series as they were.
 */
void cm_metrics_process_update(cm_metrics_t *m);

/* Appends every family (HELP, TYPE, samples) in registration order. */
void cm_metrics_render(const cm_metrics_t *m, cm_buf_t *out);

#endif
