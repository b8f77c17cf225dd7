/*
 * token.h - secret tokens in PostHog's shape: a prefix ("phx_", "phs_",
 * "phc_", "pha_"...) and 256 random bits (the top bit set, so every token has
 * the same length) written in base 57, the alphanumerics without the look-
 * alikes 0, 1, I, O and l. 44 characters after the prefix.
 */
#ifndef CM_TOKEN_H
#define CM_TOKEN_H

#include <stddef.h>

#define CM_TOKEN_BODY_LEN 44
#define CM_TOKEN_MAX      (16 + CM_TOKEN_BODY_LEN + 1) /* a prefix of up to 16 bytes */

/* out gets prefix + body + NUL; prefix at most 16 bytes. */
void cm_token_new(const char *prefix, char out[CM_TOKEN_MAX]);
/* "phx_...abcd": the prefix, "..." and the last four characters, for lists. */
void cm_token_mask(const char *token, char *out, size_t size);

#endif
