/*
 * api_error.h - the one JSON error envelope every service answers with.
 *
 *   {"type": "validation_error", "code": "invalid_json",
 *    "detail": "Malformed JSON: unexpected character at byte 12", "attr": null}
 *
 * This is PostHog's API error shape. `type` is the class of problem, `code`
 * is specific enough for a client to act on, `detail` is for humans, and
 * `attr` names the offending field (or is null).
 */
#ifndef CM_API_ERROR_H
#define CM_API_ERROR_H

#include "cm/buf.h"

/* The `type` values in use. */
#define CM_ERR_VALIDATION "validation_error"       /* 400, 413, 414, 431 */
#define CM_ERR_AUTHENTICATION "authentication_error" /* 401 */
#define CM_ERR_PERMISSION "permission_denied"      /* 403 */
#define CM_ERR_INVALID_REQUEST "invalid_request"   /* 404, 405, 408, 417 */
#define CM_ERR_THROTTLED "throttled_error"         /* 429 */
#define CM_ERR_SERVER "server_error"               /* 5xx */

/* Appends the envelope; detail and attr may be NULL (attr becomes null). */
void cm_api_error_json(cm_buf_t *out, const char *type, const char *code, const char *detail,
                       const char *attr);
/* The `type` that goes with an HTTP status by default. */
const char *cm_api_error_type_for_status(int status);

#endif
