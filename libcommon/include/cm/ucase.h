/*
 * ucase.h - a Unicode code point's simple case mapping (ICU's u_tolower /
 * u_toupper: one code point to one code point), for ClickHouse's
 * lowerUTF8 / upperUTF8 on SQLite (db/db_sqlite_text.c).
 */
#ifndef CM_UCASE_H
#define CM_UCASE_H

#include <stdbool.h>
#include <stdint.h>

/* cp's upper-case (upper) or lower-case form, or cp when it has none. */
uint32_t cm_ucase_simple(uint32_t cp, bool upper);

#endif
