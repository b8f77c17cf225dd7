/*
 * json.h - strict RFC 8259 JSON: a validating tape parser, typed accessors
 * and an appending writer.
 *
 * Parsing (json_parse.c) turns the input into a flat array of nodes (the
 * "tape") in document order. Every node records the byte span of its value
 * in the input, so any sub-value can be handed on as raw bytes without
 * copying. Containers also record their child count and the tape index just
 * past their last descendant, so siblings are skipped in O(1). An object's
 * children alternate key (a string node) and value.
 *
 * The document BORROWS the input: the bytes passed to the parser must stay
 * alive and unchanged for as long as the document (and any cm_json_t or
 * slice taken from it) is used.
 *
 * Strictness, decided once (docs/json.md has the full table):
 *   - the whole input must be UTF-8 (no overlongs, no encoded surrogates,
 *     nothing above U+10FFFF, no truncated sequences);
 *   - a byte order mark is rejected (RFC 8259 section 8.1: must not add one);
 *   - \u escapes must form valid UTF-16: a lone or reversed surrogate is
 *     rejected, so every decoded string is valid UTF-8;
 *   - nesting deeper than the limit (default 128) is an error, not a crash;
 *   - numbers are checked against the grammar only; converting them is the
 *     accessors' job, so 1e400 parses and cm_json_as_double() reports ERANGE.
 *
 * Accessors (json_access.c) take a small value handle, cm_json_t. A handle
 * with doc == NULL is "none" (a missing member, an index out of range); every
 * accessor accepts it and fails softly, so lookups chain without checks.
 *
 * The writer (json_write.c) appends to a cm_buf_t and inserts commas and
 * colons itself from a small state stack.
 */
#ifndef CM_JSON_H
#define CM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"

/* ---- types --------------------------------------------------------------- */

typedef enum {
    CM_JSON_NONE = 0, /* not a value: the "missing" handle */
    CM_JSON_NULL,
    CM_JSON_BOOL,
    CM_JSON_NUMBER,
    CM_JSON_STRING,
    CM_JSON_ARRAY,
    CM_JSON_OBJECT
} cm_json_type_t;

/*
 * One tape entry, 16 bytes. Read it through the accessors; the layout is
 * public only so the trivial ones can be inline.
 *   meta bits 0-2: cm_json_type_t
 *   meta bit 3:    strings: has escapes; numbers: has '.', 'e' or 'E';
 *                  booleans: true
 *   meta bits 4-31: containers: number of elements / members
 *   next:          index just past this value and all its descendants
 */
typedef struct {
    uint32_t off; /* first byte of the value in the input */
    uint32_t len; /* bytes in the value; strings include both quotes */
    uint32_t next;
    uint32_t meta;
} cm_json_node_t;

#define CM_JSON_META_FLAG        0x8u
#define CM_JSON_META_COUNT_SHIFT 4

typedef struct {
    const char *src; /* borrowed input */
    size_t src_len;
    cm_json_node_t *nodes; /* owned; node 0 is the root */
    uint32_t n;            /* nodes in use */
    uint32_t cap;          /* nodes allocated */
} cm_json_doc_t;

/* Zero in a field means "use the default". */
typedef struct {
    uint32_t max_depth; /* nested containers; default 128 */
    size_t max_bytes;   /* input size; default 256 MiB, hard cap 4 GiB - 1 */
    uint32_t max_nodes; /* tape entries; default 16 Mi, hard cap 2^28 - 1 */
} cm_json_limits_t;

#define CM_JSON_DEFAULT_MAX_DEPTH 128u
#define CM_JSON_DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define CM_JSON_DEFAULT_MAX_NODES (16u << 20)

typedef struct {
    /* CM_EINVAL: syntax. CM_ETOOBIG: a size limit (bytes, values), which a
     * smaller input would pass. CM_ERANGE: nesting deeper than max_depth, a
     * shape no split of the input fixes (a service answers 400, not 413). */
    int code;
    size_t offset;   /* byte offset where the problem was found */
    const char *msg; /* short static text, e.g. "invalid UTF-8" */
} cm_json_error_t;

/* A value handle: the document and a tape index. doc == NULL means none. */
typedef struct {
    const cm_json_doc_t *doc;
    uint32_t i;
} cm_json_t;

#define CM_JSON_NONE_VALUE ((cm_json_t){NULL, 0})

/* ---- parsing (json_parse.c) --------------------------------------------- */

/*
 * Parses p[0..len) into a new document. On success returns 0 and sets *out;
 * free it with cm_json_doc_free(). On failure returns CM_EINVAL, CM_ETOOBIG or CM_ERANGE,
 * sets *out = NULL and fills *err when err is not NULL. limits may be NULL.
 */
int cm_json_parse(const char *p, size_t len, const cm_json_limits_t *limits, cm_json_doc_t **out,
                  cm_json_error_t *err);

/*
 * The same into a caller-owned document, reusing its tape allocation: the
 * fast path for a loop that parses many bodies. Initialise the doc with
 * CM_JSON_DOC_INIT and release it with cm_json_doc_clear(). After a failure
 * the doc holds no value (n == 0) but keeps its allocation.
 */
#define CM_JSON_DOC_INIT ((cm_json_doc_t){NULL, 0, NULL, 0, 0})
int cm_json_parse_into(cm_json_doc_t *doc, const char *p, size_t len,
                       const cm_json_limits_t *limits, cm_json_error_t *err);
void cm_json_doc_clear(cm_json_doc_t *doc); /* frees the tape, keeps doc */
void cm_json_doc_free(cm_json_doc_t *doc);  /* for cm_json_parse(); NULL ok */

/* Quick check that p[0..n) is valid UTF-8 by the rules above. */
bool cm_json_utf8_valid(const char *p, size_t n);

/* ---- accessors (json_access.c) ------------------------------------------ */

static inline cm_json_t cm_json_root(const cm_json_doc_t *doc)
{
    return (doc && doc->n) ? (cm_json_t){doc, 0} : CM_JSON_NONE_VALUE;
}

static inline cm_json_type_t cm_json_type(cm_json_t v)
{
    return v.doc ? (cm_json_type_t)(v.doc->nodes[v.i].meta & 7u) : CM_JSON_NONE;
}

static inline bool cm_json_exists(cm_json_t v)
{
    return v.doc != NULL;
}

/* The value's bytes in the input, e.g. to forward a sub-object unchanged. */
static inline cm_slice_t cm_json_raw(cm_json_t v)
{
    if (!v.doc)
        return CM_SLICE_NULL;
    const cm_json_node_t *n = &v.doc->nodes[v.i];
    return (cm_slice_t){v.doc->src + n->off, n->len};
}

/* Elements of an array or members of an object; 0 for anything else. */
static inline uint32_t cm_json_len(cm_json_t v)
{
    cm_json_type_t t = cm_json_type(v);
    if (t != CM_JSON_ARRAY && t != CM_JSON_OBJECT)
        return 0;
    return v.doc->nodes[v.i].meta >> CM_JSON_META_COUNT_SHIFT;
}

/*
 * Object member by key. The key is compared with the DECODED member name,
 * so "\u0061" matches "a". With duplicate names the LAST one wins (as in
 * serde_json and JavaScript's JSON.parse). None if absent or not an object.
 */
cm_json_t cm_json_get(cm_json_t obj, const char *key);
/* Member a, or member b when a is absent (a field with two spellings, e.g.
 * snake_case and camelCase); b may be NULL. */
cm_json_t cm_json_get_either(cm_json_t obj, const char *a, const char *b);
cm_json_t cm_json_get_s(cm_json_t obj, cm_slice_t key);

/* Nested lookup: cm_json_path(ev, "properties", "distinct_id"). */
#define cm_json_path(v, ...) cm__json_path((v), __VA_ARGS__, (const char *)NULL)
cm_json_t cm__json_path(cm_json_t v, ...);

/* Array element by index (O(index)); none if out of range. */
cm_json_t cm_json_at(cm_json_t arr, uint32_t index);

/*
 * Iteration over an array or object:
 *   cm_json_iter_t it = cm_json_iter(obj);
 *   cm_json_t k, v;
 *   while (cm_json_next(&it, &k, &v)) ...
 * For arrays the key is none. An iterator over a non-container is empty.
 */
typedef struct {
    const cm_json_doc_t *doc;
    uint32_t i;   /* next child's tape index */
    uint32_t end; /* the container's next */
    bool object;
} cm_json_iter_t;

cm_json_iter_t cm_json_iter(cm_json_t container);
bool cm_json_next(cm_json_iter_t *it, cm_json_t *key, cm_json_t *val);

/* Strings. "Inner" is the raw text between the quotes, escapes undecoded. */
bool cm_json_str_has_escapes(cm_json_t v);
cm_slice_t cm_json_str_inner(cm_json_t v); /* NULL slice if not a string */
/* Appends the decoded value to out; CM_EINVAL if v is not a string. */
int cm_json_str_append(cm_json_t v, cm_buf_t *out);
/*
 * The decoded value, without copying when the string has no escapes;
 * otherwise it is decoded and appended to scratch and *out points into
 * scratch (valid until scratch is next changed). CM_EINVAL if not a string.
 */
int cm_json_as_str(cm_json_t v, cm_buf_t *scratch, cm_slice_t *out);

/*
 * An index of one object's members by key, for an object that is looked up
 * many times (a request's 50,000 person properties read by 10,000 flags):
 * built in one pass, then each lookup is a hash probe instead of the scan
 * cm_json_get_s does. Same answers as cm_json_get_s: keys compare decoded,
 * and the last duplicate wins. The index borrows the document: free it
 * first. NULL when obj is not an object.
 */
typedef struct cm_json_index cm_json_index_t;
cm_json_index_t *cm_json_index_new(cm_json_t obj);
cm_json_t cm_json_index_get(const cm_json_index_t *ix, cm_slice_t key);
void cm_json_index_free(cm_json_index_t *ix); /* NULL is fine */
/* Whether v is a string whose decoded value equals s. */
bool cm_json_str_eq(cm_json_t v, cm_slice_t s);

/*
 * Numbers. The integer accessors are exact: any number whose value is a
 * whole number converts, whatever its spelling ("1.0", "1e2", "-0", "250e-1"
 * all qualify); other numbers give CM_EINVAL; whole numbers out of range
 * give CM_ERANGE. Non-numbers give CM_EINVAL. *out is untouched on error.
 */
int cm_json_as_int64(cm_json_t v, int64_t *out);
int cm_json_as_uint64(cm_json_t v, uint64_t *out);
/*
 * Correctly rounded (strtod in the C locale). Overflow gives CM_ERANGE and
 * sets *out to +-HUGE_VAL; underflow rounds to zero or a subnormal and is
 * not an error.
 */
int cm_json_as_double(cm_json_t v, double *out);

int cm_json_as_bool(cm_json_t v, bool *out); /* CM_EINVAL if not a boolean */
static inline bool cm_json_is_null(cm_json_t v)
{
    return cm_json_type(v) == CM_JSON_NULL;
}

/* ---- writer (json_write.c) ---------------------------------------------- */

#define CM_JSON_WRITER_MAX_DEPTH 256

/*
 *   cm_json_writer_t w;
 *   cm_json_writer_init(&w, &buf);
 *   cm_json_begin_object(&w);
 *   cm_json_key(&w, "event");
 *   cm_json_str_cstr(&w, "$pageview");
 *   cm_json_end_object(&w);
 *   if (cm_json_writer_finish(&w) != 0) ...
 *
 * Misuse (a key outside an object, a value where a key is due, an
 * unbalanced end, nesting beyond CM_JSON_WRITER_MAX_DEPTH, a second
 * top-level value) sets a sticky error and the writer stops appending, so
 * one check at the end is enough.
 */
typedef struct {
    cm_buf_t *out;
    int err;
    uint32_t depth;
    bool top_done;                               /* a top-level value began */
    uint8_t stack[CM_JSON_WRITER_MAX_DEPTH + 1]; /* per-level state bits */
} cm_json_writer_t;

void cm_json_writer_init(cm_json_writer_t *w, cm_buf_t *out);
/* 0 if exactly one complete value was written, else a CM_E* code. */
int cm_json_writer_finish(const cm_json_writer_t *w);

void cm_json_begin_object(cm_json_writer_t *w);
void cm_json_end_object(cm_json_writer_t *w);
void cm_json_begin_array(cm_json_writer_t *w);
void cm_json_end_array(cm_json_writer_t *w);

/*
 * Keys and strings must be valid UTF-8: they are copied through unchanged
 * apart from escaping '"', '\' and control characters (as \n \t \r \b
 * \f or \u00XX). For untrusted bytes use the _lossy variants, which
 * replace each invalid sequence with U+FFFD.
 */
void cm_json_key(cm_json_writer_t *w, const char *key);
void cm_json_key_s(cm_json_writer_t *w, cm_slice_t key);
void cm_json_key_lossy(cm_json_writer_t *w, cm_slice_t key);
void cm_json_str_cstr(cm_json_writer_t *w, const char *s);
void cm_json_str_s(cm_json_writer_t *w, cm_slice_t s);
void cm_json_str_lossy(cm_json_writer_t *w, cm_slice_t s);

void cm_json_int(cm_json_writer_t *w, int64_t v);
void cm_json_uint(cm_json_writer_t *w, uint64_t v);
/* Shortest of %.15g/%.16g/%.17g that reads back equal; NaN/Inf -> null. */
void cm_json_dbl(cm_json_writer_t *w, double v);
void cm_json_boolean(cm_json_writer_t *w, bool v);
void cm_json_null(cm_json_writer_t *w);
/* Inserts an already-valid JSON value verbatim, e.g. cm_json_raw(v). */
void cm_json_raw_value(cm_json_writer_t *w, cm_slice_t json);
/* The same with the whitespace between tokens dropped: strings and numbers
 * are copied byte for byte, so it costs one pass and no parse (unlike
 * cm_json_value, which decodes and re-escapes every string). */
void cm_json_raw_value_compact(cm_json_writer_t *w, cm_slice_t json);
/*
 * Continuing an object, without touching its bytes:
 *
 * cm_json_writer_resume starts w on out, which ends inside an object a
 * writer opened and left open: out ends with that object's '{' or with
 * one of its complete members. w goes on adding members to it (a comma
 * first when it has some) and cm_json_end_object closes it. So an open
 * object can be handed on, kept in a longer buffer (a cache entry) or
 * closed by its new owner.
 *
 * cm_json_members_raw writes the members of object, a valid compact
 * object ("{}" writes none), into the object w has open (no key pending),
 * as if each had been written there: the other way to join two objects.
 * Anything that is not '{' ... '}' sets the error.
 */
void cm_json_writer_resume(cm_json_writer_t *w, cm_buf_t *out);
void cm_json_members_raw(cm_json_writer_t *w, cm_slice_t object);

/*
 * Re-serialises a parsed value compactly: strings decoded and re-escaped,
 * numbers copied as written, insignificant whitespace dropped. A none
 * handle sets the error.
 */
void cm_json_value(cm_json_writer_t *w, cm_json_t v);

/* Appends s as a JSON string literal, quotes included, outside any writer. */
void cm_json_quote(cm_buf_t *b, cm_slice_t s);
void cm_json_quote_lossy(cm_buf_t *b, cm_slice_t s);

/* ---- internals shared between the json_*.c files ------------------------ */

/* Length of the valid UTF-8 sequence at s (1-4), or -(bytes to replace). */
int cm__json_utf8_seq(const unsigned char *s, size_t n);
/* Decodes 4 hex digits (already validated). */
uint32_t cm__json_hex4(const char *p);

#endif
