/*
 * buf.c - growable byte buffers and slice helpers.
 *
 * Growth doubles the capacity (minimum 64 bytes) so appends are amortised
 * O(1). consume() moves the tail down with memmove; callers that consume a
 * little at a time from large buffers should prefer an offset instead.
 */
#include "cm/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"

cm_slice_t cm_slice_from_cstr(const char *s)
{
    return (cm_slice_t){s, s ? strlen(s) : 0};
}

bool cm_slice_eq(cm_slice_t a, cm_slice_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool cm_slice_eq_cstr(cm_slice_t a, const char *s)
{
    return cm_slice_eq(a, cm_slice_from_cstr(s));
}

static inline char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
}

bool cm_slice_eq_nocase(cm_slice_t a, const char *s)
{
    size_t n = strlen(s);
    if (n != a.len)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(a.p[i]) != lower(s[i]))
            return false;
    return true;
}

bool cm_slice_starts_with(cm_slice_t a, const char *prefix)
{
    size_t n = strlen(prefix);
    return a.len >= n && memcmp(a.p, prefix, n) == 0;
}

cm_slice_t cm_slice_trim(cm_slice_t a)
{
    while (a.len && (a.p[0] == ' ' || a.p[0] == '\t')) {
        a.p++;
        a.len--;
    }
    while (a.len && (a.p[a.len - 1] == ' ' || a.p[a.len - 1] == '\t'))
        a.len--;
    return a;
}

void cm_buf_init(cm_buf_t *b)
{
    *b = CM_BUF_INIT;
}

void cm_buf_free(cm_buf_t *b)
{
    free(b->p);
    *b = CM_BUF_INIT;
}

char *cm_buf_reserve(cm_buf_t *b, size_t n)
{
    /* +1 keeps room for the NUL that cm_buf_cstr() may add. */
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need)
            cap *= 2;
        b->p = cm_xrealloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}

void cm_buf_vappendf(cm_buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char *dst = cm_buf_reserve(b, 64);
    int n = vsnprintf(dst, b->cap - b->len, fmt, ap);
    if (n >= 0 && (size_t)n >= b->cap - b->len) {
        dst = cm_buf_reserve(b, (size_t)n);
        vsnprintf(dst, b->cap - b->len, fmt, ap2);
    }
    va_end(ap2);
    if (n > 0)
        b->len += (size_t)n;
}

void cm_buf_appendf(cm_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(b, fmt, ap);
    va_end(ap);
}

void cm_buf_consume(cm_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

void cm_buf_reset(cm_buf_t *b)
{
    b->len = 0;
}

char *cm_buf_cstr(cm_buf_t *b)
{
    cm_buf_reserve(b, 0);
    b->p[b->len] = '\0';
    return b->p;
}

char *cm_buf_detach(cm_buf_t *b, size_t *len_out)
{
    char *p = cm_buf_cstr(b);
    if (len_out)
        *len_out = b->len;
    *b = CM_BUF_INIT;
    return p;
}

size_t cm_fmt_uint64(char *out, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

size_t cm_fmt_int64(char *out, int64_t v)
{
    if (v >= 0)
        return cm_fmt_uint64(out, (uint64_t)v);
    out[0] = '-';
    /* -(v + 1) + 1 avoids overflowing on INT64_MIN. */
    return 1 + cm_fmt_uint64(out + 1, (uint64_t)(-(v + 1)) + 1);
}

size_t cm_slice_span(cm_slice_t a, const char *accept)
{
    size_t i = 0;
    while (i < a.len && a.p[i] != '\0' && strchr(accept, a.p[i]) != NULL)
        i++;
    return i;
}
