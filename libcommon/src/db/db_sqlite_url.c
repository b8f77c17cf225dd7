/*
 * db_sqlite_url.c - ClickHouse 18.16's URL functions as SQLite functions,
 * byte for byte (the query compiler prints calls to them; the
 * differential corpus checks them against ClickHouse):
 *
 *   cm_domain(u)         domain(u): the host after "scheme://" (or "//"),
 *                        past the last '@' seen before ':', '/', '?' or
 *                        '#'; '' without "//" (no scheme, no host)
 *   cm_path(u)           path(u): from the first '/' after "//host" to '?'
 *                        or '#'; '' when the text has no "//" first
 *   cm_url_param(u, k)   extractURLParameter(u, k): the value of the first
 *                        "k=" right after '?', '#' or '&' (searched from
 *                        the first '?' or '#'), up to '&' or '#'; not
 *                        decoded; '' when absent
 *   cm_cut_query(u)      cutQueryString(u): u without "?..." up to '#'
 *   cm_decode_url(s)     decodeURLComponent(s): %XX (either case) as its
 *                        byte; '+' and a malformed '%' kept as they are
 *   cm_reverse(s)        reverse(s): the bytes in reverse order
 *
 * NULL in, NULL out. Text is read up to its first NUL byte where
 * ClickHouse's code does (the parameter search), else whole.
 */
#include <stdbool.h>
#include <string.h>

#include <sqlite3.h>

#include "db_sqlite_ch.h"

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *find(const char *p, const char *end, char c)
{
    const char *r = memchr(p, c, (size_t)(end - p));
    return r ? r : end;
}

static const char *find2(const char *p, const char *end, char a, char b)
{
    for (; p < end; p++)
        if (*p == a || *p == b)
            break;
    return p;
}

/* The host of [s, end), as ClickHouse's getURLHost: empty when none. */
static void url_host(const char *s, const char *end, const char **out, size_t *n)
{
    *out = s;
    *n = 0;
    const char *pos = find(s, end, '/');
    if (pos == end)
        return;
    if (pos != s) {
        /* a scheme (a letter, then letters, digits, '+', '-', '.') then ':' */
        const char *se = s;
        if (is_alpha(*se))
            for (++se; se < end; se++)
                if (!(is_alpha(*se) || is_digit(*se) || *se == '+' || *se == '-' || *se == '.'))
                    break;
        if (pos - se != 1 || *se != ':')
            return;
    }
    if (end - pos < 2 || pos[1] != '/')
        return;
    pos += 2;
    const char *host = pos;
    for (; pos < end; pos++) {
        if (*pos == '@')
            host = pos + 1;
        else if (*pos == ':' || *pos == '/' || *pos == '?' || *pos == '#')
            break;
    }
    if (pos > host) {
        *out = host;
        *n = (size_t)(pos - host);
    }
}

/* The path of [s, end), as ClickHouse 18.16's path(). */
static void url_path(const char *s, const char *end, const char **out, size_t *n)
{
    *out = s;
    *n = 0;
    const char *pos = find(s, end, '/');
    if (pos == end || pos + 1 >= end || pos[1] != '/')
        return;
    pos = find(pos + 2, end, '/');
    if (pos == end)
        return;
    *out = pos;
    *n = (size_t)(find2(pos, end, '?', '#') - pos);
}

static bool text_arg(sqlite3_value *v, const char **s, const char **end)
{
    if (sqlite3_value_type(v) == SQLITE_NULL)
        return false;
    const unsigned char *t = sqlite3_value_text(v);
    int n = sqlite3_value_bytes(v);
    *s = t ? (const char *)t : "";
    *end = *s + (t ? n : 0);
    return true;
}

static void host_or_path(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *s, *end, *out;
    size_t n;
    if (!text_arg(argv[0], &s, &end)) {
        sqlite3_result_null(ctx);
        return;
    }
    if (sqlite3_user_data(ctx) != NULL)
        url_host(s, end, &out, &n);
    else
        url_path(s, end, &out, &n);
    sqlite3_result_text(ctx, out, (int)n, SQLITE_TRANSIENT);
}

/* extractURLParameter: strstr-based as ClickHouse's, so text ends at NUL. */
static void url_param(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *s, *end, *k, *kend;
    if (!text_arg(argv[0], &s, &end) || !text_arg(argv[1], &k, &kend)) {
        sqlite3_result_null(ctx);
        return;
    }
    (void)end;
    (void)kend;
    size_t klen = strlen(k);
    char *needle = sqlite3_malloc64(klen + 2); /* "k=" */
    if (needle == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    memcpy(needle, k, klen);
    memcpy(needle + klen, "=", 2);
    const char *pos = strpbrk(s, "?#");
    if (pos != NULL)
        pos++;
    while (pos != NULL && (pos = strstr(pos, needle)) != NULL) {
        bool at_start = pos[-1] == '?' || pos[-1] == '#' || pos[-1] == '&';
        pos += klen + 1;
        if (!at_start)
            continue;
        const char *v_end = strpbrk(pos, "&#");
        size_t n = v_end ? (size_t)(v_end - pos) : strlen(pos);
        sqlite3_free(needle);
        sqlite3_result_text(ctx, pos, (int)n, SQLITE_TRANSIENT);
        return;
    }
    sqlite3_free(needle);
    sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
}

static void cut_query(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *s, *end;
    if (!text_arg(argv[0], &s, &end)) {
        sqlite3_result_null(ctx);
        return;
    }
    const char *q = find(s, end, '?');
    if (q == end) {
        sqlite3_result_text(ctx, s, (int)(end - s), SQLITE_TRANSIENT);
        return;
    }
    const char *frag = find(q, end, '#');
    size_t head = (size_t)(q - s), tail = (size_t)(end - frag);
    char *out = sqlite3_malloc64(head + tail + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    memcpy(out, s, head);
    memcpy(out + head, frag, tail);
    sqlite3_result_text(ctx, out, (int)(head + tail), sqlite3_free);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* decodeURLComponent (reverse with user data): the result is never longer */
static void decode_or_reverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *s, *end;
    if (!text_arg(argv[0], &s, &end)) {
        sqlite3_result_null(ctx);
        return;
    }
    size_t n = (size_t)(end - s), w = 0;
    char *out = sqlite3_malloc64(n + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    bool reverse = sqlite3_user_data(ctx) != NULL;
    for (size_t i = 0; i < n; i++) {
        if (reverse) {
            out[w++] = s[n - 1 - i];
            continue;
        }
        int hi = s[i] == '%' && i + 2 < n ? hexval(s[i + 1]) : -1;
        int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
        if (hi >= 0 && lo >= 0) {
            out[w++] = (char)(hi * 16 + lo);
            i += 2;
            continue;
        }
        out[w++] = s[i];
    }
    sqlite3_result_text(ctx, out, (int)w, sqlite3_free);
}

int cm__sqlite_add_url_fns(sqlite3 *db)
{
    static int reverse_tag;
    static int host_tag;
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function_v2(db, "cm_domain", 1, flags, &host_tag, host_or_path, NULL,
                                        NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_path", 1, flags, NULL, host_or_path, NULL, NULL,
                                        NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_url_param", 2, flags, NULL, url_param, NULL, NULL,
                                        NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_cut_query", 1, flags, NULL, cut_query, NULL, NULL,
                                        NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_decode_url", 1, flags, NULL, decode_or_reverse,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_reverse", 1, flags, &reverse_tag, decode_or_reverse,
                                        NULL, NULL, NULL);
    return rc;
}
