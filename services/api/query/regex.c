/*
 * regex.c - a constant pattern checked before it is printed (regex.h):
 * libcommon's cm_regex_check (RE2's syntax as PCRE2 reads it), and the
 * replacement's groups.
 */
#include "query/regex.h"

#include <string.h>

#include "cm/regex.h"

bool q_regex_check(cm_slice_t pattern, q_regex_info_t *info, cm_buf_t *err)
{
    cm_regex_info_t i;
    if (!cm_regex_check(pattern, &i, err))
        return false;
    info->groups = i.groups;
    info->can_match_empty = i.can_match_empty;
    return true;
}

bool q_regex_check_replacement(cm_slice_t repl, unsigned groups, cm_buf_t *err)
{
    for (size_t i = 0; i < repl.len; i++) {
        if (repl.p[i] != '\\')
            continue;
        char d = i + 1 < repl.len ? repl.p[i + 1] : '\0';
        if (d == '\\') {
            i++;
            continue;
        }
        if (d < '0' || d > '9') {
            cm_buf_appendf(err, "In a replacement, a backslash is followed by a digit (a group, "
                                "\\0 the whole match) or another backslash");
            return false;
        }
        if ((unsigned)(d - '0') > groups) {
            cm_buf_appendf(err, "The replacement names group \\%c, but the pattern has %u", d,
                           groups);
            return false;
        }
        i++;
    }
    return true;
}
