/*
 * evstore_summap.c - cm_sum_map(rows) for SQLite connections: the HogQL
 * compiler's sumMap(keys, values) (docs/endpoints.md "Arrays, tuples and
 * lambdas"). rows is json_group_array(json_array(keys, values)), every
 * row's two arrays; the answer is ClickHouse's: [[key, ...], [sum, ...]],
 * the keys sorted (numbers by value, strings by their bytes), each key's
 * values summed in the order the rows came, a key whose sum is zero left
 * out. Integers add as ClickHouse's Int64 (wrapping), and the values are
 * doubles if any one is written as one. A row whose two arrays differ in
 * length fails the query, as in ClickHouse; a row of NULL arrays is skipped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "evstore_internal.h"

typedef struct {
    bool str;
    int64_t ikey;
    cm_slice_t skey; /* decoded into entries' own buffer (keys) */
    size_t seq;      /* the order the value came in: equal keys add in it */
    int64_t i;
    double d;
} entry_t;

static int cmp_entries(const void *x, const void *y)
{
    const entry_t *a = x, *b = y;
    int c;
    if (a->str != b->str)
        c = a->str ? 1 : -1; /* never mixed in one column */
    else if (!a->str)
        c = (a->ikey > b->ikey) - (a->ikey < b->ikey);
    else {
        size_t n = a->skey.len < b->skey.len ? a->skey.len : b->skey.len;
        c = n ? memcmp(a->skey.p, b->skey.p, n) : 0;
        if (c == 0)
            c = (a->skey.len > b->skey.len) - (a->skey.len < b->skey.len);
    }
    return c != 0 ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static bool same_key(const entry_t *a, const entry_t *b)
{
    if (a->str)
        return cm_slice_eq(a->skey, b->skey);
    return a->ikey == b->ikey;
}

static bool is_float_text(cm_slice_t raw)
{
    for (size_t k = 0; k < raw.len; k++)
        if (raw.p[k] == '.' || raw.p[k] == 'e' || raw.p[k] == 'E')
            return true;
    return false;
}

/* One row's keys and values appended to *v (its strings' bytes into keys,
 * at offsets fixed up once all rows are read). */
static bool add_row(cm_json_t keys, cm_json_t vals, entry_t **v, size_t *n, size_t *cap,
                    cm_buf_t *bytes, bool *floats)
{
    if (cm_json_type(keys) != CM_JSON_ARRAY || cm_json_type(vals) != CM_JSON_ARRAY ||
        cm_json_len(keys) != cm_json_len(vals))
        return false;
    for (uint32_t k = 0; k < cm_json_len(keys); k++) {
        cm_json_t key = cm_json_at(keys, k), val = cm_json_at(vals, k);
        entry_t e = {.seq = *n};
        if (cm_json_type(key) == CM_JSON_STRING) {
            size_t at = bytes->len;
            if (cm_json_str_append(key, bytes) != 0)
                return false;
            e.str = true;
            e.skey = (cm_slice_t){(const char *)(uintptr_t)at, bytes->len - at};
        } else if (cm_json_as_int64(key, &e.ikey) != 0) {
            return false;
        }
        if (is_float_text(cm_json_raw(val)))
            *floats = true;
        if (cm_json_as_double(val, &e.d) != 0)
            return false;
        if (cm_json_as_int64(val, &e.i) != 0)
            e.i = 0; /* a float: read as d */
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            entry_t *nv = realloc(*v, *cap * sizeof(*nv));
            if (nv == NULL)
                return false;
            *v = nv;
        }
        (*v)[(*n)++] = e;
    }
    return true;
}

static void write_answer(cm_json_writer_t *w, const entry_t *v, size_t n, bool floats)
{
    cm_buf_t keys = CM_BUF_INIT, sums = CM_BUF_INIT;
    cm_json_writer_t kw, sw;
    cm_json_writer_init(&kw, &keys);
    cm_json_writer_init(&sw, &sums);
    cm_json_begin_array(&kw);
    cm_json_begin_array(&sw);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint64_t isum = 0; /* Int64's wrapping addition, without signed overflow */
        double dsum = 0;
        for (; j < n && same_key(&v[i], &v[j]); j++) {
            isum += (uint64_t)v[j].i;
            dsum += v[j].d;
        }
        if (floats ? dsum != 0 : isum != 0) {
            if (v[i].str)
                cm_json_str_lossy(&kw, v[i].skey);
            else
                cm_json_int(&kw, v[i].ikey);
            if (floats)
                cm_json_dbl(&sw, dsum);
            else
                cm_json_int(&sw, (int64_t)isum);
        }
        i = j;
    }
    cm_json_end_array(&kw);
    cm_json_end_array(&sw);
    cm_json_begin_array(w);
    cm_json_raw_value(w, cm_buf_slice(&keys));
    cm_json_raw_value(w, cm_buf_slice(&sums));
    cm_json_end_array(w);
    cm_buf_free(&keys);
    cm_buf_free(&sums);
}

static char *sum_map(int argc, const char *const *args, bool *failed)
{
    if (argc != 1)
        return NULL;
    if (args[0] == NULL) /* no rows */
        return strdup("[[],[]]");
    cm_json_doc_t *doc = NULL;
    entry_t *v = NULL;
    size_t n = 0, cap = 0;
    cm_buf_t bytes = CM_BUF_INIT, out = CM_BUF_INIT;
    bool floats = false;
    char *answer = NULL;
    if (cm_json_parse(args[0], strlen(args[0]), NULL, &doc, NULL) != 0)
        goto fail;
    cm_json_iter_t it = cm_json_iter(cm_json_root(doc));
    cm_json_t row;
    while (cm_json_next(&it, NULL, &row)) {
        cm_json_t keys = cm_json_at(row, 0), vals = cm_json_at(row, 1);
        if (cm_json_is_null(keys) || cm_json_is_null(vals))
            continue;
        if (!add_row(keys, vals, &v, &n, &cap, &bytes, &floats))
            goto fail;
    }
    for (size_t i = 0; i < n; i++) /* the bytes are all read: offsets into pointers */
        if (v[i].str)
            v[i].skey.p = bytes.p + (uintptr_t)v[i].skey.p;
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_entries);
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    write_answer(&w, v, n, floats);
    answer = strdup(cm_buf_cstr(&out));
    if (answer == NULL)
        goto fail;
    cm_json_doc_free(doc);
    free(v);
    cm_buf_free(&bytes);
    cm_buf_free(&out);
    return answer;
fail:
    *failed = true;
    cm_json_doc_free(doc);
    free(v);
    cm_buf_free(&bytes);
    cm_buf_free(&out);
    return NULL;
}

static const cm_db_text_fn_t sum_map_fn = {.name = "cm_sum_map", .nargs = 1, .call = sum_map};

int cm__evstore_add_sum_map(cm_db_conn_t *conn)
{
    return cm_db_conn_add_text_fn(conn, &sum_map_fn);
}
