/*
 * gzip.h - gzip (RFC 1952) decoding and encoding of whole buffers.
 *
 * posthog-js and posthog-node send gzip bodies, sometimes with no hint at
 * all, so the ingest path sniffs the magic and inflates with a hard bound
 * on the output: a decompression bomb costs at most max_out bytes of memory
 * and stops as soon as the bound is crossed.
 */
#ifndef CM_GZIP_H
#define CM_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"
#include "cm/err.h" /* the CM_E* codes these functions return */

/* True if p starts with the gzip magic and the deflate method (1f 8b 08). */
bool cm_gzip_magic(const void *p, size_t len);

/*
 * Inflates the gzip data in[0..len) and appends the result to out.
 * Several concatenated members are accepted (as gzip(1) does); trailing
 * garbage, truncation and a bad CRC or length are errors.
 * Returns 0, CM_EINVAL (malformed) or CM_ETOOBIG (more than max_out bytes
 * would be produced). On error out->len is restored to its value on entry.
 */
int cm_gunzip(const void *in, size_t len, size_t max_out, cm_buf_t *out);

/*
 * Compresses in[0..len) as one gzip member appended to out.
 * level is zlib's: -1 (default) or 0..9. Returns 0 or CM_EINVAL.
 */
int cm_gzip(const void *in, size_t len, int level, cm_buf_t *out);

/*
 * One gzip member in two parts, for answers whose long start repeats and
 * whose short end does not (the flags service's cached answers):
 *
 * cm_gzip_head appends a head for in[0..len): its CRC-32 and length (8
 * bytes, ours), then the gzip header and in's deflate blocks, flushed to a
 * byte boundary with no final block. It may be kept and used many times.
 * cm_gzip_tail appends one complete member: the head's gzip bytes, then
 * tail[0..len) (at most 65535 bytes) as a final stored block, and the
 * trailer with the CRC-32 and length of both parts together. Each returns
 * 0, CM_EINVAL (bad level, head or tail length) or CM_ERR.
 */
int cm_gzip_head(const void *in, size_t len, int level, cm_buf_t *out);
int cm_gzip_tail(cm_slice_t head, const void *tail, size_t len, cm_buf_t *out);

#endif
