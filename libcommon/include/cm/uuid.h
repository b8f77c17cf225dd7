/*
 * uuid.h - UUID generation (v4, v7) and validation, text form only.
 *
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, 12 bits that keep
 * ids monotonic within one millisecond in this process, variant 10, then
 * random bits. Randomness comes from getrandom(2), buffered.
 */
#ifndef CM_UUID_H
#define CM_UUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_UUID_STR_LEN 36 /* without the NUL */

/* Writes 36 lowercase hex-and-dash characters plus a NUL into out. */
void cm_uuid_v7(char out[CM_UUID_STR_LEN + 1]);
void cm_uuid_v7_at(int64_t unix_ms, char out[CM_UUID_STR_LEN + 1]);
void cm_uuid_v4(char out[CM_UUID_STR_LEN + 1]);
/* UUIDv5 (name-based, SHA-1) of name in the namespace ns (a uuid in text);
 * CM_EINVAL when ns is not one. */
int cm_uuid_v5(const char *ns, const void *name, size_t len, char out[CM_UUID_STR_LEN + 1]);
/* 8-4-4-4-12 hex digits, either case (any version). */
bool cm_uuid_valid(const char *s, size_t len);
/* The 16 bytes of a uuid in that text form; false (out untouched) for any
 * other text. */
bool cm_uuid_bytes(const char *s, size_t len, unsigned char out[16]);
/* Fills buf with n random bytes (getrandom, falling back to /dev/urandom). */
void cm_random_bytes(void *buf, size_t n);

#endif
