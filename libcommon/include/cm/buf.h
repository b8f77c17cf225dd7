/*
 * buf.h - length-carrying byte slices and growable buffers.
 *
 * cm_slice_t is a borrowed view {p, len}: it never owns memory and is not
 * NUL-terminated. cm_buf_t owns its bytes; growth goes through
 * cm_buf_reserve(), which may move `p`, so never keep a pointer into a
 * buffer across an append.
 */
#ifndef CM_BUF_H
#define CM_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *p;
    size_t len;
} cm_slice_t;

#define CM_SLICE_LIT(s) ((cm_slice_t){(s), sizeof(s) - 1})
#define CM_SLICE_NULL   ((cm_slice_t){NULL, 0})

cm_slice_t cm_slice_from_cstr(const char *s);
bool cm_slice_eq(cm_slice_t a, cm_slice_t b);
bool cm_slice_eq_cstr(cm_slice_t a, const char *s);
/* ASCII case-insensitive comparison (header names, tokens). */
bool cm_slice_eq_nocase(cm_slice_t a, const char *s);
bool cm_slice_starts_with(cm_slice_t a, const char *prefix);
cm_slice_t cm_slice_trim(cm_slice_t a); /* strips ASCII spaces and tabs */
/* strspn for a slice (which need not end in NUL): the length of the prefix
 * made only of bytes in accept. */
size_t cm_slice_span(cm_slice_t a, const char *accept);

typedef struct {
    char *p;    /* owned; NULL until the first reserve */
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated */
} cm_buf_t;

#define CM_BUF_INIT ((cm_buf_t){NULL, 0, 0})

void cm_buf_init(cm_buf_t *b);
void cm_buf_free(cm_buf_t *b);
/* Ensures room for n more bytes; returns where they go (b->p + b->len). */
char *cm_buf_reserve(cm_buf_t *b, size_t n);
/* Appends n bytes (inline fast path when they fit: writers call this for
 * every comma and quote). */
static inline void cm_buf_append(cm_buf_t *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n + 1 > b->cap)
        cm_buf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}
/* Inline so that the length of a literal is known at compile time. */
static inline void cm_buf_append_cstr(cm_buf_t *b, const char *s)
{
    cm_buf_append(b, s, strlen(s));
}
static inline void cm_buf_append_slice(cm_buf_t *b, cm_slice_t s)
{
    cm_buf_append(b, s.p, s.len);
}
static inline void cm_buf_putc(cm_buf_t *b, char c)
{
    if (b->len + 2 > b->cap)
        cm_buf_reserve(b, 1);
    b->p[b->len++] = c;
}
void cm_buf_appendf(cm_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cm_buf_vappendf(cm_buf_t *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Drops n bytes from the front. */
void cm_buf_consume(cm_buf_t *b, size_t n);
void cm_buf_reset(cm_buf_t *b); /* len = 0, keeps the allocation */
/* NUL-terminates without counting the NUL in len; returns b->p. */
char *cm_buf_cstr(cm_buf_t *b);
/* Hands the allocation to the caller (NUL-terminated) and empties b. */
char *cm_buf_detach(cm_buf_t *b, size_t *len_out);
/* Decimal text of v, NUL-terminated, without printf (hot paths); out needs
 * 24 bytes. Returns the length. */
size_t cm_fmt_uint64(char *out, uint64_t v);
size_t cm_fmt_int64(char *out, int64_t v);

static inline cm_slice_t cm_buf_slice(const cm_buf_t *b)
{
    return (cm_slice_t){b->p, b->len};
}

#endif
