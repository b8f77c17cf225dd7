/*
 * fuzz_payload.c - libFuzzer target for ingest's payload extraction
 * (services/ingest/payload.c): query data=, base64 sniffing, form bodies,
 * compression hints from the query, the form and Content-Encoding, gzip,
 * lz-string and base64 decoding, all bounded by max_decoded.
 *
 * payload.c reads a request only through three accessors; this file renames
 * them (a unity build) and serves them from the fuzz input, so no server or
 * socket is involved. Input: one flag byte, then the query, Content-Type and
 * Content-Encoding, each ended by '\n' (absent if the input ends first),
 * then the body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define cm_http_req_query  fz_req_query
#define cm_http_req_header fz_req_header
#define cm_http_req_body   fz_req_body
#include "payload.c"

struct cm_http_req {
    cm_slice_t query, content_type, content_encoding, body;
};

cm_slice_t fz_req_query(const cm_http_req_t *req)
{
    return req->query;
}

cm_slice_t fz_req_header(const cm_http_req_t *req, const char *name)
{
    if (strcmp(name, "Content-Type") == 0)
        return req->content_type;
    if (strcmp(name, "Content-Encoding") == 0)
        return req->content_encoding;
    return CM_SLICE_NULL;
}

cm_slice_t fz_req_body(const cm_http_req_t *req)
{
    return req->body;
}

/* The next '\n'-ended field of the input, or a NULL slice when none is left. */
static cm_slice_t field(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = *p < end ? memchr(*p, '\n', (size_t)(end - *p)) : NULL;
    if (!nl)
        return CM_SLICE_NULL;
    cm_slice_t s = {(const char *)*p, (size_t)(nl - *p)};
    *p = nl + 1;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1, *end = data + size;
    struct cm_http_req req = {0};
    req.query = field(&p, end);
    if (!req.query.p)
        req.query = CM_SLICE_LIT("");
    req.content_type = field(&p, end);
    req.content_encoding = field(&p, end);
    req.body = (cm_slice_t){(const char *)p, (size_t)(end - p)};
    /* A small bound, so the size checks are reached too. */
    size_t max_decoded = data[0] & 1 ? 4096 : 1 << 20;
    ing_payload_t out;
    cm_api_error_t err = {0};
    if (ing_payload_extract(&req, data[0] & 2, max_decoded, &out, &err) == 0) {
        if (out.json.len > max_decoded || (out.json.len > 0 && out.json.p == NULL))
            abort();
        if (out.json.len > 0) { /* readable to its end */
            volatile char last = out.json.p[out.json.len - 1];
            (void)last;
        }
    } else if (!((err.status == 400 || err.status == 413) && err.code && err.detail[0])) {
        abort();
    }
    ing_payload_free(&out);
    return 0;
}
