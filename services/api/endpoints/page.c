/*
 * page.c - a HogQL run's page (docs/endpoints.md "Answer sizes"):
 * the members results, columns, types, hasMore, limit, offset, written from
 * the event store's rows into the run's open answer. A small answer is written at once; a big one
 * (up to ENDPOINT_MAX_ANSWER_BYTES, tens of MiB) would hold the loop for hundreds of milliseconds,
 * so its rows are copied into one block (two passes of strlen and memcpy: a few ms for the largest)
 * and written on libuv's thread pool. Either way the JSON is bounded too: an answer whose JSON
 * grows past the cap (escapes can make it several times the rows' bytes)
 * ends with CM_ETOOBIG.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/tzone.h"
#include "endpoints/endpoints_int.h"

/* Below this many bytes of values the page is written on the loop (well
 * under a millisecond). */
#define INLINE_BYTES (256u << 10)

typedef const char *(*cell_fn)(const void *rows, size_t row, size_t col);
typedef void (*done_fn)(void *ud, int status);

/* The rows, owned: every value NUL-terminated in text. */
typedef struct {
    size_t nrows, ncols;
    char *text;
    size_t *off; /* per cell: offset + 1 into text, 0 for NULL */
} kept_rows_t;

typedef struct {
    uv_work_t req;
    api_call_t *call;
    const api_query_sql_t *sql; /* the run's: lives as the call does */
    kept_rows_t rows;
    size_t max_bytes;
    cm_json_writer_t *w; /* the run's, left to this work until done */
    int status;
    done_fn done;
    void *ud;
} page_work_t;

static const char *store_cell(const void *rows, size_t row, size_t col)
{
    return cm_evstore_value(rows, row, col);
}

static const char *kept_cell(const void *p, size_t row, size_t col)
{
    const kept_rows_t *k = p;
    size_t o = k->off[row * k->ncols + col];
    return o ? k->text + o - 1 : NULL;
}

int api_endpoints__page_write(cm_json_writer_t *w, const api_query_sql_t *sql, const void *rows,
                              size_t nrows, size_t ncols, cell_fn cell, size_t max_bytes)
{
    size_t n = nrows, nc = sql->ncols;
    bool more = n > (size_t)sql->limit;
    if (more)
        n = (size_t)sql->limit;
    if (ncols < nc)
        nc = ncols;
    /* a DateTime in a zone is written with its offset: the zone opened
     * once per column, here (a zone is not shared between threads) */
    cm_tzone_t **zones = cm_xcalloc(nc ? nc : 1, sizeof(*zones));
    for (size_t c = 0; c < nc; c++) {
        char name[64];
        if (cm_evstore_type_zone(sql->cols[c].type, name, sizeof(name)))
            zones[c] = cm_tzone_open(cm_slice_from_cstr(name));
    }
    int rc = 0;
    cm_json_key(w, "results");
    cm_json_begin_array(w);
    for (size_t i = 0; i < n && rc == 0; i++) {
        cm_json_begin_array(w);
        for (size_t c = 0; c < nc; c++) {
            if (zones[c] != NULL)
                cm_evstore_write_value_tz(w, sql->cols[c].type, cell(rows, i, c), zones[c]);
            else
                cm_evstore_write_value(w, sql->cols[c].type, cell(rows, i, c));
        }
        cm_json_end_array(w);
        if (max_bytes != 0 && w->out->len > max_bytes)
            rc = CM_ETOOBIG;
    }
    for (size_t c = 0; c < nc; c++)
        cm_tzone_free(zones[c]);
    free(zones);
    if (rc != 0)
        return rc;
    cm_json_end_array(w);
    cm_json_key(w, "columns");
    cm_json_begin_array(w);
    for (size_t c = 0; c < sql->ncols; c++)
        cm_json_str_cstr(w, sql->cols[c].name);
    cm_json_end_array(w);
    cm_json_key(w, "types");
    cm_json_begin_array(w);
    for (size_t c = 0; c < sql->ncols; c++) {
        cm_json_begin_array(w);
        cm_json_str_cstr(w, sql->cols[c].name);
        cm_json_str_cstr(w, sql->cols[c].type);
        cm_json_end_array(w);
    }
    cm_json_end_array(w);
    cm_json_key(w, "hasMore");
    cm_json_boolean(w, more);
    cm_json_key(w, "limit");
    cm_json_int(w, sql->limit);
    cm_json_key(w, "offset");
    cm_json_int(w, sql->offset);
    return 0;
}

static void on_work(uv_work_t *req)
{
    page_work_t *pw = req->data;
    pw->status = api_endpoints__page_write(pw->w, pw->sql, &pw->rows, pw->rows.nrows,
                                           pw->rows.ncols, kept_cell, pw->max_bytes);
}

static void on_done(uv_work_t *req, int status)
{
    page_work_t *pw = req->data;
    (void)status; /* never cancelled: the work is queued once and runs */
    free(pw->rows.text);
    free(pw->rows.off);
    done_fn done = pw->done;
    void *ud = pw->ud;
    int rc = pw->status;
    free(pw);
    done(ud, rc);
}

void api_endpoints__page(api_call_t *call, const api_query_sql_t *sql,
                         const cm_evstore_rows_t *rows, size_t max_bytes, cm_json_writer_t *w,
                         done_fn done, void *ud)
{
    size_t nrows = cm_evstore_nrows(rows), ncols = cm_evstore_ncols(rows);
    if (nrows > (size_t)sql->limit + 1)
        nrows = (size_t)sql->limit + 1; /* hasMore needs one more, no others */
    size_t ncells = nrows * ncols, bytes = 0;
    size_t *off = cm_xmalloc((ncells + 1) * sizeof(*off));
    for (size_t i = 0; i < ncells; i++) { /* first the lengths (+ 1: a NULL is 0) */
        const char *v = cm_evstore_value(rows, i / ncols, i % ncols);
        off[i] = v ? strlen(v) + 1 : 0;
        bytes += off[i];
    }
    if (bytes < INLINE_BYTES) {
        free(off);
        done(ud, api_endpoints__page_write(w, sql, rows, nrows, ncols, store_cell, max_bytes));
        return;
    }
    page_work_t *pw = cm_xcalloc(1, sizeof(*pw));
    pw->call = call;
    pw->sql = sql;
    pw->max_bytes = max_bytes;
    pw->w = w;
    pw->done = done;
    pw->ud = ud;
    pw->rows = (kept_rows_t){nrows, ncols, cm_xmalloc(bytes + 1), off};
    size_t at = 0;
    for (size_t i = 0; i < ncells; i++) { /* then the values, with their NULs */
        size_t len = off[i];
        if (len == 0)
            continue;
        memcpy(pw->rows.text + at, cm_evstore_value(rows, i / ncols, i % ncols), len);
        off[i] = at + 1;
        at += len;
    }
    pw->req.data = pw;
    uv_queue_work(call->ctx->loop, &pw->req, on_work, on_done);
}
