/*
 * jsdate.c - see jsdate.h.
 *
 * Structure (mirroring the engine's): a tokenizer with one token of
 * lookahead; an ES5 pass that either consumes the whole string or hands
 * the first token it could not use to the legacy loop; three composers
 * that collect day (up to three numbers and a month name), time (up to
 * four numbers, AM/PM) and zone (sign, hours, minutes), and validate on
 * output. Numbers keep at most 9 significant digits, as V8's do.
 */
#include "compat/jsdate.h"

#include <string.h>

#include "cm/civil.h"
#include "compat/text.h"

#define NONE INT32_MIN

/* T_DONE is not scanned: es5_date's "consumed everything it wanted". */
typedef enum {
    T_END,
    T_NUMBER,
    T_SYMBOL,
    T_WORD,
    T_SPACE,
    T_UNKNOWN,
    T_INVALID,
    T_DONE
} tok_kind_t;
typedef enum { W_NONE, W_MONTH, W_AMPM, W_ZONE, W_TSEP } word_kind_t;

typedef struct {
    tok_kind_t kind;
    int32_t value;  /* number value, symbol char, or keyword value */
    int32_t length; /* characters in the number / word */
    word_kind_t word;
} tok_t;

typedef struct {
    cm_slice_t s;
    size_t i;
    tok_t next; /* the lookahead */
} scan_t;

static uint32_t peek_cp(const scan_t *sc, size_t *len)
{
    size_t j = sc->i;
    if (j >= sc->s.len) {
        *len = 0;
        return 0;
    }
    uint32_t cp = flg_utf8_next(sc->s, &j);
    *len = j - sc->i;
    return cp;
}

static const struct {
    char p[3];
    word_kind_t kind;
    int value;
} KEYWORDS[] = {
    {"jan", W_MONTH, 1},        {"feb", W_MONTH, 2},         {"mar", W_MONTH, 3},
    {"apr", W_MONTH, 4},        {"may", W_MONTH, 5},         {"jun", W_MONTH, 6},
    {"jul", W_MONTH, 7},        {"aug", W_MONTH, 8},         {"sep", W_MONTH, 9},
    {"oct", W_MONTH, 10},       {"nov", W_MONTH, 11},        {"dec", W_MONTH, 12},
    {{'a', 'm', 0}, W_AMPM, 0}, {{'p', 'm', 0}, W_AMPM, 12}, {{'u', 't', 0}, W_ZONE, 0},
    {"utc", W_ZONE, 0},         {{'z', 0, 0}, W_ZONE, 0},    {"gmt", W_ZONE, 0},
    {"cdt", W_ZONE, -5},        {"cst", W_ZONE, -6},         {"edt", W_ZONE, -4},
    {"est", W_ZONE, -5},        {"mdt", W_ZONE, -6},         {"mst", W_ZONE, -7},
    {"pdt", W_ZONE, -7},        {"pst", W_ZONE, -8},         {{'t', 0, 0}, W_TSEP, 0},
};

static tok_t scan_word(scan_t *sc)
{
    uint32_t pre[3] = {0, 0, 0};
    int32_t len = 0;
    for (;;) {
        size_t n;
        uint32_t cp = peek_cp(sc, &n);
        if (!n || cp < 'A' || flg_js_is_space(cp))
            break;
        if (len < 3)
            pre[len] = cp < 0x80 ? (cp | 0x20) : cp;
        len++;
        sc->i += n;
    }
    tok_t t = {T_WORD, 0, len, W_NONE};
    for (size_t k = 0; k < sizeof KEYWORDS / sizeof KEYWORDS[0]; k++) {
        bool same = true;
        for (int j = 0; j < 3; j++)
            same &= pre[j] == (uint32_t)(unsigned char)KEYWORDS[k].p[j];
        /* A word longer than three letters only counts as a month name. */
        if (same && (len <= 3 || KEYWORDS[k].kind == W_MONTH)) {
            t.word = KEYWORDS[k].kind;
            t.value = KEYWORDS[k].value;
            break;
        }
    }
    return t;
}

static tok_t scan(scan_t *sc)
{
    size_t n;
    uint32_t cp = peek_cp(sc, &n);
    if (!n)
        return (tok_t){T_END, 0, 0, W_NONE};
    if (cp >= '0' && cp <= '9') {
        size_t start = sc->i;
        int32_t v = 0, sig = 0;
        while (sc->i < sc->s.len && sc->s.p[sc->i] == '0')
            sc->i++;
        while (sc->i < sc->s.len && sc->s.p[sc->i] >= '0' && sc->s.p[sc->i] <= '9') {
            if (sig++ < 9)
                v = v * 10 + (sc->s.p[sc->i] - '0');
            sc->i++;
        }
        return (tok_t){T_NUMBER, v, (int32_t)(sc->i - start), W_NONE};
    }
    if (cp == ':' || cp == '-' || cp == '+' || cp == '.' || cp == ')') {
        sc->i++;
        return (tok_t){T_SYMBOL, (int32_t)cp, 1, W_NONE};
    }
    if (cp >= 'A' && !flg_js_is_space(cp))
        return scan_word(sc);
    if (flg_js_is_space(cp)) {
        sc->i += n;
        return (tok_t){T_SPACE, 0, 1, W_NONE};
    }
    if (cp == '(') { /* parenthesised text is skipped, nesting included */
        int depth = 0;
        do {
            char c = sc->s.p[sc->i];
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            sc->i++;
        } while (depth > 0 && sc->i < sc->s.len);
        return (tok_t){T_UNKNOWN, 0, 0, W_NONE};
    }
    sc->i += n;
    return (tok_t){T_UNKNOWN, 0, 0, W_NONE};
}

static tok_t next(scan_t *sc)
{
    tok_t t = sc->next;
    sc->next = scan(sc);
    return t;
}

static bool is_symbol(tok_t t, char c)
{
    return t.kind == T_SYMBOL && t.value == c;
}

static bool skip_symbol(scan_t *sc, char c)
{
    if (!is_symbol(sc->next, c))
        return false;
    next(sc);
    return true;
}

static bool fixed_number(tok_t t, int len)
{
    return t.kind == T_NUMBER && t.length == len;
}

static bool is_sign(tok_t t)
{
    return is_symbol(t, '+') || is_symbol(t, '-');
}

static bool is_z(tok_t t)
{
    return t.kind == T_WORD && t.word == W_ZONE && t.length == 1 && t.value == 0;
}

static bool between(int32_t x, int32_t lo, int32_t hi)
{
    return x >= lo && x <= hi;
}

/* ---- composers ------------------------------------------------------------------------ */

typedef struct {
    int32_t comp[3];
    int n;
    int32_t named_month;
    bool iso;
} day_t;

typedef struct {
    int32_t comp[4];
    int n;
    int32_t hour_offset;
} time_t_;

typedef struct {
    int32_t sign, hour, minute;
} zone_t;

static bool day_add(day_t *d, int32_t v)
{
    if (d->n == 3)
        return false;
    d->comp[d->n++] = v;
    return true;
}

static bool time_add(time_t_ *t, int32_t v)
{
    if (t->n == 4)
        return false;
    t->comp[t->n++] = v;
    return true;
}

static bool time_add_final(time_t_ *t, int32_t v)
{
    if (!time_add(t, v))
        return false;
    while (t->n < 4)
        t->comp[t->n++] = 0;
    return true;
}

static bool time_expecting(const time_t_ *t, int32_t v)
{
    return (t->n == 1 && between(v, 0, 59)) || (t->n == 2 && between(v, 0, 59)) ||
           (t->n == 3 && between(v, 0, 999));
}

static bool zone_expecting(const zone_t *z, int32_t v)
{
    return z->hour != NONE && z->minute == NONE && between(v, 0, 59);
}

static void zone_set(zone_t *z, int32_t hours)
{
    z->sign = hours < 0 ? -1 : 1;
    z->hour = hours < 0 ? -hours : hours;
    z->minute = 0;
}

static int32_t read_ms(tok_t t)
{
    int32_t v = t.value, len = t.length;
    if (len == 1)
        return v * 100;
    if (len == 2)
        return v * 10;
    if (len > 9)
        len = 9;
    while (len > 3)
        v /= 10, len--;
    return v;
}

/* ---- the ECMAScript format ---------------------------------------------------------------- */

static const tok_t INVALID_TOK = {T_INVALID, 0, 0, W_NONE};

/* "[+-]YYYYYY|YYYY[-MM[-DD]]": T_DONE, or the token it could not use (maybe T_END). */
static tok_t es5_date(scan_t *sc, day_t *day)
{
    if (is_sign(sc->next)) {
        tok_t sign = next(sc);
        if (!fixed_number(sc->next, 6))
            return sign;
        int32_t year = next(sc).value; /* consumed even when rejected, as V8 does */
        if (sign.value == '-' && year == 0)
            return sign;
        day_add(day, sign.value == '-' ? -year : year);
    } else if (fixed_number(sc->next, 4)) {
        day_add(day, next(sc).value);
    } else {
        return next(sc);
    }
    if (skip_symbol(sc, '-')) {
        if (!fixed_number(sc->next, 2) || !between(sc->next.value, 1, 12))
            return next(sc);
        day_add(day, next(sc).value);
        if (skip_symbol(sc, '-')) {
            if (!fixed_number(sc->next, 2) || !between(sc->next.value, 1, 31))
                return next(sc);
            day_add(day, next(sc).value);
        }
    }
    return (tok_t){T_DONE, 0, 0, W_NONE};
}

/* Two digits in [lo, hi], not above 0 after an hour of 24. */
static bool es5_two(scan_t *sc, int32_t hi, bool h24)
{
    return fixed_number(sc->next, 2) && between(sc->next.value, 0, hi) &&
           !(h24 && sc->next.value > 0);
}

/* "THH:mm[:ss[.sss]][Z|+hh:mm|+hhmm]" to the end of the input. */
static bool es5_time(scan_t *sc, time_t_ *tm, zone_t *tz)
{
    next(sc); /* the T */
    if (!es5_two(sc, 24, false))
        return false;
    bool h24 = sc->next.value == 24;
    time_add(tm, next(sc).value);
    if (!skip_symbol(sc, ':') || !es5_two(sc, 59, h24))
        return false;
    time_add(tm, next(sc).value);
    if (skip_symbol(sc, ':')) {
        if (!es5_two(sc, 59, h24))
            return false;
        time_add(tm, next(sc).value);
        if (skip_symbol(sc, '.')) {
            if (sc->next.kind != T_NUMBER || (h24 && sc->next.value > 0))
                return false;
            time_add(tm, read_ms(next(sc)));
        }
    }
    if (is_z(sc->next)) {
        next(sc);
        zone_set(tz, 0);
    } else if (is_sign(sc->next)) {
        tz->sign = next(sc).value == '-' ? -1 : 1;
        if (fixed_number(sc->next, 4)) {
            int32_t hm = next(sc).value;
            if (!between(hm / 100, 0, 23) || !between(hm % 100, 0, 59))
                return false;
            tz->hour = hm / 100;
            tz->minute = hm % 100;
        } else {
            if (!es5_two(sc, 23, false))
                return false;
            tz->hour = next(sc).value;
            if (!skip_symbol(sc, ':') || !es5_two(sc, 59, false))
                return false;
            tz->minute = next(sc).value;
        }
    }
    return sc->next.kind == T_END;
}

static tok_t es5(scan_t *sc, day_t *day, time_t_ *tm, zone_t *tz, bool *date_only)
{
    tok_t t = es5_date(sc, day);
    if (t.kind != T_DONE)
        return t;
    if (!(sc->next.kind == T_WORD && sc->next.word == W_TSEP)) {
        if (sc->next.kind != T_END)
            return next(sc);
    } else if (!es5_time(sc, tm, tz)) {
        return INVALID_TOK;
    }
    *date_only = tz->hour == NONE && tm->n == 0;
    day->iso = true;
    return (tok_t){T_END, 0, 0, W_NONE};
}

/* ---- the legacy loop ----------------------------------------------------------------------- */

static bool legacy_number(scan_t *sc, tok_t t, day_t *day, time_t_ *tm, zone_t *tz)
{
    int32_t n = t.value;
    if (skip_symbol(sc, ':')) {
        if (skip_symbol(sc, ':')) {
            if (tm->n != 0)
                return false;
            time_add(tm, n);
            time_add(tm, 0);
        } else {
            if (!time_add(tm, n))
                return false;
            if (is_symbol(sc->next, '.'))
                next(sc);
        }
    } else if (skip_symbol(sc, '.') && time_expecting(tm, n)) {
        time_add(tm, n);
        if (sc->next.kind != T_NUMBER)
            return false;
        time_add_final(tm, read_ms(next(sc)));
    } else if (zone_expecting(tz, n)) {
        tz->minute = n;
    } else if (time_expecting(tm, n)) {
        time_add_final(tm, n);
        tok_t p = sc->next; /* the time must end here */
        if (p.kind != T_END && p.kind != T_SPACE && !is_z(p) && !is_sign(p))
            return false;
    } else {
        if (!day_add(day, n))
            return false;
        skip_symbol(sc, '-');
    }
    return true;
}

static bool legacy_offset(scan_t *sc, tok_t sign, zone_t *tz)
{
    tz->sign = sign.value == '-' ? -1 : 1;
    int32_t n = 0, len = 0;
    if (sc->next.kind == T_NUMBER) {
        tok_t num = next(sc);
        n = num.value;
        len = num.length;
    }
    if (is_symbol(sc->next, ':')) {
        tz->hour = n;
        tz->minute = NONE;
    } else if (len == 1 || len == 2) {
        tz->hour = n;
        tz->minute = 0;
    } else if (len == 3 || len == 4) {
        tz->hour = n / 100;
        tz->minute = n % 100;
    } else {
        return false;
    }
    return true;
}

static bool legacy(scan_t *sc, tok_t t, day_t *day, time_t_ *tm, zone_t *tz)
{
    bool has_number = day->n > 0;
    for (; t.kind != T_END; t = next(sc)) {
        if (t.kind == T_NUMBER) {
            has_number = true;
            if (!legacy_number(sc, t, day, tm, tz))
                return false;
        } else if (t.kind == T_WORD) {
            if (t.word == W_AMPM && tm->n != 0) {
                tm->hour_offset = t.value;
            } else if (t.word == W_MONTH) {
                day->named_month = t.value;
                skip_symbol(sc, '-');
            } else if (t.word == W_ZONE && has_number) {
                zone_set(tz, t.value);
            } else if (has_number || sc->next.kind == T_NUMBER) {
                return false; /* a stray word after a number, or glued to one */
            }
        } else if (is_sign(t) && ((tz->hour == 0 && tz->minute == 0) || tm->n != 0)) {
            has_number = true;
            if (!legacy_offset(sc, t, tz))
                return false;
        } else if ((is_sign(t) || is_symbol(t, ')')) && has_number) {
            return false;
        }
    }
    return true;
}

/* ---- composing the result ------------------------------------------------------------------- */

static bool write_day(day_t *d, int64_t *y, int32_t *m, int32_t *dd)
{
    if (d->n < 1)
        return false;
    while (d->n < 3)
        d->comp[d->n++] = 1;
    int64_t year;
    if (d->named_month == NONE) {
        if (d->iso || !between(d->comp[0], 1, 31))
            year = d->comp[0], *m = d->comp[1], *dd = d->comp[2];
        else
            *m = d->comp[0], *dd = d->comp[1], year = d->comp[2];
    } else {
        *m = d->named_month;
        if (!between(d->comp[0], 1, 31))
            year = d->comp[0], *dd = d->comp[1];
        else
            *dd = d->comp[0], year = d->comp[1];
    }
    if (!d->iso && between((int32_t)year, 0, 49))
        year += 2000;
    else if (!d->iso && between((int32_t)year, 50, 99))
        year += 1900;
    *y = year;
    return between(*m, 1, 12) && between(*dd, 1, 31);
}

static bool write_time(time_t_ *t, int64_t *ms)
{
    while (t->n < 4)
        t->comp[t->n++] = 0;
    int32_t h = t->comp[0], mi = t->comp[1], s = t->comp[2], f = t->comp[3];
    if (t->hour_offset != NONE) {
        if (!between(h, 0, 12))
            return false;
        h = h % 12 + t->hour_offset;
    }
    if (!(between(h, 0, 23) && between(mi, 0, 59) && between(s, 0, 59) && between(f, 0, 999)) &&
        !(h == 24 && mi == 0 && s == 0 && f == 0))
        return false;
    *ms = (((int64_t)h * 60 + mi) * 60 + s) * 1000 + f;
    return true;
}

bool flg_js_date_parse(cm_slice_t s, int64_t *ms, bool *naive)
{
    scan_t sc = {s, 0, {T_END, 0, 0, W_NONE}};
    sc.next = scan(&sc);
    day_t day = {{0}, 0, NONE, false};
    time_t_ tm = {{0}, 0, NONE};
    zone_t tz = {NONE, NONE, NONE};
    bool date_only = false;
    tok_t first = es5(&sc, &day, &tm, &tz, &date_only);
    if (first.kind == T_INVALID || !legacy(&sc, first, &day, &tm, &tz))
        return false;
    int64_t y, tod;
    int32_t m, d;
    if (!write_day(&day, &y, &m, &d) || !write_time(&tm, &tod))
        return false;
    if (y > 400000 || y < -400000) /* far outside Date's range: no overflow below */
        return false;
    int64_t t = (cm_days_from_civil(y, m, 1) + d - 1) * INT64_C(86400000) + tod;
    if (tz.sign == NONE || date_only) {
        /* Local time: V8 allows ten extra days before converting. */
        if (t > FLG_DATE_MAX_MS + INT64_C(864000000) || t < -FLG_DATE_MAX_MS - INT64_C(864000000))
            return false;
        *naive = true;
    } else {
        int64_t h = tz.hour == NONE ? 0 : tz.hour, mi = tz.minute == NONE ? 0 : tz.minute;
        uint64_t secs = (uint64_t)h * 3600u + (uint64_t)mi * 60u;
        if (secs > INT32_MAX)
            return false;
        t -= (int64_t)secs * 1000 * tz.sign;
        if (t > FLG_DATE_MAX_MS || t < -FLG_DATE_MAX_MS)
            return false;
        *naive = false;
    }
    *ms = t;
    return true;
}
