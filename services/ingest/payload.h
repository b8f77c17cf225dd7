/*
 * payload.h - where a capture request's event JSON is and how it is encoded.
 *
 * PostHog clients, old and new, put the payload in several places and
 * encodings (docs/ingest.md). ing_payload_extract() undoes all of
 * them, in PostHog capture's order, into plain JSON bytes:
 *   1. the query's data= (old GET clients), else the body;
 *   2. a body that as a whole looks like base64 is decoded, unless a hint
 *      says lz-string (whose text is in base64's alphabet); a base64 hint
 *      is then already satisfied;
 *   3. a form body (application/x-www-form-urlencoded) yields its data= field;
 *   4. the compression hint (query compression=, form compression=,
 *      Content-Encoding) or gzip's magic bytes pick gzip, lz64 or base64;
 *   5. on the legacy paths (/e, /capture, /track, /engage) a result that
 *      still looks like base64 is decoded once more.
 * Every decoder is bounded by max_decoded (decompression bombs get 413).
 */
#ifndef ING_PAYLOAD_H
#define ING_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/http_server.h"
#include "events.h"

typedef struct {
    cm_slice_t json;    /* the decoded payload (points into storage or the request) */
    cm_buf_t storage;   /* owned bytes json may point into */
    int64_t sent_at_us; /* from ?_= / ?sent_at= in ms (0 if absent or implausible) */
    bool beacon;        /* ?beacon=1: answer 204 */
} ing_payload_t;

int ing_payload_extract(cm_http_req_t *req, bool legacy_path, size_t max_decoded,
                        ing_payload_t *out, cm_api_error_t *err);
void ing_payload_free(ing_payload_t *p);

#endif
