/* evstore_sql.c - see cm/evstore_sql.h. */
#include "cm/evstore_sql.h"

#include <stdbool.h>

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
