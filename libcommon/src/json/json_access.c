/*
 * json_access.c - typed reads from a parsed tape (see json.h).
 *
 * Everything here trusts the tape: the parser has already validated the
 * grammar, the UTF-8 and every escape, so decoding needs no error paths and
 * number conversion only has to worry about range.
 *
 * Member lookup is a linear scan of the object's keys (objects in event
 * payloads are small; the scan skips values in O(1) via `next`). It always
 * runs to the end because the last duplicate wins. Keys without escapes are
 * compared with memcmp; keys with escapes are decoded on the fly, without
 * allocating, while comparing.
 */
#include "cm/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"

static inline const cm_json_node_t *node(cm_json_t v)
{
    return &v.doc->nodes[v.i];
}

static inline bool has_flag(cm_json_t v)
{
    return (node(v)->meta & CM_JSON_META_FLAG) != 0;
}

/* ---- escapes ----------------------------------------------------------------- */

static size_t utf8_put(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/*
 * Decodes the (validated) escape at p, which points at the backslash.
 * Writes its UTF-8 to out, sets *olen and returns the bytes consumed.
 */
static size_t unescape(const char *p, char out[4], size_t *olen)
{
    static const char simple[128] = {
        ['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
        ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t',
    };
    if (p[1] != 'u') {
        out[0] = simple[(unsigned char)p[1] & 0x7f];
        *olen = 1;
        return 2;
    }
    uint32_t cp = cm__json_hex4(p + 2);
    if (cp >= 0xd800 && cp <= 0xdbff) {
        uint32_t lo = cm__json_hex4(p + 8);
        *olen = utf8_put(0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00), out);
        return 12;
    }
    *olen = utf8_put(cp, out);
    return 6;
}

/* The inner bytes of string node v (between the quotes). */
static inline cm_slice_t inner(cm_json_t v)
{
    const cm_json_node_t *n = node(v);
    return (cm_slice_t){v.doc->src + n->off + 1, n->len - 2};
}

/* Whether string node v decodes to exactly key. */
static bool str_equals(cm_json_t v, cm_slice_t key)
{
    cm_slice_t in = inner(v);
    if (!has_flag(v))
        return in.len == key.len && (key.len == 0 || memcmp(in.p, key.p, key.len) == 0);
    if (key.len > in.len) /* decoding never makes a string longer */
        return false;
    size_t i = 0, k = 0;
    while (i < in.len) {
        if (in.p[i] != '\\') {
            if (k == key.len || in.p[i] != key.p[k])
                return false;
            i++;
            k++;
            continue;
        }
        char buf[4];
        size_t olen;
        i += unescape(in.p + i, buf, &olen);
        if (key.len - k < olen || memcmp(key.p + k, buf, olen) != 0)
            return false;
        k += olen;
    }
    return k == key.len;
}

/* ---- strings ------------------------------------------------------------------- */

bool cm_json_str_has_escapes(cm_json_t v)
{
    return cm_json_type(v) == CM_JSON_STRING && has_flag(v);
}

cm_slice_t cm_json_str_inner(cm_json_t v)
{
    return cm_json_type(v) == CM_JSON_STRING ? inner(v) : CM_SLICE_NULL;
}

int cm_json_str_append(cm_json_t v, cm_buf_t *out)
{
    if (cm_json_type(v) != CM_JSON_STRING)
        return CM_EINVAL;
    cm_slice_t in = inner(v);
    if (!has_flag(v)) {
        cm_buf_append(out, in.p, in.len);
        return 0;
    }
    const char *p = in.p, *end = in.p + in.len;
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        if (!bs) {
            cm_buf_append(out, p, (size_t)(end - p));
            break;
        }
        cm_buf_append(out, p, (size_t)(bs - p));
        char buf[4];
        size_t olen;
        p = bs + unescape(bs, buf, &olen);
        cm_buf_append(out, buf, olen);
    }
    return 0;
}

int cm_json_as_str(cm_json_t v, cm_buf_t *scratch, cm_slice_t *out)
{
    if (cm_json_type(v) != CM_JSON_STRING)
        return CM_EINVAL;
    if (!has_flag(v)) {
        *out = inner(v);
        return 0;
    }
    size_t start = scratch->len;
    cm_json_str_append(v, scratch);
    *out = (cm_slice_t){scratch->p + start, scratch->len - start};
    return 0;
}

bool cm_json_str_eq(cm_json_t v, cm_slice_t s)
{
    return cm_json_type(v) == CM_JSON_STRING && str_equals(v, s);
}

/* ---- containers ------------------------------------------------------------------ */

cm_json_t cm_json_get_s(cm_json_t obj, cm_slice_t key)
{
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return CM_JSON_NONE_VALUE;
    const cm_json_node_t *nodes = obj.doc->nodes;
    uint32_t end = nodes[obj.i].next, found = 0;
    for (uint32_t k = obj.i + 1; k < end; k = nodes[k + 1].next)
        if (str_equals((cm_json_t){obj.doc, k}, key))
            found = k + 1; /* keep going: the last duplicate wins */
    return found ? (cm_json_t){obj.doc, found} : CM_JSON_NONE_VALUE;
}

cm_json_t cm_json_get_either(cm_json_t obj, const char *a, const char *b)
{
    cm_json_t v = cm_json_get(obj, a);
    return cm_json_exists(v) || b == NULL ? v : cm_json_get(obj, b);
}

cm_json_t cm_json_get(cm_json_t obj, const char *key)
{
    return cm_json_get_s(obj, cm_slice_from_cstr(key));
}

cm_json_t cm__json_path(cm_json_t v, ...)
{
    va_list ap;
    va_start(ap, v);
    for (const char *k = va_arg(ap, const char *); k && v.doc; k = va_arg(ap, const char *))
        v = cm_json_get(v, k);
    va_end(ap);
    return v;
}

cm_json_t cm_json_at(cm_json_t arr, uint32_t index)
{
    if (cm_json_type(arr) != CM_JSON_ARRAY || index >= cm_json_len(arr))
        return CM_JSON_NONE_VALUE;
    const cm_json_node_t *nodes = arr.doc->nodes;
    uint32_t i = arr.i + 1;
    while (index--)
        i = nodes[i].next;
    return (cm_json_t){arr.doc, i};
}

cm_json_iter_t cm_json_iter(cm_json_t c)
{
    cm_json_type_t t = cm_json_type(c);
    if (t != CM_JSON_ARRAY && t != CM_JSON_OBJECT)
        return (cm_json_iter_t){NULL, 0, 0, false};
    return (cm_json_iter_t){c.doc, c.i + 1, node(c)->next, t == CM_JSON_OBJECT};
}

bool cm_json_next(cm_json_iter_t *it, cm_json_t *key, cm_json_t *val)
{
    if (!it->doc || it->i >= it->end)
        return false;
    uint32_t v = it->i;
    if (it->object) {
        if (key)
            *key = (cm_json_t){it->doc, v};
        v++;
    } else if (key) {
        *key = CM_JSON_NONE_VALUE;
    }
    if (val)
        *val = (cm_json_t){it->doc, v};
    it->i = it->doc->nodes[v].next;
    return true;
}

/* ---- numbers ----------------------------------------------------------------------- */

/*
 * Exact integer value of the number text p[0..n) as sign and magnitude.
 * The value is D * 10^(E - F): D the digits of the integer and fraction
 * parts together, F the fraction's length, E the exponent. It is whole iff
 * the exponent left after dropping D's trailing zeros is not negative.
 */
static int whole_number(const char *p, size_t n, bool *neg, uint64_t *mag)
{
    const char *end = p + n, *d0, *d1;
    int64_t frac = 0, exp = 0;
    *neg = *p == '-';
    p += *neg;
    d0 = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    d1 = p; /* integer digits are [d0, d1) */
    const char *f0 = p, *f1 = p;
    if (p < end && *p == '.') {
        f0 = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        f1 = p;
        frac = f1 - f0;
    }
    if (p < end) { /* exponent; saturate far beyond any possible length */
        bool eneg = *++p == '-';
        p += (*p == '-' || *p == '+');
        for (; p < end; p++)
            if (exp < 1000000000000LL)
                exp = exp * 10 + (*p - '0');
        if (eneg)
            exp = -exp;
    }
    /* Significant digits: skip leading zeros, drop trailing ones. The digit
     * sequence is [d0,d1) followed by [f0,f1); index it as one. */
    size_t ni = (size_t)(d1 - d0), nd = ni + (size_t)frac, lead = 0, trail = 0;
#define DIGIT(k) ((k) < ni ? d0[k] : f0[(k)-ni])
    while (lead < nd && DIGIT(lead) == '0')
        lead++;
    if (lead == nd) {
        *mag = 0;
        return 0;
    }
    while (DIGIT(nd - 1 - trail) == '0')
        trail++;
    int64_t e10 = exp - frac + (int64_t)trail;
    size_t sig = nd - lead - trail;
    if (e10 < 0)
        return CM_EINVAL;
    if ((int64_t)sig + e10 > 20)
        return CM_ERANGE;
    uint64_t m = 0;
    for (size_t k = lead; k < nd - trail; k++) {
        unsigned dg = (unsigned)(DIGIT(k) - '0');
        if (m > (UINT64_MAX - dg) / 10)
            return CM_ERANGE;
        m = m * 10 + dg;
    }
#undef DIGIT
    for (; e10 > 0; e10--) {
        if (m > UINT64_MAX / 10)
            return CM_ERANGE;
        m *= 10;
    }
    *mag = m;
    return 0;
}

/* Sign and magnitude of number node v; the common short-integer case is a
 * plain loop (up to 19 digits cannot overflow a uint64). */
static int number_parts(cm_json_t v, bool *neg, uint64_t *mag)
{
    if (cm_json_type(v) != CM_JSON_NUMBER)
        return CM_EINVAL;
    cm_slice_t s = cm_json_raw(v);
    if (has_flag(v) || s.len > 19)
        return whole_number(s.p, s.len, neg, mag);
    const char *p = s.p, *end = s.p + s.len;
    *neg = *p == '-';
    uint64_t m = 0;
    for (p += *neg; p < end; p++)
        m = m * 10 + (uint64_t)(*p - '0');
    *mag = m;
    return 0;
}

int cm_json_as_int64(cm_json_t v, int64_t *out)
{
    bool neg;
    uint64_t mag;
    int rc = number_parts(v, &neg, &mag);
    if (rc)
        return rc;
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return CM_ERANGE;
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return CM_ERANGE;
        *out = (int64_t)mag;
    }
    return 0;
}

int cm_json_as_uint64(cm_json_t v, uint64_t *out)
{
    bool neg;
    uint64_t mag;
    int rc = number_parts(v, &neg, &mag);
    if (rc)
        return rc;
    if (neg && mag != 0)
        return CM_ERANGE;
    *out = mag;
    return 0;
}

int cm_json_as_double(cm_json_t v, double *out)
{
    if (cm_json_type(v) != CM_JSON_NUMBER)
        return CM_EINVAL;
    cm_slice_t s = cm_json_raw(v);
    char small[64], *buf = small;
    if (s.len >= sizeof(small))
        buf = cm_xmalloc(s.len + 1);
    memcpy(buf, s.p, s.len);
    buf[s.len] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    int rc = (errno == ERANGE && isinf(d)) ? CM_ERANGE : 0;
    if (buf != small)
        free(buf);
    *out = d;
    return rc;
}

int cm_json_as_bool(cm_json_t v, bool *out)
{
    if (cm_json_type(v) != CM_JSON_BOOL)
        return CM_EINVAL;
    *out = has_flag(v);
    return 0;
}
