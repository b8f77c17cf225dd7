/*
 * base64.c - strict RFC 4648 base64 decoding and encoding.
 *
 * Decoding makes two passes: the first validates and counts, so the exact
 * output size is known (and checked against max_out) before anything is
 * allocated; the second converts. Both are linear and read only in[0..len).
 */
#include "cm/base64.h"

#include <stdint.h>

#include "cm/err.h"

static const char std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int cm_base64_sextet(unsigned char c, unsigned flags)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (flags & CM_B64_STD) {
        if (c == '+')
            return 62;
        if (c == '/')
            return 63;
    }
    if (flags & CM_B64_URL) {
        if (c == '-')
            return 62;
        if (c == '_')
            return 63;
    }
    return -1;
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Pass one: validates the layout and counts the data characters. */
static int scan(const char *in, size_t len, unsigned flags, size_t *ndata)
{
    size_t n = 0, pad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if ((flags & CM_B64_SPACE) && is_space(c))
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad > 0 || cm_base64_sextet(c, flags) < 0)
            return CM_EINVAL; /* data after padding, or a foreign char */
        n++;
    }
    /* One leftover char holds 6 bits: not even a byte. */
    if (n % 4 == 1)
        return CM_EINVAL;
    /* Padding, when present, completes the last quantum exactly. */
    if (pad > 0 && (pad > 2 || (n + pad) % 4 != 0))
        return CM_EINVAL;
    *ndata = n;
    return CM_OK;
}

/* Pass two: the input is known to be valid; stores the bytes written. */
static int convert(const char *in, size_t len, unsigned flags, unsigned char *dst, size_t *written)
{
    uint32_t acc = 0;
    unsigned have = 0;
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '=')
            break;
        int v = cm_base64_sextet(c, flags);
        if (v < 0)
            continue; /* whitespace, already vetted by scan() */
        acc = (acc << 6) | (uint32_t)v;
        if (++have == 4) {
            dst[w++] = (unsigned char)(acc >> 16);
            dst[w++] = (unsigned char)(acc >> 8);
            dst[w++] = (unsigned char)acc;
            acc = 0;
            have = 0;
        }
    }
    /* Bits below the last whole byte must be zero (canonical form). */
    if (have == 2) {
        if (acc & 0xf)
            return CM_EINVAL;
        dst[w++] = (unsigned char)(acc >> 4);
    } else if (have == 3) {
        if (acc & 0x3)
            return CM_EINVAL;
        dst[w++] = (unsigned char)(acc >> 10);
        dst[w++] = (unsigned char)(acc >> 2);
    }
    *written = w;
    return CM_OK;
}

int cm_base64_decode(const char *in, size_t len, unsigned flags, size_t max_out, cm_buf_t *out)
{
    if (!(flags & (CM_B64_STD | CM_B64_URL)))
        flags |= CM_B64_STD;
    size_t n;
    int rc = scan(in, len, flags, &n);
    if (rc != CM_OK)
        return rc;
    size_t size = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (size > max_out)
        return CM_ETOOBIG;
    if (size == 0)
        return CM_OK;
    unsigned char *dst = (unsigned char *)cm_buf_reserve(out, size);
    size_t w;
    rc = convert(in, len, flags, dst, &w);
    if (rc == CM_OK)
        out->len += w;
    return rc;
}

static void encode(const unsigned char *in, size_t len, const char *abc, bool pad, cm_buf_t *out)
{
    char *dst = cm_buf_reserve(out, CM_BASE64_ENCODED_LEN(len));
    size_t w = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        dst[w++] = abc[v >> 18];
        dst[w++] = abc[(v >> 12) & 63];
        dst[w++] = abc[(v >> 6) & 63];
        dst[w++] = abc[v & 63];
    }
    size_t rest = len - i;
    if (rest > 0) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (rest == 2)
            v |= (uint32_t)in[i + 1] << 8;
        dst[w++] = abc[v >> 18];
        dst[w++] = abc[(v >> 12) & 63];
        if (rest == 2)
            dst[w++] = abc[(v >> 6) & 63];
        if (pad) {
            if (rest == 1)
                dst[w++] = '=';
            dst[w++] = '=';
        }
    }
    out->len += w;
}

void cm_base64_encode(const void *in, size_t len, cm_buf_t *out)
{
    encode(in, len, std_alphabet, true, out);
}

void cm_base64url_encode(const void *in, size_t len, cm_buf_t *out)
{
    encode(in, len, url_alphabet, false, out);
}

bool cm_base64_looks_like(const char *p, size_t len)
{
    if (len == 0 || len % 4 != 0)
        return false;
    size_t n = len < 128 ? len : 128;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (cm_base64_sextet(c, CM_B64_STD) < 0 && c != '=')
            return false;
    }
    return true;
}
