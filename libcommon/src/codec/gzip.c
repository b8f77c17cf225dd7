/*
 * gzip.c - bounded gunzip and one-shot gzip on top of zlib.
 *
 * Inflation writes straight into the caller's buffer, growing it in steps
 * of at most CHUNK bytes and never past max_out + 1 bytes of output: the
 * extra byte is how an output of exactly max_out is told apart from a
 * larger one. So a bomb costs max_out plus zlib's fixed state (about 40 KB
 * with a 32 KB window) and time proportional to max_out, not to its claimed
 * size.
 */
#define ZLIB_CONST /* lets next_in point at const input */
#include "cm/gzip.h"

#include <limits.h>
#include <stdint.h>
#include <zlib.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

#define CHUNK      ((size_t)64 * 1024)
#define GZIP_WBITS (MAX_WBITS + 16) /* zlib: gzip wrapper, not zlib's own */

bool cm_gzip_magic(const void *p, size_t len)
{
    const unsigned char *b = p;
    return len >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 0x08;
}

/*
 * Like cm_buf_reserve(), but the capacity never grows past `ceiling`
 * (which must leave room for n bytes and the NUL): plain doubling could
 * allocate twice the bound a caller set against bombs.
 */
static char *reserve_capped(cm_buf_t *b, size_t n, size_t ceiling)
{
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap < 32 ? 64 : b->cap;
        while (cap < need && cap <= SIZE_MAX / 2)
            cap *= 2;
        cap = CM_MAX(cap, need);
        cap = CM_MIN(cap, ceiling);
        b->p = cm_xrealloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}

/* The input is handed to zlib in pieces that fit its 32-bit counters. */
typedef struct {
    const unsigned char *p;
    size_t left;
} feed_t;

static void feed(z_stream *zs, feed_t *f)
{
    if (zs->avail_in == 0 && f->left > 0) {
        size_t n = CM_MIN(f->left, (size_t)UINT_MAX);
        zs->next_in = f->p;
        zs->avail_in = (uInt)n;
        f->p += n;
        f->left -= n;
    }
}

static int inflate_all(z_stream *zs, feed_t *f, size_t max_out, cm_buf_t *out)
{
    size_t produced = 0;
    size_t ceiling = out->len + 2;
    ceiling = max_out > SIZE_MAX - ceiling ? SIZE_MAX : ceiling + max_out;

    for (;;) {
        feed(zs, f);
        /* Room for one byte past the limit, computed without overflow. */
        size_t budget = max_out - produced;
        size_t room = budget < CHUNK ? budget + 1 : CHUNK;
        zs->next_out = (Bytef *)reserve_capped(out, room, ceiling);
        zs->avail_out = (uInt)room;

        int zrc = inflate(zs, Z_NO_FLUSH);
        size_t got = room - zs->avail_out;
        out->len += got;
        produced += got;
        if (produced > max_out)
            return CM_ETOOBIG;

        switch (zrc) {
        case Z_OK: break;
        case Z_STREAM_END:
            if (zs->avail_in == 0 && f->left == 0)
                return CM_OK;
            /* Another member follows; garbage fails its header check. */
            if (inflateReset(zs) != Z_OK)
                return CM_ERR;
            break;
        case Z_BUF_ERROR:
            /* No progress was possible: out of input before the end. */
            if (zs->avail_in == 0 && f->left == 0)
                return CM_EINVAL;
            break;
        case Z_MEM_ERROR: return CM_ERR;
        default: /* Z_DATA_ERROR (bad data, CRC, length), Z_NEED_DICT */ return CM_EINVAL;
        }
    }
}

int cm_gunzip(const void *in, size_t len, size_t max_out, cm_buf_t *out)
{
    z_stream zs = {0};
    if (inflateInit2(&zs, GZIP_WBITS) != Z_OK)
        return CM_ERR;
    size_t start = out->len;
    feed_t f = {in, len};
    int rc = inflate_all(&zs, &f, max_out, out);
    inflateEnd(&zs);
    if (rc != CM_OK)
        out->len = start;
    return rc;
}

/* Deflates all of f into out, ending with `last` (Z_FINISH: the stream's
 * end, Z_STREAM_END on success; Z_SYNC_FLUSH: a byte boundary, Z_OK). */
static int deflate_all(z_stream *zs, feed_t *f, int last, cm_buf_t *out)
{
    int zrc;
    bool more;
    do {
        feed(zs, f);
        int flush = f->left == 0 ? last : Z_NO_FLUSH;
        /* Small inputs get one right-sized step; large ones go by CHUNK. */
        uLong pending = (uLong)CM_MIN(f->left + zs->avail_in, (size_t)CHUNK);
        size_t room = CM_MIN((size_t)deflateBound(zs, pending), CHUNK);
        zs->next_out = (Bytef *)cm_buf_reserve(out, room);
        zs->avail_out = (uInt)room;
        zrc = deflate(zs, flush);
        out->len += room - zs->avail_out;
        if (last == Z_FINISH)
            more = zrc == Z_OK || zrc == Z_BUF_ERROR;
        else
            more = zrc == Z_OK && (f->left > 0 || zs->avail_in > 0 || zs->avail_out == 0);
    } while (more);
    return zrc;
}

int cm_gzip(const void *in, size_t len, int level, cm_buf_t *out)
{
    if (level < Z_DEFAULT_COMPRESSION || level > Z_BEST_COMPRESSION)
        return CM_EINVAL;
    z_stream zs = {0};
    if (deflateInit2(&zs, level, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return CM_ERR;
    feed_t f = {in, len};
    int zrc = deflate_all(&zs, &f, Z_FINISH, out);
    deflateEnd(&zs);
    return zrc == Z_STREAM_END ? CM_OK : CM_ERR;
}

/* ---- a gzip member in two parts ------------------------------------------ */

static void put_le32(cm_buf_t *out, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    cm_buf_append(out, b, sizeof(b));
}

static uint32_t get_le32(const char *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int cm_gzip_head(const void *in, size_t len, int level, cm_buf_t *out)
{
    if (level < Z_DEFAULT_COMPRESSION || level > Z_BEST_COMPRESSION)
        return CM_EINVAL;
    size_t start = out->len;
    uLong crc = 0;
    for (size_t done = 0; done < len;) { /* crc32 takes a uInt length */
        uInt n = (uInt)CM_MIN(len - done, (size_t)UINT_MAX);
        crc = crc32(crc, (const Bytef *)in + done, n);
        done += n;
    }
    put_le32(out, (uint32_t)crc);
    put_le32(out, (uint32_t)len);
    z_stream zs = {0};
    if (deflateInit2(&zs, level, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        goto fail;
    feed_t f = {in, len};
    /* Z_SYNC_FLUSH, never Z_FINISH: the blocks end on a byte boundary and
     * the last of them is not final, so more blocks can follow. */
    int zrc = deflate_all(&zs, &f, Z_SYNC_FLUSH, out);
    deflateEnd(&zs);
    if (zrc != Z_OK)
        goto fail;
    return CM_OK;
fail:
    out->len = start;
    return CM_ERR;
}

int cm_gzip_tail(cm_slice_t head, const void *tail, size_t len, cm_buf_t *out)
{
    if (head.len < 8 + 10 || len > 0xffff)
        return CM_EINVAL;
    uLong crc = get_le32(head.p);
    uint32_t total = get_le32(head.p + 4);
    cm_buf_reserve(out, head.len - 8 + 5 + len + 8);
    cm_buf_append(out, head.p + 8, head.len - 8);
    /* One final stored block (RFC 1951 3.2.4): BFINAL 1, BTYPE 00, then
     * LEN and NLEN; the head ended on a byte boundary. */
    unsigned char hdr[5] = {0x01, (unsigned char)len, (unsigned char)(len >> 8),
                            (unsigned char)~len, (unsigned char)(~len >> 8)};
    cm_buf_append(out, hdr, sizeof(hdr));
    cm_buf_append(out, tail, len);
    uLong tcrc = crc32(0, (const Bytef *)tail, (uInt)len);
    put_le32(out, (uint32_t)crc32_combine(crc, tcrc, (z_off_t)len));
    put_le32(out, total + (uint32_t)len); /* ISIZE: the length modulo 2^32 */
    return CM_OK;
}
