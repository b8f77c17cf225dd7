/*
 * response.c - see response.h.
 */
#include "response.h"

#include "cm/buf.h"

static void write_payload(cm_json_writer_t *w, cm_json_t payload)
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

static void write_flag_v2(cm_json_writer_t *w, const flg_flag_t *f, const flg_result_t *r)
{
    char buf[48];
    cm_json_key_s(w, f->key);
    cm_json_begin_object(w);
    cm_json_key(w, "key");
    cm_json_str_s(w, f->key);
    cm_json_key(w, "enabled");
    cm_json_boolean(w, r->enabled);
    cm_json_key(w, "variant");
    if (r->variant.p)
        cm_json_str_s(w, r->variant);
    else
        cm_json_null(w);
    cm_json_key(w, "reason");
    cm_json_begin_object(w);
    cm_json_key(w, "code");
    cm_json_str_cstr(w, flg_reason_code(r->reason));
    cm_json_key(w, "condition_index");
    if (r->condition_index >= 0)
        cm_json_int(w, r->condition_index);
    else
        cm_json_null(w);
    cm_json_key(w, "description");
    cm_json_str_cstr(w, flg_reason_description(r, buf));
    cm_json_end_object(w);
    cm_json_key(w, "metadata");
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, f->id);
    cm_json_key(w, "version");
    cm_json_int(w, f->version);
    cm_json_key(w, "description");
    cm_json_null(w);
    cm_json_key(w, "payload");
    write_payload(w, r->payload);
    cm_json_key(w, "has_experiment");
    cm_json_boolean(w, f->has_experiment);
    cm_json_end_object(w);
    cm_json_end_object(w);
}

void flg_write_v2(cm_json_writer_t *w, const flg_eval_t *e)
{
    cm_json_key(w, "errorsWhileComputingFlags");
    cm_json_boolean(w, e->errors);
    cm_json_key(w, "flags");
    cm_json_begin_object(w);
    for (uint32_t i = 0; i < e->n; i++)
        if (e->results[i].state == FLG_RES_OK)
            write_flag_v2(w, flg_snapshot_flag(e->snap, i), &e->results[i]);
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
        write_payload(w, r->payload);
    }
    cm_json_end_object(w);
}
