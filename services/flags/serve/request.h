/*
 * request.h - reading a /flags request: body encodings and runtime.
 *
 * Bodies come as JSON, gzip (posthog-js sends it as text/plain; sniffed by
 * its magic bytes, or announced by ?compression=gzip / Content-Encoding),
 * base64 (?compression=base64), or a form whose data= field is base64.
 * The runtime (spec 4.3) comes from the body's evaluation_runtime, else
 * the User-Agent, else browser-only headers.
 */
#ifndef FLG_REQUEST_H
#define FLG_REQUEST_H

#include "cm/api_error.h"
#include "cm/buf.h"
#include "cm/http_server.h"
#include "core/eval.h"

/* Decodes the body into out (or points json at the body itself). Returns 0,
 * or -1 with *err filled (400 or 413). */
int flg_request_body(cm_http_req_t *req, size_t max_decoded, cm_buf_t *out, cm_slice_t *json,
                     cm_api_error_t *err);

/* evaluation_runtime value (may be a none handle) + headers -> runtime. */
flg_runtime_t flg_request_runtime(cm_http_req_t *req, cm_json_t evaluation_runtime);

/* True when Accept-Encoding lists gzip (or *) without q=0 (RFC 9110 12.5.3). */
bool flg_request_accepts_gzip(cm_http_req_t *req);
/* The same for one header value (exposed for tests). */
bool flg_accepts_gzip(cm_slice_t accept_encoding);

/* Classifies a User-Agent alone (exposed for tests). */
flg_runtime_t flg_runtime_from_user_agent(cm_slice_t ua);

#endif
