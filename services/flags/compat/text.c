/*
 * text.c - see text.h.
 *
 * Lowercasing uses a compact range table of Unicode's simple uppercase ->
 * lowercase mappings for the scripts that have case (Latin, Greek, Coptic,
 * Cyrillic, Armenian, Georgian, Cherokee, Glagolitic, Deseret, Osage,
 * Vithkuqi, Old Hungarian, Garay, Warang Citi, Medefaidrin, Beria Erfe, Adlam
 * and the letterlike and enclosed forms), as of Unicode 16 - what node 20's
 * ICU knows; tests compare every code point with String.prototype.toLowerCase. A row either shifts
 * a whole range by a delta or maps every other code point to its successor ("pairs", the Latin
 * Extended layout). Two context-dependent rules of toLowerCase are implemented on top: U+0130
 * becomes "i" + U+0307, and a capital sigma at the end of a word becomes the final sigma U+03C2.
 */
#include "compat/text.h"

#include <string.h>

uint32_t flg_utf8_next(cm_slice_t s, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s.p + *i;
    size_t left = s.len - *i;
    unsigned c = p[0];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
        *i += 1;
        return c;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07;
    } else {
        *i += 1;
        return c;
    }
    if (left < n)
        goto bad;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xc0) != 0x80)
            goto bad;
        cp = cp << 6 | (p[k] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        goto bad;
    *i += n;
    return cp;
bad:
    *i += 1;
    return c;
}

void flg_utf8_put(cm_buf_t *out, uint32_t cp)
{
    char b[4];
    if (cp < 0x80) {
        cm_buf_putc(out, (char)cp);
        return;
    }
    if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3f));
        cm_buf_append(out, b, 2);
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        cm_buf_append(out, b, 3);
    } else {
        b[0] = (char)(0xf0 | cp >> 18);
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        cm_buf_append(out, b, 4);
    }
}

void flg_lower_ascii(cm_slice_t s, cm_buf_t *out)
{
    char *d = cm_buf_reserve(out, s.len);
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        d[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    out->len += s.len;
}

/* ---- the case table ------------------------------------------------------------ */

enum { SHIFT, PAIRS };

typedef struct {
    uint32_t lo, hi;
    uint8_t kind;
    int32_t delta; /* SHIFT only */
} case_row_t;

static const case_row_t ROWS[] = {
    {0x0041, 0x005a, SHIFT, 32},     {0x00c0, 0x00d6, SHIFT, 32},
    {0x00d8, 0x00de, SHIFT, 32},     {0x0100, 0x012f, PAIRS, 0},
    {0x0132, 0x0137, PAIRS, 0},      {0x0139, 0x0148, PAIRS, 0},
    {0x014a, 0x0177, PAIRS, 0},      {0x0178, 0x0178, SHIFT, -121},
    {0x0179, 0x017e, PAIRS, 0},      {0x0181, 0x0181, SHIFT, 210},
    {0x0182, 0x0185, PAIRS, 0},      {0x0186, 0x0186, SHIFT, 206},
    {0x0187, 0x0187, SHIFT, 1},      {0x0189, 0x018a, SHIFT, 205},
    {0x018b, 0x018b, SHIFT, 1},      {0x018e, 0x018e, SHIFT, 79},
    {0x018f, 0x018f, SHIFT, 202},    {0x0190, 0x0190, SHIFT, 203},
    {0x0191, 0x0191, SHIFT, 1},      {0x0193, 0x0193, SHIFT, 205},
    {0x0194, 0x0194, SHIFT, 207},    {0x0196, 0x0196, SHIFT, 211},
    {0x0197, 0x0197, SHIFT, 209},    {0x0198, 0x0198, SHIFT, 1},
    {0x019c, 0x019c, SHIFT, 211},    {0x019d, 0x019d, SHIFT, 213},
    {0x019f, 0x019f, SHIFT, 214},    {0x01a0, 0x01a5, PAIRS, 0},
    {0x01a6, 0x01a6, SHIFT, 218},    {0x01a7, 0x01a7, SHIFT, 1},
    {0x01a9, 0x01a9, SHIFT, 218},    {0x01ac, 0x01ac, SHIFT, 1},
    {0x01ae, 0x01ae, SHIFT, 218},    {0x01af, 0x01af, SHIFT, 1},
    {0x01b1, 0x01b2, SHIFT, 217},    {0x01b3, 0x01b6, PAIRS, 0},
    {0x01b7, 0x01b7, SHIFT, 219},    {0x01b8, 0x01b8, SHIFT, 1},
    {0x01bc, 0x01bc, SHIFT, 1},      {0x01c4, 0x01c4, SHIFT, 2},
    {0x01c5, 0x01c5, SHIFT, 1},      {0x01c7, 0x01c7, SHIFT, 2},
    {0x01c8, 0x01c8, SHIFT, 1},      {0x01ca, 0x01ca, SHIFT, 2},
    {0x01cb, 0x01dc, PAIRS, 0},      {0x01de, 0x01ef, PAIRS, 0},
    {0x01f1, 0x01f1, SHIFT, 2},      {0x01f2, 0x01f2, SHIFT, 1},
    {0x01f4, 0x01f4, SHIFT, 1},      {0x01f6, 0x01f6, SHIFT, -97},
    {0x01f7, 0x01f7, SHIFT, -56},    {0x01f8, 0x021f, PAIRS, 0},
    {0x0220, 0x0220, SHIFT, -130},   {0x0222, 0x0233, PAIRS, 0},
    {0x023a, 0x023a, SHIFT, 10795},  {0x023b, 0x023b, SHIFT, 1},
    {0x023d, 0x023d, SHIFT, -163},   {0x023e, 0x023e, SHIFT, 10792},
    {0x0241, 0x0241, SHIFT, 1},      {0x0243, 0x0243, SHIFT, -195},
    {0x0244, 0x0244, SHIFT, 69},     {0x0245, 0x0245, SHIFT, 71},
    {0x0246, 0x024f, PAIRS, 0},      {0x0370, 0x0373, PAIRS, 0},
    {0x0376, 0x0376, SHIFT, 1},      {0x037f, 0x037f, SHIFT, 116},
    {0x0386, 0x0386, SHIFT, 38},     {0x0388, 0x038a, SHIFT, 37},
    {0x038c, 0x038c, SHIFT, 64},     {0x038e, 0x038f, SHIFT, 63},
    {0x0391, 0x03a1, SHIFT, 32},     {0x03a3, 0x03ab, SHIFT, 32},
    {0x03cf, 0x03cf, SHIFT, 8},      {0x03d8, 0x03ef, PAIRS, 0},
    {0x03f4, 0x03f4, SHIFT, -60},    {0x03f7, 0x03f7, SHIFT, 1},
    {0x03f9, 0x03f9, SHIFT, -7},     {0x03fa, 0x03fa, SHIFT, 1},
    {0x03fd, 0x03ff, SHIFT, -130},   {0x0400, 0x040f, SHIFT, 80},
    {0x0410, 0x042f, SHIFT, 32},     {0x0460, 0x0481, PAIRS, 0},
    {0x048a, 0x04bf, PAIRS, 0},      {0x04c0, 0x04c0, SHIFT, 15},
    {0x04c1, 0x04ce, PAIRS, 0},      {0x04d0, 0x052f, PAIRS, 0},
    {0x0531, 0x0556, SHIFT, 48},     {0x10a0, 0x10c5, SHIFT, 7264},
    {0x10c7, 0x10c7, SHIFT, 7264},   {0x10cd, 0x10cd, SHIFT, 7264},
    {0x13a0, 0x13ef, SHIFT, 38864},  {0x13f0, 0x13f5, SHIFT, 8},
    {0x1c89, 0x1c89, SHIFT, 1},      {0x1c90, 0x1cba, SHIFT, -3008},
    {0x1cbd, 0x1cbf, SHIFT, -3008},  {0x1e00, 0x1e95, PAIRS, 0},
    {0x1e9e, 0x1e9e, SHIFT, -7615},  {0x1ea0, 0x1eff, PAIRS, 0},
    {0x1f08, 0x1f0f, SHIFT, -8},     {0x1f18, 0x1f1d, SHIFT, -8},
    {0x1f28, 0x1f2f, SHIFT, -8},     {0x1f38, 0x1f3f, SHIFT, -8},
    {0x1f48, 0x1f4d, SHIFT, -8},     {0x1f59, 0x1f59, SHIFT, -8},
    {0x1f5b, 0x1f5b, SHIFT, -8},     {0x1f5d, 0x1f5d, SHIFT, -8},
    {0x1f5f, 0x1f5f, SHIFT, -8},     {0x1f68, 0x1f6f, SHIFT, -8},
    {0x1f88, 0x1f8f, SHIFT, -8},     {0x1f98, 0x1f9f, SHIFT, -8},
    {0x1fa8, 0x1faf, SHIFT, -8},     {0x1fb8, 0x1fb9, SHIFT, -8},
    {0x1fba, 0x1fbb, SHIFT, -74},    {0x1fbc, 0x1fbc, SHIFT, -9},
    {0x1fc8, 0x1fcb, SHIFT, -86},    {0x1fcc, 0x1fcc, SHIFT, -9},
    {0x1fd8, 0x1fd9, SHIFT, -8},     {0x1fda, 0x1fdb, SHIFT, -100},
    {0x1fe8, 0x1fe9, SHIFT, -8},     {0x1fea, 0x1feb, SHIFT, -112},
    {0x1fec, 0x1fec, SHIFT, -7},     {0x1ff8, 0x1ff9, SHIFT, -128},
    {0x1ffa, 0x1ffb, SHIFT, -126},   {0x1ffc, 0x1ffc, SHIFT, -9},
    {0x2126, 0x2126, SHIFT, -7517},  {0x212a, 0x212a, SHIFT, -8383},
    {0x212b, 0x212b, SHIFT, -8262},  {0x2132, 0x2132, SHIFT, 28},
    {0x2160, 0x216f, SHIFT, 16},     {0x2183, 0x2183, SHIFT, 1},
    {0x24b6, 0x24cf, SHIFT, 26},     {0x2c00, 0x2c2f, SHIFT, 48},
    {0x2c60, 0x2c60, SHIFT, 1},      {0x2c62, 0x2c62, SHIFT, -10743},
    {0x2c63, 0x2c63, SHIFT, -3814},  {0x2c64, 0x2c64, SHIFT, -10727},
    {0x2c67, 0x2c6c, PAIRS, 0},      {0x2c6d, 0x2c6d, SHIFT, -10780},
    {0x2c6e, 0x2c6e, SHIFT, -10749}, {0x2c6f, 0x2c6f, SHIFT, -10783},
    {0x2c70, 0x2c70, SHIFT, -10782}, {0x2c72, 0x2c72, SHIFT, 1},
    {0x2c75, 0x2c75, SHIFT, 1},      {0x2c7e, 0x2c7f, SHIFT, -10815},
    {0x2c80, 0x2ce3, PAIRS, 0},      {0x2ceb, 0x2cee, PAIRS, 0},
    {0x2cf2, 0x2cf2, SHIFT, 1},      {0xa640, 0xa66d, PAIRS, 0},
    {0xa680, 0xa69b, PAIRS, 0},      {0xa722, 0xa72f, PAIRS, 0},
    {0xa732, 0xa76f, PAIRS, 0},      {0xa779, 0xa77c, PAIRS, 0},
    {0xa77d, 0xa77d, SHIFT, -35332}, {0xa77e, 0xa787, PAIRS, 0},
    {0xa78b, 0xa78b, SHIFT, 1},      {0xa78d, 0xa78d, SHIFT, -42280},
    {0xa790, 0xa793, PAIRS, 0},      {0xa796, 0xa7a9, PAIRS, 0},
    {0xa7aa, 0xa7aa, SHIFT, -42308}, {0xa7ab, 0xa7ab, SHIFT, -42319},
    {0xa7ac, 0xa7ac, SHIFT, -42315}, {0xa7ad, 0xa7ad, SHIFT, -42305},
    {0xa7ae, 0xa7ae, SHIFT, -42308}, {0xa7b0, 0xa7b0, SHIFT, -42258},
    {0xa7b1, 0xa7b1, SHIFT, -42282}, {0xa7b2, 0xa7b2, SHIFT, -42261},
    {0xa7b3, 0xa7b3, SHIFT, 928},    {0xa7b4, 0xa7c3, PAIRS, 0},
    {0xa7c4, 0xa7c4, SHIFT, -48},    {0xa7c5, 0xa7c5, SHIFT, -42307},
    {0xa7c6, 0xa7c6, SHIFT, -35384}, {0xa7c7, 0xa7ca, PAIRS, 0},
    {0xa7cb, 0xa7cb, SHIFT, -42343}, {0xa7cc, 0xa7cc, SHIFT, 1},
    {0xa7ce, 0xa7ce, SHIFT, 1},      {0xa7d0, 0xa7d0, SHIFT, 1},
    {0xa7d2, 0xa7d2, SHIFT, 1},      {0xa7d4, 0xa7d4, SHIFT, 1},
    {0xa7d6, 0xa7d9, PAIRS, 0},      {0xa7da, 0xa7da, SHIFT, 1},
    {0xa7dc, 0xa7dc, SHIFT, -42561}, {0xa7f5, 0xa7f5, SHIFT, 1},
    {0xff21, 0xff3a, SHIFT, 32},     {0x10400, 0x10427, SHIFT, 40},
    {0x104b0, 0x104d3, SHIFT, 40},   {0x10570, 0x1057a, SHIFT, 39},
    {0x1057c, 0x1058a, SHIFT, 39},   {0x1058c, 0x10592, SHIFT, 39},
    {0x10594, 0x10595, SHIFT, 39},   {0x10c80, 0x10cb2, SHIFT, 64},
    {0x10d50, 0x10d65, SHIFT, 32},   {0x118a0, 0x118bf, SHIFT, 32},
    {0x16e40, 0x16e5f, SHIFT, 32},   {0x16ea0, 0x16eb8, SHIFT, 27},
    {0x1e900, 0x1e921, SHIFT, 34},
};

uint32_t flg_lower_cp(uint32_t cp)
{
    if (cp < 0x41)
        return cp;
    if (cp < 0x80)
        return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    size_t lo = 0, hi = sizeof(ROWS) / sizeof(ROWS[0]);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < ROWS[mid].lo)
            hi = mid;
        else if (cp > ROWS[mid].hi)
            lo = mid + 1;
        else if (ROWS[mid].kind == SHIFT)
            return (uint32_t)((int32_t)cp + ROWS[mid].delta);
        else
            return ((cp - ROWS[mid].lo) & 1) ? cp : cp + 1;
    }
    return cp;
}

/* ---- toLowerCase --------------------------------------------------------------- */

/* Rough Unicode "Cased": letters of the scripts in the table, either case. */
static bool is_cased(uint32_t cp)
{
    if (cp < 0x80)
        return (cp | 32) >= 'a' && (cp | 32) <= 'z';
    if (cp == 0xaa || cp == 0xba)
        return true;
    if (cp >= 0xc0 && cp <= 0x2af)
        return cp != 0xd7 && cp != 0xf7;
    if ((cp >= 0x370 && cp <= 0x3ff) || (cp >= 0x400 && cp <= 0x52f) ||
        (cp >= 0x531 && cp <= 0x588) || (cp >= 0x10a0 && cp <= 0x10ff) ||
        (cp >= 0x13a0 && cp <= 0x13fd) || (cp >= 0x1c80 && cp <= 0x1cbf) ||
        (cp >= 0x1d00 && cp <= 0x1dbf) || (cp >= 0x1e00 && cp <= 0x1fff) ||
        (cp >= 0x2c00 && cp <= 0x2ce4) || (cp >= 0x2d00 && cp <= 0x2d2d) ||
        (cp >= 0xa640 && cp <= 0xa69d) || (cp >= 0xa722 && cp <= 0xa7ff) ||
        (cp >= 0xff21 && cp <= 0xff3a) || (cp >= 0xff41 && cp <= 0xff5a) ||
        (cp >= 0x10400 && cp <= 0x1044f))
        return true;
    return flg_lower_cp(cp) != cp;
}

/* Rough Unicode "Case_Ignorable": apostrophes, modifiers, combining marks. */
static bool is_case_ignorable(uint32_t cp)
{
    switch (cp) {
    case 0x27:
    case 0x2e:
    case 0x3a:
    case 0x5e:
    case 0x60:
    case 0xa8:
    case 0xad:
    case 0xaf:
    case 0xb4:
    case 0xb7:
    case 0xb8:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027: return true;
    default: return cp >= 0x2b0 && cp <= 0x36f;
    }
}

/* Final_Sigma: no cased letter follows (skipping case-ignorables). */
static bool cased_follows(cm_slice_t s, size_t i)
{
    while (i < s.len) {
        uint32_t cp = flg_utf8_next(s, &i);
        if (!is_case_ignorable(cp))
            return is_cased(cp);
    }
    return false;
}

void flg_lower_unicode(cm_slice_t s, cm_buf_t *out)
{
    bool cased_before = false; /* last non-ignorable code point was cased */
    size_t i = 0;
    while (i < s.len) {
        size_t start = i;
        uint32_t cp = flg_utf8_next(s, &i);
        if (cp < 0x80) {
            cm_buf_putc(out, (char)((cp >= 'A' && cp <= 'Z') ? cp + 32 : cp));
        } else if (i - start == 1) {
            cm_buf_putc(out, s.p[start]); /* invalid byte: copied as is */
        } else if (cp == 0x130) {
            cm_buf_append_cstr(out, "i\xcc\x87"); /* i + COMBINING DOT ABOVE */
        } else if (cp == 0x3a3) {
            bool final = cased_before && !cased_follows(s, i);
            flg_utf8_put(out, final ? 0x3c2 : 0x3c3);
        } else {
            flg_utf8_put(out, flg_lower_cp(cp));
        }
        if (!is_case_ignorable(cp))
            cased_before = is_cased(cp);
    }
}

/* ---- ordering and whitespace ------------------------------------------------------ */

/* Yields UTF-16 code units one at a time from UTF-8. */
typedef struct {
    cm_slice_t s;
    size_t i;
    uint16_t low; /* pending low surrogate, 0 if none */
} u16_iter_t;

static bool u16_next(u16_iter_t *it, uint16_t *unit)
{
    if (it->low) {
        *unit = it->low;
        it->low = 0;
        return true;
    }
    if (it->i >= it->s.len)
        return false;
    uint32_t cp = flg_utf8_next(it->s, &it->i);
    if (cp >= 0x10000) {
        cp -= 0x10000;
        *unit = (uint16_t)(0xd800 + (cp >> 10));
        it->low = (uint16_t)(0xdc00 + (cp & 0x3ff));
    } else {
        *unit = (uint16_t)cp;
    }
    return true;
}

int flg_js_strcmp(cm_slice_t a, cm_slice_t b)
{
    u16_iter_t ia = {a, 0, 0}, ib = {b, 0, 0};
    for (;;) {
        uint16_t ua, ub;
        bool ha = u16_next(&ia, &ua), hb = u16_next(&ib, &ub);
        if (!ha || !hb)
            return (int)ha - (int)hb;
        if (ua != ub)
            return ua < ub ? -1 : 1;
    }
}

bool flg_js_is_space(uint32_t cp)
{
    switch (cp) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x20:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
    case 0xfeff: return true;
    default: return cp >= 0x2000 && cp <= 0x200a;
    }
}

cm_slice_t flg_js_trim_start(cm_slice_t s)
{
    size_t i = 0;
    while (i < s.len) {
        size_t at = i;
        if (!flg_js_is_space(flg_utf8_next(s, &i))) {
            i = at;
            break;
        }
    }
    return (cm_slice_t){s.p + i, s.len - i};
}

cm_slice_t flg_js_trim(cm_slice_t s)
{
    s = flg_js_trim_start(s);
    /* Scan forward remembering the end of the last non-space code point. */
    size_t i = 0, end = 0;
    while (i < s.len) {
        uint32_t cp = flg_utf8_next(s, &i);
        if (!flg_js_is_space(cp))
            end = i;
    }
    s.len = end;
    return s;
}

bool flg_is_ascii_without_cr(cm_slice_t s)
{
    for (size_t i = 0; i < s.len; i++)
        if ((unsigned char)s.p[i] >= 0x80 || s.p[i] == '\r')
            return false;
    return true;
}

bool flg_slice_contains(cm_slice_t hay, cm_slice_t needle)
{
    if (needle.len == 0)
        return true;
    if (needle.len > hay.len)
        return false;
    return memmem(hay.p, hay.len, needle.p, needle.len) != NULL;
}
