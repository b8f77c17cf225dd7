/*
 * test_json_parse.c - the JSON parser, accessors and writer.
 *
 * Inputs are copied into exact-size heap buffers before parsing (see
 * parse()), so any read past the end of the input fails under ASan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/json.h"

/* ---- helpers ------------------------------------------------------------------ */

/* A parsed document together with its exact-size copy of the input. */
typedef struct {
    char *src;
    cm_json_doc_t *doc;
    cm_json_error_t err;
    int rc;
} parsed_t;

static parsed_t parse_n(const char *s, size_t n, const cm_json_limits_t *lim)
{
    parsed_t r = {0};
    r.src = cm_xmalloc(n ? n : 1);
    memcpy(r.src, s, n);
    r.rc = cm_json_parse(r.src, n, lim, &r.doc, &r.err);
    return r;
}

static parsed_t parse(const char *s)
{
    return parse_n(s, strlen(s), NULL);
}

static void done(parsed_t *r)
{
    cm_json_doc_free(r->doc);
    free(r->src);
}

static int rc_of(const char *s)
{
    parsed_t r = parse(s);
    int rc = r.rc;
    done(&r);
    return rc;
}

static void assert_accepts(const char *s)
{
    parsed_t r = parse(s);
    if (r.rc != 0)
        fail_msg("rejected %s: %s at %zu", s, r.err.msg, r.err.offset);
    done(&r);
}

static void assert_rejects(const char *s, const char *msg, size_t offset)
{
    parsed_t r = parse(s);
    if (r.rc == 0)
        fail_msg("accepted %s", s);
    assert_null(r.doc);
    assert_int_equal(r.rc, CM_EINVAL);
    if (msg)
        assert_string_equal(r.err.msg, msg);
    if (offset != (size_t)-1)
        assert_int_equal(r.err.offset, offset);
    done(&r);
}

static cm_json_t root(parsed_t *r)
{
    assert_int_equal(r->rc, 0);
    return cm_json_root(r->doc);
}

static char *nested(int depth)
{
    char *s = cm_xmalloc((size_t)depth * 2 + 1);
    memset(s, '[', (size_t)depth);
    memset(s + depth, ']', (size_t)depth);
    s[depth * 2] = 0;
    return s;
}

/* ---- grammar --------------------------------------------------------------------- */

static void test_grammar_accepts(void **state)
{
    (void)state;
    static const char *ok[] = {
        "0",
        "-0",
        "1",
        "-1",
        "10",
        "123456789",
        "0.5",
        "-0.5",
        "1.25e3",
        "1E3",
        "1e+3",
        "1e-3",
        "0e0",
        "1.0E-0",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\"",
        "[]",
        "{}",
        "[[]]",
        "[{}]",
        "{\"a\":[]}",
        " [ 1 , 2 ] ",
        "\t\r\n{\t\"k\"\r:\n\"v\" }\n",
        "[1,\"a\",true,false,null,{},[]]",
        "{\"a\":{\"b\":{\"c\":null}}}",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        assert_accepts(ok[i]);
}

static void test_grammar_rejects(void **state)
{
    (void)state;
    assert_rejects("", "unexpected end of input", 0);
    assert_rejects("   ", "unexpected end of input", 3);
    assert_rejects("01", "leading zero in number", 1);
    assert_rejects("-01", "leading zero in number", 2);
    assert_rejects("+1", "unexpected character", 0);
    assert_rejects(".5", "unexpected character", 0);
    assert_rejects("1.", "digit expected after '.'", 2);
    assert_rejects("1.e3", "digit expected after '.'", 2);
    assert_rejects("1e", "digit expected in exponent", 2);
    assert_rejects("1e+", "digit expected in exponent", 3);
    assert_rejects("-", "invalid number", 1);
    assert_rejects("-a", "invalid number", 1);
    assert_rejects("1x", "unexpected data after the value", 1);
    assert_rejects("[1,]", "unexpected character", 3);
    assert_rejects("[,1]", "unexpected character", 1);
    assert_rejects("{\"a\":1,}", "expected string key", 7);
    assert_rejects("{\"a\" 1}", "expected ':'", 5);
    assert_rejects("{a:1}", "expected string key", 1);
    assert_rejects("{\"a\":1 \"b\":2}", "expected ',' or '}'", 7);
    assert_rejects("[1 2]", "expected ',' or ']'", 3);
    assert_rejects("[1}", "expected ',' or ']'", 2);
    assert_rejects("{\"a\":1]", "expected ',' or '}'", 6);
    assert_rejects("[1", "unexpected end of input", 2);
    assert_rejects("{\"a\":", "unexpected end of input", 5);
    assert_rejects("tru", "invalid literal", 0);
    assert_rejects("True", "unexpected character", 0);
    assert_rejects("nulll", "unexpected data after the value", 4);
    assert_rejects("[1]\f", "unexpected data after the value", 3);
    assert_rejects("[1] [2]", "unexpected data after the value", 4);
    assert_rejects("\xef\xbb\xbf{}", "byte order mark not allowed", 0);
    assert_rejects("[NaN]", "unexpected character", 1);
    assert_rejects("[0x1]", "expected ',' or ']'", 2);
    /* An embedded NUL is just a bad byte. */
    parsed_t r = parse_n("[1]\0", 4, NULL);
    assert_int_equal(r.rc, CM_EINVAL);
    assert_int_equal(r.err.offset, 3);
    done(&r);
}

/* ---- strings: escapes, UTF-8, surrogates -------------------------------------------- */

static void test_escapes(void **state)
{
    (void)state;
    assert_accepts("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\uABCD \\uabcd\"");
    assert_rejects("\"\\x\"", "invalid escape", 1);
    assert_rejects("\"\\U0041\"", "invalid escape", 1);
    assert_rejects("\"\\u004\"", "invalid \\u escape", 1);
    assert_rejects("\"\\u00G1\"", "invalid \\u escape", 1);
    assert_rejects("\"\\", "unterminated string", 1);
    assert_rejects("\"abc", "unterminated string", 4);
    assert_rejects("\"a\tb\"", "control character in string", 2);
    assert_rejects("\"a\nb\"", "control character in string", 2);
    assert_rejects("\"\x1f\"", "control character in string", 1);
    assert_accepts("\"\x7f\"");
    /* A long string crosses the eight-byte fast path several times. */
    assert_rejects("\"0123456789abcdef0123456789\x01\"", "control character in string", 27);
    assert_accepts("\"0123456789abcdef0123456789abcdef\\n0123456789abcdef\"");
}

static void test_surrogates(void **state)
{
    (void)state;
    assert_accepts("\"\\ud83d\\ude00\"");
    assert_accepts("\"\\uD800\\uDC00\\uDBFF\\uDFFF\"");
    assert_rejects("\"\\ud800\"", "lone surrogate", 1);
    assert_rejects("\"\\ud800x\"", "lone surrogate", 1);
    assert_rejects("\"\\ud800\\n\"", "lone surrogate", 1);
    assert_rejects("\"\\ud800\\u0041\"", "lone surrogate", 1);
    assert_rejects("\"\\ud800\\ud800\"", "lone surrogate", 1);
    assert_rejects("\"\\ud800\\uZZZZ\"", "invalid \\u escape", 1);
    assert_rejects("\"\\udc00\"", "lone surrogate", 1);
    assert_rejects("\"\\ude00\\ud83d\"", "lone surrogate", 1);
    assert_rejects("{\"\\udfff\":1}", "lone surrogate", 2);
}

static void test_utf8(void **state)
{
    (void)state;
    assert_accepts("\"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf\"");
    assert_accepts("\"\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf \xe2\x82\xac\"");
    static const char *bad[] = {
        "\"\x80\"",             /* lone continuation */
        "\"\xbf\"",             /* lone continuation */
        "\"\xc0\x80\"",         /* overlong NUL */
        "\"\xc1\xbf\"",         /* overlong */
        "\"\xe0\x80\x80\"",     /* overlong 3 */
        "\"\xe0\x9f\xbf\"",     /* overlong 3 */
        "\"\xed\xa0\x80\"",     /* U+D800 encoded */
        "\"\xed\xbf\xbf\"",     /* U+DFFF encoded */
        "\"\xf0\x80\x80\x80\"", /* overlong 4 */
        "\"\xf0\x8f\xbf\xbf\"", /* overlong 4 */
        "\"\xf4\x90\x80\x80\"", /* U+110000 */
        "\"\xf5\x80\x80\x80\"", /* bad lead */
        "\"\xff\"",             /* bad lead */
        "\"\xc2\"",             /* truncated by the quote */
        "\"\xe2\x82\"",         /* truncated */
        "\"\xf0\x9f\x98\"",     /* truncated */
        "\"\xe2\x28\xa1\"",     /* bad continuation */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_rejects(bad[i], "invalid UTF-8", 1);
    /* Truncated at the very end of the input, and outside strings. */
    assert_rejects("\"\xe2\x82", "invalid UTF-8", 1);
    assert_rejects("[\xc3\xa9]", "unexpected character", 1);
    assert_true(cm_json_utf8_valid("h\xc3\xa9llo", 6));
    assert_false(cm_json_utf8_valid("\xed\xa0\x80", 3));
    assert_false(cm_json_utf8_valid("\xe2\x82", 2));
}

/* ---- limits -------------------------------------------------------------------------- */

static void test_depth_limit(void **state)
{
    (void)state;
    char *ok = nested(128), *deep = nested(129), *huge = nested(100000);
    assert_accepts(ok);
    parsed_t r = parse(deep);
    assert_int_equal(r.rc, CM_ERANGE);
    assert_string_equal(r.err.msg, "nesting too deep");
    assert_int_equal(r.err.offset, 128);
    done(&r);
    assert_int_equal(rc_of(huge), CM_ERANGE);
    /* Unclosed nesting is the same error, found before the end. */
    huge[100000] = 0;
    assert_int_equal(rc_of(huge), CM_ERANGE);

    cm_json_limits_t lim = {.max_depth = 2};
    r = parse_n("[[1]]", 5, &lim);
    assert_int_equal(r.rc, 0);
    done(&r);
    r = parse_n("[{\"a\":[]}]", 10, &lim);
    assert_int_equal(r.rc, CM_ERANGE);
    done(&r);
    lim.max_depth = 200000;
    r = parse_n(deep, strlen(deep), &lim);
    assert_int_equal(r.rc, 0);
    done(&r);
    free(ok);
    free(deep);
    free(huge);
}

static void test_size_limits(void **state)
{
    (void)state;
    cm_json_limits_t lim = {.max_bytes = 4};
    parsed_t r = parse_n("[1,2]", 5, &lim);
    assert_int_equal(r.rc, CM_ETOOBIG);
    assert_string_equal(r.err.msg, "input too large");
    done(&r);
    r = parse_n("[12]", 4, &lim);
    assert_int_equal(r.rc, 0);
    done(&r);

    cm_json_limits_t nodes = {.max_nodes = 3};
    r = parse_n("[1,2]", 5, &nodes);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.doc->n, 3);
    done(&r);
    r = parse_n("[1,2,3]", 7, &nodes);
    assert_int_equal(r.rc, CM_ETOOBIG);
    assert_string_equal(r.err.msg, "too many values");
    done(&r);
    /* Many values force the tape to grow several times. */
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_putc(&b, '[');
    for (int i = 0; i < 50000; i++)
        cm_buf_appendf(&b, "%s%d", i ? "," : "", i);
    cm_buf_putc(&b, ']');
    r = parse_n(b.p, b.len, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(cm_json_len(cm_json_root(r.doc)), 50000);
    int64_t x;
    assert_int_equal(cm_json_as_int64(cm_json_at(cm_json_root(r.doc), 49999), &x), 0);
    assert_int_equal(x, 49999);
    done(&r);
    cm_buf_free(&b);
}

/* ---- the tape --------------------------------------------------------------------------- */

static void test_tape_shape(void **state)
{
    (void)state;
    const char *src = " {\"a\": [1, {\"b\": null}], \"c\\n\": \"x\"} ";
    parsed_t r = parse(src);
    cm_json_t v = root(&r);
    const cm_json_doc_t *d = r.doc;
    /* {  "a"  [  1  {  "b"  null  "c\n"  "x" */
    assert_int_equal(d->n, 9);
    assert_int_equal(cm_json_type(v), CM_JSON_OBJECT);
    assert_int_equal(d->nodes[0].next, 9);
    assert_int_equal(cm_json_len(v), 2);
    assert_true(cm_slice_eq_cstr(cm_json_raw(v), "{\"a\": [1, {\"b\": null}], \"c\\n\": \"x\"}"));
    assert_int_equal(d->nodes[2].next, 7); /* the array skips its subtree */
    assert_true(cm_slice_eq_cstr(cm_json_raw((cm_json_t){d, 2}), "[1, {\"b\": null}]"));
    assert_true(cm_slice_eq_cstr(cm_json_raw((cm_json_t){d, 1}), "\"a\""));
    assert_false(cm_json_str_has_escapes((cm_json_t){d, 1}));
    assert_true(cm_json_str_has_escapes((cm_json_t){d, 7}));
    assert_true(cm_slice_eq_cstr(cm_json_str_inner((cm_json_t){d, 7}), "c\\n"));
    assert_int_equal(d->nodes[4].off, 11);
    assert_int_equal(d->nodes[4].len, 11);
    done(&r);
}

static void test_parse_into_reuse(void **state)
{
    (void)state;
    cm_json_doc_t doc = CM_JSON_DOC_INIT;
    cm_json_error_t err;
    const char *a = "[1,2,3,4,5,6,7,8,9,10]";
    assert_int_equal(cm_json_parse_into(&doc, a, strlen(a), NULL, &err), 0);
    assert_int_equal(doc.n, 11);
    cm_json_node_t *tape = doc.nodes;
    assert_int_equal(cm_json_parse_into(&doc, "[1,", 3, NULL, &err), CM_EINVAL);
    assert_int_equal(doc.n, 0);
    assert_int_equal(cm_json_type(cm_json_root(&doc)), CM_JSON_NONE);
    assert_int_equal(cm_json_parse_into(&doc, "{}", 2, NULL, &err), 0);
    assert_ptr_equal(doc.nodes, tape); /* no reallocation for a smaller doc */
    cm_json_doc_clear(&doc);
    assert_null(doc.nodes);
}

/* ---- accessors ------------------------------------------------------------------------------ */

static void test_lookup(void **state)
{
    (void)state;
    parsed_t r = parse("{\"a\":1,\"\\u0062\":2,\"c\":3,\"a\":4,\"\":5,\"\\u00e9\\n\":6,"
                       "\"nul\\u0000x\":7,\"deep\":{\"x\":{\"y\":\"z\"}}}");
    cm_json_t o = root(&r);
    int64_t x;
    assert_int_equal(cm_json_len(o), 8);
    assert_int_equal(cm_json_as_int64(cm_json_get(o, "a"), &x), 0);
    assert_int_equal(x, 4); /* the last duplicate wins */
    assert_int_equal(cm_json_as_int64(cm_json_get(o, "b"), &x), 0);
    assert_int_equal(x, 2); /* the decoded key matches */
    assert_int_equal(cm_json_as_int64(cm_json_get(o, ""), &x), 0);
    assert_int_equal(x, 5);
    assert_int_equal(cm_json_as_int64(cm_json_get(o, "\xc3\xa9\n"), &x), 0);
    assert_int_equal(x, 6);
    assert_int_equal(cm_json_as_int64(cm_json_get_s(o, (cm_slice_t){"nul\0x", 5}), &x), 0);
    assert_int_equal(x, 7);
    assert_false(cm_json_exists(cm_json_get(o, "nul")));
    assert_false(cm_json_exists(cm_json_get(o, "\\u0062")));
    assert_false(cm_json_exists(cm_json_get(o, "missing")));
    assert_false(cm_json_exists(cm_json_get(o, "\xc3\xa9")));
    assert_true(cm_json_str_eq(cm_json_path(o, "deep", "x", "y"), CM_SLICE_LIT("z")));
    assert_false(cm_json_exists(cm_json_path(o, "deep", "nope", "y")));
    assert_false(cm_json_exists(cm_json_path(o, "a", "b")));
    /* None and non-objects fail softly all the way down. */
    assert_false(cm_json_exists(cm_json_get(CM_JSON_NONE_VALUE, "a")));
    assert_int_equal(cm_json_type(cm_json_get(cm_json_get(o, "a"), "x")), CM_JSON_NONE);
    assert_int_equal(cm_json_as_int64(CM_JSON_NONE_VALUE, &x), CM_EINVAL);
    done(&r);
}

static void test_iteration(void **state)
{
    (void)state;
    parsed_t r =
        parse("{\"arr\":[1,[2,3],{\"k\":4},\"s\"],\"o\":{\"x\":1,\"y\":[],\"z\":{}},\"e\":[]}");
    cm_json_t o = root(&r), k, v;
    cm_json_t arr = cm_json_get(o, "arr");
    assert_int_equal(cm_json_len(arr), 4);
    cm_json_type_t want[] = {CM_JSON_NUMBER, CM_JSON_ARRAY, CM_JSON_OBJECT, CM_JSON_STRING};
    cm_json_iter_t it = cm_json_iter(arr);
    int n = 0;
    while (cm_json_next(&it, &k, &v)) {
        assert_false(cm_json_exists(k));
        assert_int_equal(cm_json_type(v), want[n]);
        assert_int_equal(cm_json_at(arr, (uint32_t)n).i, v.i);
        n++;
    }
    assert_int_equal(n, 4);
    assert_false(cm_json_exists(cm_json_at(arr, 4)));

    const char *keys[] = {"x", "y", "z"};
    it = cm_json_iter(cm_json_get(o, "o"));
    n = 0;
    while (cm_json_next(&it, &k, &v))
        assert_true(cm_json_str_eq(k, cm_slice_from_cstr(keys[n++])));
    assert_int_equal(n, 3);

    it = cm_json_iter(cm_json_get(o, "e"));
    assert_false(cm_json_next(&it, &k, &v));
    it = cm_json_iter(cm_json_path(o, "o", "x")); /* not a container */
    assert_false(cm_json_next(&it, NULL, &v));
    it = cm_json_iter(CM_JSON_NONE_VALUE);
    assert_false(cm_json_next(&it, NULL, NULL));
    assert_int_equal(cm_json_len(cm_json_path(o, "o", "x")), 0);
    done(&r);
}

static void test_strings(void **state)
{
    (void)state;
    parsed_t r =
        parse("[\"plain\",\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\"\\u00e9\\u4e2d\\ud83d\\ude00\","
              "\"\\u0000\",\"\",1]");
    cm_json_t a = root(&r);
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s;
    assert_int_equal(cm_json_as_str(cm_json_at(a, 0), &scratch, &s), 0);
    assert_true(cm_slice_eq_cstr(s, "plain"));
    assert_int_equal(scratch.len, 0); /* zero-copy */
    assert_ptr_equal(s.p, r.src + 2);
    assert_int_equal(cm_json_as_str(cm_json_at(a, 1), &scratch, &s), 0);
    assert_true(cm_slice_eq_cstr(s, "a\"b\\c/d\b\f\n\r\t"));
    cm_buf_reset(&scratch);
    assert_int_equal(cm_json_as_str(cm_json_at(a, 2), &scratch, &s), 0);
    assert_true(cm_slice_eq_cstr(s, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"));
    cm_buf_reset(&scratch);
    assert_int_equal(cm_json_str_append(cm_json_at(a, 3), &scratch), 0);
    assert_int_equal(scratch.len, 1);
    assert_int_equal(scratch.p[0], 0);
    assert_int_equal(cm_json_as_str(cm_json_at(a, 4), &scratch, &s), 0);
    assert_int_equal(s.len, 0);
    assert_int_equal(cm_json_as_str(cm_json_at(a, 5), &scratch, &s), CM_EINVAL);
    assert_int_equal(cm_json_str_append(cm_json_at(a, 5), &scratch), CM_EINVAL);
    assert_true(
        cm_json_str_eq(cm_json_at(a, 2), CM_SLICE_LIT("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80")));
    assert_false(cm_json_str_eq(cm_json_at(a, 2), CM_SLICE_LIT("\xc3\xa9\xe4\xb8\xad")));
    assert_false(cm_json_str_eq(cm_json_at(a, 5), CM_SLICE_LIT("1")));
    assert_null(cm_json_str_inner(cm_json_at(a, 5)).p);
    cm_buf_free(&scratch);
    done(&r);
}

static int int_of(const char *text, int64_t *out)
{
    parsed_t r = parse(text);
    assert_int_equal(r.rc, 0);
    int rc = cm_json_as_int64(cm_json_root(r.doc), out);
    done(&r);
    return rc;
}

static int uint_of(const char *text, uint64_t *out)
{
    parsed_t r = parse(text);
    assert_int_equal(r.rc, 0);
    int rc = cm_json_as_uint64(cm_json_root(r.doc), out);
    done(&r);
    return rc;
}

static void test_int64(void **state)
{
    (void)state;
    int64_t x = 0;
    assert_int_equal(int_of("9223372036854775807", &x), 0);
    assert_true(x == INT64_MAX);
    assert_int_equal(int_of("-9223372036854775808", &x), 0);
    assert_true(x == INT64_MIN);
    assert_int_equal(int_of("9223372036854775808", &x), CM_ERANGE);
    assert_int_equal(int_of("-9223372036854775809", &x), CM_ERANGE);
    assert_int_equal(int_of("99999999999999999999999", &x), CM_ERANGE);
    assert_int_equal(int_of("0", &x), 0);
    assert_int_equal(x, 0);
    assert_int_equal(int_of("-0", &x), 0);
    assert_int_equal(x, 0);
    assert_int_equal(int_of("-42", &x), 0);
    assert_int_equal(x, -42);
    /* Whole values in other spellings. */
    assert_int_equal(int_of("1.0", &x), 0);
    assert_int_equal(x, 1);
    assert_int_equal(int_of("1e2", &x), 0);
    assert_int_equal(x, 100);
    assert_int_equal(int_of("-1.50e1", &x), 0);
    assert_int_equal(x, -15);
    assert_int_equal(int_of("2500e-2", &x), 0);
    assert_int_equal(x, 25);
    assert_int_equal(int_of("0.000e999999999999999999", &x), 0);
    assert_int_equal(x, 0);
    assert_int_equal(int_of("9.223372036854775807e18", &x), 0);
    assert_true(x == INT64_MAX);
    assert_int_equal(int_of("-9.223372036854775808E+18", &x), 0);
    assert_true(x == INT64_MIN);
    assert_int_equal(int_of("9.223372036854775808e18", &x), CM_ERANGE);
    /* Not whole. */
    x = 77;
    assert_int_equal(int_of("1.5", &x), CM_EINVAL);
    assert_int_equal(int_of("1e-1", &x), CM_EINVAL);
    assert_int_equal(int_of("1e-99999999999999999999", &x), CM_EINVAL);
    assert_int_equal(int_of("1e400", &x), CM_ERANGE);
    assert_int_equal(int_of("1e99999999999999999999", &x), CM_ERANGE);
    assert_int_equal(int_of("\"1\"", &x), CM_EINVAL);
    assert_int_equal(int_of("true", &x), CM_EINVAL);
    assert_int_equal(x, 77); /* untouched on error */
}

static void test_uint64(void **state)
{
    (void)state;
    uint64_t u = 0;
    assert_int_equal(uint_of("18446744073709551615", &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(uint_of("18446744073709551616", &u), CM_ERANGE);
    assert_int_equal(uint_of("1.8446744073709551615e19", &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(uint_of("-1", &u), CM_ERANGE);
    assert_int_equal(uint_of("-0", &u), 0);
    assert_true(u == 0);
    assert_int_equal(uint_of("1234567890123456789", &u), 0);
    assert_true(u == 1234567890123456789ull);
}

static double dbl_of(const char *text, int want_rc)
{
    parsed_t r = parse(text);
    assert_int_equal(r.rc, 0);
    double d = -1;
    assert_int_equal(cm_json_as_double(cm_json_root(r.doc), &d), want_rc);
    done(&r);
    return d;
}

static void test_double(void **state)
{
    (void)state;
    assert_true(dbl_of("0.1", 0) == 0.1);
    assert_true(dbl_of("-2.5e-3", 0) == -2.5e-3);
    assert_true(dbl_of("123", 0) == 123.0);
    assert_true(dbl_of("1.7976931348623157e308", 0) == 1.7976931348623157e308);
    assert_true(dbl_of("5e-324", 0) == 5e-324);
    assert_true(dbl_of("1e-400", 0) == 0.0);
    assert_true(isinf(dbl_of("1e400", CM_ERANGE)));
    assert_true(dbl_of("-1e400", CM_ERANGE) < 0);
    assert_true(signbit(dbl_of("-0", 0)));
    /* Longer than the stack buffer: correctly rounded all the same. */
    assert_true(
        dbl_of("0.1000000000000000055511151231257827021181583404541015625000000000001", 0) == 0.1);
    assert_true(dbl_of("9007199254740993", 0) == 9007199254740992.0); /* ties to even */
}

static void test_bool_null(void **state)
{
    (void)state;
    parsed_t r = parse("[true,false,null,0]");
    cm_json_t a = root(&r);
    bool b = false;
    assert_int_equal(cm_json_as_bool(cm_json_at(a, 0), &b), 0);
    assert_true(b);
    assert_int_equal(cm_json_as_bool(cm_json_at(a, 1), &b), 0);
    assert_false(b);
    assert_int_equal(cm_json_as_bool(cm_json_at(a, 2), &b), CM_EINVAL);
    assert_int_equal(cm_json_as_bool(cm_json_at(a, 3), &b), CM_EINVAL);
    assert_true(cm_json_is_null(cm_json_at(a, 2)));
    assert_false(cm_json_is_null(cm_json_at(a, 3)));
    assert_false(cm_json_is_null(CM_JSON_NONE_VALUE));
    done(&r);
}

/* ---- writer ------------------------------------------------------------------------------------
 */

static void test_writer_structure(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "a");
    cm_json_begin_array(&w);
    cm_json_int(&w, 1);
    cm_json_int(&w, INT64_MIN);
    cm_json_uint(&w, UINT64_MAX);
    cm_json_begin_object(&w);
    cm_json_end_object(&w);
    cm_json_begin_array(&w);
    cm_json_end_array(&w);
    cm_json_boolean(&w, true);
    cm_json_boolean(&w, false);
    cm_json_null(&w);
    cm_json_end_array(&w);
    cm_json_key_s(&w, CM_SLICE_LIT("b"));
    cm_json_str_cstr(&w, "x");
    cm_json_key(&w, "raw");
    cm_json_raw_value(&w, CM_SLICE_LIT("{\"k\":[1,2]}"));
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b),
                        "{\"a\":[1,-9223372036854775808,18446744073709551615,"
                        "{},[],true,false,null],\"b\":\"x\",\"raw\":{\"k\":[1,2]}}");
    cm_buf_free(&b);
}

/* Whitespace between tokens goes; inside strings (escaped quotes and
 * backslashes included) every byte stays; numbers are copied as written.
 * On escape-free input it agrees with the re-serialising cm_json_value. */
static void test_raw_value_compact(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {" { \"a\" : [ 1 , 2.50e3 ] ,\n\t\"b\" : { } }\r\n", "{\"a\":[1,2.50e3],\"b\":{}}"},
        {"[ \"x y\\\" \\\\\" , \" \\\\\" ]", "[\"x y\\\" \\\\\",\" \\\\\"]"},
        {"\"  spaces  \"", "\"  spaces  \""},
        {"true", "true"},
        {"   null   ", "null"},
        {"{}", "{}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_buf_t b = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &b);
        cm_json_raw_value_compact(&w, cm_slice_from_cstr(cases[i].in));
        assert_int_equal(cm_json_writer_finish(&w), 0);
        assert_string_equal(cm_buf_cstr(&b), cases[i].out);
        cm_buf_free(&b);
    }
    const char *doc = " {\"k\" : [ 1, {\"n\" :\tnull}, \"v w\" ], \"z\": -0.5 } ";
    parsed_t r = parse(doc);
    assert_int_equal(r.rc, 0);
    cm_buf_t a = CM_BUF_INIT, c = CM_BUF_INIT;
    cm_json_writer_t wa, wc;
    cm_json_writer_init(&wa, &a);
    cm_json_writer_init(&wc, &c);
    cm_json_value(&wa, cm_json_root(r.doc));
    cm_json_raw_value_compact(&wc, cm_slice_from_cstr(doc));
    assert_int_equal(cm_json_writer_finish(&wa), 0);
    assert_int_equal(cm_json_writer_finish(&wc), 0);
    assert_string_equal(cm_buf_cstr(&a), cm_buf_cstr(&c));
    cm_buf_free(&a);
    cm_buf_free(&c);
    done(&r);
}

/* The index answers exactly what cm_json_get_s answers, for every key of
 * an object with duplicates and escaped keys, and for absent keys. */
static void test_index(void **state)
{
    (void)state;
    cm_buf_t src = CM_BUF_INIT;
    cm_buf_append_cstr(&src, "{\"x\":0,\"\\u0078y\":1,\"\":2");
    for (int i = 0; i < 3000; i++)
        cm_buf_appendf(&src, ",\"key%d\":%d", i % 2000, i); /* 1000 duplicates */
    cm_buf_append_cstr(&src, "}");
    parsed_t r = parse(cm_buf_cstr(&src));
    assert_int_equal(r.rc, 0);
    cm_json_t obj = cm_json_root(r.doc);
    cm_json_index_t *ix = cm_json_index_new(obj);
    char k[16];
    for (int i = 0; i < 2100; i++) {
        snprintf(k, sizeof(k), "key%d", i);
        cm_json_t a = cm_json_get(obj, k), b = cm_json_index_get(ix, cm_slice_from_cstr(k));
        assert_true(a.doc == b.doc && a.i == b.i);
    }
    int64_t v = 0;
    assert_int_equal(cm_json_as_int64(cm_json_index_get(ix, CM_SLICE_LIT("key5")), &v), 0);
    assert_int_equal(v, 2005);
    assert_int_equal(cm_json_as_int64(cm_json_index_get(ix, CM_SLICE_LIT("xy")), &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(cm_json_as_int64(cm_json_index_get(ix, CM_SLICE_LIT("")), &v), 0);
    assert_int_equal(v, 2);
    assert_false(cm_json_exists(cm_json_index_get(ix, CM_SLICE_LIT("key2000"))));
    assert_false(cm_json_exists(cm_json_index_get(NULL, CM_SLICE_LIT("x"))));
    cm_json_index_free(ix);
    cm_json_index_free(NULL);
    done(&r);
    cm_buf_free(&src);
}

static int misuse(int which)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    switch (which) {
    case 0: cm_json_key(&w, "a"); break; /* key at top level */
    case 1:
        cm_json_begin_array(&w);
        cm_json_key(&w, "a");
        break; /* key in array */
    case 2:
        cm_json_begin_object(&w);
        cm_json_int(&w, 1);
        break; /* value for no key */
    case 3:
        cm_json_begin_array(&w);
        cm_json_end_object(&w);
        break;
    case 4: cm_json_end_array(&w); break;
    case 5:
        cm_json_int(&w, 1);
        cm_json_int(&w, 2);
        break; /* two top-level values */
    case 6:
        cm_json_begin_object(&w);
        cm_json_key(&w, "a");
        cm_json_end_object(&w);
        break;
    case 7: cm_json_begin_array(&w); break; /* unfinished */
    case 8: break;                          /* nothing */
    case 9:
        for (int i = 0; i <= CM_JSON_WRITER_MAX_DEPTH; i++)
            cm_json_begin_array(&w);
        break;
    case 10: cm_json_value(&w, CM_JSON_NONE_VALUE); break;
    case 11: { /* a parsed string where a key is due */
        cm_json_doc_t *d = NULL;
        cm_json_parse("\"k\"", 3, NULL, &d, NULL);
        cm_json_begin_object(&w);
        cm_json_value(&w, cm_json_root(d));
        cm_json_null(&w);
        cm_json_end_object(&w);
        cm_json_doc_free(d);
        break;
    }
    }
    int rc = cm_json_writer_finish(&w);
    cm_buf_free(&b);
    return rc;
}

static void test_writer_misuse(void **state)
{
    (void)state;
    for (int i = 0; i <= 11; i++)
        assert_int_not_equal(misuse(i), 0);
    assert_int_equal(misuse(9), CM_ETOOBIG);
}

static void test_writer_escaping(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm_json_quote(&b, (cm_slice_t){"q\"b\\s/\n\t\r\b\f\x01\x1f\x7f\0\xc3\xa9\xf0\x9f\x98\x80", 21});
    assert_string_equal(cm_buf_cstr(&b), "\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\\u0000"
                                         "\xc3\xa9\xf0\x9f\x98\x80\"");
    cm_buf_reset(&b);
    cm_json_quote(&b, CM_SLICE_LIT(""));
    assert_string_equal(cm_buf_cstr(&b), "\"\"");
    cm_buf_free(&b);
}

static void lossy_is(const char *in, size_t n, const char *want)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_str_lossy(&w, (cm_slice_t){in, n});
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b), want);
    assert_true(cm_json_utf8_valid(b.p, b.len));
    cm_buf_free(&b);
}

#define FFFD "\xef\xbf\xbd"

static void test_writer_lossy(void **state)
{
    (void)state;
    lossy_is("user-\xc3\xa9", 7, "\"user-\xc3\xa9\"");
    lossy_is("a\xff"
             "b",
             3, "\"a" FFFD "b\"");
    lossy_is("\xc0\xaf", 2, "\"" FFFD FFFD "\"");          /* overlong: 2 bad bytes */
    lossy_is("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\""); /* surrogate */
    lossy_is("\xe2\x82"
             "x",
             3, "\"" FFFD "x\"");                /* truncated: one */
    lossy_is("\xf0\x9f\x98", 3, "\"" FFFD "\""); /* truncated at end */
    lossy_is("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"");
    lossy_is("\x80\x80", 2, "\"" FFFD FFFD "\"");
    lossy_is("\"\n\xff", 3, "\"\\\"\\n" FFFD "\"");
    lossy_is("\0", 1, "\"\\u0000\"");

    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key_lossy(&w, CM_SLICE_LIT("k\xfe"));
    cm_json_null(&w);
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"k" FFFD "\":null}");
    cm_buf_reset(&b);
    cm_json_quote_lossy(&b, CM_SLICE_LIT("ok"));
    assert_string_equal(cm_buf_cstr(&b), "\"ok\"");
    cm_buf_free(&b);
}

static const char *dbl_text(double d, cm_buf_t *b)
{
    cm_json_writer_t w;
    cm_buf_reset(b);
    cm_json_writer_init(&w, b);
    cm_json_dbl(&w, d);
    return cm_buf_cstr(b);
}

static void test_writer_double(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(dbl_text(0.1, &b), "0.1");
    assert_string_equal(dbl_text(1.0, &b), "1");
    assert_string_equal(dbl_text(-2.5, &b), "-2.5");
    assert_string_equal(dbl_text(1e21, &b), "1e+21");
    assert_string_equal(dbl_text(0.1 + 0.2, &b), "0.30000000000000004");
    assert_string_equal(dbl_text(1.0 / 3.0, &b), "0.3333333333333333");
    assert_string_equal(dbl_text(5e-324, &b), "4.94065645841247e-324");
    assert_string_equal(dbl_text(-0.0, &b), "-0");
    assert_string_equal(dbl_text(NAN, &b), "null");
    assert_string_equal(dbl_text(INFINITY, &b), "null");
    assert_string_equal(dbl_text(-INFINITY, &b), "null");
    /* Every output parses back to the same double. */
    double vals[] = {1.7976931348623157e308, 2.2250738585072014e-308, 123456789.123456789, 1e-7,
                     9007199254740993.0,     3.141592653589793};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        const char *t = dbl_text(vals[i], &b);
        parsed_t r = parse(t);
        double d;
        assert_int_equal(cm_json_as_double(root(&r), &d), 0);
        assert_true(d == vals[i]);
        done(&r);
    }
    cm_buf_free(&b);
}

/* parse -> cm_json_value -> parse gives the same values; the output is
 * canonical, so a second write gives the same bytes. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *src =
        " { \"event\" : \"$pageview\", \"props\": {\"\\u0041\\/b\": [1, -2.5e3, true, false, null],"
        " \"s\": \"tab\\there \\\"q\\\" \\ud83d\\ude00 \xc3\xa9\", \"e\": {}, \"a\": [],"
        " \"n\": {\"m\": [[[\"deep\"]]]}}, \"big\": 123456789012345678901234567890 } ";
    const char *canon =
        "{\"event\":\"$pageview\",\"props\":{\"A/b\":[1,-2.5e3,true,false,null],"
        "\"s\":\"tab\\there \\\"q\\\" \xf0\x9f\x98\x80 \xc3\xa9\",\"e\":{},\"a\":[],"
        "\"n\":{\"m\":[[[\"deep\"]]]}},\"big\":123456789012345678901234567890}";
    parsed_t r = parse(src);
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_value(&w, root(&r));
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&out), canon);

    parsed_t r2 = parse(out.p);
    assert_int_equal(r2.doc->n, r.doc->n);
    cm_buf_t again = CM_BUF_INIT;
    cm_json_writer_init(&w, &again);
    cm_json_value(&w, root(&r2));
    assert_string_equal(cm_buf_cstr(&again), canon);

    /* A sub-value can be written inside another document, raw or re-encoded. */
    cm_buf_reset(&out);
    cm_json_writer_init(&w, &out);
    cm_json_begin_array(&w);
    cm_json_raw_value(&w, cm_json_raw(cm_json_path(cm_json_root(r.doc), "props", "n")));
    cm_json_value(&w, cm_json_path(cm_json_root(r.doc), "props", "e"));
    cm_json_value(&w, cm_json_path(cm_json_root(r.doc), "props", "A/b"));
    cm_json_end_array(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&out),
                        "[{\"m\": [[[\"deep\"]]]},{},[1,-2.5e3,true,false,null]]");
    cm_buf_free(&out);
    cm_buf_free(&again);
    done(&r);
    done(&r2);
}

/* An object left open goes on with a resumed writer (a comma only once it
 * has members) and takes another object's members whole. */
static void test_writer_continue(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "a");
    cm_json_int(&w, 1); /* left open: "{"a":1" */
    cm_json_writer_t r;
    cm_json_writer_resume(&r, &b);
    cm_json_key(&r, "b");
    cm_json_boolean(&r, true);
    cm_json_end_object(&r);
    assert_int_equal(cm_json_writer_finish(&r), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"a\":1,\"b\":true}");

    /* only the brace so far, after other bytes (a cache entry's prefix) */
    cm_buf_reset(&b);
    cm_buf_append_cstr(&b, "when\n{");
    cm_json_writer_resume(&r, &b);
    cm_json_key(&r, "c");
    cm_json_null(&r);
    cm_json_end_object(&r);
    assert_int_equal(cm_json_writer_finish(&r), 0);
    assert_string_equal(cm_buf_cstr(&b), "when\n{\"c\":null}");

    /* the members of whole objects, into an open one */
    cm_buf_reset(&b);
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_members_raw(&w, CM_SLICE_LIT("{}"));
    cm_json_members_raw(&w, CM_SLICE_LIT("{\"x\":[1,{\"y\":2}]}"));
    cm_json_members_raw(&w, CM_SLICE_LIT("{\"z\":\"}\"}"));
    cm_json_key(&w, "t");
    cm_json_int(&w, 3);
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"x\":[1,{\"y\":2}],\"z\":\"}\",\"t\":3}");

    /* misuse: outside an object, a key pending, not an object, nothing */
    cm_buf_reset(&b);
    cm_json_writer_init(&w, &b);
    cm_json_members_raw(&w, CM_SLICE_LIT("{\"x\":1}"));
    assert_int_equal(cm_json_writer_finish(&w), CM_EINVAL);
    cm_json_writer_init(&w, &b);
    cm_json_begin_array(&w);
    cm_json_members_raw(&w, CM_SLICE_LIT("{\"x\":1}"));
    assert_int_equal(cm_json_writer_finish(&w), CM_EINVAL);
    cm_buf_reset(&b);
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "k");
    cm_json_members_raw(&w, CM_SLICE_LIT("{\"x\":1}"));
    assert_int_equal(cm_json_writer_finish(&w), CM_EINVAL);
    cm_buf_reset(&b);
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_members_raw(&w, CM_SLICE_LIT("[1]"));
    assert_int_equal(cm_json_writer_finish(&w), CM_EINVAL);
    cm_buf_reset(&b);
    cm_json_writer_resume(&r, &b);
    assert_int_equal(cm_json_writer_finish(&r), CM_EINVAL);
    cm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar_accepts),
        cmocka_unit_test(test_grammar_rejects),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_surrogates),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_tape_shape),
        cmocka_unit_test(test_parse_into_reuse),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_iteration),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_uint64),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_bool_null),
        cmocka_unit_test(test_writer_structure),
        cmocka_unit_test(test_writer_misuse),
        cmocka_unit_test(test_writer_continue),
        cmocka_unit_test(test_writer_escaping),
        cmocka_unit_test(test_writer_lossy),
        cmocka_unit_test(test_writer_double),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_raw_value_compact),
        cmocka_unit_test(test_index),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
