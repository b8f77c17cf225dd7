/*
 * fuzz_lzstring.c - lz64 decompression of arbitrary text, and round trips.
 *
 * The input is tried twice: as is, and mapped onto the lz-string alphabet
 * (so most inputs reach the decoder proper instead of failing the alphabet
 * check). Whatever decodes must be valid UTF-8 within the 1 MiB bound and
 * must compress back to something that decodes to the same text; valid
 * UTF-8 input must survive compress then decompress.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/lzstring.h"

#define MAX_OUT ((size_t)1 << 20)

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

/* A plain UTF-8 validator, independent of the one under test. */
static bool utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t k;
        uint32_t c, min;
        if (b < 0x80) {
            i++;
            continue;
        } else if ((b & 0xe0) == 0xc0) {
            k = 1, c = b & 0x1fu, min = 0x80;
        } else if ((b & 0xf0) == 0xe0) {
            k = 2, c = b & 0x0fu, min = 0x800;
        } else if ((b & 0xf8) == 0xf0) {
            k = 3, c = b & 0x07u, min = 0x10000;
        } else {
            return false;
        }
        if (n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            c = c << 6 | (s[i + j] & 0x3fu);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

static void roundtrip(const char *p, size_t n)
{
    cm_buf_t lz = CM_BUF_INIT, back = CM_BUF_INIT;
    CHECK(cm_lz64_compress(p, n, &lz) == CM_OK);
    CHECK(lz.len > 0 && lz.len % 4 == 0);
    CHECK(cm_lz64_decompress(lz.p, lz.len, n, &back) == CM_OK);
    CHECK(back.len == n && (n == 0 || memcmp(back.p, p, n) == 0));
    cm_buf_free(&lz);
    cm_buf_free(&back);
}

static void decode(const char *p, size_t n)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc = cm_lz64_decompress(p, n, MAX_OUT, &out);
    CHECK(rc == CM_OK || rc == CM_EINVAL || rc == CM_ETOOBIG);
    CHECK(out.len <= MAX_OUT);
    if (rc == CM_OK) {
        CHECK(utf8_ok((const unsigned char *)out.p, out.len));
        roundtrip(out.p, out.len);
    } else {
        CHECK(out.len == 0);
    }
    cm_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    decode((const char *)data, size);

    char *mapped = malloc(size + 1);
    for (size_t i = 0; i < size; i++)
        mapped[i] = abc[data[i] & 63];
    decode(mapped, size);
    free(mapped);

    if (utf8_ok(data, size)) {
        roundtrip((const char *)data, size);
    } else {
        cm_buf_t lz = CM_BUF_INIT;
        CHECK(cm_lz64_compress((const char *)data, size, &lz) == CM_EINVAL);
        CHECK(lz.len == 0);
        cm_buf_free(&lz);
    }
    return 0;
}
