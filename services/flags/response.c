/*
 * response.c - see response.h.
 */
#include "response.h"

#include "cm/buf.h"

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

/* The payload as rendered at load; written afresh only if it is missing. */
static void append_payload(cm_buf_t *obj, const flg_flag_t *f, cm_json_t payload)
{
    if (!cm_json_exists(payload)) {
        cm_buf_append(obj, "null", 4);
        return;
    }
    const char *raw = cm_json_raw(payload).p;
    for (uint32_t i = 0; i < f->npayload_v2; i++) {
        if (f->payload_v2[i].raw == raw) {
            cm_buf_append_slice(obj, f->payload_v2[i].text);
            return;
        }
    }
    cm_json_writer_t pw; /* the payload is one value of its own */
    cm_json_writer_init(&pw, obj);
    flg_write_payload(&pw, payload);
}

/* One entry of the v2 `flags` object, appended raw to obj: the flag's
 * pre-rendered constant parts around the per-request values. */
static void append_flag_v2(cm_buf_t *obj, const flg_flag_t *f, const flg_result_t *r)
{
    char buf[48];
    cm_buf_append_slice(obj, f->v2_head);
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
    cm_buf_append_slice(obj, f->v2_meta);
    append_payload(obj, f, r->payload);
    cm_buf_append_slice(obj, f->v2_tail);
}

void flg_write_v2(cm_json_writer_t *w, const flg_eval_t *e)
{
    bool first = true;
    cm_json_key(w, "errorsWhileComputingFlags");
    cm_json_boolean(w, e->errors);
    cm_json_key(w, "flags");
    /* The entries go straight into the writer's buffer, between the braces
     * of an object the writer sees as empty: one pass, no copy. Room for
     * all of them is made first, so the buffer grows once. */
    cm_json_begin_object(w);
    cm_buf_t *obj = w->out;
    if (e->snap != NULL) /* NULL: a project with no definitions yet */
        cm_buf_reserve(obj, flg_snapshot_v2_size(e->snap));
    for (uint32_t i = 0; i < e->n; i++) {
        if (e->results[i].state != FLG_RES_OK)
            continue;
        if (!first)
            cm_buf_putc(obj, ',');
        first = false;
        append_flag_v2(obj, flg_snapshot_flag(e->snap, i), &e->results[i]);
    }
    cm_json_end_object(w);
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
