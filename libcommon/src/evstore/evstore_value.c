/*
 * evstore_value.c - an answer's values read by their column's type (see
 * cm/event_store.h). The stores give text: SQLite's as its own, ClickHouse's
 * as its TabSeparated output, where 18.16 prints the epoch as zeros and a
 * DateTime as "YYYY-MM-DD hh:mm:ss"; both must answer a client alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/event_store.h"
#include "evstore_internal.h"

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static void write_integer(cm_json_writer_t *w, const char *v)
{
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end == '\0' && end != v)
        cm_json_int(w, n);
    else if (*end == '.' || *end == 'e' || *end == 'E') /* a float the store kept */
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
