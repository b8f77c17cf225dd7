/*
 * regex.h - the checks a constant regular expression passes before it is
 * printed (regex.c). ClickHouse reads patterns as RE2 does; SQLite runs
 * them through PCRE2 (libcommon's db/db_sqlite_re.c). The two agree on
 * RE2's syntax, so what PCRE2 would read differently (lookarounds,
 * backreferences, possessive and atomic forms, \Z, ...) is refused on
 * both stores alike, as is a pattern PCRE2 cannot compile.
 */
#ifndef API_QUERY_REGEX_H
#define API_QUERY_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"

typedef struct {
    unsigned groups;      /* capturing groups */
    bool can_match_empty; /* its shortest match may be empty */
} q_regex_info_t;

/* true with *info, or false with the reason in err (for the user). */
bool q_regex_check(cm_slice_t pattern, q_regex_info_t *info, cm_buf_t *err);

/* A replacement of replaceRegexpOne/All: \0 to \9 name groups (at most
 * groups), \\ a backslash; any other backslash is refused (ClickHouse
 * versions read it differently). */
bool q_regex_check_replacement(cm_slice_t repl, unsigned groups, cm_buf_t *err);

#endif
