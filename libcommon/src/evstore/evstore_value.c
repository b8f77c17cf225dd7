/*
 * evstore_value.c - an answer's values read by their column's type (see
 * cm/event_store.h). The stores give text: SQLite's as its own, ClickHouse's
 * as its TabSeparated output, where 18.16 prints the epoch as zeros and a
 * DateTime as "YYYY-MM-DD hh:mm:ss"; both must answer a client alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "cm/event_store.h"
#include "cm/tzone.h"
#include "evstore_internal.h"

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static void write_integer(cm_json_writer_t *w, const char *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (*end == '\0' && end != v && errno == ERANGE && v[0] != '-') {
        /* a UInt64 past Int64 (cityHash64): its own digits, not a clamp */
        cm_json_uint(w, strtoull(v, NULL, 10));
    } else if (*end == '\0' && end != v && errno != ERANGE) {
        cm_json_int(w, n);
    } else if (*end == '\0' && end != v) {
        cm_json_str_cstr(w, v);                           /* below Int64: kept exact as text */
    } else if (*end == '.' || *end == 'e' || *end == 'E') /* a float the store kept */
        cm_json_dbl(w, strtod(v, NULL));
    else
        cm_json_str_cstr(w, v);
}

static void write_float(cm_json_writer_t *w, const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(d))
        cm_json_null(w); /* nan (ClickHouse's avg of nothing), inf */
    else
        cm_json_dbl(w, d);
}

void cm_evstore_write_value(cm_json_writer_t *w, const char *type, const char *v)
{
    if (v == NULL) {
        cm_json_null(w);
        return;
    }
    const char *t = has_prefix(type, "Nullable(") ? type + 9 : type;
    if (has_prefix(t, "Array(") || has_prefix(t, "Tuple")) {
        cm_evstore__write_array(w, has_prefix(t, "Tuple") ? "" : t, v);
        return;
    }
    if (has_prefix(t, "Int64") || has_prefix(t, "UInt8")) {
        write_integer(w, v);
        return;
    }
    if (has_prefix(t, "Float64")) {
        write_float(w, v);
        return;
    }
    /* ClickHouse 18.16 prints the epoch as zeros */
    if (has_prefix(t, "DateTime") && strcmp(v, "0000-00-00 00:00:00") == 0)
        v = "1970-01-01 00:00:00";
    if (has_prefix(t, "Date") && strcmp(v, "0000-00-00") == 0)
        v = "1970-01-01";
    if (has_prefix(t, "DateTime") && strlen(v) == 19 && v[10] == ' ') {
        char iso[24];
        snprintf(iso, sizeof(iso), "%.10sT%.8sZ", v, v + 11);
        cm_json_str_cstr(w, iso);
        return;
    }
    cm_json_str_cstr(w, v);
}

bool cm_evstore_type_zone(const char *type, char *out, size_t cap)
{
    const char *t = has_prefix(type, "Nullable(") ? type + 9 : type;
    if (!has_prefix(t, "DateTime('"))
        return false;
    t += 10;
    const char *end = strchr(t, '\'');
    if (end == NULL || (size_t)(end - t) >= cap)
        return false;
    memcpy(out, t, (size_t)(end - t));
    out[end - t] = '\0';
    return true;
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

void cm_evstore_write_value_tz(cm_json_writer_t *w, const char *type, const char *v,
                               const struct cm_tzone *zone)
{
    int y, mo, d, h, mi, se, n = 0;
    if (v != NULL && strcmp(v, "0000-00-00 00:00:00") == 0)
        v = "1970-01-01 00:00:00";
    if (zone == NULL || v == NULL || strlen(v) != 19 ||
        sscanf(v, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 || n != 19) {
        cm_evstore_write_value(w, type, v);
        return;
    }
    int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    int32_t off = cm_tzone_offset(zone, t);
    int64_t l = t + off;
    int64_t days = l >= 0 ? l / 86400 : -((-l + 86399) / 86400);
    int64_t sec = l - days * 86400;
    /* civil from days */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int dd = (int)(doy - (153 * mp + 2) / 5 + 1), mm = (int)(mp < 10 ? mp + 3 : mp - 9);
    int64_t yy = yoe + era * 400 + (mm <= 2);
    char iso[48], tz[16] = "Z";
    if (off != 0) {
        int32_t a = off < 0 ? -off : off;
        snprintf(tz, sizeof(tz), "%c%02d:%02d", off < 0 ? '-' : '+', (int)(a / 3600),
                 (int)(a / 60 % 60));
    }
    snprintf(iso, sizeof(iso), "%04d-%02d-%02dT%02d:%02d:%02d%s", (int)yy, mm, dd,
             (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60), tz);
    cm_json_str_cstr(w, iso);
}
