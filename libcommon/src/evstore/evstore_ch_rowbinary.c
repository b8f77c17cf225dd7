/*
 * evstore_ch_rowbinary.c - events as ClickHouse's RowBinary, the format
 * the server reads at least cost (see evstore_internal.h).
 *
 * Why: the server's CPU was most of a write's. JSONEachRow makes it find
 * each key by name, unescape every string (each event's properties three
 * times: the text and the two arrays) and parse the times; RowBinary is
 * the column values in the INSERT's column order, each prefixed by its
 * length where it has one. The bytes stored are the same as the JSON path
 * stores: strings go through unchanged (ClickHouse keeps bytes, it does
 * not check UTF-8), the arrays hold what json_kv_arrays writes.
 *
 * The format, as 18.16 and current releases read it: Int64 and the
 * DateTime's UInt32 little-endian; a String a LEB128 length and the bytes;
 * an Array its LEB128 count and the elements; a UUID its two 64-bit halves,
 * each little-endian (so the text's first 8 bytes reversed, then the last
 * 8 reversed).
 */
#include <string.h>

#include "cm/json.h"
#include "cm/uuid.h"
#include "evstore_internal.h"

const char cm__ch_rowbinary_events_insert[] =
    "INSERT INTO events (uuid, project_id, event, distinct_id, person_id, properties,"
    " person_properties, properties_keys, properties_values, person_properties_keys,"
    " person_properties_values, timestamp, timestamp_ms, created_at, session_id)"
    " FORMAT RowBinary";

static bool uuid_text(const char *s)
{
    return s != NULL && cm_uuid_valid(s, strlen(s));
}

bool cm__ch_rowbinary_fits(const cm_evstore_event_t *e)
{
    return uuid_text(e->uuid) && uuid_text(e->person_id) && cm__ch_time_exact(e->timestamp_ms) &&
           cm__ch_time_exact(e->created_at_ms);
}

static void put_varint(cm_buf_t *out, uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    cm_buf_append(out, (const char *)b, n);
}

static void put_string(cm_buf_t *out, cm_slice_t s)
{
    put_varint(out, s.len);
    if (s.len)
        cm_buf_append(out, s.p, s.len);
}

static void put_le(cm_buf_t *out, uint64_t v, size_t bytes)
{
    unsigned char b[8];
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    cm_buf_append(out, (const char *)b, bytes);
}

static void put_uuid(cm_buf_t *out, const char *text)
{
    unsigned char b[16], w[16];
    cm_uuid_bytes(text, strlen(text), b); /* checked by cm__ch_rowbinary_fits */
    for (size_t i = 0; i < 8; i++) {
        w[i] = b[7 - i];
        w[8 + i] = b[15 - i];
    }
    cm_buf_append(out, (const char *)w, 16);
}

static void put_datetime(cm_buf_t *out, int64_t ms)
{
    int64_t secs = (ms - (ms % 1000 + 1000) % 1000) / 1000; /* floored, as the text */
    put_le(out, (uint64_t)secs, 4);
}

/* obj's members as the two arrays json_kv_arrays (evstore_clickhouse.c)
 * writes (cm__ch_kv_text), null members left out. Not an object: two
 * empty arrays. */
static void put_kv_arrays(cm_buf_t *out, cm_slice_t obj, cm__ch_rb_scratch_t *s)
{
    bool ok = cm_json_parse_into(&s->doc, obj.p, obj.len, NULL, NULL) == 0 &&
              cm_json_type(cm_json_root(&s->doc)) == CM_JSON_OBJECT;
    size_t count = 0;
    cm_json_t k, v;
    cm_json_iter_t it = ok ? cm_json_iter(cm_json_root(&s->doc)) : (cm_json_iter_t){0};
    while (ok && cm_json_next(&it, &k, &v))
        if (!cm_json_is_null(v))
            count++;
    for (int half = 0; half < 2; half++) {
        put_varint(out, count);
        it = ok ? cm_json_iter(cm_json_root(&s->doc)) : (cm_json_iter_t){0};
        while (ok && cm_json_next(&it, &k, &v))
            if (!cm_json_is_null(v))
                put_string(out, cm__ch_kv_text(k, v, half == 1, &s->text));
    }
}

void cm__ch_rowbinary_event(cm_buf_t *out, const cm_evstore_event_t *e, cm__ch_rb_scratch_t *s)
{
    put_uuid(out, e->uuid);
    put_le(out, (uint64_t)e->project_id, 8);
    put_string(out, e->event);
    put_string(out, e->distinct_id);
    put_uuid(out, e->person_id);
    put_string(out, e->properties);
    put_string(out, e->person_properties);
    put_kv_arrays(out, e->properties, s);
    put_kv_arrays(out, e->person_properties, s);
    put_datetime(out, e->timestamp_ms);
    put_le(out, (uint64_t)e->timestamp_ms, 8);
    put_datetime(out, e->created_at_ms);
    put_string(out, e->session_id);
}

void cm__ch_rb_scratch_free(cm__ch_rb_scratch_t *s)
{
    cm_json_doc_clear(&s->doc);
    cm_buf_free(&s->text);
}
