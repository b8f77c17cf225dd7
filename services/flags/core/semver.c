/*
 * semver.c - see semver.h. Both parsers work on slices of the input and
 * never allocate, except that a numeric part longer than 19 digits is
 * converted with strtod (JavaScript's parseInt rounds the same way).
 */
#include "core/semver.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "compat/text.h"

static bool all_digits(cm_slice_t s)
{
    if (!s.len)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (s.p[i] < '0' || s.p[i] > '9')
            return false;
    return true;
}

/* Where c first occurs in s at or after from, or s.len. */
static size_t find(cm_slice_t s, size_t from, char c)
{
    const char *p = from < s.len ? memchr(s.p + from, c, s.len - from) : NULL;
    return p ? (size_t)(p - s.p) : s.len;
}

static cm_slice_t sub(cm_slice_t s, size_t from, size_t to)
{
    return (cm_slice_t){s.p + from, to - from};
}

/* ---- posthog-node ------------------------------------------------------------------ */

static double digits_value(cm_slice_t s)
{
    if (s.len <= 19) {
        uint64_t v = 0;
        for (size_t i = 0; i < s.len; i++)
            v = v * 10 + (uint64_t)(s.p[i] - '0');
        return (double)v;
    }
    char *copy = cm_xmemdup(s.p, s.len);
    double d = strtod(copy, NULL);
    free(copy);
    return d;
}

/* A strict numeric identifier: digits, no leading zero. */
static bool node_number(cm_slice_t s, double *out)
{
    if (!all_digits(s) || (s.len > 1 && s.p[0] == '0'))
        return false;
    *out = digits_value(s);
    return true;
}

static cm_slice_t node_prepare(cm_slice_t t)
{
    t = flg_js_trim(t);
    if (t.len && (t.p[0] == 'v' || t.p[0] == 'V'))
        t.p++, t.len--;
    return t;
}

bool flg_semver_node_parse(cm_slice_t text, flg_semtuple_t *out)
{
    cm_slice_t t = node_prepare(text);
    size_t cut = find(t, 0, '-');
    size_t plus = find(t, 0, '+');
    cm_slice_t base = sub(t, 0, plus < cut ? plus : cut);
    if (!base.len || base.p[0] == '.')
        return false;
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        if (at > base.len) { /* fewer than three parts: the rest are 0 */
            out->v[i] = 0;
            continue;
        }
        size_t dot = find(base, at, '.');
        cm_slice_t part = sub(base, at, dot);
        if (!part.len)
            out->v[i] = 0;
        else if (!node_number(part, &out->v[i]))
            return false;
        at = dot + 1;
    }
    return true;
}

int flg_semtuple_cmp(const flg_semtuple_t *a, const flg_semtuple_t *b)
{
    for (int i = 0; i < 3; i++) {
        if (a->v[i] < b->v[i])
            return -1;
        if (a->v[i] > b->v[i])
            return 1;
    }
    return 0;
}

bool flg_semrange_contains(const flg_semrange_t *r, const flg_semtuple_t *v)
{
    return flg_semtuple_cmp(v, &r->lo) >= 0 && flg_semtuple_cmp(v, &r->hi) < 0;
}

static bool node_wildcard(cm_slice_t text, flg_semrange_t *out)
{
    cm_slice_t t = node_prepare(text);
    if (t.len >= 2 && t.p[t.len - 2] == '.' && t.p[t.len - 1] == '*')
        t.len -= 2;
    if (t.len >= 1 && t.p[t.len - 1] == '*')
        t.len -= 1;
    if (!t.len)
        return false;
    size_t dot = find(t, 0, '.');
    double major, minor;
    if (!node_number(sub(t, 0, dot), &major))
        return false;
    if (dot == t.len) {
        *out = (flg_semrange_t){{{major, 0, 0}}, {{major + 1, 0, 0}}};
        return true;
    }
    if (!node_number(sub(t, dot + 1, find(t, dot + 1, '.')), &minor))
        return false;
    *out = (flg_semrange_t){{{major, minor, 0}}, {{major, minor + 1, 0}}};
    return true;
}

bool flg_semver_node_range(flg_semrange_kind_t kind, cm_slice_t text, flg_semrange_t *out)
{
    if (kind == FLG_SEMRANGE_WILDCARD)
        return node_wildcard(text, out);
    flg_semtuple_t v;
    if (!flg_semver_node_parse(text, &v))
        return false;
    out->lo = v;
    if (kind == FLG_SEMRANGE_TILDE)
        out->hi = (flg_semtuple_t){{v.v[0], v.v[1] + 1, 0}};
    else if (v.v[0] > 0)
        out->hi = (flg_semtuple_t){{v.v[0] + 1, 0, 0}};
    else if (v.v[1] > 0)
        out->hi = (flg_semtuple_t){{0, v.v[1] + 1, 0}};
    else
        out->hi = (flg_semtuple_t){{0, 0, v.v[2] + 1}};
    return true;
}

/* ---- full SemVer ------------------------------------------------------------------- */

/* Digits with leading zeros stripped, as u64; false on overflow or non-digits. */
static bool u64_part(cm_slice_t s, uint64_t *out)
{
    if (!all_digits(s))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < s.len; i++) {
        uint64_t d = (uint64_t)(s.p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Dot-separated identifiers of [0-9A-Za-z-]; pre-release numbers without leading zeros. */
static bool identifiers_ok(cm_slice_t s, bool pre)
{
    if (!s.len)
        return false;
    size_t at = 0;
    while (at <= s.len) {
        size_t dot = find(s, at, '.');
        cm_slice_t id = sub(s, at, dot);
        if (!id.len)
            return false;
        for (size_t i = 0; i < id.len; i++) {
            char c = id.p[i];
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '-'))
                return false;
        }
        if (pre && all_digits(id) && id.len > 1 && id.p[0] == '0')
            return false;
        at = dot + 1;
    }
    return true;
}

static cm_slice_t full_prepare(cm_slice_t t)
{
    if (t.len && t.p[0] == 'v')
        t.p++, t.len--;
    return flg_js_trim(t);
}

bool flg_semver_parse(cm_slice_t text, flg_semver_t *out)
{
    cm_slice_t t = full_prepare(text);
    size_t dash = find(t, 0, '-'), plus = find(t, 0, '+');
    size_t end = dash < plus ? dash : plus;
    cm_slice_t core = sub(t, 0, end);
    size_t at = 0;
    int parts = 0;
    memset(out, 0, sizeof *out);
    while (at <= core.len) {
        size_t dot = find(core, at, '.');
        if (parts == 3 || !u64_part(sub(core, at, dot), &out->core[parts]))
            return false;
        parts++;
        at = dot + 1;
    }
    if (dash < plus) {
        out->pre = sub(t, dash + 1, plus);
        if (!identifiers_ok(out->pre, true))
            return false;
    }
    if (plus < t.len) {
        out->build = sub(t, plus + 1, t.len);
        if (!identifiers_ok(out->build, false))
            return false;
    }
    return true;
}

static int ident_cmp(cm_slice_t a, cm_slice_t b)
{
    bool na = all_digits(a), nb = all_digits(b);
    if (na != nb)
        return na ? -1 : 1; /* numeric identifiers sort first */
    if (na && a.len != b.len)
        return a.len < b.len ? -1 : 1;
    size_t n = a.len < b.len ? a.len : b.len;
    int c = memcmp(a.p, b.p, n);
    if (c)
        return c < 0 ? -1 : 1;
    return a.len == b.len ? 0 : (a.len < b.len ? -1 : 1);
}

static int pre_cmp(cm_slice_t a, cm_slice_t b)
{
    if (!a.len || !b.len)
        return (int)!a.len - (int)!b.len; /* a release outranks its pre-releases */
    size_t ia = 0, ib = 0;
    for (;;) {
        bool ea = ia > a.len, eb = ib > b.len;
        if (ea || eb)
            return ea == eb ? 0 : (ea ? -1 : 1);
        size_t da = find(a, ia, '.'), db = find(b, ib, '.');
        int c = ident_cmp(sub(a, ia, da), sub(b, ib, db));
        if (c)
            return c;
        ia = da + 1;
        ib = db + 1;
    }
}

int flg_semver_cmp(const flg_semver_t *a, const flg_semver_t *b)
{
    for (int i = 0; i < 3; i++)
        if (a->core[i] != b->core[i])
            return a->core[i] < b->core[i] ? -1 : 1;
    return pre_cmp(a->pre, b->pre);
}

/* Bumps core[i] and zeroes what follows; false on overflow (no upper bound). */
static bool bump(flg_semver_t *v, int i)
{
    if (v->core[i] == UINT64_MAX)
        return false;
    v->core[i]++;
    for (int j = i + 1; j < 3; j++)
        v->core[j] = 0;
    v->pre = v->build = CM_SLICE_NULL;
    return true;
}

static bool is_star(cm_slice_t s)
{
    return s.len == 1 && (s.p[0] == '*' || s.p[0] == 'x' || s.p[0] == 'X');
}

/* "1", "1.*", "1.2.x", "*": Cargo's partial and wildcard requirements. */
static bool wildcard_req(cm_slice_t text, flg_semreq_t *out)
{
    cm_slice_t t = full_prepare(text);
    uint64_t n[3] = {0, 0, 0};
    int nums = 0, parts = 0;
    size_t at = 0;
    while (at <= t.len) {
        size_t dot = find(t, at, '.');
        cm_slice_t part = sub(t, at, dot);
        if (++parts > 3)
            return false;
        if (is_star(part)) {
            /* only wildcards may follow */
        } else if (nums + 1 == parts && u64_part(part, &n[nums])) {
            nums++;
        } else {
            return false;
        }
        at = dot + 1;
    }
    memset(out, 0, sizeof *out);
    if (nums == 0) {
        out->any = true;
        return true;
    }
    out->lo.core[0] = n[0];
    out->lo.core[1] = n[1];
    out->lo.core[2] = n[2];
    out->hi = out->lo;
    int level = nums == 3 || (nums == 2 && parts == 2) ? -1 : nums - 1;
    if (level < 0) /* bare "M.m" or "M.m.p": a caret requirement */
        level = n[0] > 0 ? 0 : (nums == 2 || n[1] > 0 ? 1 : 2);
    out->hi_open = !bump(&out->hi, level);
    return true;
}

bool flg_semreq_parse(flg_semrange_kind_t kind, cm_slice_t text, flg_semreq_t *out)
{
    if (kind == FLG_SEMRANGE_WILDCARD)
        return wildcard_req(text, out);
    memset(out, 0, sizeof *out);
    if (!flg_semver_parse(text, &out->lo))
        return false;
    out->hi = out->lo;
    int level;
    if (kind == FLG_SEMRANGE_TILDE)
        level = 1;
    else
        level = out->lo.core[0] > 0 ? 0 : (out->lo.core[1] > 0 ? 1 : 2);
    out->hi_open = !bump(&out->hi, level);
    return true;
}

bool flg_semreq_matches(const flg_semreq_t *r, const flg_semver_t *v)
{
    if (v->pre.len) {
        /* Cargo: a pre-release only satisfies a bound that names its own core. */
        if (r->any || !r->lo.pre.len || memcmp(r->lo.core, v->core, sizeof v->core) != 0)
            return false;
    }
    if (r->any)
        return true;
    if (flg_semver_cmp(v, &r->lo) < 0)
        return false;
    return r->hi_open || flg_semver_cmp(v, &r->hi) < 0;
}
