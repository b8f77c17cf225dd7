/* props_memo.c - see props_memo.h. */
#include "props_memo.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/strset.h"

typedef struct {
    cm_buf_t text; /* the properties, then the times */
    size_t plen;   /* where the times start */
    wr_props_t props;
    size_t bytes; /* what it holds, roughly: the budget's unit */
} entry_t;

typedef struct {
    cm_strset_t *map; /* key -> entry_t (NULL once moved to the current generation) */
    size_t bytes;
} gen_t;

struct wr_props_memo {
    gen_t cur, old;
    size_t max_bytes;
    unsigned long long hits, misses;
};

static void entry_free(void *v)
{
    entry_t *e = v;
    if (e == NULL)
        return;
    cm_buf_free(&e->text);
    wr_props_free(&e->props);
    free(e);
}

wr_props_memo_t *wr_props_memo_new(size_t max_bytes)
{
    wr_props_memo_t *m = cm_xcalloc(1, sizeof(*m));
    m->max_bytes = max_bytes;
    m->cur.map = cm_strset_new(256);
    m->old.map = cm_strset_new(16);
    return m;
}

void wr_props_memo_free(wr_props_memo_t *m)
{
    if (m == NULL)
        return;
    cm_strset_free_with(m->cur.map, entry_free);
    cm_strset_free_with(m->old.map, entry_free);
    free(m);
}

void wr_props_memo_counts(const wr_props_memo_t *m, unsigned long long *hits,
                          unsigned long long *misses)
{
    *hits = m->hits;
    *misses = m->misses;
}

static bool same_text(const entry_t *e, cm_slice_t properties, cm_slice_t times)
{
    return e->plen == properties.len && e->text.len == properties.len + times.len &&
           (properties.len == 0 || !memcmp(e->text.p, properties.p, properties.len)) &&
           (times.len == 0 || !memcmp(e->text.p + e->plen, times.p, times.len));
}

/* e into the current generation under key, the older one dropped first
 * when the current one is full. */
static void keep(wr_props_memo_t *m, cm_slice_t key, entry_t *e)
{
    if (m->cur.bytes + e->bytes > m->max_bytes / 2) {
        cm_strset_free_with(m->old.map, entry_free);
        m->old = m->cur;
        m->cur.map = cm_strset_new(cm_strset_count(m->old.map) + 16);
        m->cur.bytes = 0;
    }
    entry_t *was = cm_strset_put(m->cur.map, key, e); /* the person's older text */
    if (was != NULL) {
        m->cur.bytes -= was->bytes;
        entry_free(was);
    }
    m->cur.bytes += e->bytes;
}

static entry_t *parse(cm_slice_t properties, cm_slice_t times)
{
    entry_t *e = cm_xcalloc(1, sizeof(*e));
    cm_buf_init(&e->text);
    cm_buf_append(&e->text, properties.p ? properties.p : "", properties.len);
    cm_buf_append(&e->text, times.p ? times.p : "", times.len);
    e->plen = properties.len;
    wr_props_init(&e->props);
    wr_props_load(&e->props, properties);
    if (times.len)
        wr_props_load_times(&e->props, times);
    /* the text twice (ours and the map's copy), the members, the index */
    e->bytes = sizeof(*e) + 2 * e->text.len + e->props.cap * sizeof(wr_prop_t) +
               e->props.ixcap * sizeof(uint32_t) + 64;
    return e;
}

void wr_props_memo_load(wr_props_memo_t *m, cm_slice_t key, cm_slice_t properties, cm_slice_t times,
                        wr_props_t *p)
{
    entry_t *e = cm_strset_get(m->cur.map, key);
    if (e == NULL && (e = cm_strset_get(m->old.map, key)) != NULL) {
        cm_strset_put(m->old.map, key, NULL); /* it leaves the older generation */
        if (same_text(e, properties, times)) {
            keep(m, key, e); /* still in use: into the current generation */
        } else {
            entry_free(e);
            e = NULL;
        }
    }
    if (e && same_text(e, properties, times)) {
        m->hits++;
    } else {
        m->misses++;
        e = parse(properties, times);
        keep(m, key, e); /* frees the entry it replaces */
    }
    wr_props_clone(p, &e->props);
}
