/*
 * fuzz_capture.c - libFuzzer target for ingest's payload-to-message path
 * (services/ingest/events.c): shapes, tokens, distinct_id stringification,
 * timestamps, historical checks, message building.
 *
 * The target links ingest's code (build/fuzz/libingest.a). Every accepted payload must yield
 * messages that are valid JSON with the fields the schema requires.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ing_request_t req = {
        .now_us = 1795262400LL * 1000000,
        .ip = "127.0.0.1",
        .query_sent_at_us = size % 2 ? 0 : 1795262300LL * 1000000,
        .engage = size % 3 == 0,
        .max_event_bytes = 1 << 20,
    };
    ing_batch_t b;
    cm_api_error_t e;
    if (ing_events_build((const char *)data, size, &req, &b, &e) != 0) {
        if (e.status != 400 && e.status != 401 && e.status != 413)
            abort();
        if (e.code == NULL || e.detail[0] == '\0')
            abort();
        return 0;
    }
    for (size_t i = 0; i < b.n; i++) {
        cm_json_doc_t *doc = NULL;
        if (cm_json_parse(b.events[i].message.p, b.events[i].message.len, NULL, &doc, NULL) != 0)
            abort();
        cm_json_t root = cm_json_root(doc);
        static const char *required[] = {"uuid", "distinct_id", "ip",    "data",
                                         "now",  "token",       "event", "timestamp"};
        for (size_t k = 0; k < sizeof(required) / sizeof(required[0]); k++)
            if (cm_json_type(cm_json_get(root, required[k])) != CM_JSON_STRING)
                abort();
        cm_slice_t d = cm_json_str_inner(cm_json_get(root, "data"));
        cm_buf_t data_json = CM_BUF_INIT;
        cm_json_str_append(cm_json_get(root, "data"), &data_json);
        cm_json_doc_t *inner = NULL;
        if (d.p == NULL || cm_json_parse(data_json.p, data_json.len, NULL, &inner, NULL) != 0)
            abort();
        cm_json_doc_free(inner);
        cm_buf_free(&data_json);
        cm_json_doc_free(doc);
        if (b.events[i].distinct_id.len == 0 || strlen(b.events[i].uuid) != 36)
            abort();
    }
    ing_batch_free(&b);
    return 0;
}
