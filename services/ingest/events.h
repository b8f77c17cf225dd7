/*
 * events.h - from a decoded capture payload to queue messages.
 *
 * Pure: no I/O. Given the payload's JSON text and what the request told us
 * (path kind, time, client IP, query sent_at), it finds the shape (one
 * event, an array, a batch envelope, or an /engage body), the project token,
 * and for every event builds PostHog's CapturedEvent JSON (proto/
 * captured_event.schema.json) with its message key and headers.
 *
 * Errors carry the HTTP status, a stable `code` for the JSON envelope, a
 * detail for humans and the offending attribute ("batch[3].distinct_id").
 */
#ifndef ING_EVENTS_H
#define ING_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/api_error.h"
#include "cm/buf.h"
#include "cm/timefmt.h"
#include "cm/uuid.h"

#define ING_MAX_TOKEN             64
#define ING_MAX_DISTINCT_ID_CHARS 200
#define ING_HISTORICAL_MIN_AGE_US (48LL * 3600 * 1000000)
#define ING_FUTURE_CLAMP_US       (23LL * 3600 * 1000000)

typedef struct {
    int64_t now_us;           /* receive time */
    const char *ip;           /* client address, as it goes into the message */
    int64_t query_sent_at_us; /* from ?_= or ?sent_at= (ms); 0 when absent */
    bool engage;              /* /engage: an object without `event` is $identify */
    size_t max_event_bytes;   /* one serialized CapturedEvent at most */
} ing_request_t;

typedef struct {
    char uuid[CM_UUID_STR_LEN + 1];
    char *event;          /* owned, NUL-terminated */
    cm_buf_t distinct_id; /* the stringified, capped distinct_id */
    int64_t timestamp_us; /* computed timestamp */
    cm_buf_t message;     /* the CapturedEvent JSON */
} ing_event_t;

typedef struct {
    char token[ING_MAX_TOKEN + 1];
    char now[CM_ISO8601_MAX]; /* the receive time as written in messages (RFC 3339) */
    bool historical;
    ing_event_t *events;
    size_t n;
    size_t dropped; /* events filtered out on purpose ($performance_event) */
} ing_batch_t;

/* Returns 0 and fills out (free with ing_batch_free), or -1 and fills err. */
int ing_events_build(const char *json, size_t len, const ing_request_t *req, ing_batch_t *out,
                     cm_api_error_t *err);
void ing_batch_free(ing_batch_t *b);

/* PostHog's token shape check; returns NULL when fine, else the reason. */
const char *ing_token_problem(cm_slice_t token);

#endif
