/* props.c - see props.h. */
#include "props.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/hashfn.h"
#include "cm/err.h"

void wr_props_init(wr_props_t *p)
{
    memset(p, 0, sizeof(*p));
}

void wr_props_init_in(wr_props_t *p, cm_arena_t *arena)
{
    memset(p, 0, sizeof(*p));
    p->shared = arena;
}

void wr_props_free(wr_props_t *p)
{
    cm_arena_t *shared = p->shared;
    if (shared == NULL) { /* else the arrays are in the shared arena too */
        free(p->v);
        free(p->ix);
    }
    cm_arena_free(&p->own);
    memset(p, 0, sizeof(*p));
    p->shared = shared;
}

static cm_arena_t *arena_of(wr_props_t *p)
{
    return p->shared ? p->shared : &p->own;
}

static char *dup_bytes(wr_props_t *p, cm_slice_t s)
{
    char *d = cm_arena_alloc(arena_of(p), s.len + 1); /* zeroed: the NUL is there */
    if (s.len)
        memcpy(d, s.p, s.len);
    return d;
}

static size_t key_hash(cm_slice_t key)
{
    return (size_t)cm_hash_words(key);
}

/* The member array resized: from the heap for a map of its own, else from
 * the shared arena (the old array stays there until the arena goes: growth
 * doubles, so at most as much again). */
static void grow_members(wr_props_t *p, size_t cap)
{
    if (p->shared == NULL) {
        p->v = cm_xrealloc(p->v, cap * sizeof(*p->v));
    } else {
        wr_prop_t *v = cm_arena_alloc(p->shared, cap * sizeof(*v));
        if (p->n)
            memcpy(v, p->v, p->n * sizeof(*v));
        p->v = v;
    }
    p->cap = cap;
}

/* Where key is in the index, or the empty place it would go. */
static size_t ix_find(const wr_props_t *p, cm_slice_t key)
{
    size_t mask = p->ixcap - 1;
    size_t i = key_hash(key) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t at = p->ix[i];
        if (at == 0)
            return i;
        const wr_prop_t *s = &p->v[at - 1];
        if (s->klen == key.len && (key.len == 0 || !memcmp(s->key, key.p, key.len)))
            return i;
    }
}

static void ix_grow(wr_props_t *p)
{
    size_t cap = p->ixcap ? p->ixcap * 2 : 16;
    if (p->shared == NULL) {
        free(p->ix);
        p->ix = cm_xcalloc(cap, sizeof(*p->ix));
    } else {
        p->ix = cm_arena_alloc(p->shared, cap * sizeof(*p->ix)); /* zeroed */
    }
    p->ixcap = cap;
    for (size_t i = 0; i < p->n; i++)
        p->ix[ix_find(p, (cm_slice_t){p->v[i].key, p->v[i].klen})] = (uint32_t)(i + 1);
}

/* Room for more members without regrowing on the way (a merge knows how
 * many its object has). */
static void reserve(wr_props_t *p, size_t more)
{
    size_t want = p->n + more;
    if (want > p->cap)
        grow_members(p, want < 8 ? 8 : want);
    if (want * 2 > p->ixcap) {
        size_t cap = p->ixcap ? p->ixcap : 16;
        while (want * 2 > cap)
            cap *= 2;
        p->ixcap = cap / 2; /* ix_grow doubles it */
        ix_grow(p);
    }
}

static size_t slot_of(const wr_props_t *p, cm_slice_t key)
{
    if (p->ixcap == 0)
        return 0; /* absent */
    return p->ix[ix_find(p, key)];
}

/* The slot for key, made empty when new; the key's bytes borrowed when
 * borrow_key (they live as long as the arena), else copied. */
static wr_prop_t *slot_with(wr_props_t *p, cm_slice_t key, bool borrow_key)
{
    size_t i = slot_of(p, key);
    if (i)
        return &p->v[i - 1];
    if (p->n == p->cap)
        grow_members(p, p->cap ? p->cap * 2 : 8);
    wr_prop_t *s = &p->v[p->n++];
    s->key = borrow_key ? (char *)key.p : dup_bytes(p, key);
    s->klen = key.len;
    s->val = NULL;
    s->vlen = 0;
    s->ts = 0;
    s->op = 0;
    if (p->n * 2 > p->ixcap)
        ix_grow(p); /* indexes every slot, this one included */
    else
        p->ix[ix_find(p, key)] = (uint32_t)p->n;
    return s;
}

static wr_prop_t *slot(wr_props_t *p, cm_slice_t key)
{
    return slot_with(p, key, false);
}

static void put(wr_props_t *p, wr_prop_t *s, cm_slice_t value)
{
    if (s->val == NULL)
        p->live++;
    s->val = dup_bytes(p, value); /* the old value stays in the arena until the map goes */
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
    for (size_t i = 0; i < src->n; i++) {
        const wr_prop_t *x = &src->v[i];
        if (x->val == NULL && x->op == 0)
            continue;
        wr_prop_t *d = slot(dst, (cm_slice_t){x->key, x->klen});
        if (x->val == NULL && d->val)
            continue; /* a removal does not hide a value the other side has (merges) */
        if (x->val)
            put(dst, d, (cm_slice_t){x->val, x->vlen});
        d->ts = x->ts;
        d->op = x->op;
    }
}

void wr_props_clone(wr_props_t *dst, const wr_props_t *src)
{
    if (src->n == 0)
        return;
    /* every key and value in one block of dst's arena */
    size_t bytes = 0;
    for (size_t i = 0; i < src->n; i++)
        bytes += src->v[i].klen + 1 + (src->v[i].val ? src->v[i].vlen + 1 : 0);
    char *b = cm_arena_alloc(arena_of(dst), bytes);
    grow_members(dst, src->n);
    for (size_t i = 0; i < src->n; i++) {
        const wr_prop_t *x = &src->v[i];
        wr_prop_t *d = &dst->v[i];
        *d = *x;
        d->key = b;
        if (x->klen)
            memcpy(b, x->key, x->klen);
        b += x->klen + 1;
        if (x->val) {
            d->val = b;
            if (x->vlen)
                memcpy(b, x->val, x->vlen);
            b += x->vlen + 1;
        }
    }
    dst->n = src->n;
    dst->live = src->live;
    /* the same slots: the index copies as it is, nothing hashed again */
    if (dst->shared == NULL) {
        free(dst->ix);
        dst->ix = cm_xmalloc(src->ixcap * sizeof(*dst->ix));
    } else {
        dst->ix = cm_arena_alloc(dst->shared, src->ixcap * sizeof(*dst->ix));
    }
    memcpy(dst->ix, src->ix, src->ixcap * sizeof(*dst->ix));
    dst->ixcap = src->ixcap;
}

static bool same(const wr_prop_t *s, cm_slice_t value)
{
    return s->val && s->vlen == value.len && !memcmp(s->val, value.p, value.len);
}

bool wr_props_set_at(wr_props_t *p, cm_slice_t key, cm_slice_t value, int64_t ts)
{
    wr_prop_t *s = slot(p, key);
    bool known = s->val || s->op;
    if (known && s->op != 'o' && ts < s->ts)
        return false; /* a later $set or $unset is already in */
    if (same(s, value)) {
        if (s->op == 'o')
            s->op = 's'; /* now a $set's value: a later $set_once must not touch it */
        return false;
    }
    put(p, s, value);
    s->ts = ts;
    s->op = 's';
    return true;
}

bool wr_props_set_once_at(wr_props_t *p, cm_slice_t key, cm_slice_t value, int64_t ts)
{
    wr_prop_t *s = slot(p, key);
    if (s->val == NULL) {
        if (s->op == 'u' && ts < s->ts)
            return false; /* removed after this: stays removed */
    } else if (!(s->op == 'o' && ts < s->ts))
        return false; /* present, and not from a later $set_once */
    bool changed = !same(s, value);
    if (changed)
        put(p, s, value);
    s->ts = ts;
    s->op = 'o';
    return changed;
}

bool wr_props_unset_at(wr_props_t *p, cm_slice_t key, int64_t ts)
{
    wr_prop_t *s = slot(p, key);
    if (s->op && s->op != 'o' && ts < s->ts)
        return false;                     /* a later $set or $unset is in */
    if (s->val == NULL && s->op == 'u') { /* already removed: keep the later time */
        if (ts <= s->ts)
            return false;
        s->ts = ts;
        return true;
    }
    if (s->val) {
        s->val = NULL;
        p->live--;
    }
    /* Also for a key the person does not have: the marker keeps an older
     * $set that arrives afterwards out. */
    s->ts = ts;
    s->op = 'u';
    return true;
}

void wr_props_write_times(const wr_props_t *p, cm_buf_t *out)
{
    bool first = true;
    cm_buf_putc(out, '{');
    for (size_t i = 0; i < p->n; i++) {
        const wr_prop_t *x = &p->v[i];
        if (x->op == 0)
            continue;
        if (!first)
            cm_buf_putc(out, ',');
        first = false;
        cm_json_quote(out, (cm_slice_t){x->key, x->klen});
        /* ":[<ts>,\"<op>\"]" without printf (a person's every property,
         * every time the person is saved) */
        char num[24];
        cm_buf_append(out, ":[", 2);
        cm_buf_append(out, num, cm_fmt_int64(num, x->ts));
        char tail[5] = {',', '"', x->op, '"', ']'};
        cm_buf_append(out, tail, sizeof(tail));
    }
    cm_buf_putc(out, '}');
}

int wr_props_load_times(wr_props_t *p, cm_slice_t json)
{
    cm_json_doc_t *doc;
    if (cm_json_parse(json.p, json.len, NULL, &doc, NULL) != 0)
        return CM_EINVAL;
    cm_buf_t scratch = CM_BUF_INIT;
    cm_json_iter_t it = cm_json_iter(cm_json_root(doc));
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t key, op;
        int64_t ts;
        cm_buf_reset(&scratch);
        if (cm_json_as_str(k, &scratch, &key) != 0 || cm_json_as_int64(cm_json_at(v, 0), &ts) != 0)
            continue;
        op = cm_json_str_inner(cm_json_at(v, 1));
        wr_prop_t *s = slot(p, key);
        s->ts = ts;
        s->op = op.len == 1 && strchr("sou", op.p[0]) ? op.p[0] : 0;
    }
    cm_buf_free(&scratch);
    cm_json_doc_free(doc);
    return CM_OK;
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

int wr_props_merge_borrowed(wr_props_t *p, cm_json_t obj)
{
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return CM_EINVAL;
    cm_buf_t scratch;
    cm_buf_init(&scratch);
    reserve(p, cm_json_len(obj));
    cm_json_iter_t it = cm_json_iter(obj);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t key, value = cm_json_raw(v);
        cm_buf_reset(&scratch);
        if (cm_json_as_str(k, &scratch, &key) != 0)
            continue;
        /* a key decoded from escapes is in scratch: that one is copied */
        bool in_scratch = scratch.len && key.p >= scratch.p && key.p < scratch.p + scratch.len;
        wr_prop_t *s = slot_with(p, key, !in_scratch);
        if (s->val && s->vlen == value.len && !memcmp(s->val, value.p, value.len))
            continue;
        if (s->val == NULL)
            p->live++;
        s->val = (char *)value.p;
        s->vlen = value.len;
    }
    cm_buf_free(&scratch);
    return CM_OK;
}

int wr_props_load(wr_props_t *p, cm_slice_t json)
{
    cm_json_doc_t *doc;
    /* One copy of the text in the arena, and the members borrow it. */
    cm_slice_t text = cm_arena_dup(arena_of(p), json);
    if (cm_json_parse(text.p, text.len, NULL, &doc, NULL) != 0)
        return CM_EINVAL;
    int rc = wr_props_merge_borrowed(p, cm_json_root(doc));
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
