/* respond.c - responses, errors, pages and JSON helpers of the api (see http.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "http/http_int.h"

void api_respond_json(api_call_t *call, int status, cm_buf_t *body)
{
    cm_http_respond_json(call->req, status, body);
    api_http__call_end(call);
}

void api_respond_text(api_call_t *call, int status, const char *content_type, cm_buf_t *body)
{
    cm_http_respond(call->req, status, content_type, body->p, body->len);
    cm_buf_free(body);
    api_http__call_end(call);
}

void api_respond_empty(api_call_t *call, int status)
{
    cm_http_respond(call->req, status, NULL, "", 0);
    api_http__call_end(call);
}

void api_respond_error(api_call_t *call, const cm_api_error_t *e)
{
    cm_http_respond_api_error(call->req, e);
    api_http__call_end(call);
}

void api_respond_invalid(api_call_t *call, const char *attr, const char *fmt, ...)
{
    cm_api_error_t e;
    va_list ap;
    va_start(ap, fmt);
    cm_api_error_vset(&e, 400, "invalid", attr, fmt, ap);
    va_end(ap);
    api_respond_error(call, &e);
}

void api_respond_not_found(api_call_t *call)
{
    cm_api_error_t e;
    cm_api_error_set(&e, 404, "not_found", NULL, "Not found.");
    api_respond_error(call, &e);
}

void api_respond_db_error(api_call_t *call, int status, const cm_db_res_t *res,
                          const char *conflict_attr, const char *conflict_detail)
{
    cm_api_error_t e;
    if (status == CM_EUNAVAIL) {
        cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "store unavailable: %s", cm_db_error(res));
        cm_api_error_set(&e, 503, "store_unavailable", NULL,
                         "The metadata store cannot be reached; try again shortly.");
    } else if (status == CM_ECONFLICT && conflict_detail) {
        cm_api_error_set(&e, 400, "unique", conflict_attr, "%s", conflict_detail);
    } else {
        cm_log(CM_LOG_ERROR, cm_http_req_id(call->req), "store: %s", cm_db_error(res));
        cm_api_error_set(&e, 500, "error", NULL, "A server error occurred.");
    }
    api_respond_error(call, &e);
}

static void page_url(cm_json_writer_t *w, api_call_t *call, long long limit, long long offset)
{
    cm_buf_t url = CM_BUF_INIT;
    cm_slice_t path = cm_http_req_path(call->req);
    cm_buf_appendf(&url, "%s%.*s?limit=%lld&offset=%lld", call->ctx->cfg.base_url, (int)path.len,
                   path.p, limit, offset);
    cm_json_str_s(w, cm_buf_slice(&url));
    cm_buf_free(&url);
}

void api_page_begin(cm_json_writer_t *w, api_call_t *call, const char *total_text)
{
    long long total = total_text ? atoll(total_text) : 0;
    long long limit = call->limit, offset = call->offset;
    cm_json_begin_object(w);
    cm_json_key(w, "count");
    cm_json_int(w, total);
    cm_json_key(w, "next");
    if (offset + limit < total)
        page_url(w, call, limit, offset + limit);
    else
        cm_json_null(w);
    cm_json_key(w, "previous");
    if (offset > 0)
        page_url(w, call, limit, offset > limit ? offset - limit : 0);
    else
        cm_json_null(w);
    cm_json_key(w, "results");
    cm_json_begin_array(w);
}

void api_page_end(cm_json_writer_t *w)
{
    cm_json_end_array(w);
    cm_json_end_object(w);
}

void api_respond_rows(api_call_t *call, int status, const cm_db_res_t *res, size_t total_col,
                      api_row_writer_t row)
{
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    api_render_page(call, res, total_col, row, &out);
    api_respond_json(call, 200, &out);
}

void api_render_page(api_call_t *call, const cm_db_res_t *res, size_t total_col,
                     api_row_writer_t row, cm_buf_t *out)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    api_page_begin(&w, call, cm_db_value(res, 0, 0, total_col));
    for (size_t i = 0; i < cm_db_nrows(res, 0); i++)
        row(&w, call, res, i);
    api_page_end(&w);
}

void api_respond_json_bytes(api_call_t *call, int status, cm_slice_t body)
{
    cm_http_respond(call->req, status, "application/json", body.p, body.len);
    api_http__call_end(call);
}

/* The result's rows as a JSON array, inside {"results": [...]} when wrapped. */
static void respond_rows(api_call_t *call, int status, const cm_db_res_t *res, api_row_writer_t row,
                         bool wrapped)
{
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    if (wrapped) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "results");
    }
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 0); i++)
        row(&w, call, res, i);
    cm_json_end_array(&w);
    if (wrapped)
        cm_json_end_object(&w);
    api_respond_json(call, 200, &out);
}

void api_respond_results(api_call_t *call, int status, const cm_db_res_t *res, api_row_writer_t row)
{
    respond_rows(call, status, res, row, true);
}

void api_respond_array(api_call_t *call, int status, const cm_db_res_t *res, api_row_writer_t row)
{
    respond_rows(call, status, res, row, false);
}

void api_respond_row(api_call_t *call, int status, const cm_db_res_t *res, int http_status,
                     api_row_writer_t row)
{
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) < 1) {
        api_respond_not_found(call);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    row(&w, call, res, 0);
    api_respond_json(call, http_status, &out);
}

void api_json_time(cm_json_writer_t *w, const char *ms)
{
    char out[CM_ISO8601_MAX];
    if (ms == NULL) {
        cm_json_null(w);
        return;
    }
    cm_iso8601_format(atoll(ms) * 1000, 3, out);
    cm_json_str_cstr(w, out);
}

void api_json_stored(cm_json_writer_t *w, const char *json)
{
    if (json == NULL)
        cm_json_null(w);
    else
        cm_json_raw_value(w, (cm_slice_t){json, strlen(json)});
}
