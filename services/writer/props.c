/* props.c - see props.h. */
#include "props.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"

void wr_props_init(wr_props_t *p)
{
    memset(p, 0, sizeof(*p));
}

void wr_props_free(wr_props_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].key);
        free(p->v[i].val);
    }
    free(p->v);
    cm_strset_free(p->ix);
    memset(p, 0, sizeof(*p));
}

static size_t slot_of(const wr_props_t *p, cm_slice_t key)
{
    return (size_t)(uintptr_t)cm_strset_get(p->ix, key); /* 0: absent */
}

static char *dup_bytes(cm_slice_t s)
{
    char *d = cm_xmalloc(s.len + 1);
    memcpy(d, s.p ? s.p : "", s.len);
    d[s.len] = '\0';
    return d;
}

/* The slot for key, made empty when new. */
static wr_prop_t *slot(wr_props_t *p, cm_slice_t key)
{
    size_t i = slot_of(p, key);
    if (i)
        return &p->v[i - 1];
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->v = cm_xrealloc(p->v, p->cap * sizeof(*p->v));
    }
    if (p->ix == NULL)
        p->ix = cm_strset_new(8);
    wr_prop_t *s = &p->v[p->n++];
    s->key = dup_bytes(key);
    s->klen = key.len;
    s->val = NULL;
    s->vlen = 0;
    cm_strset_put(p->ix, (cm_slice_t){s->key, s->klen}, (void *)(uintptr_t)p->n);
    return s;
}

static void put(wr_props_t *p, wr_prop_t *s, cm_slice_t value)
{
    if (s->val == NULL)
        p->live++;
    free(s->val);
    s->val = dup_bytes(value);
    s->vlen = value.len;
}

bool wr_props_set(wr_props_t *p, cm_slice_t key, cm_slice_t value)
{
    wr_prop_t *s = slot(p, key);
    if (s->val && s->vlen == value.len && !memcmp(s->val, value.p, value.len))
        return false;
    put(p, s, value);
    return true;
}

bool wr_props_set_once(wr_props_t *p, cm_slice_t key, cm_slice_t value)
{
    wr_prop_t *s = slot(p, key);
    if (s->val)
        return false;
    put(p, s, value);
    return true;
}

bool wr_props_unset(wr_props_t *p, cm_slice_t key)
{
    size_t i = slot_of(p, key);
    if (i == 0 || p->v[i - 1].val == NULL)
        return false;
    free(p->v[i - 1].val);
    p->v[i - 1].val = NULL;
    p->live--;
    return true;
}

cm_slice_t wr_props_get(const wr_props_t *p, cm_slice_t key)
{
    size_t i = slot_of(p, key);
    if (i == 0 || p->v[i - 1].val == NULL)
        return CM_SLICE_NULL;
    return (cm_slice_t){p->v[i - 1].val, p->v[i - 1].vlen};
}

void wr_props_copy(wr_props_t *dst, const wr_props_t *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (src->v[i].val)
            wr_props_set(dst, (cm_slice_t){src->v[i].key, src->v[i].klen},
                         (cm_slice_t){src->v[i].val, src->v[i].vlen});
}

int wr_props_merge_json(wr_props_t *p, cm_json_t obj)
{
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return CM_EINVAL;
    cm_buf_t scratch;
    cm_buf_init(&scratch);
    cm_json_iter_t it = cm_json_iter(obj);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t key;
        cm_buf_reset(&scratch);
        if (cm_json_as_str(k, &scratch, &key) == 0)
            wr_props_set(p, key, cm_json_raw(v));
    }
    cm_buf_free(&scratch);
    return CM_OK;
}

int wr_props_load(wr_props_t *p, cm_slice_t json)
{
    cm_json_doc_t *doc;
    if (cm_json_parse(json.p, json.len, NULL, &doc, NULL) != 0)
        return CM_EINVAL;
    int rc = wr_props_merge_json(p, cm_json_root(doc));
    cm_json_doc_free(doc);
    return rc;
}

void wr_props_write(const wr_props_t *p, cm_buf_t *out)
{
    bool first = true;
    cm_buf_putc(out, '{');
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i].val == NULL)
            continue;
        if (!first)
            cm_buf_putc(out, ',');
        first = false;
        cm_json_quote(out, (cm_slice_t){p->v[i].key, p->v[i].klen});
        cm_buf_putc(out, ':');
        cm_buf_append(out, p->v[i].val, p->v[i].vlen);
    }
    cm_buf_putc(out, '}');
}
