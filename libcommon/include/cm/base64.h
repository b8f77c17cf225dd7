/*
 * base64.h - RFC 4648 base64, both alphabets.
 *
 * Old PostHog clients post base64 bodies (or a base64 `data=` field), and
 * capture unwraps anything that merely looks like base64; that heuristic is
 * cm_base64_looks_like(). Decoding is strict: characters outside the chosen
 * alphabet, misplaced or wrong padding and non-zero leftover bits are all
 * CM_EINVAL, so there is exactly one encoding of any byte string.
 */
#ifndef CM_BASE64_H
#define CM_BASE64_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"
#include "cm/err.h" /* the CM_E* codes these functions return */

/* Flags for cm_base64_decode(). With no alphabet flag, CM_B64_STD. */
enum {
    CM_B64_STD = 1 << 0,  /* accept '+' and '/' */
    CM_B64_URL = 1 << 1,  /* accept '-' and '_' (both flags: either) */
    CM_B64_SPACE = 1 << 2 /* skip ASCII whitespace anywhere */
};

/* The 6-bit value of c in the alphabets flags allow (CM_B64_STD and/or
 * CM_B64_URL), or -1. Also the digits of lz-string's base64 form. */
int cm_base64_sextet(unsigned char c, unsigned flags);

/* Bytes that cm_base64_encode() produces for n input bytes (with padding). */
#define CM_BASE64_ENCODED_LEN(n) ((((n) + 2) / 3) * 4)

/*
 * Decodes in[0..len), padded or not, and appends the bytes to out.
 * When padding is present the padded length must be a multiple of 4.
 * Returns 0, CM_EINVAL or CM_ETOOBIG (more than max_out bytes); on error
 * out->len is restored to its value on entry.
 */
int cm_base64_decode(const char *in, size_t len, unsigned flags, size_t max_out, cm_buf_t *out);

/* Appends the standard, '='-padded encoding of in[0..len). */
void cm_base64_encode(const void *in, size_t len, cm_buf_t *out);

/* Appends the URL-safe encoding ('-', '_') without padding. */
void cm_base64url_encode(const void *in, size_t len, cm_buf_t *out);

/*
 * PostHog capture's "looks like base64" test: len > 0, len % 4 == 0 and
 * the first 128 bytes are all in [A-Za-z0-9+/=].
 */
bool cm_base64_looks_like(const char *p, size_t len);

#endif
