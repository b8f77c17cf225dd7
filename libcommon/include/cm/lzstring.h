/*
 * lzstring.h - lz-string's base64 format ("lz64" in posthog-js).
 *
 * lz-string is an LZW variant over UTF-16 code units whose bit stream is
 * written 6 bits per character in its own base64 alphabet (A-Z a-z 0-9 + /
 * with '=' padding). Older posthog-js builds compress event batches with
 * LZString.compressToBase64 and say `compression=lz64`.
 *
 * Decompression converts the code units to UTF-8: surrogate pairs are
 * combined and a lone surrogate becomes U+FFFD. Whatever the stream claims,
 * its memory is linear in max_out (at worst about 11 bytes per byte of
 * max_out: the output, its code units and an 8-byte dictionary entry per
 * unit) and its time linear in the input plus max_out.
 */
#ifndef CM_LZSTRING_H
#define CM_LZSTRING_H

#include <stddef.h>

#include "cm/buf.h"
#include "cm/err.h" /* the CM_E* codes these functions return */

/*
 * Decompresses lz-string base64 text and appends the UTF-8 result to out.
 * CM_EINVAL: a character outside the alphabet, '=' other than up to three
 * at the end, a stream that stops before its end marker or names a code
 * not yet defined, and empty input (lz-string returns null for it).
 * CM_ETOOBIG: more than max_out bytes of UTF-8 (or 4 Gi code units).
 * Characters after the end marker are ignored, as lz-string does. On error
 * out->len is restored to its value on entry.
 */
int cm_lz64_decompress(const char *in, size_t len, size_t max_out, cm_buf_t *out);

/*
 * lz-string's compressToBase64 of UTF-8 text, appended to out; the output
 * is what the npm package produces for the same string. Returns 0,
 * CM_EINVAL if in is not valid UTF-8, or CM_ETOOBIG past 1 Gi code units.
 */
int cm_lz64_compress(const char *in, size_t len, cm_buf_t *out);

#endif
