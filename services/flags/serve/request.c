/* request.c - /flags body decoding and runtime detection (see request.h). */
#include "serve/request.h"

#include <string.h>

#include "cm/base64.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/gzip.h"

static int decode_fail(int rc, const char *what, cm_api_error_t *err)
{
    if (rc == CM_ETOOBIG)
        return cm_api_error_set(err, 413, "payload_too_large", NULL,
                                "The decoded request body is larger than the limit.");
    return cm_api_error_set(err, 400, "invalid_encoding", NULL, "%s", what);
}

int flg_request_body(cm_http_req_t *req, size_t max, cm_buf_t *out, cm_slice_t *json,
                     cm_api_error_t *err)
{
    cm_slice_t body = cm_http_req_body(req);
    cm_slice_t q = cm_http_req_query(req);
    cm_buf_t hint = CM_BUF_INIT, data = CM_BUF_INIT;
    int status = 0, rc; /* 0, or -1 with *err filled */
    cm_form_get(q.p, q.len, "compression", &hint);
    cm_slice_t ct = cm_http_req_header(req, "Content-Type");
    cm_slice_t ce = cm_http_req_header(req, "Content-Encoding");
    bool b64 = cm_slice_eq_nocase(cm_buf_slice(&hint), "base64");

    *json = body;
    if (cm_slice_starts_with(ct, "application/x-www-form-urlencoded") && body.len &&
        body.p[0] != '{') {
        /* posthog-js's base64 transport: data=<base64 JSON>. */
        if (cm_form_get(body.p, body.len, "data", &data) != 0) {
            status = decode_fail(CM_EINVAL, "The form body has no valid data field.", err);
            goto done;
        }
        for (size_t i = 0; i < data.len; i++)
            if (data.p[i] == ' ')
                data.p[i] = '+';
        *json = cm_buf_slice(&data);
        b64 = true;
    }
    if (b64) {
        rc = cm_base64_decode(json->p, json->len, CM_B64_STD | CM_B64_URL | CM_B64_SPACE, max, out);
        if (rc != 0) {
            status = decode_fail(rc, "The body is not valid base64.", err);
            goto done;
        }
        *json = cm_buf_slice(out);
    } else if (cm_gzip_magic(json->p, json->len) || cm_slice_eq_nocase(ce, "gzip") ||
               cm_slice_starts_with(cm_buf_slice(&hint), "gzip")) {
        rc = cm_gunzip(json->p, json->len, max, out);
        if (rc != 0) {
            status = decode_fail(rc, "The body is not valid gzip.", err);
            goto done;
        }
        *json = cm_buf_slice(out);
    } else if (hint.len > 0 && !cm_slice_eq_nocase(cm_buf_slice(&hint), "none")) {
        status = decode_fail(CM_EINVAL, "Unknown compression.", err);
    }
done:
    cm_buf_free(&hint);
    cm_buf_free(&data);
    return status;
}

static bool word_then_slash(cm_slice_t ua, size_t at, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        if (ua.len > at + len && memcmp(ua.p + at, words[i], len) == 0 && ua.p[at + len] == '/')
            return true;
    }
    return false;
}

flg_runtime_t flg_runtime_from_user_agent(cm_slice_t ua)
{
    static const char *browsers[] = {"Mozilla/", "Chrome/", "Safari/", "Firefox/", "Edge/"};
    static const char *client_sdks[] = {"android", "ios", "react-native", "flutter"};
    static const char *server_sdks[] = {"python", "ruby", "php",    "java",
                                        "go",     "node", "dotnet", "elixir"};
    for (size_t i = 0; i < sizeof(browsers) / sizeof(browsers[0]); i++)
        if (cm_slice_starts_with(ua, browsers[i]))
            return FLG_RUNTIME_CLIENT;
    if (cm_slice_starts_with(ua, "python-requests/") || cm_slice_starts_with(ua, "curl/"))
        return FLG_RUNTIME_SERVER;
    /* <vendor>-<platform>/: the vendor is one word of letters and digits. */
    size_t v = 0;
    while (v < ua.len &&
           ((ua.p[v] >= 'a' && ua.p[v] <= 'z') || (ua.p[v] >= 'A' && ua.p[v] <= 'Z') ||
            (ua.p[v] >= '0' && ua.p[v] <= '9') || ua.p[v] == '_' || ua.p[v] == '.'))
        v++;
    if (v == 0 || v >= ua.len || ua.p[v] != '-')
        return FLG_RUNTIME_UNKNOWN;
    if (word_then_slash(ua, v + 1, client_sdks, sizeof(client_sdks) / sizeof(client_sdks[0])))
        return FLG_RUNTIME_CLIENT;
    if (word_then_slash(ua, v + 1, server_sdks, sizeof(server_sdks) / sizeof(server_sdks[0])))
        return FLG_RUNTIME_SERVER;
    return FLG_RUNTIME_UNKNOWN;
}

flg_runtime_t flg_request_runtime(cm_http_req_t *req, cm_json_t evaluation_runtime)
{
    cm_slice_t r = cm_json_str_inner(evaluation_runtime);
    if (r.p != NULL) {
        if (cm_slice_eq_nocase(r, "client"))
            return FLG_RUNTIME_CLIENT;
        if (cm_slice_eq_nocase(r, "server"))
            return FLG_RUNTIME_SERVER;
        return FLG_RUNTIME_ALL; /* "all", or anything unrecognised */
    }
    flg_runtime_t from_ua = flg_runtime_from_user_agent(cm_http_req_header(req, "User-Agent"));
    if (from_ua != FLG_RUNTIME_UNKNOWN)
        return from_ua;
    static const char *browser_headers[] = {"Origin", "Referer", "Sec-Fetch-Mode",
                                            "Sec-Fetch-Site"};
    for (size_t i = 0; i < sizeof(browser_headers) / sizeof(browser_headers[0]); i++)
        if (cm_http_req_header(req, browser_headers[i]).p != NULL)
            return FLG_RUNTIME_CLIENT;
    return FLG_RUNTIME_UNKNOWN;
}

/* A q parameter of 0 (0, 0.0, 0.000) refuses the coding. */
static bool refused(cm_slice_t params)
{
    while (params.len > 0) {
        const char *semi = memchr(params.p, ';', params.len);
        size_t n = semi ? (size_t)(semi - params.p) : params.len;
        cm_slice_t p = cm_slice_trim((cm_slice_t){params.p, n});
        if (p.len >= 2 && (p.p[0] == 'q' || p.p[0] == 'Q') && p.p[1] == '=') {
            size_t i = 2;
            if (i >= p.len || p.p[i] != '0')
                return false;
            for (i++; i < p.len; i++)
                if (p.p[i] != '.' && p.p[i] != '0')
                    return false;
            return true;
        }
        params.p += semi ? n + 1 : n;
        params.len -= semi ? n + 1 : n;
    }
    return false;
}

bool flg_accepts_gzip(cm_slice_t v)
{
    /* gzip named decides; otherwise "*" does (a gzip;q=0 beside * refuses). */
    int gzip = -1, star = -1;
    while (v.len > 0) {
        const char *comma = memchr(v.p, ',', v.len);
        size_t n = comma ? (size_t)(comma - v.p) : v.len;
        const char *semi = memchr(v.p, ';', n);
        cm_slice_t coding = cm_slice_trim((cm_slice_t){v.p, semi ? (size_t)(semi - v.p) : n});
        cm_slice_t params =
            semi ? (cm_slice_t){semi + 1, n - (size_t)(semi - v.p) - 1} : (cm_slice_t){v.p + n, 0};
        if (cm_slice_eq_nocase(coding, "gzip") || cm_slice_eq_nocase(coding, "x-gzip"))
            gzip = !refused(params);
        else if (cm_slice_eq_nocase(coding, "*"))
            star = !refused(params);
        v.p += comma ? n + 1 : n;
        v.len -= comma ? n + 1 : n;
    }
    return gzip >= 0 ? gzip == 1 : star == 1;
}

bool flg_request_accepts_gzip(cm_http_req_t *req)
{
    return flg_accepts_gzip(cm_http_req_header(req, "Accept-Encoding"));
}
