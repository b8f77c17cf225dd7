/*
 * http_client_wire.c - from a cm_http_client_req_t to the bytes of an
 * HTTP/1.1 request: the URL taken apart, the caller's method and headers
 * checked, Host, Content-Length and Connection added.
 *
 * Everything is checked before a byte is written, because what the caller
 * passes may come from outside (an OAuth client's document URL): a CR or LF
 * in a header value, a space in the path or a credential in the URL would
 * let it write a request of its own choosing. The URL is taken as it is
 * (no normalisation, no percent-decoding); a path with bytes outside
 * printable ASCII must be percent-encoded by the caller.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "http_client_internal.h"

#define MAX_HOST   253
#define MAX_METHOD 32

typedef struct {
    const char *host; /* into the URL; brackets stripped */
    size_t host_len;
    const char *target; /* path and query, up to the fragment; may be empty */
    size_t target_len;
} url_parts_t;

static bool is_tchar(unsigned char ch)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    return (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z') ||
           (ch != '\0' && memchr(extra, ch, sizeof(extra) - 1) != NULL);
}

static bool is_token(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if (!is_tchar((unsigned char)s[n]) || n == max)
            return false;
    return n > 0;
}

/* RFC 9110 5.5: visible characters, spaces and tabs; nothing that ends a line. */
static bool is_field_value(const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return false;
    }
    return true;
}

static bool is_host_char(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z') || ch == '-' ||
           ch == '.' || ch == '_';
}

/* [v6] or a name / IPv4 address, then an optional :port. */
static const char *parse_authority(const char *p, const char *end, url_parts_t *u, int *port)
{
    const char *q;
    if (*p == '[') {
        q = memchr(p, ']', (size_t)(end - p));
        if (q == NULL || q - p - 1 > 45)
            return "invalid IPv6 address in the URL";
        char v6[48];
        struct in6_addr a;
        memcpy(v6, p + 1, (size_t)(q - p - 1));
        v6[q - p - 1] = '\0';
        if (inet_pton(AF_INET6, v6, &a) != 1)
            return "invalid IPv6 address in the URL";
        u->host = p + 1;
        u->host_len = (size_t)(q - p - 1);
        q++;
    } else {
        for (q = p; q < end && *q != ':'; q++)
            if (!is_host_char((unsigned char)*q))
                return "invalid character in the URL's host";
        u->host = p;
        u->host_len = (size_t)(q - p);
        if (u->host_len == 0 || u->host_len > MAX_HOST)
            return "the URL has no valid host";
    }
    if (q == end)
        return NULL;
    if (*q++ != ':')
        return "invalid character after the URL's host";
    if (q == end)
        return NULL; /* "host:" is the default port */
    long v = 0;
    for (; q < end; q++) {
        if (*q < '0' || *q > '9' || (v = v * 10 + (*q - '0')) > 65535)
            return "invalid port in the URL";
    }
    if (v == 0)
        return "invalid port in the URL";
    *port = (int)v;
    return NULL;
}

static const char *parse_url(const char *url, cm__http_client_wire_t *w, url_parts_t *u)
{
    const char *p;
    if (url == NULL)
        return "no URL";
    if (strncasecmp(url, "http://", 7) == 0) {
        p = url + 7;
    } else if (strncasecmp(url, "https://", 8) == 0) {
        p = url + 8;
        w->tls = true;
    } else {
        return "the URL must start with http:// or https://";
    }
    const char *end = p + strcspn(p, "/?#");
    if (memchr(p, '@', (size_t)(end - p)) != NULL)
        return "credentials in a URL are not supported: send an Authorization header";
    w->port = w->tls ? 443 : 80;
    const char *why = parse_authority(p, end, u, &w->port);
    if (why != NULL)
        return why;
    u->target = end;
    u->target_len = strcspn(end, "#");
    for (size_t i = 0; i < u->target_len; i++) {
        unsigned char ch = (unsigned char)end[i];
        if (ch <= 0x20 || ch >= 0x7f)
            return "the URL's path must be percent-encoded printable ASCII";
    }
    return NULL;
}

/* The client writes these itself: the request's framing is its business. */
static bool reserved_header(const char *name)
{
    static const char *const own[] = {"host",       "content-length", "transfer-encoding",
                                      "connection", "upgrade",        "expect"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strcasecmp(name, own[i]) == 0)
            return true;
    return false;
}

static const char *check_headers(const char *const *h)
{
    for (size_t i = 0; h != NULL && h[i] != NULL; i += 2) {
        if (h[i + 1] == NULL)
            return "a request header has no value";
        if (!is_token(h[i], 256))
            return "invalid request header name";
        if (!is_field_value(h[i + 1]))
            return "invalid character in a request header value";
        if (reserved_header(h[i]))
            return "Host, Content-Length, Transfer-Encoding, Connection, Upgrade and Expect are the "
                   "client's own headers";
    }
    return NULL;
}

static void write_head(cm__http_client_wire_t *w, const cm_http_client_req_t *req,
                       const char *method, const url_parts_t *u, const char *user_agent)
{
    cm_buf_t *b = &w->bytes;
    bool v6 = strchr(w->host, ':') != NULL;
    bool default_port = w->port == (w->tls ? 443 : 80);
    bool has_ua = false;

    cm_buf_appendf(b, "%s ", method);
    if (u->target_len == 0 || u->target[0] != '/')
        cm_buf_putc(b, '/');
    cm_buf_append(b, u->target, u->target_len);
    cm_buf_appendf(b, " HTTP/1.1\r\nHost: %s%s%s", v6 ? "[" : "", w->host, v6 ? "]" : "");
    if (!default_port)
        cm_buf_appendf(b, ":%d", w->port);
    cm_buf_append_cstr(b, "\r\n");
    for (size_t i = 0; req->headers != NULL && req->headers[i] != NULL; i += 2) {
        cm_buf_appendf(b, "%s: %s\r\n", req->headers[i], req->headers[i + 1]);
        has_ua = has_ua || strcasecmp(req->headers[i], "user-agent") == 0;
    }
    if (user_agent != NULL && !has_ua)
        cm_buf_appendf(b, "User-Agent: %s\r\n", user_agent);
    if (req->body_len > 0 || req->body != NULL || !w->safe)
        cm_buf_appendf(b, "Content-Length: %zu\r\n", req->body_len);
    cm_buf_append_cstr(b, "Connection: keep-alive\r\n\r\n");
}

int cm__http_client_wire_build(cm__http_client_wire_t *w, const cm_http_client_req_t *req,
                               const char *user_agent, const char **why)
{
    const char *method = req->method != NULL && req->method[0] != '\0' ? req->method : "GET";
    url_parts_t u = {0};

    *w = (cm__http_client_wire_t){0};
    if (!is_token(method, MAX_METHOD))
        *why = "invalid method";
    else if (strcasecmp(method, "CONNECT") == 0)
        *why = "CONNECT is not supported";
    else
        *why = parse_url(req->url, w, &u);
    if (*why == NULL)
        *why = check_headers(req->headers);
    if (*why == NULL && user_agent != NULL && !is_field_value(user_agent))
        *why = "invalid character in the User-Agent option";
    if (*why == NULL && req->body_len > 0 && req->body == NULL)
        *why = "body_len without a body";
    if (*why != NULL)
        return CM_EINVAL;

    w->head_only = strcmp(method, "HEAD") == 0;
    w->safe = w->head_only || strcmp(method, "GET") == 0;
    w->host = cm_xmemdup(u.host, u.host_len);
    for (char *h = w->host; *h != '\0'; h++)
        if (*h >= 'A' && *h <= 'Z')
            *h = (char)(*h + 32);
    cm_buf_t key = CM_BUF_INIT;
    cm_buf_appendf(&key, "%s://%s:%d", w->tls ? "https" : "http", w->host, w->port);
    w->key = cm_buf_detach(&key, NULL);
    write_head(w, req, method, &u, user_agent);
    if (req->body_len > 0)
        cm_buf_append(&w->bytes, req->body, req->body_len);
    return CM_OK;
}

void cm__http_client_wire_free(cm__http_client_wire_t *w)
{
    free(w->host);
    free(w->key);
    cm_buf_free(&w->bytes);
    *w = (cm__http_client_wire_t){0};
}
