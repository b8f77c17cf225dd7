/*
 * evstore_arrayfns.c - cm_array_agg(json, mode, n) for SQLite connections:
 * the order the HogQL compiler promises for array-valued aggregates
 * (docs/endpoints.md "Arrays, tuples and lambdas"). SQLite cannot order the
 * rows one aggregate sees, nor read an aggregate's answer in a subquery's
 * FROM, so the compiler prints json_group_array(x) and this function puts
 * its items in order; ClickHouse gets the same order from arraySort.
 *
 *   mode 'a'  every non-NULL item, sorted (groupArray)
 *   mode 'u'  each distinct non-NULL item once, sorted (groupUniqArray)
 *   mode 'k'  the n most frequent items, by count descending then value
 *             ascending (topK(n), exact)
 *
 * And cm_split(sep, s): s cut at every sep (a non-empty string), as a JSON
 * array of strings, as ClickHouse's splitByString and splitByChar cut it
 * ('' is ['']; a separator at either end leaves an empty string there).
 *
 * Items compare as ClickHouse's: numbers by value, strings by their bytes.
 * Items are copied through as SQLite wrote them.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "evstore_internal.h"

typedef struct {
    const char *raw; /* the item's JSON text */
    size_t len;
    bool str;
    double num;
    char *s; /* str: the decoded bytes */
    size_t slen;
    size_t count; /* mode 'k': how many times it occurs */
} item_t;

static int cmp_value(const item_t *a, const item_t *b)
{
    if (a->str != b->str)
        return a->str ? 1 : -1; /* never mixed in one column; numbers first */
    if (!a->str)
        return (a->num > b->num) - (a->num < b->num);
    size_t n = a->slen < b->slen ? a->slen : b->slen;
    int c = memcmp(a->s, b->s, n);
    return c != 0 ? c : (a->slen > b->slen) - (a->slen < b->slen);
}

static int cmp_items(const void *x, const void *y)
{
    return cmp_value(x, y);
}

static int cmp_counts(const void *x, const void *y)
{
    const item_t *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return cmp_value(a, b);
}

/* The items of a JSON array of scalars; false if it is not one. */
static bool parse(const char *p, item_t **out, size_t *n)
{
    size_t cap = 0;
    cm_buf_t dec = CM_BUF_INIT;
    *out = NULL;
    *n = 0;
    while (*p == ' ')
        p++;
    if (*p++ != '[')
        goto fail;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ']')
            break;
        if (*p == '\0' || *p == '[' || *p == '{')
            goto fail;
        item_t it = {.raw = p};
        if (*p == '"') {
            if (!cm_evstore__unquote(&p, &dec))
                goto fail;
            it.str = true;
            it.s = malloc(dec.len + 1);
            if (it.s == NULL)
                goto fail;
            memcpy(it.s, dec.p ? dec.p : "", dec.len);
            it.slen = dec.len;
        } else {
            char *end;
            if (strncmp(p, "null", 4) == 0) {
                p += 4;
                continue; /* NULLs are skipped, as ClickHouse's aggregates do */
            }
            it.num = strtod(p, &end);
            if (end == p)
                goto fail;
            p = end;
        }
        it.len = (size_t)(p - it.raw);
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            item_t *v = realloc(*out, cap * sizeof(*v));
            if (v == NULL) {
                free(it.s);
                goto fail;
            }
            *out = v;
        }
        (*out)[(*n)++] = it;
    }
    cm_buf_free(&dec);
    return true;
fail:
    cm_buf_free(&dec);
    for (size_t i = 0; i < *n; i++)
        free((*out)[i].s);
    free(*out);
    *out = NULL;
    *n = 0;
    return false;
}

static char *array_agg(int argc, const char *const *args, bool *failed)
{
    if (argc != 3 || args[1] == NULL)
        return NULL;
    if (args[0] == NULL) /* no rows */
        return strdup("[]");
    item_t *v;
    size_t n;
    if (!parse(args[0], &v, &n)) {
        *failed = true;
        return NULL;
    }
    char mode = args[1][0];
    long long top = args[2] != NULL ? atoll(args[2]) : 0;
    if (n > 1) /* qsort wants an array, even of none */
        qsort(v, n, sizeof(*v), cmp_items);
    size_t m = n;
    if (mode == 'u' || mode == 'k') { /* equal items are adjacent once sorted */
        m = 0;
        for (size_t i = 0; i < n; i++) {
            if (m > 0 && cmp_value(&v[m - 1], &v[i]) == 0) {
                v[m - 1].count++;
                free(v[i].s);
                continue;
            }
            v[m] = v[i];
            v[m++].count = 1;
        }
    }
    if (mode == 'k') {
        if (m > 1)
            qsort(v, m, sizeof(*v), cmp_counts);
        if (top >= 0 && (size_t)top < m) {
            for (size_t i = (size_t)top; i < m; i++)
                free(v[i].s);
            m = (size_t)top;
        }
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_putc(&out, '[');
    for (size_t i = 0; i < m; i++) {
        if (i)
            cm_buf_putc(&out, ',');
        cm_buf_append(&out, v[i].raw, v[i].len);
        free(v[i].s);
    }
    cm_buf_putc(&out, ']');
    free(v);
    char *s = strdup(cm_buf_cstr(&out));
    cm_buf_free(&out);
    if (s == NULL)
        *failed = true;
    return s;
}

static char *split(int argc, const char *const *args, bool *failed)
{
    if (argc != 2 || args[0] == NULL || args[1] == NULL)
        return NULL;
    const char *sep = args[0], *s = args[1];
    size_t n = strlen(sep);
    if (n == 0) { /* the compiler refuses it: never answer it differently */
        *failed = true;
        return NULL;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_putc(&out, '[');
    for (const char *p = s;; cm_buf_putc(&out, ',')) {
        const char *q = strstr(p, sep);
        size_t len = q != NULL ? (size_t)(q - p) : strlen(p);
        cm_json_quote_lossy(&out, (cm_slice_t){p, len});
        if (q == NULL)
            break;
        p = q + n;
    }
    cm_buf_putc(&out, ']');
    char *r = strdup(cm_buf_cstr(&out));
    cm_buf_free(&out);
    if (r == NULL)
        *failed = true;
    return r;
}

static const cm_db_text_fn_t array_agg_fn = {.name = "cm_array_agg", .nargs = 3, .call = array_agg};
static const cm_db_text_fn_t split_fn = {.name = "cm_split", .nargs = 2, .call = split};

int cm__evstore_add_array_fns(cm_db_conn_t *conn)
{
    int rc = cm_db_conn_add_text_fn(conn, &array_agg_fn);
    return rc != 0 ? rc : cm_db_conn_add_text_fn(conn, &split_fn);
}
