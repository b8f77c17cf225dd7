/*
 * events.c - capture payload -> CapturedEvent messages (see events.h).
 *
 * Decisions that go beyond PostHog's documentation are in docs/ingest.md;
 * the ones that shape this file:
 *   - Shapes are tried as PostHog capture does: array, batch envelope
 *     ({"batch": [...]}), one event; on /engage an object without `event`
 *     becomes $identify.
 *   - One token per request: the envelope's api_key/token, else each event's
 *     token/$token/api_key/properties.token, which must all agree.
 *   - The event's own fields are forwarded unchanged as raw JSON spans of
 *     the input (properties, timestamp, offset, $set, $set_once), so no
 *     property is ever reinterpreted on the way to the queue.
 *   - data.uuid is the message uuid: the client's when it is a valid UUID,
 *     else a fresh UUIDv7. Consumers see one id for one event.
 */
#include "events.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/timefmt.h"

typedef struct {
    const ing_request_t *req;
    cm_api_error_t *err;
    cm_buf_t scratch;
    /* One event's `data` document, reused across the batch: it is copied
     * into the event's message, so one allocation serves every event. */
    cm_buf_t data;
    char now_text[CM_ISO8601_MAX];
    char sent_at_text[CM_ISO8601_MAX];
    int64_t sent_at_us; /* 0: unknown */
    bool historical;
    bool envelope_token;
    const char *token;
} build_t;

/* cm_api_error_set() for event i: attr is "batch[i]<suffix>", formatted only on error. */
static int fail_at(cm_api_error_t *e, int status, const char *code, size_t i, const char *suffix,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail_at(cm_api_error_t *e, int status, const char *code, size_t i, const char *suffix,
                   const char *fmt, ...)
{
    char attr[sizeof(e->attr)];
    va_list ap;
    snprintf(attr, sizeof(attr), "batch[%zu]%s", i, suffix);
    va_start(ap, fmt);
    cm_api_error_vset(e, status, code, attr, fmt, ap);
    va_end(ap);
    return -1;
}

const char *ing_token_problem(cm_slice_t t)
{
    if (t.len == 0)
        return "empty";
    if (t.len > ING_MAX_TOKEN)
        return "too_long";
    for (size_t i = 0; i < t.len; i++) {
        if (t.p[i] == '\0')
            return "null_byte";
        if ((unsigned char)t.p[i] > 0x7f)
            return "not_ascii";
    }
    if (cm_slice_starts_with(t, "phx_"))
        return "personal_api_key";
    return NULL;
}

/* A string member's decoded value when it is a non-empty string. */
static bool str_member(cm_json_t obj, const char *key, cm_buf_t *scratch, cm_slice_t *out)
{
    cm_json_t v = cm_json_get(obj, key);
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_as_str(v, scratch, out) != 0)
        return false;
    *out = cm_slice_trim(*out);
    return out->len > 0;
}

/* The token an event carries itself, if any (the member it came from in *src). */
static bool event_token(cm_json_t ev, cm_buf_t *scratch, cm_slice_t *tok, cm_json_t *src)
{
    static const char *keys[] = {"token", "$token", "api_key"};
    for (size_t i = 0; i < 3; i++) {
        if (str_member(ev, keys[i], scratch, tok)) {
            *src = cm_json_get(ev, keys[i]);
            return true;
        }
    }
    *src = CM_JSON_NONE_VALUE;
    return str_member(cm_json_get(ev, "properties"), "token", scratch, tok);
}

/* ---- token -------------------------------------------------------------------- */

static int find_token(build_t *b, cm_json_t envelope, cm_json_t items, bool single,
                      ing_batch_t *out)
{
    cm_slice_t tok = CM_SLICE_NULL;
    cm_buf_t first = CM_BUF_INIT;
    int rc = 0;
    if (cm_json_exists(envelope) && (str_member(envelope, "api_key", &b->scratch, &tok) ||
                                     str_member(envelope, "token", &b->scratch, &tok))) {
        cm_buf_append_slice(&first, tok);
        b->envelope_token = true;
    } else {
        cm_json_iter_t it = cm_json_iter(items);
        cm_json_t k, ev = items;
        bool more = single ? true : cm_json_next(&it, &k, &ev);
        bool have = false;
        while (more) {
            cm_json_t src;
            cm_buf_reset(&b->scratch);
            if (event_token(ev, &b->scratch, &tok, &src)) {
                if (!have) {
                    cm_buf_append_slice(&first, tok);
                    have = true;
                } else if (!cm_slice_eq(cm_buf_slice(&first), tok)) {
                    rc = cm_api_error_set(
                        b->err, 401, "inconsistent_tokens", "api_key",
                        "The events of one request name different project tokens.");
                    goto done;
                }
            }
            more = single ? false : cm_json_next(&it, &k, &ev);
        }
    }
    if (first.len == 0) {
        rc = cm_api_error_set(b->err, 401, "missing_token", "api_key",
                              "No project token: set api_key (or token) in the request body.");
        goto done;
    }
    const char *problem = ing_token_problem(cm_buf_slice(&first));
    if (problem != NULL) {
        rc = cm_api_error_set(b->err, 401, "invalid_token", "api_key", "API key is not valid: %s",
                              problem);
        goto done;
    }
    memcpy(out->token, first.p, first.len);
    out->token[first.len] = '\0';
    b->token = out->token;
done:
    cm_buf_free(&first);
    return rc;
}

/* ---- distinct_id --------------------------------------------------------------- */

/* Appends a string capped at max code points, with NUL replaced by U+FFFD. */
static void append_capped(cm_buf_t *out, cm_slice_t s, size_t max_chars)
{
    size_t chars = 0;
    for (size_t i = 0; i < s.len && chars < max_chars; chars++) {
        unsigned char c = (unsigned char)s.p[i];
        size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        if (i + n > s.len)
            n = s.len - i;
        if (c == 0)
            cm_buf_append(out, "\xef\xbf\xbd", 3);
        else
            cm_buf_append(out, s.p + i, n);
        i += n;
    }
}

/* Stringifies a distinct_id as PostHog does; leaves out empty when missing. */
static void stringify_id(cm_json_t v, cm_buf_t *scratch, cm_buf_t *out)
{
    cm_slice_t s;
    cm_buf_reset(scratch);
    switch (cm_json_type(v)) {
    case CM_JSON_STRING:
        if (cm_json_as_str(v, scratch, &s) == 0)
            append_capped(out, s, ING_MAX_DISTINCT_ID_CHARS);
        break;
    case CM_JSON_NUMBER:
    case CM_JSON_BOOL: append_capped(out, cm_json_raw(v), ING_MAX_DISTINCT_ID_CHARS); break;
    case CM_JSON_ARRAY:
    case CM_JSON_OBJECT: {
        cm_json_writer_t w;
        cm_json_writer_init(&w, scratch);
        cm_json_value(&w, v);
        append_capped(out, cm_buf_slice(scratch), ING_MAX_DISTINCT_ID_CHARS);
        break;
    }
    default: break;
    }
}

static bool present(cm_json_t v)
{
    cm_json_type_t t = cm_json_type(v);
    return t != CM_JSON_NONE && t != CM_JSON_NULL;
}

/* ---- timestamps ----------------------------------------------------------------- */

static int64_t compute_timestamp(const build_t *b, cm_json_t ev, cm_json_t props)
{
    int64_t now = b->req->now_us, ts = now, t, offset;
    cm_slice_t raw = cm_json_str_inner(cm_json_get(ev, "timestamp"));
    if (raw.p != NULL && cm_iso8601_parse(raw.p, raw.len, &t) == 0) {
        bool ignore = false; /* only a JSON true counts */
        cm_json_as_bool(cm_json_get(props, "$ignore_sent_at"), &ignore);
        ts = (b->sent_at_us != 0 && !ignore) ? now + (t - b->sent_at_us) : t;
    }
    if (cm_json_as_int64(cm_json_get(ev, "offset"), &offset) == 0) {
        /* An offset so large the arithmetic overflows gets what the checks
         * below give its side: far future -> now, far past -> 0. */
        int64_t off_us;
        if (__builtin_mul_overflow(offset, (int64_t)1000, &off_us) ||
            __builtin_sub_overflow(now, off_us, &ts))
            return offset < 0 ? now : 0;
    }
    if (ts > now + ING_FUTURE_CLAMP_US)
        ts = now;
    /* Outside years 0000-9999 there is no ISO-8601 text for it. */
    if (ts < -62167219200LL * 1000000 || ts > 253402300799LL * 1000000)
        ts = 0;
    return ts;
}

static int check_historical(build_t *b, cm_json_t ev, size_t i)
{
    int64_t t;
    cm_slice_t raw = cm_json_str_inner(cm_json_get(ev, "timestamp"));
    if (raw.p == NULL || cm_iso8601_parse(raw.p, raw.len, &t) != 0)
        return fail_at(b->err, 400, "historical_timestamp_required", i, ".timestamp",
                       "Event at index %zu: a historical migration needs an ISO-8601 timestamp on "
                       "every event.",
                       i);
    if (t > b->req->now_us - ING_HISTORICAL_MIN_AGE_US)
        return fail_at(b->err, 400, "historical_timestamp_too_recent", i, ".timestamp",
                       "Event at index %zu: historical events must be dated at least 48 hours "
                       "before the import time.",
                       i);
    return 0;
}

/* ---- one event -------------------------------------------------------------------- */

static void write_data(build_t *b, cm_json_t ev, ing_event_t *e, cm_json_t props, cm_buf_t *data)
{
    static const char *tail[] = {"timestamp", "offset", "$set", "$set_once"};
    cm_json_writer_t w;
    cm_json_t src, did = cm_json_get(ev, "distinct_id");
    cm_slice_t tok;
    cm_json_writer_init(&w, data);
    cm_json_begin_object(&w);
    cm_buf_reset(&b->scratch);
    if (event_token(ev, &b->scratch, &tok, &src) && cm_json_exists(src)) {
        cm_json_key(&w, "token");
        cm_json_value(&w, src);
    }
    if (!present(did))
        did = cm_json_get(ev, "$distinct_id");
    if (present(did)) {
        cm_json_key(&w, "distinct_id");
        cm_json_value(&w, did);
    }
    cm_json_key(&w, "uuid");
    cm_json_str_cstr(&w, e->uuid);
    cm_json_key(&w, "event");
    cm_json_str_cstr(&w, e->event);
    /* Stored compact: the client's whitespace is not the event's content,
     * and an event is measured (MAX_EVENT_BYTES) as stored. Strings and
     * numbers stay byte for byte as sent. */
    cm_json_key(&w, "properties");
    if (present(props))
        cm_json_raw_value_compact(&w, cm_json_raw(props));
    else
        cm_json_raw_value(&w, CM_SLICE_LIT("{}"));
    for (size_t k = 0; k < CM_ARRAY_LEN(tail); k++) {
        cm_json_t v = cm_json_get(ev, tail[k]);
        if (present(v)) {
            cm_json_key(&w, tail[k]);
            cm_json_raw_value_compact(&w, cm_json_raw(v));
        }
    }
    cm_json_end_object(&w);
}

static void write_message(build_t *b, ing_event_t *e, cm_slice_t data)
{
    char ts[CM_ISO8601_MAX];
    cm_iso8601_format(e->timestamp_us, 3, ts);
    cm_json_writer_t w;
    cm_json_writer_init(&w, &e->message);
    cm_json_begin_object(&w);
    cm_json_key(&w, "uuid");
    cm_json_str_cstr(&w, e->uuid);
    cm_json_key(&w, "distinct_id");
    cm_json_str_s(&w, cm_buf_slice(&e->distinct_id));
    cm_json_key(&w, "ip");
    cm_json_str_lossy(&w, cm_slice_from_cstr(b->req->ip ? b->req->ip : ""));
    cm_json_key(&w, "data");
    cm_json_str_s(&w, data);
    cm_json_key(&w, "now");
    cm_json_str_cstr(&w, b->now_text);
    if (b->sent_at_us != 0) {
        cm_json_key(&w, "sent_at");
        cm_json_str_cstr(&w, b->sent_at_text);
    }
    cm_json_key(&w, "token");
    cm_json_str_cstr(&w, b->token);
    cm_json_key(&w, "event");
    cm_json_str_cstr(&w, e->event);
    cm_json_key(&w, "timestamp");
    cm_json_str_cstr(&w, ts);
    if (b->historical) {
        cm_json_key(&w, "historical_migration");
        cm_json_boolean(&w, true);
    }
    cm_json_end_object(&w);
}

static int event_name(build_t *b, cm_json_t ev, size_t i, ing_event_t *e)
{
    cm_slice_t name;
    cm_json_t v = cm_json_get(ev, "event");
    if (!present(v)) {
        if (!b->req->engage)
            return fail_at(b->err, 400, "missing_event_name", i, ".event",
                           "Event at index %zu has no event name.", i);
        e->event = cm_xstrdup("$identify");
        return 0;
    }
    cm_buf_reset(&b->scratch);
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_as_str(v, &b->scratch, &name) != 0)
        return fail_at(b->err, 400, "invalid_payload", i, ".event",
                       "Event at index %zu: the event name must be a string.", i);
    if (name.len == 0)
        return fail_at(b->err, 400, "missing_event_name", i, ".event",
                       "Event at index %zu has an empty event name.", i);
    /* A NUL would end the name where it stands ("a\u0000b" stored as "a",
     * the same event as "a"): U+FFFD, as in distinct ids. */
    cm_buf_t text = CM_BUF_INIT;
    append_capped(&text, name, SIZE_MAX);
    e->event = cm_xmemdup(text.p, text.len);
    cm_buf_free(&text);
    return 0;
}

/* Builds out->events[out->n]; returns 1 when built, 0 when dropped, -1 on error. */
static int build_one(build_t *b, cm_json_t ev, size_t i, ing_batch_t *out)
{
    ing_event_t *e = &out->events[out->n];
    memset(e, 0, sizeof(*e));
    if (cm_json_type(ev) != CM_JSON_OBJECT)
        return fail_at(b->err, 400, "invalid_payload", i, "",
                       "Event at index %zu is not a JSON object.", i);
    if (event_name(b, ev, i, e) != 0)
        goto fail;
    if (strcmp(e->event, "$performance_event") == 0) {
        free(e->event);
        out->dropped++;
        return 0;
    }
    cm_json_t props = cm_json_get(ev, "properties");
    if (present(props) && cm_json_type(props) != CM_JSON_OBJECT) {
        fail_at(b->err, 400, "invalid_payload", i, ".properties",
                "Event at index %zu: properties must be a JSON object.", i);
        goto fail;
    }
    cm_json_t did = cm_json_get(ev, "distinct_id");
    if (!present(did))
        did = cm_json_get(ev, "$distinct_id");
    if (!present(did))
        did = cm_json_get(props, "distinct_id");
    stringify_id(did, &b->scratch, &e->distinct_id);
    if (e->distinct_id.len == 0) {
        fail_at(b->err, 400, "missing_distinct_id", i, ".distinct_id",
                "Event at index %zu has no distinct_id (top level or in properties).", i);
        goto fail;
    }
    if (b->historical && check_historical(b, ev, i) != 0)
        goto fail;
    cm_slice_t u = cm_json_str_inner(cm_json_get(ev, "uuid"));
    if (u.p != NULL && cm_uuid_valid(u.p, u.len)) {
        for (size_t k = 0; k < CM_UUID_STR_LEN; k++)
            e->uuid[k] = (char)((u.p[k] >= 'A' && u.p[k] <= 'F') ? u.p[k] + 32 : u.p[k]);
        e->uuid[CM_UUID_STR_LEN] = '\0';
    } else {
        cm_uuid_v7(e->uuid);
    }
    e->timestamp_us = compute_timestamp(b, ev, props);

    /* Sized from the input once, instead of doubling up from 64 bytes. */
    cm_buf_reset(&b->data);
    cm_buf_reserve(&b->data, cm_json_raw(ev).len + 128);
    write_data(b, ev, e, props, &b->data);
    cm_buf_reserve(&e->message, b->data.len + b->data.len / 4 + 512);
    write_message(b, e, cm_buf_slice(&b->data));
    if (e->message.len > b->req->max_event_bytes) {
        fail_at(b->err, 413, "event_too_large", i, "",
                "Event at index %zu is %zu bytes once serialized; the limit is %zu.", i,
                e->message.len, b->req->max_event_bytes);
        goto fail;
    }
    out->n++;
    return 1;
fail:
    free(e->event);
    cm_buf_free(&e->distinct_id);
    cm_buf_free(&e->message);
    memset(e, 0, sizeof(*e));
    return -1;
}

/* ---- the request ------------------------------------------------------------------ */

void ing_batch_free(ing_batch_t *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->events[i].event);
        cm_buf_free(&b->events[i].distinct_id);
        cm_buf_free(&b->events[i].message);
    }
    free(b->events);
    memset(b, 0, sizeof(*b));
}

static int find_shape(build_t *b, cm_json_t root, cm_json_t *envelope, cm_json_t *items,
                      bool *single, size_t *n)
{
    *envelope = CM_JSON_NONE_VALUE;
    *single = false;
    if (cm_json_type(root) == CM_JSON_ARRAY) {
        *items = root;
    } else if (cm_json_type(root) == CM_JSON_OBJECT) {
        cm_json_t batch = cm_json_get(root, "batch");
        if (cm_json_exists(batch)) {
            if (cm_json_type(batch) != CM_JSON_ARRAY)
                return cm_api_error_set(b->err, 400, "invalid_payload", "batch",
                                        "batch must be an array.");
            *envelope = root;
            *items = batch;
        } else {
            *items = root;
            *single = true;
        }
    } else {
        return cm_api_error_set(b->err, 400, "invalid_payload", NULL,
                                "The payload must be a JSON object or an array of events.");
    }
    *n = *single ? 1 : cm_json_len(*items);
    if (*n == 0)
        return cm_api_error_set(b->err, 400, "no_events", "batch", "The request holds no event.");
    return 0;
}

static void read_envelope(build_t *b, cm_json_t envelope)
{
    cm_json_t h = cm_json_get(envelope, "historical_migration");
    b->historical = false; /* only a JSON true counts */
    cm_json_as_bool(h, &b->historical);
    cm_slice_t s = cm_json_str_inner(cm_json_get(envelope, "sent_at"));
    if (s.p == NULL || cm_iso8601_parse(s.p, s.len, &b->sent_at_us) != 0)
        b->sent_at_us = b->req->query_sent_at_us;
}

int ing_events_build(const char *json, size_t len, const ing_request_t *req, ing_batch_t *out,
                     cm_api_error_t *err)
{
    build_t b = {.req = req, .err = err};
    cm_json_doc_t *doc = NULL;
    cm_json_error_t jerr;
    cm_json_t envelope, items, k, ev;
    bool single;
    size_t n, i = 0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (cm_json_parse(json, len, NULL, &doc, &jerr) != 0) {
        /* Only a size limit is a 413: it tells an SDK to split the batch,
         * which cannot help with nesting too deep (CM_ERANGE) or syntax. */
        cm_api_error_set(err, jerr.code == CM_ETOOBIG ? 413 : 400,
                         jerr.code == CM_ETOOBIG ? "payload_too_large" : "invalid_json", NULL,
                         "Malformed JSON at byte %zu: %s.", jerr.offset, jerr.msg);
        return -1;
    }
    cm_json_t root = cm_json_root(doc);
    if (find_shape(&b, root, &envelope, &items, &single, &n) != 0)
        goto done;
    read_envelope(&b, envelope);
    if (find_token(&b, envelope, items, single, out) != 0)
        goto done;
    out->historical = b.historical;
    cm_iso8601_format(req->now_us, 6, b.now_text);
    memcpy(out->now, b.now_text, sizeof(out->now));
    if (b.sent_at_us != 0)
        cm_iso8601_format(b.sent_at_us, 3, b.sent_at_text);

    out->events = cm_xcalloc(n, sizeof(*out->events));
    cm_json_iter_t it = cm_json_iter(items);
    bool more = single ? (ev = root, true) : cm_json_next(&it, &k, &ev);
    for (; more; i++) {
        if (build_one(&b, ev, i, out) < 0)
            goto done;
        more = single ? false : cm_json_next(&it, &k, &ev);
    }
    rc = 0;
done:
    if (rc != 0)
        ing_batch_free(out);
    cm_buf_free(&b.scratch);
    cm_buf_free(&b.data);
    cm_json_doc_free(doc);
    return rc;
}
