/*
 * evstore_tz.c - a project's time zone on the SQLite event store, whose
 * DateTime values are UTC text ("YYYY-MM-DD hh:mm:ss"): the HogQL compiler
 * prints the zone's wall clock around the date functions that depend on it
 * (toStartOfDay, toHour, ...), as ClickHouse computes them on a DateTime in
 * that zone (docs/endpoints.md, "Time zones").
 *
 *   cm_tz_local(utc, zone)         the wall-clock time in zone
 *   cm_tz_utc(local, zone[, text]) the instant of a wall-clock time; with
 *                                  text (what local was parsed from), a
 *                                  text that names its own offset ("Z",
 *                                  "+02:00") was already an instant: kept
 *   cm_add_months(x, n)            a date or date-time n months on, the day
 *                                  clamped to the month's last as
 *                                  ClickHouse's addMonths (SQLite rolls over)
 *
 * NULL for NULL or unreadable input and for a zone ICU does not know. A
 * zone is opened once per connection and kept (cm/tzone.h: not shared
 * between threads; each connection runs on one thread at a time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/tzone.h"
#include "evstore_internal.h"

typedef struct {
    char name[64];
    cm_tzone_t *zone;
    bool known;
} tz_cache_t;

static void *cache_new(void)
{
    return calloc(1, sizeof(tz_cache_t));
}

static void cache_free(void *p)
{
    tz_cache_t *c = p;
    if (c != NULL)
        cm_tzone_free(c->zone);
    free(c);
}

/* The zone called name, opened once; NULL when unknown (or no cache). */
static const cm_tzone_t *zone_of(tz_cache_t *c, const char *name, bool *ok)
{
    *ok = false;
    if (c == NULL || name == NULL || strlen(name) >= sizeof(c->name))
        return NULL;
    if (!c->known || strcmp(c->name, name) != 0) {
        cm_tzone_free(c->zone);
        c->zone = cm_tzone_open(cm_slice_from_cstr(name));
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->known = true;
    }
    *ok = c->zone != NULL;
    return c->zone;
}

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* "YYYY-MM-DD[ hh:mm:ss]" (SQLite's datetime() and date() text) -> seconds */
static bool parse(const char *s, int64_t *out)
{
    int y, mo, d, h = 0, mi = 0, se = 0, n = 0;
    if (s == NULL || sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
        return false;
    if (s[10] != '\0' && (sscanf(s + 10, " %2d:%2d:%2d", &h, &mi, &se) != 3))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return true;
}

static void format(int64_t t, char *out, size_t cap)
{
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), y;
    int64_t sec = t - days * 86400;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(out, cap, "%04d-%02d-%02d %02d:%02d:%02d", (int)y, m, d, (int)(sec / 3600),
             (int)(sec / 60 % 60), (int)(sec % 60));
}

/* Whether a date-time text names its own offset: "Z" or [+-]hh[:]mm after the time. */
static bool names_offset(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n <= 10)
        return false;
    if (s[n - 1] == 'Z' || s[n - 1] == 'z')
        return true;
    const char *t = strpbrk(s + 10, "+-");
    return t != NULL && t[1] >= '0' && t[1] <= '9';
}

static int tz_local(void *state, int argc, const char *const *args, char *out, size_t cap)
{
    int64_t t;
    bool ok;
    const cm_tzone_t *z = argc >= 2 ? zone_of(state, args[1], &ok) : NULL;
    if (argc < 2 || !ok || !parse(args[0], &t))
        return 1;
    format(t + cm_tzone_offset(z, t), out, cap);
    return 0;
}

static int tz_utc(void *state, int argc, const char *const *args, char *out, size_t cap)
{
    int64_t t;
    bool ok;
    const cm_tzone_t *z = argc >= 2 ? zone_of(state, args[1], &ok) : NULL;
    if (argc < 2 || !ok || !parse(args[0], &t))
        return 1;
    if (argc >= 3 && names_offset(args[2]))
        format(t, out, cap);
    else
        format(cm_tzone_to_utc(z, t), out, cap);
    return 0;
}

static int add_months(void *state, int argc, const char *const *args, char *out, size_t cap)
{
    (void)state;
    int64_t t, n;
    char *end;
    if (argc < 2 || args[1] == NULL || !parse(args[0], &t))
        return 1;
    n = strtoll(args[1], &end, 10);
    if (*end != '\0' || n < -120000 || n > 120000)
        return 1;
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), y;
    int64_t sec = t - days * 86400;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int64_t months = y * 12 + (m - 1) + n;
    y = months >= 0 ? months / 12 : -((-months + 11) / 12);
    m = (int)(months - y * 12) + 1;
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int last = dim[m - 1] + (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
    if (d > last)
        d = last;
    format(days_from_civil(y, m, d) * 86400 + sec, out, cap);
    if (strlen(args[0]) == 10)
        out[10] = '\0'; /* a date stays a date */
    return 0;
}

static const cm_db_function_t fns[] = {
    {.name = "cm_add_months", .nargs = 2, .call = add_months},
    {.name = "cm_tz_local",
     .nargs = 2,
     .state_new = cache_new,
     .state_free = cache_free,
     .call = tz_local},
    {.name = "cm_tz_utc",
     .nargs = 2,
     .state_new = cache_new,
     .state_free = cache_free,
     .call = tz_utc},
    {.name = "cm_tz_utc",
     .nargs = 3,
     .state_new = cache_new,
     .state_free = cache_free,
     .call = tz_utc},
};

int cm__evstore_add_tz(cm_db_conn_t *conn)
{
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        int rc = cm_db_conn_add_function(conn, &fns[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}
