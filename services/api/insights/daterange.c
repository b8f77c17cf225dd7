/*
 * daterange.c - an insight's time axis in the project's zone (see
 * insights_int.h): PostHog's date_from / date_to grammar, buckets that
 * start at the zone's midnights (or hours, Sundays, first days of months)
 * whatever daylight saving does, and the labels PostHog's answers carry.
 *
 * Wall-clock times are seconds "as if local were UTC", so the calendar
 * arithmetic is civil.h's; cm_tzone turns them into instants.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/civil.h"
#include "cm/err.h"
#include "insights/insights_int.h"

#define DAY 86400

static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int api_insights__interval(cm_slice_t name)
{
    if (name.p == NULL || cm_slice_eq_cstr(name, "day"))
        return INS_DAY;
    if (cm_slice_eq_cstr(name, "hour"))
        return INS_HOUR;
    if (cm_slice_eq_cstr(name, "week"))
        return INS_WEEK;
    if (cm_slice_eq_cstr(name, "month"))
        return INS_MONTH;
    return -1;
}

static int64_t local_now(const cm_tzone_t *z, int64_t now)
{
    return now + cm_tzone_offset(z, now);
}

/* ---- calendar steps on wall-clock seconds ---- */

static int64_t day_start(int64_t t)
{
    return cm_floor_div(t, DAY) * DAY;
}

/* The project's week: from Sunday (PostHog's default week_start_day 0) or Monday (1). */
static int64_t week_start_on(int64_t t, int monday)
{
    int64_t d = cm_floor_div(t, DAY);
    int64_t dow = ((d + 4 - monday) % 7 + 7) % 7; /* 1970-01-01 was a Thursday; 0 = Sunday */
    return (d - dow) * DAY;
}

static int64_t week_start(int64_t t)
{
    return week_start_on(t, 0);
}

static int64_t week_start_monday(int64_t t)
{
    return week_start_on(t, 1);
}

static int64_t month_start(int64_t t)
{
    int64_t y;
    int m, d;
    cm_civil_from_days(cm_floor_div(t, DAY), &y, &m, &d);
    return cm_days_from_civil(y, m, 1) * DAY;
}

static int64_t year_start(int64_t t)
{
    int64_t y;
    int m, d;
    cm_civil_from_days(cm_floor_div(t, DAY), &y, &m, &d);
    return cm_days_from_civil(y, 1, 1) * DAY;
}

/* t plus n months (n may be negative), the day clamped to the month's end. */
static int64_t add_months(int64_t t, int64_t n)
{
    int64_t y, days = cm_floor_div(t, DAY);
    int m, d;
    cm_civil_from_days(days, &y, &m, &d);
    int64_t mi = y * 12 + (m - 1) + n;
    y = cm_floor_div(mi, 12);
    m = (int)(mi - y * 12) + 1;
    if (d > cm_days_in_month(y, m))
        d = cm_days_in_month(y, m);
    return cm_days_from_civil(y, m, d) * DAY + (t - days * DAY);
}

/* ---- parsing ---- */

static bool digits(cm_slice_t s, size_t at, size_t n, int64_t *out)
{
    if (at + n > s.len)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s.p[at + i]))
            return false;
        v = v * 10 + (s.p[at + i] - '0');
    }
    *out = v;
    return true;
}

/* YYYY-MM-DD[( |T)HH:MM[:SS[.f...]]][Z|(+|-)HH[:]MM]: wall clock in the
 * zone, unless an offset is given (then the instant, seen in the zone). */
static bool parse_absolute(cm_slice_t s, const cm_tzone_t *z, int64_t *out)
{
    int64_t y, mo, d, h = 0, mi = 0, sec = 0;
    if (!digits(s, 0, 4, &y) || s.len < 10 || s.p[4] != '-' || !digits(s, 5, 2, &mo) ||
        s.p[7] != '-' || !digits(s, 8, 2, &d) || mo < 1 || mo > 12 || d < 1 ||
        d > cm_days_in_month(y, (int)mo))
        return false;
    size_t at = 10;
    if (at < s.len && (s.p[at] == ' ' || s.p[at] == 'T')) {
        if (!digits(s, at + 1, 2, &h) || at + 3 >= s.len || s.p[at + 3] != ':' ||
            !digits(s, at + 4, 2, &mi) || h > 23 || mi > 59)
            return false;
        at += 6;
        if (at < s.len && s.p[at] == ':') {
            if (!digits(s, at + 1, 2, &sec) || sec > 59)
                return false;
            at += 3;
            if (at < s.len && s.p[at] == '.')
                for (at++; at < s.len && isdigit((unsigned char)s.p[at]);)
                    at++; /* the fraction: buckets are whole seconds */
        }
    }
    int64_t t = cm_days_from_civil(y, (int)mo, (int)d) * DAY + h * 3600 + mi * 60 + sec;
    if (at == s.len) {
        *out = t;
        return true;
    }
    int64_t off = 0;
    if (s.p[at] == 'Z' && at + 1 == s.len) {
        off = 0;
    } else if (s.p[at] == '+' || s.p[at] == '-') {
        int64_t oh, om;
        size_t m = at + 3 < s.len && s.p[at + 3] == ':' ? at + 4 : at + 3;
        if (!digits(s, at + 1, 2, &oh) || !digits(s, m, 2, &om) || m + 2 != s.len)
            return false;
        off = (oh * 3600 + om * 60) * (s.p[at] == '-' ? -1 : 1);
    } else {
        return false;
    }
    int64_t utc = t - off;
    *out = utc + cm_tzone_offset(z, utc);
    return true;
}

/* PostHog's relative dates: "-7d", "-2w", "-1m", "-3h", "-1y", "-1q",
 * "mStart", "dStart", "-1mStart", "dEnd", "yStart". m is months, M
 * minutes; q is 13 weeks. end: the range's end (an "End" suffix counts
 * to the unit's last second either way). */
static bool parse_relative(cm_slice_t s, int64_t now_local, int monday, int64_t *out)
{
    size_t at = 0;
    if (at < s.len && s.p[at] == '-')
        at++;
    int64_t n = 0;
    size_t nd = 0;
    while (at < s.len && isdigit((unsigned char)s.p[at]) && nd < 6) {
        n = n * 10 + (s.p[at++] - '0');
        nd++;
    }
    if (at >= s.len)
        return false;
    char unit = s.p[at++];
    cm_slice_t rest = {s.p + at, s.len - at};
    int edge = 0; /* 1 Start, 2 End */
    if (cm_slice_eq_cstr(rest, "Start"))
        edge = 1;
    else if (cm_slice_eq_cstr(rest, "End"))
        edge = 2;
    else if (rest.len != 0)
        return false;
    int64_t t = now_local;
    int64_t (*start)(int64_t) = NULL;
    switch (unit) {
    case 's': t -= n; break;
    case 'M': t -= n * 60; break;
    case 'h': t -= n * 3600; break;
    case 'd': t -= n * DAY, start = day_start; break;
    case 'w': t -= n * 7 * DAY, start = monday ? week_start_monday : week_start; break;
    case 'q': t -= n * 13 * 7 * DAY, start = monday ? week_start_monday : week_start; break;
    case 'm': t = add_months(t, -n), start = month_start; break;
    case 'y': t = add_months(t, -12 * n), start = year_start; break;
    default: return false;
    }
    if (edge && start == NULL) { /* hours and finer: the hour's edge */
        t = cm_floor_div(t, 3600) * 3600 + (edge == 2 ? 3599 : 0);
    } else if (edge == 1) {
        t = start(t);
    } else if (edge == 2) {
        int64_t next = unit == 'm'   ? add_months(start(t), 1)
                       : unit == 'y' ? add_months(start(t), 12)
                       : unit == 'd' ? start(t) + DAY
                                     : start(t) + 7 * DAY;
        t = next - 1;
    }
    *out = t;
    return true;
}

static bool parse_date(cm_slice_t s, const cm_tzone_t *z, int64_t now_s, int monday, int64_t *out)
{
    return parse_absolute(s, z, out) || parse_relative(s, local_now(z, now_s), monday, out);
}

/* ---- the axis ---- */

static int64_t truncate(ins_interval_t iv, int64_t t, int monday)
{
    switch (iv) {
    case INS_HOUR: return cm_floor_div(t, 3600) * 3600;
    case INS_DAY: return day_start(t);
    case INS_WEEK: return week_start_on(t, monday);
    case INS_MONTH: return month_start(t);
    }
    return t;
}

static int64_t next_local(ins_interval_t iv, int64_t t)
{
    switch (iv) {
    case INS_HOUR: return t + 3600;
    case INS_DAY: return t + DAY;
    case INS_WEEK: return t + 7 * DAY;
    case INS_MONTH: return add_months(t, 1);
    }
    return t;
}

static const char *interval_name(ins_interval_t iv)
{
    static const char *const names[] = {"hours", "days", "weeks", "months"};
    return names[iv];
}

int api_insights__range(cm_slice_t date_from, cm_slice_t date_to, ins_interval_t iv,
                        const cm_tzone_t *z, int64_t now_s, int monday, ins_range_t *r,
                        cm_buf_t *err)
{
    memset(r, 0, sizeof(*r));
    r->interval = iv;
    int64_t from, to;
    if (date_from.p == NULL)
        date_from = CM_SLICE_LIT("-7d");
    if (cm_slice_eq_cstr(date_from, "all")) { /* trends.c finds the first event first */
        cm_buf_appendf(err, "date_from \"all\" needs the project's first event");
        return CM_EINVAL;
    }
    if (!parse_date(date_from, z, now_s, monday, &from)) {
        cm_buf_appendf(err,
                       "date_from: \"%.*s\" is not a date (YYYY-MM-DD) or a relative date "
                       "(-7d, -2w, -1m, mStart)",
                       (int)(date_from.len > 40 ? 40 : date_from.len), date_from.p);
        return CM_EINVAL;
    }
    if (date_to.p == NULL)
        to = local_now(z, now_s);
    else if (!parse_date(date_to, z, now_s, monday, &to)) {
        cm_buf_appendf(err, "date_to: \"%.*s\" is not a date (YYYY-MM-DD) or a relative date",
                       (int)(date_to.len > 40 ? 40 : date_to.len), date_to.p);
        return CM_EINVAL;
    }
    /* the range ends with its last hour (hourly, unless date_to is a date
     * alone) or day */
    bool date_only = date_to.p != NULL && date_to.len == 10;
    to = iv == INS_HOUR && !date_only ? cm_floor_div(to, 3600) * 3600 + 3599
                                      : day_start(to) + DAY - 1;
    if (to < from) {
        cm_buf_appendf(err, "date_to is before date_from");
        return CM_EINVAL;
    }
    r->from_local = from;
    r->to_local = to;
    /* bucket starts: hours step in real time (a repeated hour is its own
     * bucket); days, weeks and months on the wall clock */
    size_t cap = 64;
    r->start = cm_xmalloc((cap + 1) * sizeof(int64_t));
    r->local = cm_xmalloc(cap * sizeof(int64_t));
    int64_t first = truncate(iv, from, monday);
    int64_t utc0 = cm_tzone_to_utc(z, first);
    for (int64_t t = first;;) {
        if (r->n == INS_MAX_BUCKETS) {
            cm_buf_appendf(err,
                           "The date range holds more than %d %s: narrow it or use a longer "
                           "interval",
                           INS_MAX_BUCKETS, interval_name(iv));
            api_insights__range_free(r);
            return CM_EINVAL;
        }
        if (r->n == cap) {
            cap *= 2;
            r->start = cm_xrealloc(r->start, (cap + 1) * sizeof(int64_t));
            r->local = cm_xrealloc(r->local, cap * sizeof(int64_t));
        }
        int64_t utc = iv == INS_HOUR ? utc0 + (int64_t)r->n * 3600 : cm_tzone_to_utc(z, t);
        if (iv == INS_HOUR)
            t = utc + cm_tzone_offset(z, utc);
        r->local[r->n] = t;
        r->start[r->n++] = utc;
        int64_t next = iv == INS_HOUR ? utc + 3600 : cm_tzone_to_utc(z, next_local(iv, t));
        int64_t next_t = iv == INS_HOUR ? next + cm_tzone_offset(z, next) : next_local(iv, t);
        if (next_t > to) {
            r->start[r->n] = next;
            break;
        }
        t = next_t;
    }
    int64_t end = cm_tzone_to_utc(z, to + 1);
    r->end = end < r->start[r->n] ? end : r->start[r->n];
    r->begin =
        cm_tzone_to_utc(z, iv == INS_HOUR ? cm_floor_div(from, 3600) * 3600 : day_start(from));
    if (r->begin < r->start[0])
        r->begin = r->start[0];
    return 0;
}

int api_insights__cohorts(ins_interval_t iv, size_t total, cm_slice_t date_to, const cm_tzone_t *z,
                          int64_t now_s, int monday, ins_range_t *r, cm_buf_t *err)
{
    memset(r, 0, sizeof(*r));
    r->interval = iv;
    int64_t to;
    if (date_to.p == NULL) {
        to = local_now(z, now_s);
    } else if (!parse_date(date_to, z, now_s, monday, &to)) {
        cm_buf_appendf(err, "date_to: \"%.*s\" is not a date (YYYY-MM-DD) or a relative date",
                       (int)(date_to.len > 40 ? 40 : date_to.len), date_to.p);
        return CM_EINVAL;
    }
    /* the end of date_to's day plus one period, truncated: the cohorts end
     * with the period that holds date_to's day */
    int64_t end = day_start(to) + DAY - 1;
    end = iv == INS_MONTH ? add_months(end, 1)
                          : end + (iv == INS_WEEK  ? 7 * DAY
                                   : iv == INS_DAY ? DAY
                                                   : 3600);
    end = truncate(iv, end, monday);
    r->n = total;
    r->start = cm_xmalloc((total + 1) * sizeof(int64_t));
    r->local = cm_xmalloc((total + 1) * sizeof(int64_t));
    int64_t t = end;
    int64_t utc_end = cm_tzone_to_utc(z, end);
    for (size_t i = total + 1; i-- > 0;) { /* back from the end */
        int64_t utc =
            iv == INS_HOUR ? utc_end - (int64_t)(total - i) * 3600 : cm_tzone_to_utc(z, t);
        r->start[i] = utc;
        r->local[i] = iv == INS_HOUR ? utc + cm_tzone_offset(z, utc) : t;
        t = iv == INS_MONTH ? add_months(t, -1)
                            : t - (iv == INS_WEEK  ? 7 * DAY
                                   : iv == INS_DAY ? DAY
                                                   : 3600);
    }
    r->begin = r->start[0];
    r->end = r->start[total];
    r->from_local = r->local[0];
    r->to_local = r->local[total] - 1;
    return 0;
}

int api_insights__days_before(const ins_range_t *r, int days, const cm_tzone_t *z, ins_range_t *out,
                              cm_buf_t *err)
{
    memset(out, 0, sizeof(*out));
    if (r->interval != INS_DAY || r->n + (size_t)days > INS_MAX_BUCKETS) {
        cm_buf_appendf(err, "weekly_active and monthly_active need the day interval");
        return CM_EINVAL;
    }
    out->interval = INS_DAY;
    out->n = r->n + (size_t)days;
    out->start = cm_xmalloc((out->n + 1) * sizeof(int64_t));
    out->local = cm_xmalloc(out->n * sizeof(int64_t));
    for (size_t i = 0; i < out->n; i++) {
        out->local[i] = r->local[0] + ((int64_t)i - days) * DAY;
        out->start[i] = cm_tzone_to_utc(z, out->local[i]);
    }
    out->start[out->n] = r->start[r->n];
    out->begin = out->start[0];
    out->end = r->end;
    out->from_local = out->local[0];
    out->to_local = r->to_local;
    return 0;
}

void api_insights__range_free(ins_range_t *r)
{
    free(r->start);
    free(r->local);
    r->start = r->local = NULL;
    r->n = 0;
}

/* ---- text ---- */

static void civil(int64_t t, int64_t *y, int *m, int *d)
{
    cm_civil_from_days(cm_floor_div(t, DAY), y, m, d);
}

void api_insights__utc_text(int64_t t, char out[24])
{
    int64_t y;
    int m, d;
    civil(t, &y, &m, &d);
    int64_t s = t - cm_floor_div(t, DAY) * DAY;
    snprintf(out, 24, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)y, m, d, (int)(s / 3600),
             (int)(s / 60 % 60), (int)(s % 60));
}

void api_insights__day(const ins_range_t *r, size_t i, cm_buf_t *out)
{
    char t[24];
    api_insights__utc_text(r->local[i], t);
    if (r->interval == INS_HOUR)
        cm_buf_append_cstr(out, t);
    else
        cm_buf_append(out, t, 10);
}

void api_insights__label(const ins_range_t *r, size_t i, cm_buf_t *out)
{
    int64_t y, y2;
    int m, d, m2, d2;
    int64_t t = r->local[i];
    civil(t, &y, &m, &d);
    switch (r->interval) {
    case INS_HOUR: {
        int64_t s = t - day_start(t);
        cm_buf_appendf(out, "%d-%s %02d:%02d", d, MONTHS[m - 1], (int)(s / 3600),
                       (int)(s / 60 % 60));
        return;
    }
    case INS_DAY: cm_buf_appendf(out, "%d-%s-%lld", d, MONTHS[m - 1], (long long)y); return;
    case INS_MONTH: cm_buf_appendf(out, "%s %lld", MONTHS[m - 1], (long long)y); return;
    case INS_WEEK: break;
    }
    /* a week, clipped to the range asked */
    int64_t a = t < day_start(r->from_local) ? day_start(r->from_local) : t;
    int64_t b = t + 6 * DAY > r->to_local ? day_start(r->to_local) : t + 6 * DAY;
    civil(a, &y, &m, &d);
    civil(b, &y2, &m2, &d2);
    if (a == b)
        cm_buf_appendf(out, "%d-%s-%lld", d, MONTHS[m - 1], (long long)y);
    else if (y != y2)
        cm_buf_appendf(out, "%d-%s-%lld \xe2\x80\x93 %d-%s-%lld", d, MONTHS[m - 1], (long long)y,
                       d2, MONTHS[m2 - 1], (long long)y2);
    else if (m != m2)
        cm_buf_appendf(out, "%d-%s \xe2\x80\x93 %d-%s", d, MONTHS[m - 1], d2, MONTHS[m2 - 1]);
    else
        cm_buf_appendf(out, "%d\xe2\x80\x93%d %s", d, d2, MONTHS[m - 1]);
}
