/* evstore_sql.c - see cm/evstore_sql.h. */
#include "cm/evstore_sql.h"

#include <stdbool.h>
#include <stdlib.h>

/* SQLite: only ' is special (doubled). ClickHouse: backslash escapes, and
 * its parser also stops at NUL, so control bytes are written as \xHH. */
void cm_evstore_sql_quote(cm_evstore_dialect_t d, cm_buf_t *out, cm_slice_t s)
{
    bool ch = d != CM_EVSTORE_SQL_SQLITE;
    cm_buf_putc(out, '\'');
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c == '\'')
            cm_buf_append_cstr(out, ch ? "\\'" : "''");
        else if (ch && c == '\\')
            cm_buf_append_cstr(out, "\\\\");
        else if (ch && c < 0x20)
            cm_buf_appendf(out, "\\x%02x", c);
        else
            cm_buf_putc(out, (char)c);
    }
    cm_buf_putc(out, '\'');
}

/* "major.minor..." -> major * 1000 + minor; 0 for what does not start so. */
static long version_number(const char *version)
{
    if (version == NULL || *version < '0' || *version > '9')
        return 0;
    char *end;
    long major = strtol(version, &end, 10);
    long minor = 0;
    if (*end == '.' && end[1] >= '0' && end[1] <= '9')
        minor = strtol(end + 1, NULL, 10);
    if (major < 0 || major > 100000 || minor < 0 || minor > 999)
        return major > 100000 ? 100000L * 1000 : 0; /* a huge major is still a newer one */
    return major * 1000 + minor;
}

cm_evstore_dialect_t cm_evstore_sql_clickhouse_dialect(const char *version)
{
    long v = version_number(version);
    if (v >= 24000) /* and any later major: the new analyzer's rules */
        return CM_EVSTORE_SQL_CLICKHOUSE_24;
    if (v >= 21008)
        return CM_EVSTORE_SQL_CLICKHOUSE_MODERN;
    return CM_EVSTORE_SQL_CLICKHOUSE_1816;
}

const char *cm_evstore_sql_clickhouse_settings(const char *version)
{
    long v = version_number(version);
    if (v / 1000 == 21 && v % 1000 == 8)
        return "&allow_experimental_window_functions=1";
    if (v / 1000 == 23 && v % 1000 >= 4)
        return "&formatdatetime_parsedatetime_m_is_month_name=0";
    return "";
}
