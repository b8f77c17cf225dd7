/*
 * db_regex.c - a regular expression checked for RE2's syntax as PCRE2
 * reads it (cm/regex.h). ClickHouse reads patterns as RE2 does; SQLite
 * runs them through PCRE2 (db_sqlite_re.c): the scan refuses the PCRE2
 * forms RE2 lacks, then PCRE2 compiles the pattern with the options the
 * SQLite side uses, so that what one store would read otherwise is
 * refused on both. The query compiler checks constant patterns with it;
 * SQLite's functions check the others as they meet them.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "cm/regex.h"

#include <pcre2.h>
#include <string.h>

/* PCRE2's forms RE2 does not have (or reads otherwise), found outside
 * character classes; NULL when there is none. */
static const char *non_re2(const char *p, size_t n)
{
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 >= n)
                return NULL; /* PCRE2 refuses a trailing backslash */
            char d = p[++i];
            if (d >= '0' && d <= '9')
                return "backreferences and octal escapes (\\0 to \\9)";
            if (strchr("gkZGKRXhHvVNCuUlLeoc", d) != NULL)
                return "PCRE-only escapes (\\Z, \\h, \\v, \\K, ...)";
            if (d == 'Q') { /* literal text up to \E: both read it alike */
                const char *e = memmem(p + i, n - i, "\\E", 2);
                if (e == NULL)
                    return NULL;
                i = (size_t)(e - p) + 1;
            }
            continue;
        }
        if (in_class) {
            if (c == ']')
                in_class = false;
            continue;
        }
        if (c == '[') {
            in_class = true;
            if (i + 1 < n && p[i + 1] == '^')
                i++;
            if (i + 1 < n && p[i + 1] == ']')
                i++; /* a leading ']' is a member */
            continue;
        }
        if (c == '(' && i + 1 < n && (p[i + 1] == '*'))
            return "verbs such as (*UTF)";
        if (c == '(' && i + 2 < n && p[i + 1] == '?') {
            char d = p[i + 2];
            if (d == '=' || d == '!' || d == '<')
                return "lookahead, lookbehind, or (?<name>...) (write (?P<name>...))";
            if (strchr(">|R(&+#C0123456789", d) != NULL ||
                (d == 'P' && i + 3 < n && p[i + 3] != '<'))
                return "atomic groups, recursion, conditionals and callouts";
            if (d != ':' && d != 'P') { /* flags: RE2 has i, m, s and U */
                size_t j = i + 2;
                while (j < n && strchr("imsU-", p[j]) != NULL)
                    j++;
                if (j >= n || (p[j] != ':' && p[j] != ')'))
                    return "flags other than i, m, s and U";
            }
        }
        if ((c == '+' || c == '*' || c == '?' || c == '}') && i + 1 < n && p[i + 1] == '+')
            return "possessive quantifiers";
    }
    return NULL;
}

bool cm_regex_check(cm_slice_t pattern, cm_regex_info_t *info, cm_buf_t *err)
{
    if (pattern.len > CM_REGEX_MAX) {
        cm_buf_appendf(err, "A regular expression may be at most %u bytes", CM_REGEX_MAX);
        return false;
    }
    if (memchr(pattern.p, '\0', pattern.len) != NULL) {
        cm_buf_appendf(err, "A regular expression must not hold a NUL byte");
        return false;
    }
    const char *what = non_re2(pattern.p, pattern.len);
    if (what != NULL) {
        cm_buf_appendf(err,
                       "Regular expressions use RE2's syntax, which has no %s: "
                       "rewrite the pattern without them",
                       what);
        return false;
    }
    int code = 0;
    PCRE2_SIZE at = 0;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern.p, pattern.len,
                      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &code, &at, NULL);
    if (re == NULL) {
        PCRE2_UCHAR msg[160];
        if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
            strcpy((char *)msg, "invalid");
        cm_buf_appendf(err, "Invalid regular expression at offset %zu: %s", (size_t)at,
                       (const char *)msg);
        return false;
    }
    uint32_t groups = 0, minlen = 0;
    pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
    pcre2_pattern_info(re, PCRE2_INFO_MINLENGTH, &minlen);
    pcre2_code_free(re);
    info->groups = groups;
    info->can_match_empty = minlen == 0;
    return true;
}
