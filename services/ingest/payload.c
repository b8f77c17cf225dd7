/* payload.c - find and decode a capture payload (see payload.h). */
#include "payload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/base64.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/gzip.h"
#include "cm/lzstring.h"

typedef enum { HINT_NONE, HINT_GZIP, HINT_LZ64, HINT_BASE64 } hint_t;

static hint_t parse_hint(cm_slice_t v)
{
    v = cm_slice_trim(v);
    if (cm_slice_eq_nocase(v, "gzip") || cm_slice_eq_nocase(v, "gzip-js"))
        return HINT_GZIP;
    if (cm_slice_eq_nocase(v, "lz64") || cm_slice_eq_nocase(v, "lz-string"))
        return HINT_LZ64;
    if (cm_slice_eq_nocase(v, "base64") || cm_slice_eq_nocase(v, "b64"))
        return HINT_BASE64;
    return HINT_NONE;
}

static int decode_error(cm_api_error_t *e, int rc, const char *what)
{
    if (rc == CM_ETOOBIG)
        return cm_api_error_set(e, 413, "payload_too_large", NULL,
                                "The decoded payload is larger than the limit.");
    return cm_api_error_set(e, 400, "invalid_encoding", NULL, "The payload is not valid %s.", what);
}

/* Decodes src into a fresh buffer and makes it the current payload. */
static int replace(ing_payload_t *p, cm_buf_t *fresh)
{
    cm_buf_free(&p->storage);
    p->storage = *fresh;
    *fresh = CM_BUF_INIT;
    p->json = cm_buf_slice(&p->storage);
    return 0;
}

/* soft: the payload only looked like base64, so failing to decode it
 * leaves it as it was (a size overrun is still an error). decoded (may be
 * NULL) tells whether the payload was replaced by its decoding. */
static int decode_base64(ing_payload_t *p, size_t max, bool soft, bool *decoded,
                         cm_api_error_t *err)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc =
        cm_base64_decode(p->json.p, p->json.len, CM_B64_STD | CM_B64_URL | CM_B64_SPACE, max, &out);
    if (rc != 0) {
        cm_buf_free(&out);
        if (soft && rc == CM_EINVAL)
            return 0;
        return decode_error(err, rc, "base64");
    }
    if (decoded)
        *decoded = true;
    return replace(p, &out);
}

static int decode_with(ing_payload_t *p, hint_t hint, size_t max, cm_api_error_t *err)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc;
    /* gzip's magic wins over any hint: posthog-js sends gzip unannounced. */
    if (hint == HINT_GZIP || cm_gzip_magic(p->json.p, p->json.len)) {
        rc = cm_gunzip(p->json.p, p->json.len, max, &out);
        if (rc != 0) {
            cm_buf_free(&out);
            return decode_error(err, rc, "gzip");
        }
        return replace(p, &out);
    }
    if (hint == HINT_LZ64) {
        rc = cm_lz64_decompress(p->json.p, p->json.len, max, &out);
        if (rc != 0) {
            cm_buf_free(&out);
            return decode_error(err, rc, "lz-string");
        }
        return replace(p, &out);
    }
    if (hint == HINT_BASE64)
        return decode_base64(p, max, false, NULL, err);
    return 0;
}

static bool starts_like_form(cm_slice_t b)
{
    static const char *prefixes[] = {"data=", "ver=", "_=", "ip=", "compression="};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (cm_slice_starts_with(b, prefixes[i]))
            return true;
    return false;
}

/* Query parameters that matter: data, compression, _ / sent_at, beacon. */
static void read_query(cm_http_req_t *req, ing_payload_t *p, cm_buf_t *data, hint_t *hint)
{
    cm_slice_t q = cm_http_req_query(req);
    cm_buf_t v = CM_BUF_INIT;
    if (cm_form_get(q.p, q.len, "compression", &v) == 0)
        *hint = parse_hint(cm_buf_slice(&v));
    cm_buf_reset(&v);
    int found = cm_form_get(q.p, q.len, "_", &v);
    if (found != 0) {
        cm_buf_reset(&v);
        found = cm_form_get(q.p, q.len, "sent_at", &v);
    }
    if (found == 0) {
        long long ms = strtoll(cm_buf_cstr(&v), NULL, 10);
        /* Only milliseconds after 2020 count; values in seconds are ignored. */
        if (ms > 1577836800000LL && ms < 253402300799000LL)
            p->sent_at_us = ms * 1000;
    }
    cm_buf_reset(&v);
    if (cm_form_get(q.p, q.len, "beacon", &v) == 0 && cm_slice_eq_cstr(cm_buf_slice(&v), "1"))
        p->beacon = true;
    cm_buf_free(&v);
    if (cm_form_get(q.p, q.len, "data", data) != 0)
        cm_buf_reset(data);
}

static bool is_form(cm_http_req_t *req)
{
    cm_slice_t ct = cm_http_req_header(req, "Content-Type");
    const char *semi = ct.p ? memchr(ct.p, ';', ct.len) : NULL;
    if (semi)
        ct.len = (size_t)(semi - ct.p);
    return cm_slice_eq_nocase(cm_slice_trim(ct), "application/x-www-form-urlencoded");
}

/* Base64 whose '+' signs a form decoder turned into spaces. */
static bool looks_like_loose_base64(const cm_buf_t *d)
{
    size_t n = d->len < 128 ? d->len : 128;
    if (d->len == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = d->p[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '=' || c == ' '))
            return false;
    }
    return true;
}

/* A form body: its data= field becomes the payload, compression= a hint. */
static int read_form(ing_payload_t *p, hint_t *hint, cm_api_error_t *err)
{
    cm_buf_t v = CM_BUF_INIT, data = CM_BUF_INIT;
    if (*hint == HINT_NONE && cm_form_get(p->json.p, p->json.len, "compression", &v) == 0)
        *hint = parse_hint(cm_buf_slice(&v));
    cm_buf_free(&v);
    int rc = cm_form_get(p->json.p, p->json.len, "data", &data);
    if (rc != 0) {
        cm_buf_free(&data);
        return cm_api_error_set(err, 400, rc == CM_ENOTFOUND ? "empty_payload" : "invalid_encoding",
                                "data", "%s",
                                rc == CM_ENOTFOUND ? "The form body has no data field."
                                                   : "The form body is not valid URL encoding.");
    }
    /* '+' in unencoded base64 arrives as a space: put it back. */
    if (*hint == HINT_BASE64 || *hint == HINT_LZ64 || looks_like_loose_base64(&data))
        for (size_t i = 0; i < data.len; i++)
            if (data.p[i] == ' ')
                data.p[i] = '+';
    return replace(p, &data);
}

int ing_payload_extract(cm_http_req_t *req, bool legacy_path, size_t max_decoded, ing_payload_t *p,
                        cm_api_error_t *err)
{
    hint_t hint = HINT_NONE;
    cm_buf_t qdata = CM_BUF_INIT;
    memset(p, 0, sizeof(*p));
    read_query(req, p, &qdata, &hint);
    if (qdata.len > 0) {
        replace(p, &qdata);
    } else {
        cm_buf_free(&qdata);
        p->json = cm_http_req_body(req);
    }
    if (p->json.len == 0) {
        return cm_api_error_set(err, 400, "empty_payload", NULL, "The request has no payload.");
    }
    cm_slice_t ce = cm_http_req_header(req, "Content-Encoding");
    hint_t ce_hint = ce.p ? parse_hint(ce) : HINT_NONE;
    /* A raw body that looks like base64 is decoded first (gzip's bytes never
     * do, so base64 of gzip works too), unless a hint says lz-string, whose
     * text is in base64's alphabet. An explicit base64 hint is then
     * satisfied: decoding twice would refuse the payload. */
    bool b64_done = false;
    if (hint != HINT_LZ64 && ce_hint != HINT_LZ64 && !starts_like_form(p->json) &&
        cm_base64_looks_like(p->json.p, p->json.len) &&
        decode_base64(p, max_decoded, true, &b64_done, err) != 0)
        return -1;
    /* curl -d labels JSON as a form: a "form" that is plainly JSON is JSON. */
    bool json_body = p->json.len > 0 && (p->json.p[0] == '{' || p->json.p[0] == '[');
    if (is_form(req) && !json_body && read_form(p, &hint, err) != 0)
        return -1;
    if (hint == HINT_NONE)
        hint = ce_hint;
    if (b64_done && hint == HINT_BASE64)
        hint = HINT_NONE;
    if (decode_with(p, hint, max_decoded, err) != 0)
        return -1;
    if (legacy_path && cm_base64_looks_like(p->json.p, p->json.len) &&
        decode_base64(p, max_decoded, true, NULL, err) != 0)
        return -1;
    if (p->json.len > max_decoded)
        return decode_error(err, CM_ETOOBIG, "");
    return 0;
}

void ing_payload_free(ing_payload_t *p)
{
    cm_buf_free(&p->storage);
    p->json = CM_SLICE_NULL;
}
