/*
 * fuzz_base64.c - strict base64 decoding of arbitrary text, round trips.
 *
 * Decoding is meant to be canonical: anything the standard decoder accepts
 * (without whitespace) re-encodes to the same text, give or take the
 * optional padding. Any bytes survive encode then decode in both alphabets.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/base64.h"
#include "cm/err.h"

#define MAX_OUT ((size_t)1 << 20)

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

/* Length of s without its trailing '=' run. */
static size_t unpadded(const char *s, size_t n)
{
    while (n > 0 && s[n - 1] == '=')
        n--;
    return n;
}

static void check_decode(const char *p, size_t n, unsigned flags)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc = cm_base64_decode(p, n, flags, MAX_OUT, &out);
    CHECK(rc == CM_OK || rc == CM_EINVAL || rc == CM_ETOOBIG);
    CHECK(out.len <= MAX_OUT && out.len <= n);
    if (rc != CM_OK) {
        CHECK(out.len == 0);
    } else if (flags == CM_B64_STD) {
        cm_buf_t again = CM_BUF_INIT;
        cm_base64_encode(out.p, out.len, &again);
        size_t u = unpadded(p, n);
        CHECK(unpadded(again.p, again.len) == u && (u == 0 || memcmp(again.p, p, u) == 0));
        CHECK(n == u || n == again.len); /* padding, if any, is complete */
        if (n > 0 && n % 4 == 0)
            CHECK(cm_base64_looks_like(p, n));
        cm_buf_free(&again);
    }
    cm_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    check_decode(text, size, CM_B64_STD);
    check_decode(text, size, CM_B64_URL);
    check_decode(text, size, CM_B64_STD | CM_B64_URL | CM_B64_SPACE);
    (void)cm_base64_looks_like(text, size);

    cm_buf_t e = CM_BUF_INIT, u = CM_BUF_INIT, d = CM_BUF_INIT;
    cm_base64_encode(data, size, &e);
    cm_base64url_encode(data, size, &u);
    CHECK(e.len == CM_BASE64_ENCODED_LEN(size));
    CHECK(cm_base64_decode(e.p, e.len, CM_B64_STD, size, &d) == CM_OK);
    CHECK(cm_base64_decode(u.p, u.len, CM_B64_URL, size, &d) == CM_OK);
    CHECK(d.len == 2 * size);
    CHECK(size == 0 || (memcmp(d.p, data, size) == 0 && memcmp(d.p + size, data, size) == 0));
    if (size > 0)
        CHECK(cm_base64_decode(e.p, e.len, CM_B64_STD, size - 1, &d) == CM_ETOOBIG);
    cm_buf_free(&e);
    cm_buf_free(&u);
    cm_buf_free(&d);
    return 0;
}
