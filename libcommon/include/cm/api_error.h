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

#include <stdarg.h>

#include "cm/buf.h"

/* The `type` values in use. */
#define CM_ERR_VALIDATION      "validation_error"     /* 400, 413, 414, 431 */
#define CM_ERR_AUTHENTICATION  "authentication_error" /* 401 */
#define CM_ERR_PERMISSION      "permission_denied"    /* 403 */
#define CM_ERR_INVALID_REQUEST "invalid_request"      /* 404, 405, 408, 417 */
#define CM_ERR_THROTTLED       "throttled_error"      /* 429 */
#define CM_ERR_SERVER          "server_error"         /* 5xx */

/*
 * One rejected request, as every handler of every service reports it: built
 * by a validator (cm_api_error_set), answered by the route
 * (cm_http_respond_api_error in http_server.h).
 */
typedef struct {
    int status;       /* HTTP status */
    const char *type; /* NULL: cm_api_error_type_for_status(status) */
    const char *code; /* static text, e.g. "missing_distinct_id" */
    char detail[256];
    char attr[64]; /* empty: null, no single field is to blame */
} cm_api_error_t;

/* Fills e (type from the status, attr may be NULL) and returns -1, so that a
 * validator can `return cm_api_error_set(...)`. */
int cm_api_error_set(cm_api_error_t *e, int status, const char *code, const char *attr,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same with a va_list, for validators that wrap it. */
int cm_api_error_vset(cm_api_error_t *e, int status, const char *code, const char *attr,
                      const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* Appends the envelope; detail and attr may be NULL (attr becomes null). */
void cm_api_error_json(cm_buf_t *out, const char *type, const char *code, const char *detail,
                       const char *attr);
/* The `type` that goes with an HTTP status by default. */
const char *cm_api_error_type_for_status(int status);

#endif
