/*
 * jsconv.c - see jsconv.h.
 *
 * Number::toString is built from the shortest "%.{p}e" that reads back to
 * the same double (that is the shortest round-trip digit string), then laid
 * out by the rules of ECMA-262 section 6.1.6.1.20: plain digits up to 21
 * integer digits, "0.000ddd" down to 1e-6, exponent form otherwise.
 */
#include "compat/jsconv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "compat/text.h"

double flg_js_number(cm_json_t v)
{
    double d = 0;
    cm_json_as_double(v, &d); /* ERANGE leaves +-HUGE_VAL, i.e. Infinity */
    return d;
}

bool flg_js_is_integer(cm_json_t v)
{
    if (cm_json_type(v) != CM_JSON_NUMBER)
        return false;
    double d = flg_js_number(v);
    return isfinite(d) && trunc(d) == d;
}

/* Shortest digits of d > 0 and the decimal exponent n: d = 0.digits * 10^n. */
static int shortest_digits(double d, char digits[24], int *n)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d || prec == 17)
            break;
    }
    int k = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[k++] = *p;
    digits[k] = 0;
    *n = atoi(p + 1) + 1;
    return k;
}

void flg_js_number_str(double d, cm_buf_t *out)
{
    if (isnan(d)) {
        cm_buf_append_cstr(out, "NaN");
        return;
    }
    if (d < 0 && !isinf(d)) {
        cm_buf_putc(out, '-');
        d = -d;
    }
    if (isinf(d)) {
        cm_buf_append_cstr(out, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    if (d == 0) {
        cm_buf_putc(out, '0'); /* also -0 */
        return;
    }
    char s[24];
    int n, k = shortest_digits(d, s, &n);
    if (k <= n && n <= 21) {
        cm_buf_append(out, s, (size_t)k);
        for (int i = k; i < n; i++)
            cm_buf_putc(out, '0');
    } else if (0 < n && n <= 21) {
        cm_buf_append(out, s, (size_t)n);
        cm_buf_putc(out, '.');
        cm_buf_append(out, s + n, (size_t)(k - n));
    } else if (-6 < n && n <= 0) {
        cm_buf_append_cstr(out, "0.");
        for (int i = 0; i < -n; i++)
            cm_buf_putc(out, '0');
        cm_buf_append(out, s, (size_t)k);
    } else {
        cm_buf_putc(out, s[0]);
        if (k > 1) {
            cm_buf_putc(out, '.');
            cm_buf_append(out, s + 1, (size_t)(k - 1));
        }
        cm_buf_appendf(out, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
}

/* serde_json's Display for a number: integers as written, floats via ryu. */
static void server_number(cm_json_t v, cm_buf_t *out)
{
    cm_slice_t raw = cm_json_raw(v);
    int64_t i;
    uint64_t u;
    bool literal_int = !memchr(raw.p, '.', raw.len) && !memchr(raw.p, 'e', raw.len) &&
                       !memchr(raw.p, 'E', raw.len);
    if (literal_int && (cm_json_as_int64(v, &i) == 0 || cm_json_as_uint64(v, &u) == 0)) {
        cm_buf_append_slice(out, raw);
        return;
    }
    double d = flg_js_number(v);
    if (!isfinite(d)) {
        cm_buf_append_cstr(out, "null");
        return;
    }
    size_t start = out->len;
    flg_js_number_str(d, out);
    char *p = out->p + start;
    size_t n = out->len - start;
    char *e = memchr(p, 'e', n);
    if (e) {
        if (e[1] == '+') /* ryu writes 1e21, not 1e+21 */
            memmove(e + 1, e + 2, (size_t)(p + n - (e + 2))), out->len--;
    } else if (!memchr(p, '.', n)) {
        cm_buf_append_cstr(out, ".0");
    }
}

bool flg_server_parse_f64(cm_slice_t s, double *out)
{
    if (!s.len || s.len > 400)
        return false;
    size_t i = 0;
    if (s.p[0] == '+' || s.p[0] == '-')
        i++;
    cm_slice_t rest = {s.p + i, s.len - i};
    if (cm_slice_eq_nocase(rest, "inf") || cm_slice_eq_nocase(rest, "infinity")) {
        *out = s.p[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (cm_slice_eq_nocase(rest, "nan")) {
        *out = NAN;
        return true;
    }
    size_t digits = 0;
    while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9')
        i++, digits++;
    if (i < s.len && s.p[i] == '.') {
        i++;
        while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return false;
    if (i < s.len && (s.p[i] == 'e' || s.p[i] == 'E')) {
        i++;
        if (i < s.len && (s.p[i] == '+' || s.p[i] == '-'))
            i++;
        size_t ed = i;
        while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9')
            i++;
        if (i == ed)
            return false;
    }
    if (i != s.len)
        return false;
    char buf[401];
    memcpy(buf, s.p, s.len);
    buf[s.len] = 0;
    *out = strtod(buf, NULL);
    return true;
}

/* ---- String(value) --------------------------------------------------------------- */

static void js_string_in_array(cm_json_t v, cm_buf_t *out);

void flg_js_string(cm_json_t v, cm_buf_t *out)
{
    switch (cm_json_type(v)) {
    case CM_JSON_STRING: cm_json_str_append(v, out); break;
    case CM_JSON_NUMBER: flg_js_number_str(flg_js_number(v), out); break;
    case CM_JSON_BOOL: {
        bool b = false;
        cm_json_as_bool(v, &b);
        cm_buf_append_cstr(out, b ? "true" : "false");
        break;
    }
    case CM_JSON_NULL: cm_buf_append_cstr(out, "null"); break;
    case CM_JSON_ARRAY: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, e;
        bool first = true;
        while (cm_json_next(&it, &k, &e)) {
            if (!first)
                cm_buf_putc(out, ',');
            first = false;
            js_string_in_array(e, out);
        }
        break;
    }
    case CM_JSON_OBJECT: cm_buf_append_cstr(out, "[object Object]"); break;
    case CM_JSON_NONE: cm_buf_append_cstr(out, "undefined"); break;
    }
}

/* Array.prototype.join: null and undefined elements become "". */
static void js_string_in_array(cm_json_t v, cm_buf_t *out)
{
    if (cm_json_type(v) != CM_JSON_NULL)
        flg_js_string(v, out);
}

double flg_js_parse_float(cm_slice_t s)
{
    s = flg_js_trim_start(s);
    size_t i = 0;
    if (i < s.len && (s.p[i] == '+' || s.p[i] == '-'))
        i++;
    if (s.len - i >= 8 && memcmp(s.p + i, "Infinity", 8) == 0)
        return s.p[0] == '-' ? -INFINITY : INFINITY;
    size_t digits = 0;
    while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9')
        i++, digits++;
    if (i < s.len && s.p[i] == '.') {
        size_t j = i + 1, frac = 0;
        while (j < s.len && s.p[j] >= '0' && s.p[j] <= '9')
            j++, frac++;
        if (digits + frac > 0) {
            i = j;
            digits += frac;
        }
    }
    if (digits == 0)
        return NAN;
    if (i < s.len && (s.p[i] == 'e' || s.p[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.len && (s.p[j] == '+' || s.p[j] == '-'))
            j++;
        size_t ed = j;
        while (j < s.len && s.p[j] >= '0' && s.p[j] <= '9')
            j++;
        if (j > ed)
            i = j;
    }
    char *copy = cm_xmemdup(s.p, i); /* strtod needs a NUL; the prefix is plain ASCII */
    double d = strtod(copy, NULL);
    free(copy);
    return d;
}

/* ---- canonical JSON for `exact` -------------------------------------------------- */

typedef struct {
    cm_slice_t key; /* decoded, in keybuf */
    cm_json_t val;
    uint32_t order;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.p, y->key.p, n);
    if (c)
        return c;
    if (x->key.len != y->key.len)
        return x->key.len < y->key.len ? -1 : 1;
    return x->order < y->order ? -1 : 1;
}

static void quote_decoded(cm_json_t str, cm_buf_t *out)
{
    cm_buf_t tmp = CM_BUF_INIT;
    cm_json_str_append(str, &tmp);
    cm_json_quote(out, cm_buf_slice(&tmp));
    cm_buf_free(&tmp);
}

static bool canonical(cm_json_t v, flg_str_style_t style, cm_buf_t *out);

static bool canonical_object(cm_json_t v, flg_str_style_t style, cm_buf_t *out)
{
    uint32_t n = cm_json_len(v);
    member_t *m = cm_xcalloc(n ? n : 1, sizeof *m);
    cm_buf_t keys = CM_BUF_INIT;
    size_t *offs = cm_xcalloc(n ? n : 1, sizeof *offs);
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t k, e;
    uint32_t c = 0;
    while (cm_json_next(&it, &k, &e)) {
        offs[c] = keys.len;
        cm_json_str_append(k, &keys);
        m[c].key.len = keys.len - offs[c];
        m[c].val = e;
        m[c].order = c;
        c++;
    }
    for (uint32_t j = 0; j < c; j++) /* keys.p is final only now */
        m[j].key.p = keys.p ? keys.p + offs[j] : "";
    qsort(m, c, sizeof *m, member_cmp);
    bool ok = true, first = true;
    cm_buf_putc(out, '{');
    for (uint32_t j = 0; j < c && ok; j++) {
        if (j + 1 < c && cm_slice_eq(m[j].key, m[j + 1].key))
            continue; /* a later duplicate wins, as in JSON.parse */
        if (!first)
            cm_buf_putc(out, ',');
        first = false;
        cm_json_quote(out, m[j].key);
        cm_buf_putc(out, ':');
        ok = canonical(m[j].val, style, out);
    }
    cm_buf_putc(out, '}');
    cm_buf_free(&keys);
    free(offs);
    free(m);
    return ok;
}

static bool canonical(cm_json_t v, flg_str_style_t style, cm_buf_t *out)
{
    switch (cm_json_type(v)) {
    case CM_JSON_STRING: quote_decoded(v, out); return true;
    case CM_JSON_NUMBER:
        if (style == FLG_STR_SERVER) {
            server_number(v, out);
            return true;
        }
        if (!isfinite(flg_js_number(v)) || flg_js_is_integer(v))
            return false;
        flg_js_number_str(flg_js_number(v), out);
        return true;
    case CM_JSON_ARRAY: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, e;
        bool first = true;
        cm_buf_putc(out, '[');
        while (cm_json_next(&it, &k, &e)) {
            if (!first)
                cm_buf_putc(out, ',');
            first = false;
            if (!canonical(e, style, out))
                return false;
        }
        cm_buf_putc(out, ']');
        return true;
    }
    case CM_JSON_OBJECT: return canonical_object(v, style, out);
    case CM_JSON_BOOL:
    case CM_JSON_NULL:
        cm_buf_append_slice(out, cm_json_raw(v)); /* the literal itself */
        return true;
    case CM_JSON_NONE: break;
    }
    return false;
}

bool flg_exact_string(cm_json_t v, flg_str_style_t style, cm_buf_t *out)
{
    if (cm_json_type(v) == CM_JSON_STRING) {
        cm_json_str_append(v, out);
        return true;
    }
    return canonical(v, style, out);
}

bool flg_js_finite_everywhere(cm_json_t v)
{
    switch (cm_json_type(v)) {
    case CM_JSON_NUMBER: return isfinite(flg_js_number(v));
    case CM_JSON_ARRAY:
    case CM_JSON_OBJECT: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, e;
        while (cm_json_next(&it, &k, &e))
            if (!flg_js_finite_everywhere(e))
                return false;
        return true;
    }
    default: return true;
    }
}

/* ---- boolean coercion ---------------------------------------------------------------- */

static bool str_is_ci(cm_json_t v, const char *word)
{
    if (!cm_json_str_has_escapes(v))
        return cm_slice_eq_nocase(cm_json_str_inner(v), word);
    cm_buf_t tmp = CM_BUF_INIT;
    cm_json_str_append(v, &tmp);
    bool eq = cm_slice_eq_nocase(cm_buf_slice(&tmp), word);
    cm_buf_free(&tmp);
    return eq;
}

bool flg_truthy_or_falsy(cm_json_t v)
{
    switch (cm_json_type(v)) {
    case CM_JSON_BOOL: return true;
    case CM_JSON_STRING: return str_is_ci(v, "true") || str_is_ci(v, "false");
    case CM_JSON_ARRAY: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, e;
        while (cm_json_next(&it, &k, &e))
            if (!flg_truthy_or_falsy(e))
                return false;
        return true;
    }
    default: return false;
    }
}

bool flg_truthy(cm_json_t v)
{
    switch (cm_json_type(v)) {
    case CM_JSON_BOOL: {
        bool b = false;
        cm_json_as_bool(v, &b);
        return b;
    }
    case CM_JSON_STRING: return str_is_ci(v, "true");
    case CM_JSON_ARRAY: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, e;
        while (cm_json_next(&it, &k, &e))
            if (!flg_truthy(e))
                return false;
        return true;
    }
    default: return false;
    }
}
