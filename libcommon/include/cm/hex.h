/* hex.h - lowercase hexadecimal text of bytes (digests, ETags, uuids). */
#ifndef CM_HEX_H
#define CM_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes 2 * n hex digits and a NUL into out (2 * n + 1 bytes); returns out. */
char *cm_hex_encode(const uint8_t *in, size_t n, char *out);
/* The two digits of one byte, no NUL. */
static inline void cm_hex_byte(uint8_t b, char out[2])
{
    static const char digits[] = "0123456789abcdef";
    out[0] = digits[b >> 4];
    out[1] = digits[b & 15];
}

#endif
