/*
 * fuzz_form.c - urlencoded parsing of arbitrary bytes, and round trips.
 *
 * Checks: every pair the iterator yields lies inside the input and holds
 * no '&', decoding never grows anything, and percent-encoding arbitrary
 * bytes then looking the field up gives them back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/form.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

static void check_slice(cm_slice_t s, const char *p, size_t n)
{
    CHECK(s.p >= p && s.len <= n && (size_t)(s.p - p) <= n - s.len);
    CHECK(s.len == 0 || memchr(s.p, '&', s.len) == NULL);
}

static void check_decode(cm_slice_t s)
{
    cm_buf_t out = CM_BUF_INIT;
    int rc = cm_url_decode(s.p, s.len, true, &out);
    CHECK(rc == CM_OK || rc == CM_EINVAL);
    CHECK(rc == CM_OK ? out.len <= s.len : out.len == 0);
    cm_buf_free(&out);
}

/* Percent-encodes everything but unreserved characters; space as '+'. */
static void encode(const uint8_t *p, size_t n, cm_buf_t *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            cm_buf_putc(out, (char)c);
        } else if (c == ' ') {
            cm_buf_putc(out, '+');
        } else {
            cm_buf_putc(out, '%');
            cm_buf_putc(out, hex[c >> 4]);
            cm_buf_putc(out, hex[c & 15]);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    cm_form_iter_t it;
    cm_slice_t k, v;
    cm_form_iter_init(&it, text, size);
    while (cm_form_next(&it, &k, &v)) {
        check_slice(k, text, size);
        check_slice(v, text, size);
        CHECK(k.p + k.len <= v.p); /* the value follows its name */
        check_decode(k);
        check_decode(v);
    }
    check_decode((cm_slice_t){text, size});

    cm_buf_t out = CM_BUF_INIT;
    int rc = cm_form_get(text, size, "data", &out);
    CHECK(rc == CM_OK || rc == CM_EINVAL || rc == CM_ENOTFOUND);
    CHECK(rc == CM_OK ? out.len <= size : out.len == 0);

    cm_buf_t form = CM_BUF_INIT;
    cm_buf_append_cstr(&form, "ver=1&data=");
    encode(data, size, &form);
    cm_buf_append_cstr(&form, "&data=second");
    out.len = 0;
    CHECK(cm_form_get(form.p, form.len, "data", &out) == CM_OK);
    CHECK(out.len == size && (size == 0 || memcmp(out.p, data, size) == 0));
    cm_buf_free(&form);
    cm_buf_free(&out);
    return 0;
}
