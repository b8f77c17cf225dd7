/*
 * print_fn_string.c - strings and JSON for SQLite and ClickHouse: strings
 * measured and cut in bytes, as ClickHouse does; JSONExtract* over a
 * properties column or a string holding JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/print_int.h"
#include "query/regex.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

/* ---- JSON ----------------------------------------------------------------------------------- */

/* SQLite: a JSON path from the keys after the document ('$."a"[0]'). */
static bool lite_path(q_printer_t *pr, const q_expr_t *e, cm_buf_t *path)
{
    cm_buf_append(path, "$", 1);
    for (size_t i = 1; i < e->args.n; i++) {
        const q_expr_t *k = ARG(i);
        if (k->kind == QE_INT && k->ival >= 1) {
            cm_buf_appendf(path, "[%" PRId64 "]", k->ival - 1);
            continue;
        }
        if (k->kind != QE_STRING || memchr(k->text.p, '"', k->text.len) != NULL ||
            memchr(k->text.p, '\0', k->text.len) != NULL) {
            q_pfail(pr, "JSON keys must be string constants without '\"' (or positions from 1)");
            return false;
        }
        cm_buf_appendf(path, ".\"%.*s\"", (int)k->text.len, k->text.p);
    }
    return true;
}

static void json_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (pr->ch) {
        if (!q_ch_modern(pr)) {
            q_pfail(pr, "%.*s needs ClickHouse 19.3 or later: read properties.<key> instead",
                    (int)e->text.len, e->text.p);
            return;
        }
        q_psame(pr, e->text.p, e);
        return;
    }
    cm_buf_t path;
    cm_buf_init(&path);
    if (!lite_path(pr, e, &path)) {
        cm_buf_free(&path);
        return;
    }
    cm_slice_t ps = cm_buf_slice(&path);
    const q_expr_t *doc = ARG(0);
    /* Not JSON at all: ClickHouse's answer for a missing key. */
    P("(CASE WHEN json_valid(");
    q_pexpr(pr, doc);
    P(") THEN ");
    const char *miss = "0";
    switch (id) {
    case Q_FN_JSON_HAS:
        P("(json_type(");
        q_pexpr(pr, doc);
        P(", ");
        q_pstring(pr, ps);
        P(") IS NOT NULL)");
        break;
    case Q_FN_JSON_RAW:
        miss = "''";
        P("coalesce(");
        q_pexpr(pr, doc);
        P(" -> ");
        q_pstring(pr, ps);
        P(", '')");
        break;
    default:
        P("(CASE json_type(");
        q_pexpr(pr, doc);
        P(", ");
        q_pstring(pr, ps);
        P(")");
        if (id == Q_FN_JSON_BOOL) {
            P(" WHEN 'true' THEN 1 ELSE 0 END)");
            break;
        }
        P(id == Q_FN_JSON_STRING ? " WHEN 'text' THEN " : " WHEN 'integer' THEN ");
        if (id == Q_FN_JSON_FLOAT)
            P("CAST(");
        q_pexpr(pr, doc);
        P(" ->> ");
        q_pstring(pr, ps);
        if (id == Q_FN_JSON_FLOAT) {
            P(" AS REAL) WHEN 'real' THEN ");
            q_pexpr(pr, doc);
            P(" ->> ");
            q_pstring(pr, ps);
        }
        miss = id == Q_FN_JSON_STRING ? "''" : id == Q_FN_JSON_FLOAT ? "0.0" : "0";
        PF(" ELSE %s END)", miss);
        break;
    }
    PF(" ELSE %s END)", miss);
    cm_buf_free(&path);
}

/* ---- strings -------------------------------------------------------------------------------- */

/* SQLite: x as bytes (ClickHouse measures and cuts strings in bytes). */
static void lite_blob(q_printer_t *pr, const q_expr_t *x)
{
    P("CAST(");
    q_pexpr(pr, x);
    P(" AS BLOB)");
}

/* trim / trimLeft / trimRight (side 'b', 'l', 'r'), of spaces or of the
 * characters a second argument lists (trim(LEADING 'xy' FROM s) is
 * trimLeft(s, 'xy')): SQLite's trim/ltrim/rtrim take the set as it is;
 * ClickHouse (18.16 has neither trimLeft nor the set) a regex class of it. */
static void ptrim(q_printer_t *pr, const q_expr_t *e, char side)
{
    cm_slice_t set = CM_SLICE_LIT(" ");
    if (e->args.n > 1 && !q_pconst_string(pr, ARG(1), "The characters to trim", &set))
        return;
    if (set.len == 0 || memchr(set.p, '\0', set.len) != NULL) {
        if (set.len == 0) { /* nothing to trim */
            q_pexpr(pr, ARG(0));
            return;
        }
        q_pfail(pr, "The characters to trim cannot hold a NUL byte");
        return;
    }
    if (!pr->ch) {
        P(side == 'l' ? "ltrim(" : side == 'r' ? "rtrim(" : "trim(");
        q_pexpr(pr, ARG(0));
        P(", ");
        q_pstring(pr, set);
        P(")");
        return;
    }
    cm_buf_t cls = CM_BUF_INIT, re = CM_BUF_INIT;
    cm_buf_putc(&cls, '[');
    for (size_t i = 0; i < set.len; i++) {
        if (strchr("\\]^-[", set.p[i]) != NULL)
            cm_buf_putc(&cls, '\\');
        cm_buf_putc(&cls, set.p[i]);
    }
    cm_buf_append_cstr(&cls, "]+");
    if (side != 'r')
        cm_buf_appendf(&re, "^%.*s", (int)cls.len, cls.p);
    if (side == 'b')
        cm_buf_putc(&re, '|');
    if (side != 'l')
        cm_buf_appendf(&re, "%.*s$", (int)cls.len, cls.p);
    P("replaceRegexpAll(");
    q_pexpr(pr, ARG(0));
    P(", ");
    q_pstring(pr, cm_buf_slice(&re));
    P(", '')");
    cm_buf_free(&cls);
    cm_buf_free(&re);
}

/* A constant integer argument's value (a literal, maybe negated). */
static bool const_int(const q_expr_t *e, int64_t *v)
{
    bool neg = e->kind == QE_NEG;
    if (neg)
        e = e->args.v[0];
    if (e->kind != QE_INT)
        return false;
    *v = neg ? -e->ival : e->ival;
    return true;
}

/* substring(s, offset[, length]) in bytes, as ClickHouse: offsets from 1
 * (negative ones from the end). ClickHouse 18.16 fails a constant offset
 * 0 ("Indices in strings are 1-based") and a negative constant length
 * over a column, answers '' for an offset that is 0 at run time, and
 * newer versions read a negative length as "up to that many bytes from
 * the end": the constant forms are refused on every store (resolve.c), an
 * offset 0 at run time gives '' on SQLite too (its substr counts 0 as the
 * position before the first). */
static void substring_fn(q_printer_t *pr, const q_expr_t *e)
{
    int64_t off = 1;
    bool off_const = const_int(ARG(1), &off); /* never 0: resolve.c refuses it */
    if (pr->ch) {
        q_psame(pr, "substring", e);
        return;
    }
    P("CAST(");
    if (!off_const) {
        P("CASE WHEN ");
        q_pexpr(pr, ARG(1));
        P(" = 0 THEN substr(");
        lite_blob(pr, ARG(0));
        P(", 1, 0) ELSE ");
    }
    P("substr(");
    lite_blob(pr, ARG(0));
    P(", ");
    q_pargs(pr, e, 1);
    P(")");
    if (!off_const)
        P(" END");
    P(" AS TEXT)");
}

static void string_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    switch (id) {
    case Q_FN_LENGTH:
        if (pr->ch)
            return q_psame(pr, "length", e);
        P("length(");
        lite_blob(pr, ARG(0));
        P(")");
        return;
    case Q_FN_CONCAT: /* NULL and non-strings as HogQL's concat: '' and their text */
        P("(");
        for (size_t i = 0; i < e->args.n; i++) {
            if (i)
                P(" || ");
            P(pr->ch ? "ifNull(toString(" : "coalesce(CAST(");
            q_pexpr(pr, ARG(i));
            P(pr->ch ? "), '')" : " AS TEXT), '')");
        }
        P(")");
        return;
    case Q_FN_SUBSTRING: substring_fn(pr, e); return;
    case Q_FN_TRIM: ptrim(pr, e, 'b'); return;
    case Q_FN_REPLACE_ALL: return q_psame(pr, pr->ch ? "replaceAll" : "replace", e);
    case Q_FN_POSITION:
        if (pr->ch)
            return q_psame(pr, "position", e);
        P("instr(");
        lite_blob(pr, ARG(0));
        P(", ");
        lite_blob(pr, ARG(1));
        P(")");
        return;
    case Q_FN_STARTS_WITH:
    case Q_FN_ENDS_WITH:
        if (pr->ch)
            return q_psame(pr, id == Q_FN_STARTS_WITH ? "startsWith" : "endsWith", e);
        P("(length(");
        lite_blob(pr, ARG(1));
        P(") = 0 OR substr(");
        lite_blob(pr, ARG(0));
        if (id == Q_FN_STARTS_WITH)
            P(", 1, length(");
        else
            P(", -length(");
        lite_blob(pr, ARG(1));
        P(")) = ");
        lite_blob(pr, ARG(1));
        P(")");
        return;
    case Q_FN_EMPTY:
    case Q_FN_NOT_EMPTY:
        P("(");
        q_pexpr(pr, ARG(0));
        P(id == Q_FN_EMPTY ? " = '')" : " != '')");
        return;
    }
}

/* ---- part F: trims, URLs, replaceOne ------------------------------------------------------- */

/* ClickHouse takes only strings where SQLite would read any value as
 * text: anything else is refused on both. */
static bool text_arg(q_printer_t *pr, const q_expr_t *e, size_t i)
{
    q_type_t t = ARG(i)->type;
    if (t == Q_T_STRING || t == Q_T_ANY || t == Q_T_NULL)
        return true;
    q_pfail(pr, "%.*s takes a string: convert with toString()", (int)e->text.len, e->text.p);
    return false;
}

/* URLs as ClickHouse 18.16 reads them: SQLite calls libcommon's
 * db/db_sqlite_url.c, which follows its code byte for byte. */
static void url_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    static const char *const ch[] = {"domain", "path", "extractURLParameter", "cutQueryString"};
    static const char *const lite[] = {"cm_domain", "cm_path", "cm_url_param", "cm_cut_query"};
    int k = id - Q_FN_DOMAIN;
    cm_slice_t name;
    if (!text_arg(pr, e, 0))
        return;
    if (id == Q_FN_URL_PARAM &&
        !q_pconst_string(pr, ARG(1), "The parameter name of extractURLParameter", &name))
        return;
    q_psame(pr, pr->ch ? ch[k] : lite[k], e);
}

/* A pattern that is one constant text in every row, appended to out: a
 * string, concat() of such (=~* puts (?i) in front), or a column of the
 * SELECT's only source, a subquery (no set of parts) whose column is such
 * a text: (SELECT '4' AS b) gives '4' in each of its rows. */
static bool const_pattern(const q_printer_t *pr, const q_expr_t *e, cm_buf_t *out, int depth)
{
    if (depth > 8)
        return false;
    if (e->kind == QE_STRING) {
        cm_buf_append(out, e->text.p, e->text.len);
        return true;
    }
    if (e->kind == QE_CALL && e->ival == Q_FN_CONCAT && e->over == NULL) {
        for (size_t i = 0; i < e->args.n; i++)
            if (!const_pattern(pr, e->args.v[i], out, depth + 1))
                return false;
        return true;
    }
    const q_select_t *s = pr->cur;
    if (e->kind != QE_FIELD || e->fkind != QF_COLUMN || e->source == NULL || s == NULL ||
        s->from == NULL || s->from->kind != QJ_SUBQUERY || s->from->entry == NULL ||
        s->from->entry->id != e->source->id || e->source->sub == NULL)
        return false;
    const q_select_t *sub = e->source->sub;
    if (sub->nparts > 0 || e->ival < 0 || (size_t)e->ival >= sub->nout ||
        sub->out_exprs[e->ival] == NULL || sub->out_exprs[e->ival]->kind != QE_STRING)
        return false;
    const q_expr_t *c = sub->out_exprs[e->ival];
    cm_buf_append(out, c->text.p, c->text.len);
    return true;
}

/* match, extract, replaceRegexpOne/All: a constant pattern both stores
 * read alike (regex.c refuses the rest); SQLite runs PCRE2 through
 * libcommon's db/db_sqlite_re.c. */
static void regex_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    static const char *const ch[] = {"match", "extract", "replaceRegexpOne", "replaceRegexpAll"};
    static const char *const lite[] = {"cm_match", "cm_extract", "cm_replace_one",
                                       "cm_replace_all"};
    int k = id - Q_FN_MATCH;
    cm_slice_t pattern, repl;
    if (!text_arg(pr, e, 0))
        return;
    if (id == Q_FN_MATCH && ARG(1)->kind != QE_STRING) {
        /* a pattern per row: ClickHouse 21+ takes it, 18.16 does not; SQLite
         * checks each one as it meets it (libcommon's cm_regex_check) */
        if (pr->ch && !q_ch_modern(pr)) {
            /* 18.16 takes it where the pattern is one text in every row */
            cm_buf_t text = CM_BUF_INIT;
            if (const_pattern(pr, ARG(1), &text, 0)) {
                q_expr_t lit = *ARG(1), one = *e;
                lit.kind = QE_STRING;
                lit.text = text.len ? cm_buf_slice(&text) : CM_SLICE_LIT("");
                lit.type = Q_T_STRING;
                q_expr_t *args[2] = {ARG(0), &lit};
                one.args = (q_list_t){args, 2};
                regex_fn(pr, &one, id);
                cm_buf_free(&text);
                return;
            }
            cm_buf_free(&text);
            q_pfail(pr, "match with a pattern that is not a constant needs ClickHouse 21+ (this "
                        "store runs 18.16)");
            return;
        }
        if (text_arg(pr, e, 1))
            q_psame(pr, pr->ch ? ch[k] : lite[k], e);
        return;
    }
    if (!q_pconst_string(pr, ARG(1), "A regular expression", &pattern))
        return;
    cm_buf_t err;
    cm_buf_init(&err);
    q_regex_info_t info;
    bool ok = q_regex_check(pattern, &info, &err);
    if (ok && id == Q_FN_REPLACE_RE_ALL && info.can_match_empty) {
        cm_buf_appendf(&err, "replaceRegexpAll needs a pattern that cannot match the empty "
                             "string (ClickHouse versions replace empty matches differently)");
        ok = false;
    }
    if (ok && id >= Q_FN_REPLACE_RE_ONE) {
        ok = q_pconst_string(pr, ARG(2), "The replacement of a regular expression", &repl);
        if (ok && !q_regex_check_replacement(repl, info.groups, &err))
            ok = false;
        else if (!ok) {
            cm_buf_free(&err);
            return;
        }
    }
    if (!ok) {
        cm_slice_t m = cm_buf_slice(&err);
        q_pfail(pr, "%.*s", (int)m.len, m.p);
        cm_buf_free(&err);
        return;
    }
    cm_buf_free(&err);
    q_psame(pr, pr->ch ? ch[k] : lite[k], e);
}

/* substringUTF8(s, offset[, length]) in code points: constants, offset
 * from 1 and length from 0 (ClickHouse 18.16 refuses others; SQLite's
 * substr reads 0 and negatives its own way). */
static void substring_utf8(q_printer_t *pr, const q_expr_t *e)
{
    if (!text_arg(pr, e, 0))
        return;
    for (size_t i = 1; i < e->args.n; i++) {
        const q_expr_t *a = ARG(i);
        if (a->kind != QE_INT || a->ival < (i == 1 ? 1 : 0) || a->ival > 4294967295LL) {
            q_pfail(pr, "substringUTF8 takes a constant offset from 1 and a constant length "
                        "from 0");
            return;
        }
    }
    P(pr->ch ? "substringUTF8(" : "substr(CAST(");
    q_pexpr(pr, ARG(0));
    PF(pr->ch ? ", %" PRId64 ", %" PRId64 ")" : " AS TEXT), %" PRId64 ", %" PRId64 ")",
       ARG(1)->ival, ARG(2)->ival);
}

/* leftPad(s, n[, pad]), rightPad, repeat(s, n): in bytes, as ClickHouse
 * 21.8+ (18.16 has none); SQLite's cm_pad and cm_repeat (libcommon's
 * db/db_sqlite_ch.c) refuse a result past 1 MiB. */
static void pad_repeat(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (!text_arg(pr, e, 0))
        return;
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "%.*s needs ClickHouse 21.8 or later (this store runs 18.16)", (int)e->text.len,
                e->text.p);
        return;
    }
    if (id == Q_FN_REPEAT)
        return q_psame(pr, pr->ch ? "repeat" : "cm_repeat", e);
    if (pr->ch)
        return q_psame(pr, id == Q_FN_LEFT_PAD ? "leftPad" : "rightPad", e);
    P("cm_pad(");
    q_pargs(pr, e, 0);
    if (e->args.n < 3)
        P(", ' '");
    P(id == Q_FN_LEFT_PAD ? ", 1)" : ", 0)");
}

/* hex(x): a string's bytes, or an integer's as a UInt64 (two's
 * complement for a negative one) without leading zero bytes, in capitals,
 * as ClickHouse; floats and dates are refused. */
static void hex_fn(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *x = ARG(0);
    bool is_int = x->type == Q_T_INT || x->type == Q_T_BOOL;
    if (!is_int && !(x->type == Q_T_STRING || x->type == Q_T_ANY || x->type == Q_T_NULL)) {
        q_pfail(pr, "hex takes a string or an integer");
        return;
    }
    if (pr->ch) {
        P(is_int ? "hex(toUInt64(" : "hex(");
        q_pexpr(pr, x);
        P(is_int ? "))" : ")");
        return;
    }
    if (!is_int) { /* SQLite's hex(NULL) is '' */
        P("(CASE WHEN ");
        q_pexpr(pr, x);
        P(" IS NOT NULL THEN hex(");
        lite_blob(pr, x);
        P(") END)");
        return;
    }
    /* printf's %X, with a 0 before an odd count of digits (whole bytes);
     * no subquery, which would take an aggregate in x for its own */
    P("(CASE WHEN ");
    q_pexpr(pr, x);
    P(" IS NULL THEN NULL WHEN length(printf('%X', ");
    q_pexpr(pr, x);
    P(")) % 2 = 1 THEN '0' || printf('%X', ");
    q_pexpr(pr, x);
    P(") ELSE printf('%X', ");
    q_pexpr(pr, x);
    P(") END)");
}

/* base64Encode, base64Decode, tryBase64Decode: the standard alphabet,
 * padded; a text that is no base64 fails the query (tryBase64Decode: '').
 * SQLite: cm_base64_encode/decode of libcommon's db/db_sqlite_ch.c. */
static void base64(q_printer_t *pr, const q_expr_t *e, int id)
{
    static const char *const ch[] = {"base64Encode", "base64Decode", "tryBase64Decode"};
    if (!text_arg(pr, e, 0))
        return;
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "%s needs ClickHouse 21.3 or later (this store runs 18.16, built without it)",
                ch[id - Q_FN_BASE64_ENCODE]);
        return;
    }
    if (pr->ch)
        return q_psame(pr, ch[id - Q_FN_BASE64_ENCODE], e);
    P(id == Q_FN_BASE64_ENCODE ? "cm_base64_encode(" : "cm_base64_decode(");
    q_pexpr(pr, ARG(0));
    P(id == Q_FN_BASE64_ENCODE ? ")" : id == Q_FN_BASE64_DECODE ? ", 1)" : ", 0)");
}

static void more_string_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    switch (id) {
    case Q_FN_TRIM_LEFT:
    case Q_FN_TRIM_RIGHT: ptrim(pr, e, id == Q_FN_TRIM_LEFT ? 'l' : 'r'); return;
    case Q_FN_POSITION_CI: /* ASCII letters only, in bytes, as ClickHouse */
        if (pr->ch)
            return q_psame(pr, "positionCaseInsensitive", e);
        P("instr(CAST(lower(");
        q_pexpr(pr, ARG(0));
        P(") AS BLOB), CAST(lower(");
        q_pexpr(pr, ARG(1));
        P(") AS BLOB))");
        return;
    case Q_FN_LENGTH_UTF8: /* code points (SQLite's length of text) */
        if (pr->ch)
            return q_psame(pr, "lengthUTF8", e);
        P("length(CAST(");
        q_pexpr(pr, ARG(0));
        P(" AS TEXT))");
        return;
    case Q_FN_REPLACE_ONE: {
        /* constants, as ClickHouse 18.16 requires; it refuses an empty needle */
        cm_slice_t needle, with;
        if (!q_pconst_string(pr, ARG(1), "The pattern of replaceOne", &needle) ||
            !q_pconst_string(pr, ARG(2), "The replacement of replaceOne", &with))
            return;
        if (needle.len == 0) {
            q_pfail(pr, "The pattern of replaceOne must not be empty");
            return;
        }
        if (pr->ch)
            return q_psame(pr, "replaceOne", e);
        /* the first match, cut out in bytes */
        P("(CASE WHEN instr(");
        lite_blob(pr, ARG(0));
        P(", ");
        lite_blob(pr, ARG(1));
        P(") > 0 THEN CAST(substr(");
        lite_blob(pr, ARG(0));
        P(", 1, instr(");
        lite_blob(pr, ARG(0));
        P(", ");
        lite_blob(pr, ARG(1));
        P(") - 1) || ");
        lite_blob(pr, ARG(2));
        P(" || substr(");
        lite_blob(pr, ARG(0));
        P(", instr(");
        lite_blob(pr, ARG(0));
        P(", ");
        lite_blob(pr, ARG(1));
        PF(") + %zu) AS TEXT) ELSE ", needle.len);
        q_pexpr(pr, ARG(0));
        P(" END)");
        return;
    }
    case Q_FN_DOMAIN:
    case Q_FN_PATH:
    case Q_FN_URL_PARAM:
    case Q_FN_CUT_QUERY: url_fn(pr, e, id); return;
    case Q_FN_MATCH:
    case Q_FN_EXTRACT:
    case Q_FN_REPLACE_RE_ONE:
    case Q_FN_REPLACE_RE_ALL: regex_fn(pr, e, id); return;
    case Q_FN_DECODE_URL: /* %XX decoded; '+' and malformed escapes kept */
    case Q_FN_REVERSE:    /* bytes, as ClickHouse */
        if (!text_arg(pr, e, 0))
            return;
        if (pr->ch)
            return q_psame(pr, id == Q_FN_REVERSE ? "reverse" : "decodeURLComponent", e);
        return q_psame(pr, id == Q_FN_REVERSE ? "cm_reverse" : "cm_decode_url", e);
    case Q_FN_LOWER_UTF8: /* SQLite: libcommon's db_sqlite_text.c */
    case Q_FN_UPPER_UTF8:
        if (!text_arg(pr, e, 0))
            return;
        if (pr->ch)
            return q_psame(pr, id == Q_FN_LOWER_UTF8 ? "lowerUTF8" : "upperUTF8", e);
        return q_psame(pr, id == Q_FN_LOWER_UTF8 ? "cm_lower_utf8" : "cm_upper_utf8", e);
    case Q_FN_ENCODE_URL:
        if (!text_arg(pr, e, 0))
            return;
        if (pr->ch && !q_ch_modern(pr)) {
            q_pfail(pr, "encodeURLComponent needs ClickHouse 21+ (this store runs 18.16)");
            return;
        }
        return q_psame(pr, pr->ch ? "encodeURLComponent" : "cm_encode_url", e);
    case Q_FN_SUBSTRING_UTF8: substring_utf8(pr, e); return;
    case Q_FN_LEFT_PAD:
    case Q_FN_RIGHT_PAD:
    case Q_FN_REPEAT: pad_repeat(pr, e, id); return;
    case Q_FN_HEX: hex_fn(pr, e); return;
    case Q_FN_BASE64_ENCODE:
    case Q_FN_BASE64_DECODE:
    case Q_FN_TRY_BASE64_DECODE: base64(pr, e, id); return;
    default: return;
    }
}

/* The call if it is one of this file's functions (print_fn.c dispatches). */
bool q_pcall_string(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    switch (id) {
    case Q_FN_JSON_STRING:
    case Q_FN_JSON_INT:
    case Q_FN_JSON_FLOAT:
    case Q_FN_JSON_BOOL:
    case Q_FN_JSON_RAW:
    case Q_FN_JSON_HAS: json_fn(pr, e, id); return true;
    case Q_FN_LOWER: q_psame(pr, "lower", e); return true;
    case Q_FN_UPPER: q_psame(pr, "upper", e); return true;
    case Q_FN_LENGTH:
    case Q_FN_CONCAT:
    case Q_FN_SUBSTRING:
    case Q_FN_TRIM:
    case Q_FN_REPLACE_ALL:
    case Q_FN_POSITION:
    case Q_FN_STARTS_WITH:
    case Q_FN_ENDS_WITH:
    case Q_FN_EMPTY:
    case Q_FN_NOT_EMPTY: string_fn(pr, e, id); return true;
    case Q_FN_TRIM_LEFT:
    case Q_FN_TRIM_RIGHT:
    case Q_FN_DOMAIN:
    case Q_FN_PATH:
    case Q_FN_URL_PARAM:
    case Q_FN_CUT_QUERY:
    case Q_FN_POSITION_CI:
    case Q_FN_LENGTH_UTF8:
    case Q_FN_REPLACE_ONE:
    case Q_FN_MATCH:
    case Q_FN_EXTRACT:
    case Q_FN_REPLACE_RE_ONE:
    case Q_FN_REPLACE_RE_ALL:
    case Q_FN_DECODE_URL:
    case Q_FN_SUBSTRING_UTF8:
    case Q_FN_REVERSE:
    case Q_FN_LEFT_PAD:
    case Q_FN_RIGHT_PAD:
    case Q_FN_REPEAT:
    case Q_FN_HEX:
    case Q_FN_BASE64_ENCODE:
    case Q_FN_BASE64_DECODE:
    case Q_FN_TRY_BASE64_DECODE:
    case Q_FN_LOWER_UTF8:
    case Q_FN_UPPER_UTF8:
    case Q_FN_ENCODE_URL: more_string_fn(pr, e, id); return true;
    default: return false;
    }
}
