/* api_error.c - the JSON error envelope (see api_error.h). */
#include "cm/api_error.h"

#include <stdarg.h>
#include <stdio.h>

#include "cm/json.h"

int cm_api_error_vset(cm_api_error_t *e, int status, const char *code, const char *attr,
                      const char *fmt, va_list ap)
{
    e->status = status;
    e->type = NULL;
    e->code = code;
    snprintf(e->attr, sizeof(e->attr), "%s", attr ? attr : "");
    vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
    return -1;
}

int cm_api_error_set(cm_api_error_t *e, int status, const char *code, const char *attr,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cm_api_error_vset(e, status, code, attr, fmt, ap);
    va_end(ap);
    return -1;
}

void cm_api_error_json(cm_buf_t *out, const char *type, const char *code, const char *detail,
                       const char *attr)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "type");
    cm_json_str_lossy(&w, cm_slice_from_cstr(type ? type : CM_ERR_SERVER));
    cm_json_key(&w, "code");
    cm_json_str_lossy(&w, cm_slice_from_cstr(code ? code : "error"));
    cm_json_key(&w, "detail");
    cm_json_str_lossy(&w, cm_slice_from_cstr(detail ? detail : ""));
    cm_json_key(&w, "attr");
    if (attr)
        cm_json_str_lossy(&w, cm_slice_from_cstr(attr));
    else
        cm_json_null(&w);
    cm_json_end_object(&w);
}

const char *cm_api_error_type_for_status(int status)
{
    switch (status) {
    case 401: return CM_ERR_AUTHENTICATION;
    case 403: return CM_ERR_PERMISSION;
    case 404:
    case 405:
    case 408:
    case 409:
    case 417: return CM_ERR_INVALID_REQUEST;
    case 429: return CM_ERR_THROTTLED;
    default: return status >= 500 ? CM_ERR_SERVER : CM_ERR_VALIDATION;
    }
}
