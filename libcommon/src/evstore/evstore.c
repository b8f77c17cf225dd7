/* evstore.c - dispatch, rows and literals of the event store (see event_store.h). */
#include "cm/event_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/timefmt.h"
#include "evstore_internal.h"

/*
 * The DDL files of proto/event_store/ are the contract, so they are built
 * in as they are rather than copied into C strings that could drift from
 * them. The Makefile makes this object depend on them; paths are relative
 * to the repository root, where the compiler runs.
 */
__asm__(".pushsection .rodata\n"
        ".global cm__evstore_ddl_sqlite\n"
        "cm__evstore_ddl_sqlite:\n"
        ".incbin \"proto/event_store/sqlite.sql\"\n"
        ".byte 0\n"
        ".global cm__evstore_ddl_clickhouse\n"
        "cm__evstore_ddl_clickhouse:\n"
        ".incbin \"proto/event_store/clickhouse.sql\"\n"
        ".byte 0\n"
        ".global cm__evstore_ddl_clickhouse_cluster\n"
        "cm__evstore_ddl_clickhouse_cluster:\n"
        ".incbin \"proto/event_store/clickhouse_cluster.sql\"\n"
        ".byte 0\n"
        ".popsection\n");

static void make_latency(cm_evstore_t *es, cm_metrics_t *m)
{
    char labels[160];
    const char *help = "Store operations from the call to the answer, queue wait included";
    snprintf(labels, sizeof(labels), "store=\"%.64s\",op=\"query\"", es->name);
    es->lat_query = cm_metrics_histogram(m, "store_operation_duration_seconds", help, labels,
                                         cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
    snprintf(labels, sizeof(labels), "store=\"%.64s\",op=\"insert\"", es->name);
    es->lat_insert = cm_metrics_histogram(m, "store_operation_duration_seconds", help, labels,
                                          cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
}

int cm_evstore_open(uv_loop_t *loop, const cm_evstore_opts_t *opts, cm_evstore_t **out)
{
    const char *url = opts && opts->url ? opts->url : "";
    int rc = CM_EINVAL;
    *out = NULL;
    if (strncmp(url, "sqlite:", 7) == 0 && url[7] != '\0')
        rc = cm__evstore_open_sqlite(loop, opts, url + 7, out);
    else if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0)
        rc = cm__evstore_open_clickhouse(loop, opts, out);
    if (rc == CM_OK && *out && opts->metrics)
        make_latency(*out, opts->metrics);
    return rc;
}

/* ---- timing: the caller's callback, behind one that observes the time --- */

typedef struct {
    cm_histogram_t *h;
    uint64_t start_ns;
    union {
        cm_evstore_write_cb write;
        cm_evstore_query_cb query;
    } cb;
    void *ud;
} timed_t;

static timed_t *timed_new(cm_histogram_t *h, void *ud)
{
    timed_t *t = cm_xmalloc(sizeof(*t));
    t->h = h;
    t->start_ns = uv_hrtime();
    t->ud = ud;
    return t;
}

static void timed_observe(const timed_t *t)
{
    cm_histogram_observe(t->h, (double)(uv_hrtime() - t->start_ns) / 1e9);
}

static void on_timed_write(int status, const char *err, size_t inserted, void *ud)
{
    timed_t t = *(timed_t *)ud;
    free(ud);
    timed_observe(&t);
    t.cb.write(status, err, inserted, t.ud);
}

static void on_timed_query(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    timed_t t = *(timed_t *)ud;
    free(ud);
    timed_observe(&t);
    t.cb.query(status, err, rows, t.ud);
}

void cm__evstore_init(cm_evstore_t *es, const cm__evstore_ops_t *ops, uv_loop_t *loop,
                      const char *name)
{
    es->ops = ops;
    es->loop = loop;
    es->name = cm_xstrdup(name && *name ? name : "events");
}

void cm__evstore_fini(cm_evstore_t *es)
{
    free(es->name);
    es->name = NULL;
}

cm_evstore_kind_t cm_evstore_kind(const cm_evstore_t *es)
{
    return es->ops->kind;
}

const char *cm_evstore_server_version(const cm_evstore_t *es)
{
    return es->ops->server_version ? es->ops->server_version(es) : "";
}

const char *cm_evstore_cluster(const cm_evstore_t *es, const char **database)
{
    if (es->ops->cluster == NULL)
        return NULL;
    return es->ops->cluster(es, database);
}

cm_evstore_dialect_t cm_evstore_dialect(const cm_evstore_t *es)
{
    if (cm_evstore_kind(es) != CM_EVSTORE_CLICKHOUSE)
        return CM_EVSTORE_SQL_SQLITE;
    return cm_evstore_sql_clickhouse_dialect(cm_evstore_server_version(es));
}

bool cm_evstore_ready(cm_evstore_t *es, cm_buf_t *why)
{
    if (es->closing) {
        cm_buf_appendf(why, "%s: closing", es->name);
        return false;
    }
    return es->ops->ready(es, why);
}

void cm_evstore_write(cm_evstore_t *es, const cm_evstore_rows_in_t *rows, cm_evstore_write_cb cb,
                      void *ud)
{
    if (es->lat_insert == NULL) {
        es->ops->write(es, rows, cb, ud);
        return;
    }
    timed_t *t = timed_new(es->lat_insert, ud);
    t->cb.write = cb;
    es->ops->write(es, rows, on_timed_write, t);
}

void cm_evstore_query(cm_evstore_t *es, const char *sql, cm_evstore_query_cb cb, void *ud)
{
    cm_evstore_select(es, &(cm_evstore_select_t){.sql = sql}, cb, ud);
}

void cm_evstore_select(cm_evstore_t *es, const cm_evstore_select_t *q, cm_evstore_query_cb cb,
                       void *ud)
{
    if (es->lat_query == NULL) {
        es->ops->query(es, q, cb, ud);
        return;
    }
    timed_t *t = timed_new(es->lat_query, ud);
    t->cb.query = cb;
    es->ops->query(es, q, on_timed_query, t);
}

void cm_evstore_close(cm_evstore_t *es, cm_evstore_closed_cb done, void *ud)
{
    if (es->closing)
        return;
    es->closing = true;
    es->ops->close(es, done, ud);
}

void cm_evstore_quote(const cm_evstore_t *es, cm_buf_t *out, cm_slice_t s)
{
    cm_evstore_sql_quote(cm_evstore_dialect(es), out, s);
}

size_t cm_evstore_nrows(const cm_evstore_rows_t *rows)
{
    return rows ? rows->nrows : 0;
}

size_t cm_evstore_ncols(const cm_evstore_rows_t *rows)
{
    return rows ? rows->ncols : 0;
}

const char *cm_evstore_colname(const cm_evstore_rows_t *rows, size_t col)
{
    return rows && col < rows->ncols ? rows->cells[col] : NULL;
}

const char *cm_evstore_value(const cm_evstore_rows_t *rows, size_t row, size_t col)
{
    if (rows == NULL || row >= rows->nrows || col >= rows->ncols)
        return NULL;
    return rows->cells[rows->ncols + row * rows->ncols + col];
}

void cm__evstore_datetime(int64_t ms, char out[20])
{
    char iso[CM_ISO8601_MAX];
    int64_t us = (ms - (ms % 1000 + 1000) % 1000) * 1000; /* whole seconds, floored */
    cm_iso8601_format(us, 0, iso);                        /* YYYY-MM-DDTHH:MM:SSZ */
    memcpy(out, iso, 19);
    out[10] = ' ';
    out[19] = '\0';
}
