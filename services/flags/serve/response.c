/*
 * response.c - see response.h.
 */
#include "serve/response.h"

#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/buf.h"
#include "cm/arena.h"

typedef struct {
    const char *raw; /* cm_json_raw(value).p of the payload value */
    cm_slice_t text;
} rendered_t;

typedef struct {
    cm_slice_t head, meta, tail;
    rendered_t *payloads;
    uint32_t npayloads;
} entry_t;

struct flg_v2_cache {
    cm_arena_t arena;
    entry_t *entries; /* one per snapshot flag, in its order */
    uint32_t n;
    size_t size; /* about the size of a flags object with every flag in it */
};

void flg_write_payload(cm_json_writer_t *w, cm_json_t payload)
{
    if (!cm_json_exists(payload)) {
        cm_json_null(w);
    } else if (cm_json_type(payload) == CM_JSON_STRING) {
        cm_json_value(w, payload);
    } else {
        cm_buf_t text = CM_BUF_INIT; /* the value's compact JSON, as a string */
        cm_json_writer_t inner;
        cm_json_writer_init(&inner, &text);
        cm_json_value(&inner, payload);
        cm_json_str_s(w, cm_buf_slice(&text));
        cm_buf_free(&text);
    }
}

/* ---- the cache ------------------------------------------------------------ */

static void render_fixed(cm_arena_t *a, const flg_flag_t *f, entry_t *e, cm_buf_t *b)
{
    cm_buf_reset(b);
    cm_json_quote(b, f->key);
    cm_buf_append_cstr(b, ":{\"key\":");
    cm_json_quote(b, f->key);
    cm_buf_append_cstr(b, ",\"enabled\":");
    e->head = cm_arena_dup(a, cm_buf_slice(b));
    cm_buf_reset(b);
    cm_buf_appendf(b,
                   ",\"metadata\":{\"id\":%lld,\"version\":%lld,\"description\":null,"
                   "\"payload\":",
                   (long long)f->id, (long long)f->version);
    e->meta = cm_arena_dup(a, cm_buf_slice(b));
    cm_buf_reset(b);
    cm_buf_appendf(b, ",\"has_experiment\":%s}}", f->has_experiment ? "true" : "false");
    e->tail = cm_arena_dup(a, cm_buf_slice(b));
}

static void render_payloads(cm_arena_t *a, const flg_flag_t *f, entry_t *e, cm_buf_t *b)
{
    if (cm_json_type(f->payloads) != CM_JSON_OBJECT || cm_json_len(f->payloads) == 0)
        return;
    e->payloads = cm_arena_alloc(a, cm_json_len(f->payloads) * sizeof(*e->payloads));
    cm_json_iter_t it = cm_json_iter(f->payloads);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        if (cm_json_is_null(v))
            continue; /* evaluation treats it as no payload */
        cm_buf_reset(b);
        cm_json_writer_t w;
        cm_json_writer_init(&w, b);
        flg_write_payload(&w, v);
        e->payloads[e->npayloads++] =
            (rendered_t){cm_json_raw(v).p, cm_arena_dup(a, cm_buf_slice(b))};
    }
}

flg_v2_cache_t *flg_v2_cache_new(const flg_snapshot_t *s)
{
    flg_v2_cache_t *c = cm_xcalloc(1, sizeof(*c));
    c->n = flg_snapshot_nflags(s);
    c->entries = cm_arena_alloc(&c->arena, (c->n ? c->n : 1) * sizeof(*c->entries));
    cm_buf_t b = CM_BUF_INIT;
    for (uint32_t i = 0; i < c->n; i++) {
        const flg_flag_t *f = flg_snapshot_flag(s, i);
        entry_t *e = &c->entries[i];
        *e = (entry_t){0};
        render_fixed(&c->arena, f, e, &b);
        render_payloads(&c->arena, f, e, &b);
        /* The constant parts plus room for the per-request values. */
        c->size += e->head.len + e->meta.len + e->tail.len + 192;
    }
    cm_buf_free(&b);
    return c;
}

void flg_v2_cache_free(flg_v2_cache_t *c)
{
    if (c == NULL)
        return;
    cm_arena_free(&c->arena);
    free(c);
}

/* ---- writing ---------------------------------------------------------------- */

/* The payload as rendered in the cache; written afresh if it is not there. */
static void append_payload(cm_buf_t *obj, const entry_t *e, cm_json_t payload)
{
    if (!cm_json_exists(payload)) {
        cm_buf_append(obj, "null", 4);
        return;
    }
    const char *raw = cm_json_raw(payload).p;
    for (uint32_t i = 0; e && i < e->npayloads; i++) {
        if (e->payloads[i].raw == raw) {
            cm_buf_append_slice(obj, e->payloads[i].text);
            return;
        }
    }
    cm_json_writer_t pw; /* the payload is one value of its own */
    cm_json_writer_init(&pw, obj);
    flg_write_payload(&pw, payload);
}

/* One entry of the v2 `flags` object, appended raw to obj: the flag's
 * pre-rendered constant parts around the per-request values. */
static void append_flag_v2(cm_buf_t *obj, const entry_t *e, const flg_result_t *r)
{
    char buf[48];
    cm_buf_append_slice(obj, e->head);
    cm_buf_append_cstr(obj, r->enabled ? "true" : "false");
    cm_buf_append_cstr(obj, ",\"variant\":");
    if (r->variant.p)
        cm_json_quote(obj, r->variant);
    else
        cm_buf_append_cstr(obj, "null");
    cm_buf_append_cstr(obj, ",\"reason\":{\"code\":\"");
    cm_buf_append_cstr(obj, flg_reason_code(r->reason));
    cm_buf_append_cstr(obj, "\",\"condition_index\":");
    if (r->condition_index >= 0) {
        char num[24];
        cm_buf_append(obj, num, cm_fmt_int64(num, r->condition_index));
    } else
        cm_buf_append_cstr(obj, "null");
    cm_buf_append_cstr(obj, ",\"description\":");
    /* Our own fixed texts: nothing in them needs escaping. */
    cm_buf_putc(obj, '"');
    cm_buf_append_cstr(obj, flg_reason_description(r, buf));
    cm_buf_putc(obj, '"');
    cm_buf_putc(obj, '}');
    cm_buf_append_slice(obj, e->meta);
    append_payload(obj, e, r->payload);
    cm_buf_append_slice(obj, e->tail);
}

void flg_write_v2(cm_json_writer_t *w, const flg_eval_t *e, const flg_v2_cache_t *cache)
{
    flg_v2_cache_t *own = NULL;
    if (cache == NULL && e->snap != NULL)
        cache = own = flg_v2_cache_new(e->snap);
    bool first = true;
    cm_json_key(w, "errorsWhileComputingFlags");
    cm_json_boolean(w, e->errors);
    cm_json_key(w, "flags");
    /* The entries go straight into the writer's buffer, between the braces
     * of an object the writer sees as empty: one pass, no copy. Room for
     * all of them is made first, so the buffer grows once. */
    cm_json_begin_object(w);
    cm_buf_t *obj = w->out;
    if (cache != NULL) /* NULL: a project with no definitions yet */
        cm_buf_reserve(obj, cache->size);
    for (uint32_t i = 0; i < e->n; i++) {
        if (e->results[i].state != FLG_RES_OK)
            continue;
        if (!first)
            cm_buf_putc(obj, ',');
        first = false;
        append_flag_v2(obj, &cache->entries[i], &e->results[i]);
    }
    cm_json_end_object(w);
    flg_v2_cache_free(own);
}

void flg_write_legacy(cm_json_writer_t *w, const flg_eval_t *e)
{
    cm_json_key(w, "errorsWhileComputingFlags");
    cm_json_boolean(w, e->errors);
    cm_json_key(w, "featureFlags");
    cm_json_begin_object(w);
    for (uint32_t i = 0; i < e->n; i++) {
        const flg_result_t *r = &e->results[i];
        if (r->state != FLG_RES_OK)
            continue;
        cm_json_key_s(w, flg_snapshot_flag(e->snap, i)->key);
        if (r->enabled && r->variant.p)
            cm_json_str_s(w, r->variant);
        else
            cm_json_boolean(w, r->enabled);
    }
    cm_json_end_object(w);
    cm_json_key(w, "featureFlagPayloads");
    cm_json_begin_object(w);
    for (uint32_t i = 0; i < e->n; i++) {
        const flg_result_t *r = &e->results[i];
        if (r->state != FLG_RES_OK || !cm_json_exists(r->payload))
            continue;
        cm_json_key_s(w, flg_snapshot_flag(e->snap, i)->key);
        flg_write_payload(w, r->payload);
    }
    cm_json_end_object(w);
}
