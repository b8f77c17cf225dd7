/*
 * log.c - one JSON object per line, one write(2) per line.
 *
 * A line is assembled in a static buffer with a hard limit. Every piece is
 * appended all-or-nothing (a field's `,"key":"` prefix, each escaped
 * character), so when the limit is hit the line can always be closed
 * cleanly: finish the open string, add "truncated":true, close the object.
 * Room for that tail is reserved up front.
 *
 * The escaper also checks UTF-8: messages often carry client data, and one
 * stray byte would make the whole line unreadable to a JSON log shipper,
 * so invalid bytes become U+FFFD.
 */
#include "cm/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cm/common.h"
#include "cm/err.h"
#include "cm/timefmt.h"

#define SERVICE_MAX 64
#define TAIL_TRUNC  ",\"truncated\":true}\n"
/* One quote to close a cut string, then the longest tail. */
#define RESERVE (1 + sizeof(TAIL_TRUNC) - 1)

cm_log_level_t cm_log_min_level = CM_LOG_INFO;

static char service[SERVICE_MAX + 1] = "unknown";
static int out_fd = -1;
static char msg_buf[CM_LOG_LINE_MAX];
static char line_buf[CM_LOG_LINE_MAX];

typedef struct {
    char *p;
    size_t len;
    size_t limit; /* content limit; the reserved tail lives past it */
    bool full;
} line_t;

void cm_log_init(const char *name, cm_log_level_t min_level)
{
    snprintf(service, sizeof(service), "%s", name ? name : "unknown");
    cm_log_min_level = min_level;
}

int cm_log_level_parse(const char *s, cm_log_level_t *out)
{
    static const struct {
        const char *name;
        cm_log_level_t level;
    } names[] = {
        {"debug", CM_LOG_DEBUG},  {"info", CM_LOG_INFO},   {"warn", CM_LOG_WARN},
        {"warning", CM_LOG_WARN}, {"error", CM_LOG_ERROR}, {"off", CM_LOG_OFF},
    };
    for (size_t i = 0; s && i < CM_ARRAY_LEN(names); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].level;
            return CM_OK;
        }
    }
    return CM_EINVAL;
}

void cm_log_set_fd(int fd)
{
    out_fd = fd;
}

/* ---- line assembly ------------------------------------------------------- */

static bool put(line_t *l, const char *s, size_t n)
{
    if (l->full || l->len + n > l->limit) {
        l->full = true;
        return false;
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
    return true;
}

static bool put_cstr(line_t *l, const char *s)
{
    return put(l, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s, or 0 (overlongs and surrogates
 * count as invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* Appends s escaped as JSON string content; stops at the limit. */
static void put_escaped(line_t *l, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    char tmp[8];
    size_t i = 0;
    while (i < n && !l->full) {
        unsigned char c = s[i];
        size_t used = 1;
        bool ok;
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            ok = put(l, tmp, 2);
        } else if (c == '\n') {
            ok = put(l, "\\n", 2);
        } else if (c == '\r') {
            ok = put(l, "\\r", 2);
        } else if (c == '\t') {
            ok = put(l, "\\t", 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(tmp, sizeof(tmp), "\\u%04x", c);
            ok = put(l, tmp, 6);
        } else if (c < 0x80) {
            ok = put(l, (const char *)s + i, 1);
        } else if ((used = utf8_seq(s + i, n - i)) > 0) {
            ok = put(l, (const char *)s + i, used);
        } else {
            used = 1;
            ok = put(l, "\\ufffd", 6);
        }
        if (ok)
            i += used;
    }
}

/* The closing quote may use the reserve: only one string is ever cut. */
static void close_string(line_t *l)
{
    l->p[l->len++] = '"';
}

/* The `,"key":"` prefix is all-or-nothing, so a cut line never ends in a
 * bare key; only the value itself may be cut short. */
static void put_field(line_t *l, const char *key, const char *value, size_t vlen)
{
    size_t mark = l->len;
    put_cstr(l, ",\"");
    put_escaped(l, key, strlen(key));
    put_cstr(l, value ? "\":\"" : "\":null");
    if (l->full) {
        l->len = mark;
        return;
    }
    if (value) {
        put_escaped(l, value, vlen);
        close_string(l);
    }
}

static const char *level_name(cm_log_level_t level)
{
    switch (level) {
    case CM_LOG_DEBUG: return "debug";
    case CM_LOG_INFO: return "info";
    case CM_LOG_WARN: return "warn";
    default: return "error";
    }
}

static void write_all(const char *p, size_t n)
{
    int fd = out_fd >= 0 ? out_fd : STDERR_FILENO;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* nowhere left to report a logging failure */
        p += w;
        n -= (size_t)w;
    }
}

/* A JSON number (RFC 8259: -?(0|[1-9]digits)[.digits][e[+-]digits]), nothing else. */
static bool is_json_number(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++; /* no leading zeros: "007" is not JSON */
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0' && p - s < 32;
}

/* ,"key":number (or null), all-or-nothing like put_field's prefix. */
static void put_number(line_t *l, const char *key, const char *value)
{
    size_t mark = l->len;
    put_cstr(l, ",\"");
    put_escaped(l, key, strlen(key));
    put_cstr(l, "\":");
    put_cstr(l, value && is_json_number(value) ? value : "null");
    if (l->full)
        l->len = mark;
}

__attribute__((format(printf, 7, 0))) static void
log_write_v(cm_log_level_t level, const char *request_id, const cm_log_field_t *fields, int nfields,
            const cm_log_field_t *nums, int nnums, const char *fmt, va_list ap)
{
    int n = vsnprintf(msg_buf, sizeof(msg_buf), fmt, ap);
    bool cut = n >= (int)sizeof(msg_buf);
    size_t msg_len = n < 0 ? 0 : cut ? sizeof(msg_buf) - 1 : (size_t)n;

    char ts[CM_ISO8601_MAX];
    cm_iso8601_format(cm_now_us(), 3, ts);

    line_t l = {line_buf, 0, sizeof(line_buf) - RESERVE, false};
    put_cstr(&l, "{\"ts\":\"");
    put_cstr(&l, ts);
    put_cstr(&l, "\",\"level\":\"");
    put_cstr(&l, level_name(level));
    put_cstr(&l, "\"");
    put_field(&l, "service", service, strlen(service));
    if (request_id)
        put_field(&l, "request_id", request_id, strlen(request_id));
    put_field(&l, "msg", msg_buf, msg_len);
    for (int i = 0; i < nnums; i++)
        put_number(&l, nums[i].key ? nums[i].key : "", nums[i].value);
    for (int i = 0; i < nfields; i++) {
        const char *v = fields[i].value;
        put_field(&l, fields[i].key ? fields[i].key : "", v, v ? strlen(v) : 0);
    }

    const char *tail = (l.full || cut) ? TAIL_TRUNC : "}\n";
    size_t tlen = strlen(tail);
    memcpy(l.p + l.len, tail, tlen);
    write_all(l.p, l.len + tlen);
}

void cm__log_write(cm_log_level_t level, const char *request_id, const cm_log_field_t *fields,
                   int nfields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write_v(level, request_id, fields, nfields, NULL, 0, fmt, ap);
    va_end(ap);
}

void cm__log_write_ex(cm_log_level_t level, const char *request_id, const cm_log_field_t *fields,
                      int nfields, const cm_log_field_t *nums, int nnums, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write_v(level, request_id, fields, nfields, nums, nnums, fmt, ap);
    va_end(ap);
}

bool cm_log_limit(cm_log_limit_t *l, uint64_t now_ms, uint64_t interval_ms, uint64_t *skipped)
{
    if (l->logged && now_ms - l->last_ms < interval_ms) {
        l->skipped++;
        return false;
    }
    *skipped = l->skipped;
    l->skipped = 0;
    l->last_ms = now_ms;
    l->logged = true;
    return true;
}
