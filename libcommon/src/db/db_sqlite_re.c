/*
 * db_sqlite_re.c - ClickHouse's regular-expression functions as SQLite
 * functions, through PCRE2 (the query compiler has already refused what
 * PCRE2 would read otherwise than RE2, ClickHouse's engine: query/regex.c):
 *
 *   cm_match(h, p)            match(h, p): 1 if p matches anywhere in h
 *   cm_extract(h, p)          extract(h, p): the first match, or its first
 *                             group when p has groups; '' for none
 *   cm_replace_one(h, p, r)   replaceRegexpOne / replaceRegexpAll: the
 *   cm_replace_all(h, p, r)   first (every) match replaced by r, where \0
 *                             to \9 are the match and its groups, \\ a
 *                             backslash
 *
 * As ClickHouse: UTF-8, '$' only at the very end, and '.' takes a newline
 * in match and extract (not in the replacements). NULL in, NULL out.
 * Each statement compiles a pattern once (SQLite's auxiliary data keeps
 * it beside the constant argument); PCRE2's match and depth limits bound
 * a backtracking pattern, which then fails the query instead of holding
 * a worker thread.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "cm/regex.h"
#include "db_sqlite_ch.h"

#define MATCH_LIMIT 1000000u /* backtracking steps per match */
#define DEPTH_LIMIT 10000u
#define HEAP_LIMIT  (16u * 1024) /* KiB */

typedef struct {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mc;
} re_t;

static void re_free(void *p)
{
    re_t *re = p;
    if (re == NULL)
        return;
    pcre2_match_data_free(re->md);
    pcre2_match_context_free(re->mc);
    pcre2_code_free(re->code);
    sqlite3_free(re);
}

/* The compiled pattern of argument 1, from the statement's cache or new;
 * NULL with the error set. */
static re_t *re_get(sqlite3_context *ctx, sqlite3_value *pat, bool dotall)
{
    re_t *re = sqlite3_get_auxdata(ctx, 1);
    if (re != NULL)
        return re;
    const char *p = (const char *)sqlite3_value_text(pat);
    int n = sqlite3_value_bytes(pat);
    re = sqlite3_malloc(sizeof(*re));
    if (re == NULL || p == NULL) {
        sqlite3_free(re);
        sqlite3_result_error_nomem(ctx);
        return NULL;
    }
    memset(re, 0, sizeof(*re));
    /* a pattern the compiler could not see (a column's): RE2's syntax too */
    cm_buf_t why = CM_BUF_INIT;
    cm_regex_info_t info;
    if (!cm_regex_check((cm_slice_t){p, (size_t)n}, &info, &why)) {
        char msg[320];
        snprintf(msg, sizeof(msg), "invalid regular expression: %.*s", (int)why.len, why.p);
        cm_buf_free(&why);
        re_free(re);
        sqlite3_result_error(ctx, msg, -1);
        return NULL;
    }
    cm_buf_free(&why);
    int code = 0;
    PCRE2_SIZE at = 0;
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY;
    re->code = pcre2_compile((PCRE2_SPTR)p, (size_t)n, opts | (dotall ? PCRE2_DOTALL : 0), &code,
                             &at, NULL);
    if (re->code == NULL) {
        re_free(re);
        sqlite3_result_error(ctx, "invalid regular expression", -1);
        return NULL;
    }
    re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    re->mc = pcre2_match_context_create(NULL);
    if (re->md == NULL || re->mc == NULL) {
        re_free(re);
        sqlite3_result_error_nomem(ctx);
        return NULL;
    }
    pcre2_set_match_limit(re->mc, MATCH_LIMIT);
    pcre2_set_depth_limit(re->mc, DEPTH_LIMIT);
    pcre2_set_heap_limit(re->mc, HEAP_LIMIT);
    sqlite3_set_auxdata(ctx, 1, re, re_free);
    /* SQLite frees it at once when it cannot keep it (out of memory);
     * a pattern that varies by row is dropped after this call */
    re_t *kept = sqlite3_get_auxdata(ctx, 1);
    if (kept == NULL)
        sqlite3_result_error_nomem(ctx);
    return kept;
}

/* 1 matched, 0 not, -1 failed (the error set). */
static int re_run(sqlite3_context *ctx, re_t *re, const char *s, size_t n, size_t from)
{
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, from, 0, re->md, re->mc);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    sqlite3_result_error(ctx,
                         rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
                                 rc == PCRE2_ERROR_HEAPLIMIT
                             ? "regular expression too costly on this input (SQLite store's limit)"
                             : "regular expression failed",
                         -1);
    return -1;
}

static bool args(sqlite3_context *ctx, int argc, sqlite3_value **argv, const char **s, size_t *n)
{
    for (int i = 0; i < argc; i++)
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
            sqlite3_result_null(ctx);
            return false;
        }
    const unsigned char *t = sqlite3_value_text(argv[0]);
    if (t == NULL) {
        sqlite3_result_error_nomem(ctx);
        return false;
    }
    *s = (const char *)t;
    *n = (size_t)sqlite3_value_bytes(argv[0]);
    return true;
}

static void match_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *s;
    size_t n;
    if (!args(ctx, argc, argv, &s, &n))
        return;
    re_t *re = re_get(ctx, argv[1], true);
    int m = re ? re_run(ctx, re, s, n, 0) : -1;
    if (m >= 0)
        sqlite3_result_int(ctx, m);
}

static void extract_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *s;
    size_t n;
    if (!args(ctx, argc, argv, &s, &n))
        return;
    re_t *re = re_get(ctx, argv[1], true);
    int m = re ? re_run(ctx, re, s, n, 0) : -1;
    if (m < 0)
        return;
    if (m == 0) {
        sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
        return;
    }
    uint32_t groups = 0;
    pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &groups);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
    size_t g = groups > 0 ? 1 : 0;
    if (ov[2 * g] == PCRE2_UNSET) {
        sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
        return;
    }
    sqlite3_result_text(ctx, s + ov[2 * g], (int)(ov[2 * g + 1] - ov[2 * g]), SQLITE_TRANSIENT);
}

/* out += r with \0..\9 from the last match of s. */
static void substitute(sqlite3_str *out, const char *r, size_t rn, const char *s,
                       const PCRE2_SIZE *ov, uint32_t pairs)
{
    for (size_t i = 0; i < rn; i++) {
        if (r[i] == '\\' && i + 1 < rn && r[i + 1] >= '0' && r[i + 1] <= '9') {
            uint32_t g = (uint32_t)(r[++i] - '0');
            if (g < pairs && ov[2 * g] != PCRE2_UNSET)
                sqlite3_str_append(out, s + ov[2 * g], (int)(ov[2 * g + 1] - ov[2 * g]));
            continue;
        }
        if (r[i] == '\\' && i + 1 < rn && r[i + 1] == '\\')
            i++;
        sqlite3_str_append(out, r + i, 1);
    }
}

static void replace_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    bool all = sqlite3_user_data(ctx) != NULL;
    const char *s;
    size_t n;
    if (!args(ctx, argc, argv, &s, &n))
        return;
    re_t *re = re_get(ctx, argv[1], false);
    if (re == NULL)
        return;
    const char *r = (const char *)sqlite3_value_text(argv[2]);
    size_t rn = (size_t)sqlite3_value_bytes(argv[2]);
    if (r == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_str *out = sqlite3_str_new(sqlite3_context_db_handle(ctx));
    uint32_t pairs = pcre2_get_ovector_count(re->md);
    size_t last = 0;
    int m;
    while (last <= n && (m = re_run(ctx, re, s, n, last)) == 1) {
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
        sqlite3_str_append(out, s + last, (int)(ov[0] - last));
        substitute(out, r, rn, s, ov, pairs);
        bool empty = ov[1] == ov[0];
        last = ov[1];
        /* ClickHouse 18.16 stops after an empty match (the compiler
         * refuses such patterns for replaceRegexpAll: 21+ goes on) */
        if (!all || empty)
            break;
    }
    if (m < 0) {
        sqlite3_free(sqlite3_str_finish(out));
        return;
    }
    sqlite3_str_append(out, s + last, (int)(n - last));
    int len = sqlite3_str_length(out);
    char *txt = sqlite3_str_finish(out);
    if (txt == NULL && len > 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, txt ? txt : "", len, txt ? sqlite3_free : SQLITE_STATIC);
}

int cm__sqlite_add_re_fns(sqlite3 *db)
{
    static int all_tag;
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function_v2(db, "cm_match", 2, flags, NULL, match_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_extract", 2, flags, NULL, extract_fn, NULL, NULL,
                                        NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_replace_one", 3, flags, NULL, replace_fn, NULL,
                                        NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_replace_all", 3, flags, &all_tag, replace_fn, NULL,
                                        NULL, NULL);
    return rc;
}
