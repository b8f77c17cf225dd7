/*
 * http_client_parse.c - the HTTP client's response parser: llhttp in
 * HTTP_RESPONSE mode, with the size cap.
 *
 * Header names and values are appended to one buffer and remembered as
 * offsets (the buffer moves as it grows); the body goes to another. Only
 * once the response is complete are the offsets turned into slices.
 *
 * Interim responses (1xx but 101) are dropped: their headers are
 * forgotten and parsing goes on with the final response. llhttp is paused
 * in on_message_complete, so bytes after the final response are never
 * parsed: the connection layer sees them as "used < n" and will not reuse
 * a connection that carried them. A 101 ends the message too (llhttp stops
 * with HPE_PAUSED_UPGRADE); the connection is never reused after one.
 *
 * The cap counts header names, values and body bytes: a Content-Length
 * above what is left fails at once, without reading the body; chunked and
 * read-until-close bodies fail as soon as they cross it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "http_client_internal.h"

static cm__http_client_parse_t *parse_of(llhttp_t *l)
{
    return (cm__http_client_parse_t *)l->data;
}

static int fail(cm__http_client_parse_t *p, int err, const char *why)
{
    if (p->err == 0) {
        p->err = err;
        snprintf(p->why, sizeof(p->why), "%s", why);
    }
    return -1;
}

static int too_big(cm__http_client_parse_t *p)
{
    if (p->err == 0) {
        p->err = CM_ETOOBIG;
        snprintf(p->why, sizeof(p->why), "the response is larger than %zu bytes", p->max_bytes);
    }
    return -1;
}

static int check_head(cm__http_client_parse_t *p)
{
    if (p->head.len > CM__HC_MAX_HEAD)
        return fail(p, CM_ETOOBIG, "the response's header section is larger than 64 KiB");
    if (p->head.len > p->max_bytes)
        return too_big(p);
    return 0;
}

static int on_message_begin(llhttp_t *l)
{
    cm__http_client_parse_t *p = parse_of(l);
    cm_buf_reset(&p->head);
    cm_buf_reset(&p->body);
    p->nhdrs = 0;
    p->in_field = false;
    return 0;
}

static int on_header_field(llhttp_t *l, const char *at, size_t len)
{
    cm__http_client_parse_t *p = parse_of(l);
    if (!p->in_field) {
        if (p->nhdrs == p->hdrs_cap) {
            p->hdrs_cap = p->hdrs_cap ? p->hdrs_cap * 2 : 16;
            p->hdrs = cm_xrealloc(p->hdrs, p->hdrs_cap * sizeof(*p->hdrs));
        }
        uint32_t off = (uint32_t)p->head.len;
        p->hdrs[p->nhdrs++] = (cm__hc_hdr_t){off, 0, off, 0};
        p->in_field = true;
    }
    cm_buf_append(&p->head, at, len);
    return check_head(p);
}

static int on_header_field_complete(llhttp_t *l)
{
    cm__http_client_parse_t *p = parse_of(l);
    cm__hc_hdr_t *h = &p->hdrs[p->nhdrs - 1];
    h->name_len = (uint32_t)p->head.len - h->name_off;
    h->val_off = (uint32_t)p->head.len;
    p->in_field = false;
    return 0;
}

static int on_header_value(llhttp_t *l, const char *at, size_t len)
{
    cm__http_client_parse_t *p = parse_of(l);
    cm_buf_append(&p->head, at, len);
    return check_head(p);
}

static int on_header_value_complete(llhttp_t *l)
{
    cm__http_client_parse_t *p = parse_of(l);
    cm__hc_hdr_t *h = &p->hdrs[p->nhdrs - 1];
    h->val_len = (uint32_t)p->head.len - h->val_off;
    return 0;
}

static int on_headers_complete(llhttp_t *l)
{
    cm__http_client_parse_t *p = parse_of(l);
    if (l->http_major != 1)
        return fail(p, CM_EIO, "malformed response: not HTTP/1.x");
    bool interim = l->status_code / 100 == 1 && l->status_code != 101;
    bool bodiless = interim || p->head_only || l->status_code == 204 || l->status_code == 304;
    if (!bodiless && (l->flags & F_CONTENT_LENGTH) &&
        l->content_length > p->max_bytes - p->head.len)
        return too_big(p);
    /* 1: "no body follows"; llhttp knows 1xx, 204 and 304 by itself. */
    return p->head_only && !interim ? 1 : 0;
}

static int on_body(llhttp_t *l, const char *at, size_t len)
{
    cm__http_client_parse_t *p = parse_of(l);
    if (len > p->max_bytes - p->head.len - p->body.len)
        return too_big(p);
    cm_buf_append(&p->body, at, len);
    return 0;
}

static int on_message_complete(llhttp_t *l)
{
    cm__http_client_parse_t *p = parse_of(l);
    if (l->status_code / 100 == 1 && l->status_code != 101)
        return 0; /* interim: on_message_begin forgets it */
    p->complete = true;
    p->keep_alive = llhttp_should_keep_alive(l) != 0 && !l->upgrade;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void cm__http_client_parse_init(cm__http_client_parse_t *p, bool head_only, size_t max_bytes)
{
    *p = (cm__http_client_parse_t){.head_only = head_only, .max_bytes = max_bytes};
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->llhttp.data = p;
}

void cm__http_client_parse_free(cm__http_client_parse_t *p)
{
    cm_buf_free(&p->head);
    cm_buf_free(&p->body);
    free(p->hdrs);
    free(p->out);
    p->hdrs = NULL;
    p->out = NULL;
}

int cm__http_client_parse_feed(cm__http_client_parse_t *p, const char *data, size_t n, size_t *used)
{
    *used = 0;
    if (p->complete)
        return 1;
    if (p->err != 0)
        return p->err;
    llhttp_errno_t e = llhttp_execute(&p->llhttp, data, n);
    if (e == HPE_OK) {
        *used = n;
        return 0;
    }
    if ((e == HPE_PAUSED && p->complete) || e == HPE_PAUSED_UPGRADE) {
        const char *stop = llhttp_get_error_pos(&p->llhttp);
        *used = stop != NULL ? (size_t)(stop - data) : n;
        p->complete = true;
        p->keep_alive = p->keep_alive && e == HPE_PAUSED;
        return 1;
    }
    if (p->err == 0) {
        p->err = CM_EIO;
        snprintf(p->why, sizeof(p->why), "malformed response: %s",
                 llhttp_get_error_reason(&p->llhttp));
    }
    return p->err;
}

int cm__http_client_parse_eof(cm__http_client_parse_t *p)
{
    if (!p->complete && p->err == 0)
        llhttp_finish(&p->llhttp); /* completes a body delimited by the close */
    if (p->complete) {
        p->keep_alive = false;
        return 1;
    }
    if (p->err != CM_ETOOBIG) {
        p->err = CM_EIO;
        snprintf(p->why, sizeof(p->why), "the connection closed before the response was complete");
    }
    return p->err;
}

void cm__http_client_parse_result(cm__http_client_parse_t *p, cm_http_client_res_t *res)
{
    free(p->out);
    p->out = cm_xcalloc(p->nhdrs ? p->nhdrs : 1, sizeof(*p->out));
    const char *base = p->head.p != NULL ? p->head.p : "";
    for (size_t i = 0; i < p->nhdrs; i++) {
        const cm__hc_hdr_t *h = &p->hdrs[i];
        p->out[i].name = (cm_slice_t){base + h->name_off, h->name_len};
        p->out[i].value = (cm_slice_t){base + h->val_off, h->val_len};
    }
    res->status = p->llhttp.status_code;
    res->headers = p->out;
    res->nheaders = p->nhdrs;
    res->body = p->body.len ? cm_buf_slice(&p->body) : (cm_slice_t){"", 0};
    res->error = "";
}
