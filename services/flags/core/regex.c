/*
 * regex.c - see regex.h.
 *
 * The pattern is classified once, when the definitions load:
 *   1. portable(): posthog-node's scan for its portable ASCII subset;
 *   2. js_valid(): would `new RegExp(p)` (no flags) throw? Only the syntax
 *      the portable subset can still contain is checked: quantifiers with
 *      nothing to repeat, {n,m} out of order, unbalanced parentheses,
 *      unterminated classes, reversed class ranges, a trailing backslash;
 *   3. every class must also compile in JavaScript's 'u' mode (no class
 *      escape as a range end, no identity escape of non-syntax characters).
 * Then PCRE2 compiles the pattern (with \v spelled \x0b).
 */
#include "core/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "compat/text.h"

typedef enum { NODE_OK, NODE_DEFER, NODE_SYNTAX } node_class_t;

struct flg_regex {
    bool empty;
    node_class_t node;
    pcre2_code *code;          /* NULL if PCRE2 rejected the pattern */
    pcre2_match_context *mctx; /* carries the limits */
};

/* ---- 1. posthog-node's portable subset ----------------------------------------------- */

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f');
}

/* Escaped spaces and ASCII punctuation that both engines read as literals. */
static bool literal_punct(char c)
{
    return (c >= 0x20 && c <= 0x2f) || c == ':' || c == ';' || c == '=' || c == '?' || c == '@' ||
           (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
}

/* "{n}" / "{n,}" / "{n,m}" at p[i]: its length, or 0. Counts above 2^32-1 fail. */
static size_t braced_quantifier(const char *p, size_t n, size_t i, uint64_t *lo, uint64_t *hi,
                                bool *has_hi)
{
    size_t j = i + 1;
    uint64_t v = 0;
    size_t d = 0;
    while (j < n && p[j] >= '0' && p[j] <= '9') {
        v = v > 0xffffffffull ? v : v * 10 + (uint64_t)(p[j] - '0');
        j++, d++;
    }
    if (!d || v > 0xffffffffull)
        return 0;
    *lo = v;
    *has_hi = false;
    if (j < n && p[j] == ',') {
        j++;
        uint64_t w = 0;
        size_t e = 0;
        while (j < n && p[j] >= '0' && p[j] <= '9') {
            w = w > 0xffffffffull ? w : w * 10 + (uint64_t)(p[j] - '0');
            j++, e++;
        }
        if (w > 0xffffffffull)
            return 0;
        *has_hi = e > 0;
        *hi = w;
    }
    if (j >= n || p[j] != '}')
        return 0;
    return j + 1 - i;
}

/* c is one of the characters of set (never true for NUL). */
static bool in_set(char c, const char *set)
{
    return c && strchr(set, c);
}

/* The previous token of the scan: a character, or one of these. */
#define PV_NONE        (-1)
#define PV_LITERAL     (-2)
#define PV_EMPTY_GROUP (-3)

static bool portable(const char *p, size_t n)
{
    long cls = -1; /* index of the open '[' */
    int prev = PV_NONE;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if ((unsigned char)c > 0x7f)
            return false;
        if (c == '\\') {
            if (++i >= n)
                break; /* JavaScript then rejects the pattern */
            char e = p[i];
            if (e == 'x') {
                if (i + 2 >= n || !is_hex(p[i + 1]) || !is_hex(p[i + 2]))
                    return false;
                i += 2;
            } else if (!in_set(e, "dDsSwWbBfnrtv") && !literal_punct(e)) {
                return false;
            }
            if (cls == -1 && (e == 'b' || e == 'B'))
                return false; /* word boundaries can exhaust the server's backtrack limit */
            prev = PV_LITERAL;
            continue;
        }
        if (c == '[') {
            if (cls != -1)
                return false;
            cls = (long)i;
        } else if (c == ']' && cls != -1) {
            size_t content = (size_t)cls + ((size_t)cls + 1 < n && p[cls + 1] == '^' ? 2 : 1);
            if (i == content)
                return false; /* [] and [^] mean different things to the engines */
            cls = -1;
            prev = PV_LITERAL;
            continue;
        } else if (cls != -1) {
            if (i + 1 < n && p[i + 1] == c && in_set(c, "&-~"))
                return false; /* set operations of the newer class syntaxes */
            continue;
        } else if (c == '(' && i + 1 < n && p[i + 1] == '?') {
            if (i + 2 >= n || p[i + 2] != ':')
                return false;
            i += 2;
        } else if (c == '{') {
            uint64_t lo, hi;
            bool has_hi;
            if (!braced_quantifier(p, n, i, &lo, &hi, &has_hi) || prev == PV_NONE || prev == '|' ||
                prev == '(')
                return false;
        } else if (in_set(c, "*+?}") && i + 1 < n && (p[i + 1] == '+' || p[i + 1] == '{')) {
            return false; /* possessive or stacked quantifiers */
        }
        if (in_set(c, "*+?{") && (prev == '^' || prev == '$' || prev == PV_EMPTY_GROUP))
            return false;
        prev = (c == ')' && (prev == '(' || prev == PV_EMPTY_GROUP)) ? PV_EMPTY_GROUP : c;
    }
    return true;
}

/* ---- 2 and 3. JavaScript syntax (non-unicode), and classes in 'u' mode --------------- */

typedef struct {
    bool syntax_error; /* `new RegExp(p)` throws */
    bool u_error;      /* the class alone would throw with the 'u' flag */
} class_check_t;

/* One class atom at p[*j]: its code (or -1 for \d-like classes); flags u-mode trouble. */
static int class_atom(const char *p, size_t n, size_t *j, class_check_t *ck)
{
    if (p[*j] != '\\')
        return (unsigned char)p[(*j)++];
    if (*j + 1 >= n) {
        ck->syntax_error = true;
        (*j)++;
        return 0;
    }
    char e = p[*j + 1];
    *j += 2;
    switch (e) {
    case 'd':
    case 'D':
    case 's':
    case 'S':
    case 'w':
    case 'W': return -1;
    case 'b': return 0x08;
    case 'f': return 0x0c;
    case 'n': return 0x0a;
    case 'r': return 0x0d;
    case 't': return 0x09;
    case 'v': return 0x0b;
    case 'x': {
        int v = 0;
        for (int k = 0; k < 2 && *j < n; k++, (*j)++) {
            char h = p[*j];
            v = v * 16 + (h <= '9' ? h - '0' : (h | 32) - 'a' + 10);
        }
        return v;
    }
    default:
        /* 'u' mode only allows escaping syntax characters, '/' and '-' here. */
        if (!in_set(e, "^$\\.*+?()[]{}|/-"))
            ck->u_error = true;
        return (unsigned char)e;
    }
}

/* Parses the class starting at p[i] == '['; returns the index after ']'. */
static size_t check_class(const char *p, size_t n, size_t i, class_check_t *ck)
{
    size_t j = i + 1;
    if (j < n && p[j] == '^')
        j++;
    while (j < n && p[j] != ']') {
        int a = class_atom(p, n, &j, ck);
        if (j + 1 < n && p[j] == '-' && p[j + 1] != ']') {
            j++;
            int b = class_atom(p, n, &j, ck);
            if (a < 0 || b < 0)
                ck->u_error = true; /* Annex B allows it without 'u' */
            else if (a > b)
                ck->syntax_error = true;
        }
    }
    if (j >= n)
        ck->syntax_error = true; /* unterminated */
    return j + 1;
}

static class_check_t js_check(const char *p, size_t n)
{
    class_check_t ck = {false, false};
    size_t depth = 0, i = 0;
    bool atom = false; /* something a quantifier may follow */
    while (i < n && !ck.syntax_error) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 >= n) {
                ck.syntax_error = true;
                break;
            }
            i += p[i + 1] == 'x' ? 4 : 2;
            atom = true;
        } else if (c == '[') {
            i = check_class(p, n, i, &ck);
            atom = true;
        } else if (c == '(') {
            depth++;
            i += (i + 1 < n && p[i + 1] == '?') ? 3 : 1;
            atom = false;
        } else if (c == ')') {
            if (depth == 0)
                ck.syntax_error = true; /* unmatched ')' */
            else
                depth--;
            i++;
            atom = true;
        } else if (c == '|' || c == '^' || c == '$') {
            i++;
            atom = false;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (!atom) {
                ck.syntax_error = true; /* nothing to repeat */
                break;
            }
            if (c == '{') {
                uint64_t lo = 0, hi = 0;
                bool has_hi = false;
                size_t len = braced_quantifier(p, n, i, &lo, &hi, &has_hi);
                if (has_hi && lo > hi)
                    ck.syntax_error = true;
                i += len ? len : 1;
            } else {
                i++;
            }
            if (i < n && p[i] == '?')
                i++; /* lazy */
            atom = false;
        } else {
            i++;
            atom = true;
        }
    }
    if (depth != 0)
        ck.syntax_error = true;
    return ck;
}

/* ---- compile and match -------------------------------------------------------------- */

/* The pattern with every "\v" spelled "\x0b" (an escaped backslash is kept). */
static char *rewrite_vt(cm_slice_t pat, size_t *len)
{
    cm_buf_t b = CM_BUF_INIT;
    for (size_t i = 0; i < pat.len; i++) {
        if (pat.p[i] == '\\' && i + 1 < pat.len) {
            if (pat.p[i + 1] == 'v')
                cm_buf_append_cstr(&b, "\\x0b");
            else
                cm_buf_append(&b, pat.p + i, 2);
            i++;
        } else {
            cm_buf_putc(&b, pat.p[i]);
        }
    }
    cm_buf_putc(&b, 0); /* never empty, so detach gives a buffer */
    b.len--;
    return cm_buf_detach(&b, len);
}

static pcre2_code *compile(cm_slice_t pat)
{
    if (pat.len > FLG_REGEX_MAX_PATTERN)
        return NULL;
    size_t len;
    char *src = rewrite_vt(pat, &len);
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc)
        abort();
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int err;
    PCRE2_SIZE off;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)src, len,
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY |
                                         PCRE2_NEVER_BACKSLASH_C | PCRE2_MATCH_INVALID_UTF,
                                     &err, &off, cc);
    pcre2_compile_context_free(cc);
    free(src);
    return code;
}

flg_regex_t *flg_regex_new(cm_slice_t pattern)
{
    flg_regex_t *re = cm_xcalloc(1, sizeof *re);
    re->empty = pattern.len == 0;
    if (!portable(pattern.p, pattern.len)) {
        re->node = NODE_DEFER;
    } else {
        class_check_t ck = js_check(pattern.p, pattern.len);
        re->node = ck.syntax_error ? NODE_SYNTAX : ck.u_error ? NODE_DEFER : NODE_OK;
    }
    re->code = compile(pattern);
    re->mctx = pcre2_match_context_create(NULL);
    if (!re->mctx)
        abort();
    pcre2_set_match_limit(re->mctx, FLG_REGEX_MATCH_LIMIT);
    pcre2_set_heap_limit(re->mctx, FLG_REGEX_HEAP_LIMIT_KIB);
    return re;
}

void flg_regex_free(flg_regex_t *re)
{
    if (!re)
        return;
    pcre2_code_free(re->code);
    pcre2_match_context_free(re->mctx);
    free(re);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static flg_rx_result_t run(const flg_regex_t *re, cm_slice_t subject, flg_rx_budget_t *budget)
{
    bool timed = budget != NULL && budget->limit_ns > 0;
    if (timed && budget->spent_ns >= budget->limit_ns) {
        budget->exhausted = true;
        return FLG_RX_LIMIT;
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        abort();
    uint64_t t0 = timed ? now_ns() : 0;
    int rc = pcre2_match(re->code, (PCRE2_SPTR)(subject.p ? subject.p : ""), subject.len, 0, 0, md,
                         re->mctx);
    if (timed)
        budget->spent_ns += now_ns() - t0;
    pcre2_match_data_free(md);
    if (rc >= 0)
        return FLG_RX_MATCH;
    if (rc == PCRE2_ERROR_NOMATCH)
        return FLG_RX_NOMATCH;
    return FLG_RX_LIMIT; /* match, depth or heap limit, or an engine error */
}

flg_rx_result_t flg_regex_test_node(const flg_regex_t *re, cm_slice_t subject,
                                    flg_rx_budget_t *budget)
{
    if (re->empty)
        return FLG_RX_MATCH;
    if (re->node == NODE_DEFER)
        return FLG_RX_DEFER;
    if (re->node == NODE_SYNTAX)
        return FLG_RX_INVALID;
    if (!flg_is_ascii_without_cr(subject))
        return FLG_RX_DEFER;
    if (!re->code)
        return FLG_RX_LIMIT; /* valid JavaScript that PCRE2 cannot compile */
    return run(re, subject, budget);
}

flg_rx_result_t flg_regex_test_server(const flg_regex_t *re, cm_slice_t subject,
                                      flg_rx_budget_t *budget)
{
    if (!re->code)
        return FLG_RX_INVALID;
    return run(re, subject, budget);
}
