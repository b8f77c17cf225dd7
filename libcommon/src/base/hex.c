/* hex.c - see hex.h. */
#include "cm/hex.h"

char *cm_hex_encode(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        cm_hex_byte(in[i], out + 2 * i);
    out[2 * n] = '\0';
    return out;
}
