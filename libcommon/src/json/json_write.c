/*
 * json_write.c - the JSON writer: appends compact JSON to a cm_buf_t.
 *
 * Each open container has one byte of state on a fixed stack: whether it is
 * an object, whether it has members yet (so a comma is due) and, for
 * objects, whether a key was just written (so a value is due). Every value
 * writer starts with pre_value(), which emits the comma and checks the
 * call order; misuse sets a sticky error instead of producing bad JSON.
 *
 * String escaping copies runs of safe bytes with one append per run; only
 * '"', '\\' and bytes below 0x20 are escaped, everything else (including
 * UTF-8) passes through. The _lossy variants additionally check UTF-8 and
 * replace each maximal ill-formed subsequence with U+FFFD.
 */
#include "cm/hex.h"
#include "cm/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "cm/err.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
    W_OBJ = 1,   /* this level is an object */
    W_ANY = 2,   /* it has at least one element or member */
    W_KEYED = 4, /* object: a key was written, its value is due */
};

/* What follows the backslash for bytes that need escaping; 0 = copy. */
static const char esc_char[256] = {
    [0x00] = 'u', [0x01] = 'u', [0x02] = 'u', [0x03] = 'u',  [0x04] = 'u', [0x05] = 'u',
    [0x06] = 'u', [0x07] = 'u', [0x08] = 'b', [0x09] = 't',  [0x0a] = 'n', [0x0b] = 'u',
    [0x0c] = 'f', [0x0d] = 'r', [0x0e] = 'u', [0x0f] = 'u',  [0x10] = 'u', [0x11] = 'u',
    [0x12] = 'u', [0x13] = 'u', [0x14] = 'u', [0x15] = 'u',  [0x16] = 'u', [0x17] = 'u',
    [0x18] = 'u', [0x19] = 'u', [0x1a] = 'u', [0x1b] = 'u',  [0x1c] = 'u', [0x1d] = 'u',
    [0x1e] = 'u', [0x1f] = 'u', ['"'] = '"',  ['\\'] = '\\',
};

/* ---- string quoting ------------------------------------------------------- */

static void put_escape(cm_buf_t *b, unsigned char c)
{
    char e = esc_char[c];
    if (e != 'u') {
        char two[2] = {'\\', e};
        cm_buf_append(b, two, 2);
    } else {
        char six[6] = {'\\', 'u', '0', '0'};
        cm_hex_byte(c, six + 4);
        cm_buf_append(b, six, 6);
    }
}

/* Index of the first byte at or after i that needs escaping, or n. With
 * SSE2 (every x86-64) sixteen bytes are checked at once: event payloads
 * are long runs of plain text between quotes. */
static size_t next_escape(const unsigned char *s, size_t i, size_t n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20), sign = _mm_set1_epi8((char)0x80);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        /* Bytes below 0x20, compared as unsigned by flipping the sign bit. */
        __m128i ctl = _mm_cmplt_epi8(_mm_xor_si128(v, sign), _mm_xor_si128(space, sign));
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), ctl);
        int mask = _mm_movemask_epi8(hit);
        if (mask)
            return i + (size_t)__builtin_ctz((unsigned)mask);
    }
#endif
    while (i < n && !esc_char[s[i]])
        i++;
    return i;
}

/* Appends the escaped bytes of s (no quotes). */
static void escape_into(cm_buf_t *b, const unsigned char *s, size_t n)
{
    size_t run = 0;
    if (n == 0) /* s may be NULL for an empty slice: no arithmetic on it */
        return;
    cm_buf_reserve(b, n + n / 8 + 8);
    for (size_t i = next_escape(s, 0, n); i < n; i = next_escape(s, i + 1, n)) {
        cm_buf_append(b, s + run, i - run);
        put_escape(b, s[i]);
        run = i + 1;
    }
    cm_buf_append(b, s + run, n - run);
}

/* The same, replacing ill-formed UTF-8 with U+FFFD. */
static void escape_lossy_into(cm_buf_t *b, const unsigned char *s, size_t n)
{
    size_t run = 0, i = 0;
    if (n == 0)
        return;
    while (i < n) {
        if (s[i] < 0x80) {
            if (esc_char[s[i]]) {
                cm_buf_append(b, s + run, i - run);
                put_escape(b, s[i]);
                run = i + 1;
            }
            i++;
            continue;
        }
        int r = cm__json_utf8_seq(s + i, n - i);
        if (r > 0) {
            i += (size_t)r;
            continue;
        }
        cm_buf_append(b, s + run, i - run);
        cm_buf_append(b, "\xef\xbf\xbd", 3);
        i += (size_t)-r;
        run = i;
    }
    cm_buf_append(b, s + run, n - run);
}

void cm_json_quote(cm_buf_t *b, cm_slice_t s)
{
    cm_buf_reserve(b, s.len + 2);
    cm_buf_putc(b, '"');
    escape_into(b, (const unsigned char *)s.p, s.len);
    cm_buf_putc(b, '"');
}

void cm_json_quote_lossy(cm_buf_t *b, cm_slice_t s)
{
    cm_buf_reserve(b, s.len + 2);
    cm_buf_putc(b, '"');
    escape_lossy_into(b, (const unsigned char *)s.p, s.len);
    cm_buf_putc(b, '"');
}

/* ---- structure --------------------------------------------------------------- */

void cm_json_writer_init(cm_json_writer_t *w, cm_buf_t *out)
{
    w->out = out;
    w->err = 0;
    w->depth = 0;
    w->top_done = false;
    w->stack[0] = 0;
}

int cm_json_writer_finish(const cm_json_writer_t *w)
{
    if (w->err)
        return w->err;
    return (w->depth == 0 && w->top_done) ? 0 : CM_EINVAL;
}

/* Emits the separator a value needs here; false (and error) if none may
 * go here. */
static bool pre_value(cm_json_writer_t *w)
{
    if (w->err)
        return false;
    if (w->depth == 0) {
        if (w->top_done) {
            w->err = CM_EINVAL;
            return false;
        }
        w->top_done = true;
        return true;
    }
    uint8_t *st = &w->stack[w->depth];
    if (*st & W_OBJ) {
        if (!(*st & W_KEYED)) {
            w->err = CM_EINVAL;
            return false;
        }
        *st &= (uint8_t)~W_KEYED;
        return true;
    }
    if (*st & W_ANY)
        cm_buf_putc(w->out, ',');
    *st |= W_ANY;
    return true;
}

static void begin(cm_json_writer_t *w, bool obj)
{
    if (!pre_value(w))
        return;
    if (w->depth >= CM_JSON_WRITER_MAX_DEPTH) {
        w->err = CM_ETOOBIG;
        return;
    }
    w->stack[++w->depth] = obj ? W_OBJ : 0;
    cm_buf_putc(w->out, obj ? '{' : '[');
}

static void end(cm_json_writer_t *w, bool obj)
{
    if (w->err)
        return;
    uint8_t st = w->stack[w->depth];
    if (w->depth == 0 || ((st & W_OBJ) != 0) != obj || (st & W_KEYED)) {
        w->err = CM_EINVAL;
        return;
    }
    w->depth--;
    cm_buf_putc(w->out, obj ? '}' : ']');
}

void cm_json_begin_object(cm_json_writer_t *w)
{
    begin(w, true);
}

void cm_json_end_object(cm_json_writer_t *w)
{
    end(w, true);
}

void cm_json_begin_array(cm_json_writer_t *w)
{
    begin(w, false);
}

void cm_json_end_array(cm_json_writer_t *w)
{
    end(w, false);
}

void cm_json_writer_resume(cm_json_writer_t *w, cm_buf_t *out)
{
    cm_json_writer_init(w, out);
    if (out->len == 0) {
        w->err = CM_EINVAL;
        return;
    }
    w->top_done = true;
    w->depth = 1;
    /* a complete member never ends with '{': when the buffer does, the
     * object has none yet; else a comma is due */
    w->stack[1] = out->p[out->len - 1] == '{' ? W_OBJ : W_OBJ | W_ANY;
}

void cm_json_members_raw(cm_json_writer_t *w, cm_slice_t object)
{
    if (w->err)
        return;
    uint8_t *st = &w->stack[w->depth];
    if (w->depth == 0 || (*st & (W_OBJ | W_KEYED)) != W_OBJ || object.len < 2 ||
        object.p[0] != '{' || object.p[object.len - 1] != '}') {
        w->err = CM_EINVAL;
        return;
    }
    if (object.len == 2) /* {} */
        return;
    if (*st & W_ANY)
        cm_buf_putc(w->out, ',');
    *st |= W_ANY;
    cm_buf_append(w->out, object.p + 1, object.len - 2);
}

/* ---- keys and scalars ----------------------------------------------------------- */

static void key(cm_json_writer_t *w, cm_slice_t k, bool lossy)
{
    if (w->err)
        return;
    uint8_t *st = &w->stack[w->depth];
    if (w->depth == 0 || (*st & (W_OBJ | W_KEYED)) != W_OBJ) {
        w->err = CM_EINVAL;
        return;
    }
    if (*st & W_ANY)
        cm_buf_putc(w->out, ',');
    *st |= W_ANY | W_KEYED;
    if (lossy)
        cm_json_quote_lossy(w->out, k);
    else
        cm_json_quote(w->out, k);
    cm_buf_putc(w->out, ':');
}

void cm_json_key(cm_json_writer_t *w, const char *k)
{
    key(w, cm_slice_from_cstr(k), false);
}

void cm_json_key_s(cm_json_writer_t *w, cm_slice_t k)
{
    key(w, k, false);
}

void cm_json_key_lossy(cm_json_writer_t *w, cm_slice_t k)
{
    key(w, k, true);
}

void cm_json_str_cstr(cm_json_writer_t *w, const char *s)
{
    if (pre_value(w))
        cm_json_quote(w->out, cm_slice_from_cstr(s));
}

void cm_json_str_s(cm_json_writer_t *w, cm_slice_t s)
{
    if (pre_value(w))
        cm_json_quote(w->out, s);
}

void cm_json_str_lossy(cm_json_writer_t *w, cm_slice_t s)
{
    if (pre_value(w))
        cm_json_quote_lossy(w->out, s);
}

/* Digits of v, right-aligned in buf[0..24); returns where they start. */
static char *u64_digits(uint64_t v, char buf[24])
{
    char *p = buf + 24;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void cm_json_int(cm_json_writer_t *w, int64_t v)
{
    if (!pre_value(w))
        return;
    char buf[24];
    /* Negate in unsigned arithmetic so INT64_MIN is fine. */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *p = u64_digits(mag, buf);
    if (v < 0)
        *--p = '-';
    cm_buf_append(w->out, p, (size_t)(buf + 24 - p));
}

void cm_json_uint(cm_json_writer_t *w, uint64_t v)
{
    if (!pre_value(w))
        return;
    char buf[24];
    char *p = u64_digits(v, buf);
    cm_buf_append(w->out, p, (size_t)(buf + 24 - p));
}

void cm_json_dbl(cm_json_writer_t *w, double v)
{
    if (!pre_value(w))
        return;
    if (!isfinite(v)) {
        cm_buf_append(w->out, "null", 4);
        return;
    }
    /* %g never yields ".5" or "5.", and its exponent form ("1e+20") is
     * valid JSON; 17 significant digits always round-trip a double. */
    char buf[40];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    cm_buf_append(w->out, buf, (size_t)n);
}

void cm_json_boolean(cm_json_writer_t *w, bool v)
{
    if (pre_value(w))
        cm_buf_append(w->out, v ? "true" : "false", v ? 4 : 5);
}

void cm_json_null(cm_json_writer_t *w)
{
    if (pre_value(w))
        cm_buf_append(w->out, "null", 4);
}

void cm_json_raw_value(cm_json_writer_t *w, cm_slice_t json)
{
    if (pre_value(w))
        cm_buf_append(w->out, json.p, json.len);
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Copies runs of token bytes, skipping whitespace outside strings; json is
 * valid, so a string always ends with an unescaped quote. */
void cm_json_raw_value_compact(cm_json_writer_t *w, cm_slice_t json)
{
    if (!pre_value(w))
        return;
    const char *p = json.p, *end = json.p + json.len, *run = p;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            /* The closing quote is the next one not escaped: found with
             * memchr (most of a property's bytes are in strings), then
             * checked by counting the backslashes before it. */
            const char *q = p + 1;
            for (;;) {
                q = memchr(q, '"', (size_t)(end - q));
                if (q == NULL) {
                    q = end - 1;
                    break;
                }
                size_t bs = 0;
                while (q - bs > p + 1 && q[-1 - (ptrdiff_t)bs] == '\\')
                    bs++;
                if (bs % 2 == 0)
                    break;
                q++;
            }
            p = q + 1;
        } else if (is_ws(c)) {
            cm_buf_append(w->out, run, (size_t)(p - run));
            while (p < end && is_ws(*p))
                p++;
            run = p;
        } else {
            p++;
        }
    }
    if (end > run)
        cm_buf_append(w->out, run, (size_t)(end - run));
}

/* ---- re-serialising a parsed value -------------------------------------------- */

static bool key_due(const cm_json_writer_t *w)
{
    return w->depth && (w->stack[w->depth] & (W_OBJ | W_KEYED)) == W_OBJ;
}

/* One tape node that is not a container; inside an object walk, a string
 * where a key is due is the member's key. A string with no escapes holds no
 * byte that would need one, so its span is already canonical. */
static void write_scalar(cm_json_writer_t *w, cm_json_t v, cm_buf_t *scratch)
{
    bool is_key = key_due(w);
    if (cm_json_type(v) != CM_JSON_STRING || !cm_json_str_has_escapes(v)) {
        if (!is_key) {
            cm_json_raw_value(w, cm_json_raw(v));
            return;
        }
        uint8_t *st = &w->stack[w->depth];
        if (*st & W_ANY)
            cm_buf_putc(w->out, ',');
        *st |= W_ANY | W_KEYED;
        cm_buf_append_slice(w->out, cm_json_raw(v));
        cm_buf_putc(w->out, ':');
        return;
    }
    cm_buf_reset(scratch);
    cm_json_str_append(v, scratch);
    if (is_key)
        cm_json_key_s(w, cm_buf_slice(scratch));
    else
        cm_json_str_s(w, cm_buf_slice(scratch));
}

/*
 * Walks the tape of v in order. Containers end where their `next` points,
 * so a stack of pending ends (bounded by the writer's own depth limit)
 * tells when to close them; no recursion.
 */
void cm_json_value(cm_json_writer_t *w, cm_json_t v)
{
    if (!v.doc || key_due(w)) { /* a value, never a key, is due here */
        if (!w->err)
            w->err = CM_EINVAL;
        return;
    }
    const cm_json_node_t *nodes = v.doc->nodes;
    uint32_t ends[CM_JSON_WRITER_MAX_DEPTH + 1];
    uint32_t sp = 0, i = v.i, stop = nodes[v.i].next;
    cm_buf_t scratch = CM_BUF_INIT;
    while (!w->err) {
        while (sp && ends[sp - 1] == i) {
            sp--;
            if (w->stack[w->depth] & W_OBJ)
                cm_json_end_object(w);
            else
                cm_json_end_array(w);
        }
        if (i >= stop)
            break;
        cm_json_t cur = {v.doc, i};
        cm_json_type_t t = cm_json_type(cur);
        if (t == CM_JSON_OBJECT || t == CM_JSON_ARRAY) {
            begin(w, t == CM_JSON_OBJECT);
            if (w->err)
                break;
            ends[sp++] = nodes[i].next;
        } else {
            write_scalar(w, cur, &scratch);
        }
        i++;
    }
    cm_buf_free(&scratch);
}
