/*
 * form.c - iterating and percent-decoding urlencoded forms.
 *
 * The iterator only splits; decoding happens on demand, so looking up one
 * field of a large body copies nothing but that field's value. A decoded
 * component is never longer than its encoding, which bounds every output
 * by the input.
 */
#include "cm/form.h"

#include <string.h>

#include "cm/common.h"
#include "cm/err.h"

/* Decodes the byte at p[*i], advancing *i past it; -1 for a bad escape. */
static int decode_byte(const char *p, size_t len, size_t *i, bool plus_is_space)
{
    unsigned char c = (unsigned char)p[*i];
    if (c == '%') {
        if (len - *i < 3)
            return -1;
        int hi = cm_hex_value((unsigned char)p[*i + 1]);
        int lo = cm_hex_value((unsigned char)p[*i + 2]);
        if (hi < 0 || lo < 0)
            return -1;
        *i += 3;
        return hi << 4 | lo;
    }
    *i += 1;
    return plus_is_space && c == '+' ? ' ' : c;
}

int cm_url_decode(const char *p, size_t len, bool plus_is_space, cm_buf_t *out)
{
    if (len == 0)
        return CM_OK;
    char *dst = cm_buf_reserve(out, len);
    size_t i = 0, w = 0;
    while (i < len) {
        int b = decode_byte(p, len, &i, plus_is_space);
        if (b < 0)
            return CM_EINVAL; /* out->len was never advanced */
        dst[w++] = (char)b;
    }
    out->len += w;
    return CM_OK;
}

void cm_form_iter_init(cm_form_iter_t *it, const char *p, size_t len)
{
    it->p = p;
    it->end = p ? p + len : p; /* no arithmetic on a NULL pointer */
}

bool cm_form_next(cm_form_iter_t *it, cm_slice_t *name, cm_slice_t *value)
{
    while (it->p < it->end) {
        const char *seg = it->p;
        const char *amp = memchr(seg, '&', (size_t)(it->end - seg));
        const char *seg_end = amp ? amp : it->end;
        it->p = amp ? amp + 1 : it->end;
        if (seg == seg_end)
            continue;
        const char *eq = memchr(seg, '=', (size_t)(seg_end - seg));
        if (eq) {
            *name = (cm_slice_t){seg, (size_t)(eq - seg)};
            *value = (cm_slice_t){eq + 1, (size_t)(seg_end - eq - 1)};
        } else {
            *name = (cm_slice_t){seg, (size_t)(seg_end - seg)};
            *value = (cm_slice_t){seg_end, 0};
        }
        return true;
    }
    return false;
}

/*
 * Compares the decoded form of raw with name: 1 equal, 0 not, CM_EINVAL
 * for a bad escape. The whole name is always decoded, so whether a bad
 * name is reported does not depend on what was being looked for.
 */
static int name_equals(cm_slice_t raw, const char *name)
{
    const unsigned char *n = (const unsigned char *)name;
    bool same = true;
    size_t i = 0;
    while (i < raw.len) {
        int b = decode_byte(raw.p, raw.len, &i, true);
        if (b < 0)
            return CM_EINVAL;
        if (same && (*n == '\0' || b != *n))
            same = false;
        else if (same)
            n++;
    }
    return same && *n == '\0';
}

int cm_form_get(const char *p, size_t len, const char *name, cm_buf_t *out)
{
    cm_form_iter_t it;
    cm_slice_t k, v;
    cm_form_iter_init(&it, p, len);
    while (cm_form_next(&it, &k, &v)) {
        int eq = name_equals(k, name);
        if (eq < 0)
            return eq;
        if (eq) {
            int rc = cm_url_decode(v.p, v.len, true, out);
            /* a present empty value ("?a=") still leaves out->p a C string,
             * never NULL: callers pass it on to memchr and strtoll */
            if (rc == 0)
                cm_buf_cstr(out);
            return rc;
        }
    }
    return CM_ENOTFOUND;
}

void cm_url_encode(const char *p, size_t len, cm_buf_t *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            cm_buf_putc(out, (char)c);
        } else {
            cm_buf_putc(out, '%');
            cm_buf_putc(out, hex[c >> 4]);
            cm_buf_putc(out, hex[c & 15]);
        }
    }
}
