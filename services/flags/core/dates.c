/*
 * dates.c - see dates.h.
 *
 * Calendar arithmetic is done on the proleptic Gregorian calendar with the
 * days-from-civil algorithm (H. Hinnant), so no libc time function and no
 * process time zone is involved: evaluation stays a pure function.
 */
#include "core/dates.h"

#include <math.h>
#include <string.h>

#include "cm/civil.h"
#include "compat/text.h"

#define DAY_MS INT64_C(86400000)

int64_t flg_utc_to_local_ms(int64_t utc_ms, const flg_tz_t *tz)
{
    if (!tz || !tz->utc_offset)
        return utc_ms;
    return utc_ms + (int64_t)tz->utc_offset(tz, cm_floor_div(utc_ms, 1000)) * 1000;
}

int64_t flg_local_to_utc_ms(int64_t local_ms, const flg_tz_t *tz)
{
    if (!tz || !tz->utc_offset)
        return local_ms;
    /* Guess with the offset at "local read as UTC", then correct once (DST edges). */
    int64_t off1 = tz->utc_offset(tz, cm_floor_div(local_ms, 1000));
    int64_t utc = local_ms - off1 * 1000;
    int64_t off2 = tz->utc_offset(tz, cm_floor_div(utc, 1000));
    return off2 == off1 ? utc : local_ms - off2 * 1000;
}

bool flg_js_date_from_number(double d, int64_t *ms)
{
    if (!isfinite(d) || fabs(d) > (double)FLG_DATE_MAX_MS)
        return false;
    *ms = (int64_t)trunc(d);
    return true;
}

/* ---- parsing ---------------------------------------------------------------------- */

typedef struct {
    cm_slice_t s;
    size_t i;
} cur_t;

/* Reads between min and max digits; false (and no move) otherwise. */
static bool digits(cur_t *c, int min, int max, int64_t *out)
{
    int64_t v = 0;
    int n = 0;
    while (c->i + (size_t)n < c->s.len && n < max) {
        char ch = c->s.p[c->i + (size_t)n];
        if (ch < '0' || ch > '9')
            break;
        v = v * 10 + (ch - '0');
        n++;
    }
    if (n < min)
        return false;
    c->i += (size_t)n;
    *out = v;
    return true;
}

static bool eat(cur_t *c, char ch)
{
    if (c->i < c->s.len && c->s.p[c->i] == ch) {
        c->i++;
        return true;
    }
    return false;
}

static bool at_end(const cur_t *c)
{
    return c->i == c->s.len;
}

static bool parse_year(cur_t *c, int64_t *y)
{
    if (c->i < c->s.len && (c->s.p[c->i] == '+' || c->s.p[c->i] == '-')) {
        bool neg = c->s.p[c->i] == '-';
        c->i++;
        if (!digits(c, 6, 6, y))
            return false;
        if (neg)
            *y = -*y;
        return true;
    }
    return digits(c, 4, 4, y);
}

/* "HH:MM[:SS[.frac]]" -> milliseconds into the day. */
static bool parse_time(cur_t *c, int64_t *ms)
{
    int64_t h, mi, s = 0, frac = 0;
    if (!digits(c, 1, 2, &h) || !eat(c, ':') || !digits(c, 2, 2, &mi))
        return false;
    if (eat(c, ':')) {
        if (!digits(c, 2, 2, &s))
            return false;
        if (eat(c, '.')) {
            size_t start = c->i;
            int64_t scale = 100;
            while (c->i < c->s.len && c->s.p[c->i] >= '0' && c->s.p[c->i] <= '9') {
                frac += (c->s.p[c->i] - '0') * scale; /* digits past ms are dropped */
                scale /= 10;
                c->i++;
            }
            if (c->i == start)
                return false;
        }
    }
    if (mi > 59 || s > 59 || h > 24 || (h == 24 && (mi || s || frac)))
        return false;
    *ms = ((h * 60 + mi) * 60 + s) * 1000 + frac;
    return true;
}

/* "Z" or "+HH:MM" / "+HHMM" -> offset ms; false if something else is there. */
static bool parse_zone(cur_t *c, bool *has, int64_t *off_ms)
{
    *has = false;
    *off_ms = 0;
    if (at_end(c))
        return true;
    if (eat(c, 'Z') || eat(c, 'z')) {
        *has = true;
        return true;
    }
    char sign = c->s.p[c->i];
    if (sign != '+' && sign != '-')
        return false;
    c->i++;
    int64_t hh, mm;
    if (!digits(c, 2, 2, &hh))
        return false;
    eat(c, ':');
    if (!digits(c, 2, 2, &mm) || hh > 23 || mm > 59)
        return false;
    *has = true;
    *off_ms = (hh * 60 + mm) * 60000 * (sign == '-' ? -1 : 1);
    return true;
}

bool flg_date_parse(cm_slice_t s, int64_t *ms, bool *naive)
{
    cur_t c = {flg_js_trim(s), 0};
    int64_t y, mo = 1, d = 1, tod = 0, off = 0;
    if (!parse_year(&c, &y))
        return false;
    char sep = 0;
    if (c.i < c.s.len && (c.s.p[c.i] == '-' || c.s.p[c.i] == '/'))
        sep = c.s.p[c.i];
    if (sep && eat(&c, sep)) {
        if (!digits(&c, 1, 2, &mo))
            return false;
        if (eat(&c, sep) && !digits(&c, 1, 2, &d))
            return false;
    }
    bool time = false;
    if (eat(&c, 'T') || eat(&c, 't')) {
        time = true;
    } else if (c.i < c.s.len && c.s.p[c.i] == ' ') {
        while (eat(&c, ' '))
            ;
        time = true;
    }
    if (time && !parse_time(&c, &tod))
        return false;
    bool zone;
    if (!parse_zone(&c, &zone, &off) || !at_end(&c))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31)
        return false;
    int64_t t = (cm_days_from_civil(y, (int)mo, 1) + d - 1) * DAY_MS + tod - off;
    if (t > FLG_DATE_MAX_MS || t < -FLG_DATE_MAX_MS)
        return false;
    *ms = t;
    *naive = !zone;
    return true;
}

bool flg_date_relative_parse(cm_slice_t s, uint32_t *n, char *unit)
{
    size_t i = 0;
    if (i < s.len && s.p[i] == '-')
        i++;
    size_t start = i;
    uint64_t v = 0;
    while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9') {
        if (v < 100000)
            v = v * 10 + (uint64_t)(s.p[i] - '0');
        i++;
    }
    if (i == start || i + 1 != s.len || v >= 10000)
        return false;
    char u = s.p[i];
    if (u != 'h' && u != 'd' && u != 'w' && u != 'm' && u != 'y')
        return false;
    *n = (uint32_t)v;
    *unit = u;
    return true;
}

/* Months back one at a time, clamping the day to each month's length. */
static int64_t minus_months(int64_t t, uint32_t n, bool years)
{
    int64_t days = cm_floor_div(t, DAY_MS), tod = t - days * DAY_MS;
    int64_t y;
    int m, d;
    cm_civil_from_days(days, &y, &m, &d);
    if (years) {
        if (n > 0 && m == 2 && d == 29)
            d = 28;
        y -= n;
    } else {
        for (uint32_t step = 1; step <= n && d > 28; step++) {
            int64_t k = (int64_t)m - 1 - step; /* 0-based month, may be negative */
            int64_t yy = y + cm_floor_div(k, 12);
            int mm = (int)(k - cm_floor_div(k, 12) * 12) + 1;
            int last = cm_days_in_month(yy, mm);
            d = d < last ? d : last;
        }
        int64_t k = (int64_t)m - 1 - n;
        y += cm_floor_div(k, 12);
        m = (int)(k - cm_floor_div(k, 12) * 12) + 1;
    }
    return (cm_days_from_civil(y, m, 1) + d - 1) * DAY_MS + tod;
}

int64_t flg_date_relative_apply(int64_t now_ms, uint32_t n, char unit, const flg_tz_t *tz)
{
    int64_t t = flg_utc_to_local_ms(now_ms, tz);
    switch (unit) {
    case 'h': t -= (int64_t)n * 3600000; break;
    case 'd': t -= (int64_t)n * DAY_MS; break;
    case 'w': t -= (int64_t)n * 7 * DAY_MS; break;
    case 'm': t = minus_months(t, n, false); break;
    default: t = minus_months(t, n, true); break;
    }
    return flg_local_to_utc_ms(t, tz);
}
