/*
 * timefmt.c - clocks, ISO-8601 parsing/formatting, and the HTTP Date.
 *
 * Calendar conversion is plain integer arithmetic on the proleptic
 * Gregorian calendar (days from 0000-03-01 in 400-year eras), so results
 * do not depend on the TZ variable, the locale, or timegm() quirks, and
 * work the same for times before 1970.
 *
 * Formatting clamps to years 0000..9999: every output then has a fixed
 * width and parses back with cm_iso8601_parse().
 */
#include "cm/timefmt.h"

#include <stdbool.h>
#include <time.h>

#include "cm/civil.h"
#include "cm/err.h"

#define US_PER_SEC INT64_C(1000000)
#define US_PER_DAY (86400 * US_PER_SEC)
/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z. */
#define MIN_US (INT64_C(-719528) * US_PER_DAY)
#define MAX_US (INT64_C(2932897) * US_PER_DAY - 1)

int64_t cm_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * US_PER_SEC + ts.tv_nsec / 1000;
}

uint64_t cm_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- calendar ------------------------------------------------------------ */

/* ---- parsing ------------------------------------------------------------- */

typedef struct {
    const char *p, *end;
} cursor_t;

static bool at_end(const cursor_t *c)
{
    return c->p == c->end;
}

static bool peek_is(const cursor_t *c, char ch)
{
    return c->p < c->end && *c->p == ch;
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Exactly n digits. */
static bool take_num(cursor_t *c, int n, int *out)
{
    if (c->end - c->p < n)
        return false;
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(c->p[i]))
            return false;
        v = v * 10 + (c->p[i] - '0');
    }
    c->p += n;
    *out = v;
    return true;
}

static bool take_char(cursor_t *c, char ch)
{
    if (!peek_is(c, ch))
        return false;
    c->p++;
    return true;
}

/* ".d+" -> microseconds; digits past the sixth are read and dropped. */
static bool take_frac(cursor_t *c, int64_t *us)
{
    int64_t v = 0, scale = 100000;
    int n = 0;
    while (c->p < c->end && is_digit(*c->p)) {
        v += (*c->p - '0') * scale;
        scale /= 10;
        c->p++;
        n++;
    }
    *us = v;
    return n > 0;
}

/* Zone after the time; returns the offset east of UTC in seconds. */
static bool take_zone(cursor_t *c, int64_t *off_s)
{
    *off_s = 0;
    if (at_end(c))
        return true;
    if (take_char(c, 'Z') || take_char(c, 'z'))
        return at_end(c);
    int sign = take_char(c, '+') ? 1 : take_char(c, '-') ? -1 : 0;
    int hh, mm = 0;
    if (sign == 0 || !take_num(c, 2, &hh) || hh > 23)
        return false;
    if (!at_end(c)) {
        take_char(c, ':');
        if (!take_num(c, 2, &mm) || mm > 59 || !at_end(c))
            return false;
    }
    *off_s = sign * (hh * 3600 + mm * 60);
    return true;
}

/* "HH:MM[:SS[.frac]]" -> microseconds into the day. */
static bool take_time(cursor_t *c, int64_t *us)
{
    int hh, mm, ss = 0;
    int64_t frac = 0;
    if (!take_num(c, 2, &hh) || hh > 23 || !take_char(c, ':') || !take_num(c, 2, &mm) || mm > 59)
        return false;
    if (take_char(c, ':')) {
        if (!take_num(c, 2, &ss) || ss > 59)
            return false;
        if (take_char(c, '.') && !take_frac(c, &frac))
            return false;
    }
    *us = ((int64_t)hh * 3600 + mm * 60 + ss) * US_PER_SEC + frac;
    return true;
}

int cm_iso8601_parse(const char *s, size_t len, int64_t *out_us)
{
    if (s == NULL)
        return CM_EINVAL;
    cursor_t c = {s, s + len};
    int y, m, d;
    if (!take_num(&c, 4, &y) || !take_char(&c, '-') || !take_num(&c, 2, &m) || m < 1 || m > 12 ||
        !take_char(&c, '-') || !take_num(&c, 2, &d) || d < 1 || d > cm_days_in_month(y, m))
        return CM_EINVAL;

    int64_t day_us = 0, off_s = 0;
    if (!at_end(&c)) {
        if (!(take_char(&c, 'T') || take_char(&c, 't') || take_char(&c, ' ')))
            return CM_EINVAL;
        if (!take_time(&c, &day_us) || !take_zone(&c, &off_s))
            return CM_EINVAL;
    }
    *out_us = cm_days_from_civil(y, m, d) * US_PER_DAY + day_us - off_s * US_PER_SEC;
    return CM_OK;
}

/* ---- formatting ---------------------------------------------------------- */

typedef struct {
    int y, mo, d, h, mi, s, wday; /* wday: 0 = Sunday */
    int64_t us;                   /* microseconds within the second */
} civil_t;

static civil_t split(int64_t us)
{
    civil_t t;
    us = us < MIN_US ? MIN_US : us > MAX_US ? MAX_US : us;
    int64_t days = cm_floor_div(us, US_PER_DAY);
    int64_t rem = us - days * US_PER_DAY; /* 0 .. US_PER_DAY-1 */
    int64_t year;                         /* 0..9999 after the clamp above */
    cm_civil_from_days(days, &year, &t.mo, &t.d);
    t.y = (int)year;
    t.wday = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday */
    t.us = rem % US_PER_SEC;
    int secs = (int)(rem / US_PER_SEC);
    t.h = secs / 3600;
    t.mi = secs / 60 % 60;
    t.s = secs % 60;
    return t;
}

/* Writes v as exactly n decimal digits (v must fit). */
static char *put_num(char *o, int64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + n;
}

size_t cm_iso8601_format(int64_t us, int frac_digits, char out[CM_ISO8601_MAX])
{
    civil_t t = split(us);
    char *o = out;
    o = put_num(o, t.y, 4);
    *o++ = '-';
    o = put_num(o, t.mo, 2);
    *o++ = '-';
    o = put_num(o, t.d, 2);
    *o++ = 'T';
    o = put_num(o, t.h, 2);
    *o++ = ':';
    o = put_num(o, t.mi, 2);
    *o++ = ':';
    o = put_num(o, t.s, 2);
    /* Truncate, never round: rounding could carry into the next second. */
    if (frac_digits == 3) {
        *o++ = '.';
        o = put_num(o, t.us / 1000, 3);
    } else if (frac_digits == 6) {
        *o++ = '.';
        o = put_num(o, t.us, 6);
    }
    *o++ = 'Z';
    *o = '\0';
    return (size_t)(o - out);
}

size_t cm_http_date(int64_t us, char out[32])
{
    static const char wdays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    civil_t t = split(us);
    char *o = out;
    for (int i = 0; i < 3; i++)
        *o++ = wdays[t.wday][i];
    *o++ = ',';
    *o++ = ' ';
    o = put_num(o, t.d, 2);
    *o++ = ' ';
    for (int i = 0; i < 3; i++)
        *o++ = months[t.mo - 1][i];
    *o++ = ' ';
    o = put_num(o, t.y, 4);
    *o++ = ' ';
    o = put_num(o, t.h, 2);
    *o++ = ':';
    o = put_num(o, t.mi, 2);
    *o++ = ':';
    o = put_num(o, t.s, 2);
    for (const char *g = " GMT"; *g; g++)
        *o++ = *g;
    *o = '\0';
    return (size_t)(o - out);
}
