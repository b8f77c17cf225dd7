/*
 * regex.h - whether a regular expression reads the same in RE2
 * (ClickHouse's engine) and PCRE2 (the SQLite store's, db_sqlite_re.c):
 * lookarounds, backreferences, possessive and atomic forms, \Z and the
 * like are refused, as is a pattern PCRE2 cannot compile (db_regex.c).
 */
#ifndef CM_REGEX_H
#define CM_REGEX_H

#include <stdbool.h>

#include "cm/buf.h"

#define CM_REGEX_MAX 4096 /* bytes of a pattern */

typedef struct {
    unsigned groups;      /* capturing groups */
    bool can_match_empty; /* its shortest match may be empty */
} cm_regex_info_t;

/* true with *info, or false with the reason in err (for the user). */
bool cm_regex_check(cm_slice_t pattern, cm_regex_info_t *info, cm_buf_t *err);

#endif
