/*
 * json_parse.c - the strict RFC 8259 tape parser (see json.h for the model).
 *
 * Design:
 *   - One pass, no recursion: the parser is a small goto state machine
 *     (value / key / after_value / close). The stack of open containers
 *     lives in the tape itself: while a container is open its `next` field
 *     holds its parent's index, and closing it swaps in the real `next`.
 *     So depth costs no memory and the depth limit is a plain counter.
 *   - No allocation per node: the tape is one array grown geometrically, and
 *     cm_json_parse_into() reuses it across documents.
 *   - Strings are scanned eight bytes at a time (SWAR) for the only bytes
 *     that need attention: '"', '\\', control characters and non-ASCII.
 *     Non-ASCII starts a full UTF-8 check of that sequence (Unicode 15,
 *     table 3-7). Outside strings every valid byte is ASCII, so this checks
 *     the whole input.
 *   - Numbers are checked against the grammar and only their span is kept;
 *     the accessors convert on demand.
 */
#include "cm/json.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

#define NO_PARENT      UINT32_MAX
#define HARD_MAX_BYTES ((size_t)UINT32_MAX - 1)
#define HARD_MAX_NODES ((1u << 28) - 1)

/* Bytes that stop the fast string scan: '"', '\\', < 0x20, >= 0x80. */
static const uint8_t str_special[256] = {
    [0x00 ... 0x1f] = 1,
    ['"'] = 1,
    ['\\'] = 1,
    [0x80 ... 0xff] = 1,
};

static const uint8_t is_ws[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

/* Hex digit values plus one; 0 for anything else. */
static const uint8_t hexval1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* ---- UTF-8 ----------------------------------------------------------------- */

/*
 * The sequence at s (n >= 1 bytes available): its length when well formed,
 * otherwise minus the length of its maximal ill-formed prefix, which is
 * what a lossy decoder replaces with one U+FFFD (Unicode's recommended
 * practice).
 */
static inline int utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xbf;
    int need;
    if (c < 0x80)
        return 1;
    if (c < 0xc2)
        return -1; /* continuation byte or overlong 2-byte lead */
    if (c < 0xe0) {
        need = 1;
    } else if (c < 0xf0) {
        need = 2;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (c < 0xf5) {
        need = 3;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return -1;
    }
    if (n < 2 || s[1] < lo || s[1] > hi)
        return -1;
    for (int i = 2; i <= need; i++)
        if ((size_t)i >= n || (s[i] & 0xc0) != 0x80)
            return -i;
    return need + 1;
}

int cm__json_utf8_seq(const unsigned char *s, size_t n)
{
    return utf8_seq(s, n);
}

bool cm_json_utf8_valid(const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int r = utf8_seq(s + i, n - i);
        if (r < 0)
            return false;
        i += (size_t)r;
    }
    return true;
}

/* ---- scanners ------------------------------------------------------------ */

static inline bool hex4(const unsigned char *p, uint32_t *out)
{
    uint32_t a = hexval1[p[0]], b = hexval1[p[1]], c = hexval1[p[2]], d = hexval1[p[3]];
    if (!a || !b || !c || !d)
        return false;
    *out = (a - 1) << 12 | (b - 1) << 8 | (c - 1) << 4 | (d - 1);
    return true;
}

uint32_t cm__json_hex4(const char *p)
{
    uint32_t v = 0;
    hex4((const unsigned char *)p, &v);
    return v;
}

static inline size_t skip_ws(const unsigned char *s, size_t pos, size_t len)
{
    while (pos < len && is_ws[s[pos]])
        pos++;
    return pos;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR  1
#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* High bit set in each byte of v that is '"', '\\', < 0x20 or >= 0x80.
 * Bits above the first true one may be false positives (borrows), so only
 * the lowest set bit is meaningful. */
static inline uint64_t special_bytes(uint64_t v)
{
    uint64_t q = v ^ (ONES * '"');
    uint64_t b = v ^ (ONES * '\\');
    uint64_t ctl = (v - ONES * 0x20) & ~v;
    q = (q - ONES) & ~q;
    b = (b - ONES) & ~b;
    return (ctl | q | b | v) & HIGHS;
}
#endif

/*
 * Handles the escape whose backslash is at *posp. Returns NULL and advances
 * *posp past it, or returns a message and leaves *posp at the backslash.
 */
static const char *scan_escape(const unsigned char *s, size_t len, size_t *posp)
{
    size_t pos = *posp;
    uint32_t cp, lo;
    if (pos + 1 >= len)
        return "unterminated string";
    switch (s[pos + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': *posp = pos + 2; return NULL;
    case 'u': break;
    default: return "invalid escape";
    }
    if (len - pos < 6 || !hex4(s + pos + 2, &cp))
        return "invalid \\u escape";
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return "lone surrogate";
    if (cp >= 0xd800 && cp <= 0xdbff) {
        /* A high surrogate must be followed at once by a low one. */
        if (len - pos < 12 || s[pos + 6] != '\\' || s[pos + 7] != 'u')
            return "lone surrogate";
        if (!hex4(s + pos + 8, &lo))
            return "invalid \\u escape";
        if (lo < 0xdc00 || lo > 0xdfff)
            return "lone surrogate";
        *posp = pos + 12;
        return NULL;
    }
    *posp = pos + 6;
    return NULL;
}

/*
 * Scans the string whose opening quote is at *posp. On success returns NULL,
 * sets *posp just past the closing quote and sets CM_JSON_META_FLAG in
 * *flags if it holds escapes. On failure returns a message with *posp at
 * the offending byte.
 */
static inline const char *scan_string(const unsigned char *s, size_t len, size_t *posp,
                                      uint32_t *flags)
{
    size_t pos = *posp + 1;
    for (;;) {
#ifdef SWAR
        while (len - pos >= 8) {
            uint64_t v;
            memcpy(&v, s + pos, 8);
            uint64_t m = special_bytes(v);
            if (m) {
                pos += (size_t)__builtin_ctzll(m) >> 3;
                goto special;
            }
            pos += 8;
        }
#endif
        while (pos < len && !str_special[s[pos]])
            pos++;
        if (pos >= len) {
            *posp = len;
            return "unterminated string";
        }
#ifdef SWAR
    special:
#endif
        if (s[pos] == '"') {
            *posp = pos + 1;
            return NULL;
        }
        if (s[pos] == '\\') {
            *flags |= CM_JSON_META_FLAG;
            const char *msg = scan_escape(s, len, &pos);
            if (msg) {
                *posp = pos;
                return msg;
            }
        } else if (s[pos] < 0x20) {
            *posp = pos;
            return "control character in string";
        } else {
            int r = utf8_seq(s + pos, len - pos);
            if (r < 0) {
                *posp = pos;
                return "invalid UTF-8";
            }
            pos += (size_t)r;
        }
    }
}

static inline bool is_digit(unsigned c)
{
    return c - '0' < 10;
}

/* Same contract as scan_string(), for the number starting at *posp. */
static inline const char *scan_number(const unsigned char *s, size_t len, size_t *posp,
                                      uint32_t *flags)
{
    size_t pos = *posp;
    const char *msg = "invalid number";
    if (s[pos] == '-')
        pos++;
    if (pos >= len || !is_digit(s[pos]))
        goto bad;
    if (s[pos] == '0') {
        pos++;
        if (pos < len && is_digit(s[pos])) {
            msg = "leading zero in number";
            goto bad;
        }
    } else {
        while (pos < len && is_digit(s[pos]))
            pos++;
    }
    if (pos < len && s[pos] == '.') {
        pos++;
        *flags |= CM_JSON_META_FLAG;
        if (pos >= len || !is_digit(s[pos])) {
            msg = "digit expected after '.'";
            goto bad;
        }
        while (pos < len && is_digit(s[pos]))
            pos++;
    }
    if (pos < len && (s[pos] | 0x20) == 'e') {
        pos++;
        *flags |= CM_JSON_META_FLAG;
        if (pos < len && (s[pos] == '+' || s[pos] == '-'))
            pos++;
        if (pos >= len || !is_digit(s[pos])) {
            msg = "digit expected in exponent";
            goto bad;
        }
        while (pos < len && is_digit(s[pos]))
            pos++;
    }
    *posp = pos;
    return NULL;
bad:
    *posp = pos;
    return msg;
}

/* true/false/null at pos; returns the literal's length or 0. */
static inline size_t scan_literal(const unsigned char *s, size_t len, size_t pos, uint32_t *meta)
{
    size_t left = len - pos;
    if (left >= 4 && memcmp(s + pos, "true", 4) == 0) {
        *meta = CM_JSON_BOOL | CM_JSON_META_FLAG;
        return 4;
    }
    if (left >= 5 && memcmp(s + pos, "false", 5) == 0) {
        *meta = CM_JSON_BOOL;
        return 5;
    }
    if (left >= 4 && memcmp(s + pos, "null", 4) == 0) {
        *meta = CM_JSON_NULL;
        return 4;
    }
    return 0;
}

/* ---- the tape -------------------------------------------------------------- */

/* Makes room for one more node; false when max_nodes is reached. */
static bool tape_grow(cm_json_doc_t *doc, uint32_t max_nodes)
{
    if (doc->cap >= max_nodes)
        return false;
    uint64_t cap = doc->cap ? (uint64_t)doc->cap * 2 : 64;
    if (cap > max_nodes)
        cap = max_nodes;
    doc->nodes = cm_xrealloc(doc->nodes, (size_t)cap * sizeof(cm_json_node_t));
    doc->cap = (uint32_t)cap;
    return true;
}

/* A first guess at the tape size, so typical documents never regrow:
 * event JSON averages about one value per 10-20 bytes. */
static void tape_presize(cm_json_doc_t *doc, size_t len, uint32_t max_nodes)
{
    size_t want = len / 12 + 16;
    if (want > max_nodes)
        want = max_nodes;
    if (doc->cap < want) {
        free(doc->nodes);
        doc->nodes = cm_xmalloc(want * sizeof(cm_json_node_t));
        doc->cap = (uint32_t)want;
    }
}

typedef struct {
    uint32_t max_depth;
    size_t max_bytes;
    uint32_t max_nodes;
} limits_t;

static limits_t resolve_limits(const cm_json_limits_t *l)
{
    limits_t r = {CM_JSON_DEFAULT_MAX_DEPTH, CM_JSON_DEFAULT_MAX_BYTES, CM_JSON_DEFAULT_MAX_NODES};
    if (l && l->max_depth)
        r.max_depth = l->max_depth;
    if (l && l->max_bytes)
        r.max_bytes = CM_MIN(l->max_bytes, HARD_MAX_BYTES);
    if (l && l->max_nodes)
        r.max_nodes = CM_MIN(l->max_nodes, HARD_MAX_NODES);
    return r;
}

/* ---- the parser ------------------------------------------------------------ */

/* Convenience for the state machine below. */
#define FAIL(c, at, m)                                                                             \
    do {                                                                                           \
        ecode = (c);                                                                               \
        epos = (at);                                                                               \
        emsg = (m);                                                                                \
        goto fail;                                                                                 \
    } while (0)

#define NEED_NODE()                                                                                \
    do {                                                                                           \
        if (CM_UNLIKELY(n == doc->cap)) {                                                          \
            if (!tape_grow(doc, lim.max_nodes))                                                    \
                FAIL(CM_ETOOBIG, pos, "too many values");                                          \
            nodes = doc->nodes;                                                                    \
        }                                                                                          \
    } while (0)

int cm_json_parse_into(cm_json_doc_t *doc, const char *p, size_t len,
                       const cm_json_limits_t *limits, cm_json_error_t *err)
{
    const unsigned char *s = (const unsigned char *)p;
    limits_t lim = resolve_limits(limits);
    size_t pos = 0, epos = 0;
    uint32_t n = 0, cur = NO_PARENT, depth = 0, flags;
    bool in_obj = false;
    int ecode = 0;
    const char *emsg = NULL, *msg;
    cm_json_node_t *nodes;

    doc->src = p;
    doc->src_len = len;
    doc->n = 0;
    if (len > lim.max_bytes)
        FAIL(CM_ETOOBIG, lim.max_bytes, "input too large");
    tape_presize(doc, len, lim.max_nodes);
    nodes = doc->nodes;
    if (len >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
        FAIL(CM_EINVAL, 0, "byte order mark not allowed");
    pos = skip_ws(s, 0, len);

value:
    if (pos >= len)
        FAIL(CM_EINVAL, pos, "unexpected end of input");
    NEED_NODE();
    nodes[n].off = (uint32_t)pos;
    flags = 0;
    switch (s[pos]) {
    case '"': {
        size_t start = pos;
        if ((msg = scan_string(s, len, &pos, &flags)) != NULL)
            FAIL(CM_EINVAL, pos, msg);
        nodes[n].len = (uint32_t)(pos - start);
        nodes[n].meta = CM_JSON_STRING | flags;
        nodes[n].next = n + 1;
        n++;
        goto after_value;
    }
    case '{':
    case '[':
        if (depth >= lim.max_depth)
            FAIL(CM_ERANGE, pos, "nesting too deep");
        depth++;
        in_obj = s[pos] == '{';
        nodes[n].meta = in_obj ? CM_JSON_OBJECT : CM_JSON_ARRAY;
        nodes[n].next = cur; /* parent link until the container closes */
        cur = n++;
        pos = skip_ws(s, pos + 1, len);
        if (pos < len && s[pos] == (in_obj ? '}' : ']'))
            goto close;
        if (in_obj)
            goto key;
        goto value;
    case 't':
    case 'f':
    case 'n': {
        size_t l = scan_literal(s, len, pos, &flags);
        if (!l)
            FAIL(CM_EINVAL, pos, "invalid literal");
        nodes[n].len = (uint32_t)l;
        nodes[n].meta = flags;
        nodes[n].next = n + 1;
        n++;
        pos += l;
        goto after_value;
    }
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
        size_t start = pos;
        if ((msg = scan_number(s, len, &pos, &flags)) != NULL)
            FAIL(CM_EINVAL, pos, msg);
        nodes[n].len = (uint32_t)(pos - start);
        nodes[n].meta = CM_JSON_NUMBER | flags;
        nodes[n].next = n + 1;
        n++;
        goto after_value;
    }
    default: FAIL(CM_EINVAL, pos, "unexpected character");
    }

key:
    if (pos >= len)
        FAIL(CM_EINVAL, pos, "unexpected end of input");
    if (s[pos] != '"')
        FAIL(CM_EINVAL, pos, "expected string key");
    NEED_NODE();
    {
        size_t start = pos;
        flags = 0;
        if ((msg = scan_string(s, len, &pos, &flags)) != NULL)
            FAIL(CM_EINVAL, pos, msg);
        nodes[n].off = (uint32_t)start;
        nodes[n].len = (uint32_t)(pos - start);
        nodes[n].meta = CM_JSON_STRING | flags;
        nodes[n].next = n + 1;
        n++;
    }
    pos = skip_ws(s, pos, len);
    if (pos >= len || s[pos] != ':')
        FAIL(CM_EINVAL, pos, "expected ':'");
    pos = skip_ws(s, pos + 1, len);
    goto value;

after_value:
    if (cur == NO_PARENT)
        goto done;
    nodes[cur].meta += 1u << CM_JSON_META_COUNT_SHIFT;
    pos = skip_ws(s, pos, len);
    if (pos >= len)
        FAIL(CM_EINVAL, pos, "unexpected end of input");
    if (s[pos] == ',') {
        pos = skip_ws(s, pos + 1, len);
        if (in_obj)
            goto key;
        goto value;
    }
    if (s[pos] == (in_obj ? '}' : ']'))
        goto close;
    FAIL(CM_EINVAL, pos, in_obj ? "expected ',' or '}'" : "expected ',' or ']'");

close : {
    /* s[pos] is the closing bracket of nodes[cur]. */
    uint32_t parent = nodes[cur].next;
    nodes[cur].len = (uint32_t)(pos + 1 - nodes[cur].off);
    nodes[cur].next = n;
    depth--;
    pos++;
    cur = parent;
    in_obj = cur != NO_PARENT && (nodes[cur].meta & 7u) == CM_JSON_OBJECT;
    goto after_value;
}

done:
    pos = skip_ws(s, pos, len);
    if (pos != len)
        FAIL(CM_EINVAL, pos, "unexpected data after the value");
    doc->n = n;
    return 0;

fail:
    doc->n = 0;
    if (err) {
        err->code = ecode;
        err->offset = epos;
        err->msg = emsg;
    }
    return ecode;
}

int cm_json_parse(const char *p, size_t len, const cm_json_limits_t *limits, cm_json_doc_t **out,
                  cm_json_error_t *err)
{
    cm_json_doc_t *doc = cm_xmalloc(sizeof(*doc));
    *doc = CM_JSON_DOC_INIT;
    int rc = cm_json_parse_into(doc, p, len, limits, err);
    if (rc != 0) {
        cm_json_doc_free(doc);
        doc = NULL;
    }
    *out = doc;
    return rc;
}

void cm_json_doc_clear(cm_json_doc_t *doc)
{
    free(doc->nodes);
    *doc = CM_JSON_DOC_INIT;
}

void cm_json_doc_free(cm_json_doc_t *doc)
{
    if (!doc)
        return;
    free(doc->nodes);
    free(doc);
}
