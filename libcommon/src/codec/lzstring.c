/*
 * lzstring.c - lz-string's base64 codec: decompressFromBase64 (what
 * posthog-js calls lz64) and compressToBase64, written from the format's
 * description.
 *
 * The format is LZW over UTF-16 code units. Codes are written least
 * significant bit first, numBits wide, 6 bits per output character:
 *   0 and 1   a new literal unit follows, 8 or 16 bits wide; it also
 *             becomes a dictionary entry;
 *   2         end of stream;
 *   3...      a dictionary entry (codes 0-2 never name one).
 * After every phrase the entry "previous phrase + first unit of this one"
 * is added. Both sides widen numBits in lock step: a countdown (enlargeIn)
 * drops by one per dictionary entry, and when it reaches zero it is reset
 * to 2^numBits and numBits grows by one.
 *
 * The decoder keeps all output as code units. Each dictionary entry is a
 * run of that output (a phrase is always emitted right after the previous
 * one), so it is stored as (offset, length): 8 bytes however long it is.
 * Output, units and entries are all bounded by max_out, so a stream that
 * keeps naming its longest phrase (an "lz bomb": output quadratic in the
 * input) stops with CM_ETOOBIG before anything past the bound is made.
 *
 * Unlike the JavaScript decoder, which reads a foreign character as zero
 * bits, this one rejects text outside the alphabet.
 */
#include "cm/lzstring.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/base64.h"
#include "cm/common.h"
#include "cm/err.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#define LZ_BITS         6                        /* bits per base64 character */
#define LZ_MAX_PAD      3                        /* compressToBase64 adds at most "===" */
#define LZ_MAX_LITERALS 65536                    /* an encoder announces each unit once */
#define LZ_MAX_UNITS    ((size_t)UINT32_MAX - 1) /* offsets are 32-bit */
#define LZ_MAX_ENTRIES  ((size_t)1 << 31)        /* keeps numBits <= 32 */
#define LZ_MAX_COMPRESS ((size_t)1 << 30)

/* Grows *arr (of elem-sized items) to hold need items, doubling but never
 * past max items; the caller has checked need <= max. */
static void grow(void **arr, size_t *cap, size_t need, size_t max, size_t elem)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : CM_MIN((size_t)256, max);
    while (c < need)
        c = c > max / 2 ? max : c * 2;
    *arr = cm_xrealloc(*arr, c * elem);
    *cap = c;
}

/* ---- decompression ------------------------------------------------------ */

typedef struct {
    uint32_t off; /* first unit in the output */
    uint32_t len;
} entry_t;

typedef struct {
    const char *in;
    size_t len;   /* data characters, padding excluded */
    size_t pos;   /* next character to load */
    unsigned cur; /* value of the character being read */
    unsigned bit; /* next bit of cur to read; 0: load the next char */

    uint16_t *units;
    size_t nunits, units_cap, max_units;

    entry_t *dict;
    size_t ndict, dict_cap, max_dict;

    unsigned nbits;   /* width of the next code */
    uint64_t enlarge; /* entries left before nbits grows */
} lzd_t;

/* Reads n <= 32 bits, least significant first; running out is malformed. */
static int read_bits(lzd_t *d, unsigned n, uint32_t *v)
{
    uint32_t r = 0;
    for (unsigned k = 0; k < n; k++) {
        if (d->bit == 0) {
            if (d->pos == d->len)
                return CM_EINVAL;
            d->cur = (unsigned)cm_base64_sextet((unsigned char)d->in[d->pos++], CM_B64_STD);
            d->bit = 1u << (LZ_BITS - 1);
        }
        if (d->cur & d->bit)
            r |= (uint32_t)1 << k;
        d->bit >>= 1;
    }
    *v = r;
    return CM_OK;
}

/* Makes room for n more output units. */
static int reserve_units(lzd_t *d, size_t n)
{
    if (n > d->max_units - d->nunits)
        return CM_ETOOBIG;
    grow((void **)&d->units, &d->units_cap, d->nunits + n, d->max_units, sizeof *d->units);
    return CM_OK;
}

/* Adds a dictionary entry and counts it towards the next widening. */
static int add_entry(lzd_t *d, size_t off, size_t len)
{
    if (d->ndict == d->max_dict)
        return CM_ETOOBIG;
    grow((void **)&d->dict, &d->dict_cap, d->ndict + 1, d->max_dict, sizeof *d->dict);
    d->dict[d->ndict++] = (entry_t){(uint32_t)off, (uint32_t)len};
    if (--d->enlarge == 0) {
        d->enlarge = (uint64_t)1 << d->nbits;
        d->nbits++;
    }
    return CM_OK;
}

/* Code 0 or 1: reads an 8- or 16-bit unit, outputs it, makes it an entry. */
static int literal(lzd_t *d, uint32_t code)
{
    uint32_t unit;
    int rc = read_bits(d, code == 0 ? 8 : 16, &unit);
    if (rc == CM_OK)
        rc = reserve_units(d, 1);
    if (rc != CM_OK)
        return rc;
    d->units[d->nunits++] = (uint16_t)unit;
    return add_entry(d, d->nunits - 1, 1);
}

/* Outputs the phrase a back-reference names; w is the previous phrase. */
static int copy_phrase(lzd_t *d, uint32_t code, entry_t w)
{
    if (code < d->ndict) {
        entry_t e = d->dict[code];
        int rc = reserve_units(d, e.len);
        if (rc != CM_OK)
            return rc;
        /* An entry lies wholly in earlier output: no overlap. */
        memcpy(d->units + d->nunits, d->units + e.off, (size_t)e.len * sizeof *d->units);
        d->nunits += e.len;
        return CM_OK;
    }
    if (code != d->ndict)
        return CM_EINVAL; /* names an entry that does not exist yet */
    /* The entry being defined right now: w followed by w's first unit. */
    int rc = reserve_units(d, (size_t)w.len + 1);
    if (rc != CM_OK)
        return rc;
    memcpy(d->units + d->nunits, d->units + w.off, (size_t)w.len * sizeof *d->units);
    d->units[d->nunits + w.len] = d->units[w.off];
    d->nunits += (size_t)w.len + 1;
    return CM_OK;
}

static int decode_stream(lzd_t *d)
{
    uint32_t code;
    int rc = read_bits(d, 2, &code);
    if (rc != CM_OK || code == 2)
        return rc; /* code 2 first: the empty string */
    if (code == 3)
        return CM_EINVAL;
    /* Codes 0-2 name no entry; their slots stay unused. */
    grow((void **)&d->dict, &d->dict_cap, 3, d->max_dict, sizeof *d->dict);
    d->ndict = 3;
    d->nbits = 3;
    d->enlarge = 5; /* the first literal's entry brings it to 4 */
    if ((rc = literal(d, code)) != CM_OK)
        return rc;
    entry_t w = {0, 1};
    for (;;) {
        if ((rc = read_bits(d, d->nbits, &code)) != CM_OK)
            return rc;
        if (code == 2)
            return CM_OK;
        size_t start = d->nunits;
        if (code < 2)
            rc = literal(d, code);
        else
            rc = copy_phrase(d, code, w);
        if (rc != CM_OK)
            return rc;
        /* Previous phrase plus this one's first unit: contiguous output. */
        if ((rc = add_entry(d, w.off, (size_t)w.len + 1)) != CM_OK)
            return rc;
        w = (entry_t){(uint32_t)start, (uint32_t)(d->nunits - start)};
    }
}

/* Writes code point c as UTF-8 at dst (if not NULL); returns its length. */
static size_t put_utf8(uint32_t c, unsigned char *dst)
{
    if (c < 0x80) {
        if (dst)
            dst[0] = (unsigned char)c;
        return 1;
    }
    size_t n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (dst) {
        static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
        for (size_t k = n - 1; k > 0; k--) {
            dst[k] = (unsigned char)(0x80 | (c & 0x3f));
            c >>= 6;
        }
        dst[0] = (unsigned char)(lead[n] | c);
    }
    return n;
}

/* UTF-16 to UTF-8, lone surrogates as U+FFFD; dst NULL only measures. */
static size_t utf16_to_utf8(const uint16_t *u, size_t n, unsigned char *dst)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xd800 && c <= 0xdfff) {
            if (c <= 0xdbff && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] <= 0xdfff) {
                c = 0x10000 + ((c - 0xd800) << 10) + (u[i + 1] - 0xdc00u);
                i++;
            } else {
                c = 0xfffd;
            }
        }
        w += put_utf8(c, dst ? dst + w : NULL);
    }
    return w;
}

/* Checks the alphabet and the padding; stores the data length. */
static int data_length(const char *in, size_t len, size_t *out)
{
    size_t n = len;
    while (n > 0 && in[n - 1] == '=')
        n--;
    if (len - n > LZ_MAX_PAD)
        return CM_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (cm_base64_sextet((unsigned char)in[i], CM_B64_STD) < 0)
            return CM_EINVAL;
    *out = n;
    return CM_OK;
}

int cm_lz64_decompress(const char *in, size_t len, size_t max_out, cm_buf_t *out)
{
    lzd_t d = {.in = in};
    int rc = len == 0 ? CM_EINVAL : data_length(in, len, &d.len);
    if (rc != CM_OK)
        return rc;
    /* Every unit yields at least one byte, so units <= bytes <= max_out;
     * each entry beyond the literals adds at least one unit. */
    d.max_units = CM_MIN(max_out, LZ_MAX_UNITS);
    d.max_dict = CM_MIN(d.max_units + LZ_MAX_LITERALS + 4, LZ_MAX_ENTRIES);
    rc = decode_stream(&d);
    if (rc == CM_OK) {
        size_t size = utf16_to_utf8(d.units, d.nunits, NULL);
        if (size > max_out) {
            rc = CM_ETOOBIG;
        } else if (size > 0) {
            utf16_to_utf8(d.units, d.nunits, (unsigned char *)cm_buf_reserve(out, size));
            out->len += size;
        }
    }
    free(d.units);
    free(d.dict);
    return rc;
}

/* ---- compression ---------------------------------------------------------- */

/*
 * The encoder's dictionary is a trie: node = (parent, unit), found through
 * an open-addressing hash of that pair. Node 0 is the empty root.
 */
typedef struct {
    uint32_t code;
    uint16_t unit;
    bool pending; /* a single unit whose literal has not been written */
} node_t;

typedef struct {
    uint64_t key;  /* parent << 16 | unit */
    uint32_t node; /* 0: empty slot (the root is nobody's child) */
} slot_t;

typedef struct {
    node_t *nodes;
    size_t nnodes, nodes_cap;
    slot_t *slots;
    size_t nslots; /* a power of two, kept at most half full */

    cm_buf_t *out;
    size_t out_start;   /* padding counts only what this call wrote */
    unsigned acc, nacc; /* bits of the output character being built */
    unsigned nbits;
    uint64_t enlarge;
    uint32_t next_code;
} lzc_t;

static size_t slot_of(uint64_t key, size_t nslots)
{
    key ^= key >> 31; /* a splitmix64-style finaliser */
    key *= 0x9e3779b97f4a7c15ull;
    key ^= key >> 29;
    return (size_t)key & (nslots - 1);
}

static uint32_t trie_find(const lzc_t *c, uint32_t parent, uint16_t unit)
{
    uint64_t key = (uint64_t)parent << 16 | unit;
    for (size_t i = slot_of(key, c->nslots);; i = (i + 1) & (c->nslots - 1)) {
        if (c->slots[i].node == 0 || c->slots[i].key == key)
            return c->slots[i].node;
    }
}

static void slot_put(slot_t *slots, size_t nslots, uint64_t key, uint32_t node)
{
    size_t i = slot_of(key, nslots);
    while (slots[i].node != 0)
        i = (i + 1) & (nslots - 1);
    slots[i] = (slot_t){key, node};
}

static void rehash(lzc_t *c)
{
    size_t n = c->nslots * 2;
    slot_t *s = cm_xcalloc(n, sizeof *s);
    for (size_t i = 0; i < c->nslots; i++)
        if (c->slots[i].node != 0)
            slot_put(s, n, c->slots[i].key, c->slots[i].node);
    free(c->slots);
    c->slots = s;
    c->nslots = n;
}

/* Adds the string parent+unit with the next free code. */
static uint32_t trie_add(lzc_t *c, uint32_t parent, uint16_t unit, bool pending)
{
    if ((c->nnodes + 1) * 2 > c->nslots)
        rehash(c);
    grow((void **)&c->nodes, &c->nodes_cap, c->nnodes + 1, SIZE_MAX / sizeof *c->nodes,
         sizeof *c->nodes);
    uint32_t id = (uint32_t)c->nnodes++;
    c->nodes[id] = (node_t){c->next_code++, unit, pending};
    slot_put(c->slots, c->nslots, (uint64_t)parent << 16 | unit, id);
    return id;
}

static void put_bits(lzc_t *c, uint32_t v, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        c->acc = (c->acc << 1) | ((v >> k) & 1);
        if (++c->nacc == LZ_BITS) {
            cm_buf_putc(c->out, alphabet[c->acc]);
            c->acc = 0;
            c->nacc = 0;
        }
    }
}

static void count_entry(lzc_t *c)
{
    if (--c->enlarge == 0) {
        c->enlarge = (uint64_t)1 << c->nbits;
        c->nbits++;
    }
}

/* Writes the phrase ending at node w: its literal the first time. */
static void emit(lzc_t *c, uint32_t w)
{
    node_t *n = &c->nodes[w];
    if (n->pending) {
        bool wide = n->unit > 0xff;
        put_bits(c, wide ? 1 : 0, c->nbits);
        put_bits(c, n->unit, wide ? 16 : 8);
        n->pending = false;
        count_entry(c); /* the decoder adds the literal as an entry */
    } else {
        put_bits(c, n->code, c->nbits);
    }
    count_entry(c);
}

static void encode_units(lzc_t *c, const uint16_t *u, size_t n)
{
    uint32_t w = 0; /* the root: empty phrase */
    for (size_t i = 0; i < n; i++) {
        uint32_t single = trie_find(c, 0, u[i]);
        if (single == 0)
            single = trie_add(c, 0, u[i], true);
        uint32_t wc = w ? trie_find(c, w, u[i]) : single;
        if (wc != 0) {
            w = wc;
            continue;
        }
        emit(c, w);
        trie_add(c, w, u[i], false);
        w = single;
    }
    if (w != 0)
        emit(c, w);
    put_bits(c, 2, c->nbits);
    /* Flush: lz-string always adds one more character, even an empty one. */
    put_bits(c, 0, LZ_BITS - c->nacc);
    static const char *const pad[] = {"", "===", "==", "="};
    cm_buf_append_cstr(c->out, pad[(c->out->len - c->out_start) % 4]);
}

/* Decodes one UTF-8 sequence of s[0..n) into *cp; returns its length or 0
 * if it is not valid (overlong, surrogate, above U+10FFFF, truncated). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t need;
    uint32_t c, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xc2 && b <= 0xdf) {
        need = 1, c = b & 0x1fu, min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        need = 2, c = b & 0x0fu, min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        need = 3, c = b & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (n - 1 < need)
        return 0;
    for (size_t k = 1; k <= need; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return need + 1;
}

/* UTF-8 to UTF-16 into u (room for len units: never more are needed). */
static int utf8_to_utf16(const char *in, size_t len, uint16_t *u, size_t *nunits)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t c;
        size_t k = utf8_next(s + i, len - i, &c);
        if (k == 0)
            return CM_EINVAL;
        i += k;
        if (c >= 0x10000) {
            c -= 0x10000;
            u[n++] = (uint16_t)(0xd800 + (c >> 10));
            u[n++] = (uint16_t)(0xdc00 + (c & 0x3ff));
        } else {
            u[n++] = (uint16_t)c;
        }
    }
    *nunits = n;
    return CM_OK;
}

int cm_lz64_compress(const char *in, size_t len, cm_buf_t *out)
{
    if (len > LZ_MAX_COMPRESS)
        return CM_ETOOBIG;
    uint16_t *u = cm_xmalloc((len ? len : 1) * sizeof *u);
    size_t n;
    int rc = utf8_to_utf16(in, len, u, &n);
    if (rc == CM_OK) {
        lzc_t c = {.out = out, .out_start = out->len, .nbits = 2, .enlarge = 2, .next_code = 3};
        c.nslots = 1024;
        c.slots = cm_xcalloc(c.nslots, sizeof *c.slots);
        grow((void **)&c.nodes, &c.nodes_cap, 1, SIZE_MAX / sizeof *c.nodes, sizeof *c.nodes);
        c.nnodes = 1; /* node 0: the root */
        encode_units(&c, u, n);
        free(c.slots);
        free(c.nodes);
    }
    free(u);
    return rc;
}
