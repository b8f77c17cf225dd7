/*
 * fuzz_gzip.c - cm_gunzip on arbitrary bytes under a 1 MiB bound.
 *
 * Checks: only the documented codes come back, the bound holds for both
 * the output and the buffer's allocation, a failed call leaves the buffer
 * as it was, and whatever decodes survives a gzip round trip; arbitrary
 * bytes survive cm_gzip then cm_gunzip.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/gzip.h"

#define MAX_OUT ((size_t)1 << 20)

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

static void roundtrip(const void *p, size_t n, int level)
{
    cm_buf_t z = CM_BUF_INIT, back = CM_BUF_INIT;
    CHECK(cm_gzip(p, n, level, &z) == CM_OK);
    CHECK(cm_gzip_magic(z.p, z.len));
    CHECK(cm_gunzip(z.p, z.len, n, &back) == CM_OK);
    CHECK(back.len == n && (n == 0 || memcmp(back.p, p, n) == 0));
    if (n > 0)
        CHECK(cm_gunzip(z.p, z.len, n - 1, &back) == CM_ETOOBIG);
    cm_buf_free(&z);
    cm_buf_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc = cm_gunzip(data, size, MAX_OUT, &out);
    CHECK(rc == CM_OK || rc == CM_EINVAL || rc == CM_ETOOBIG);
    CHECK(out.len <= MAX_OUT && out.cap <= MAX_OUT + 2);
    if (rc != CM_OK) {
        CHECK(out.len == 0);
    } else {
        CHECK(cm_gzip_magic(data, size)); /* zlib demands 1f 8b 08 */
        roundtrip(out.p, out.len, 1);
    }
    cm_buf_free(&out);
    roundtrip(data, size, size % 11 - 1); /* levels -1..9 */
    return 0;
}
