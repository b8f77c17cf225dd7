/*
 * fuzz_http_client.c - libFuzzer target for the HTTP client's two byte-level
 * pieces: the response parser (what a server may send) and the request
 * writer (what a caller may pass, when a URL comes from outside).
 *
 * Byte 0 chooses:
 *   bit 0     the request was a HEAD (no body may follow the headers)
 *   bits 1-3  the size cap, 64 bytes to 16 MiB
 *   bits 4-6  a canned start put before the rest ("HTTP/1.1 200 OK\r\n",
 *             a chunked head, an interim 100...), so that the search starts
 *             past the status line as often as before it
 *   bit 7     the writer instead of the parser
 * Bytes 1 and 2 cut the rest into three reads, fed one after the other,
 * then the end of the stream.
 *
 * The oracle, parser: used never exceeds what was fed and is all of it
 * unless the response completed; a failure is CM_EIO or CM_ETOOBIG with a
 * reason; a complete response is final (not 1xx but 101), its header slices
 * lie in the parser's buffer, its size is within the cap, a HEAD's body is
 * empty, and it stays complete. Writer: a request that is accepted has a
 * head made only of CRLF-terminated lines without NUL, as many as the
 * headers it should carry (so nothing the caller passed became a line of its
 * own). LeakSanitizer checks that both free what they take.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../libcommon/src/http_client/http_client_internal.h"
#include "cm/err.h"

static const size_t caps[8] = {64, 256, 1024, 4096, 16384, 65536, 1 << 20, 16 << 20};

static const char *const starts[8] = {
    "",
    "HTTP/1.1 200 OK\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n",
    "HTTP/1.0 200 OK\r\n",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 ",
    "HTTP/1.1 304 Not Modified\r\n",
    "HTTP/1.1 ",
};

static void check_complete(cm__http_client_parse_t *p)
{
    cm_http_client_res_t res;
    cm__http_client_parse_result(p, &res);
    if (res.status / 100 == 1 && res.status != 101)
        abort(); /* interim responses are skipped */
    if (p->head.len + res.body.len > p->max_bytes || (p->head_only && res.body.len != 0))
        abort();
    for (size_t i = 0; i < res.nheaders; i++) {
        const cm_http_client_header_t *h = &res.headers[i];
        if (h->name.len + h->value.len > p->head.len ||
            (h->name.len &&
             (h->name.p < p->head.p || h->name.p + h->name.len > p->head.p + p->head.len)) ||
            (h->value.len &&
             (h->value.p < p->head.p || h->value.p + h->value.len > p->head.p + p->head.len)))
            abort();
    }
    (void)cm_http_client_res_header(&res, "content-length");
    size_t used = 1;
    if (cm__http_client_parse_feed(p, "x", 1, &used) != 1 || used != 0)
        abort(); /* complete stays complete, and takes nothing more */
}

static void fuzz_parser(unsigned flags, const uint8_t *data, size_t size)
{
    cm__http_client_parse_t p;
    const char *start = starts[(flags >> 4) & 7];
    size_t cut1 = size ? data[0] % (size + 1) : 0, cut2 = size > 1 ? data[1] % (size + 1) : 0;
    size_t lo = cut1 < cut2 ? cut1 : cut2, hi = cut1 < cut2 ? cut2 : cut1;
    struct {
        const char *p;
        size_t n;
    } piece[4] = {{start, strlen(start)},
                  {(const char *)data, lo},
                  {(const char *)data + lo, hi - lo},
                  {(const char *)data + hi, size - hi}};
    int rc = 0;

    cm__http_client_parse_init(&p, flags & 1, caps[(flags >> 1) & 7]);
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        size_t used = 0;
        rc = cm__http_client_parse_feed(&p, piece[i].p, piece[i].n, &used);
        if (used > piece[i].n || (rc == 0 && used != piece[i].n))
            abort();
    }
    if (rc == 0)
        rc = cm__http_client_parse_eof(&p);
    if (rc == 1)
        check_complete(&p);
    else if ((rc != CM_EIO && rc != CM_ETOOBIG) || p.why[0] == '\0')
        abort();
    cm__http_client_parse_free(&p);
}

/* The next NUL-delimited field of the input, as a C string (malloc'd). */
static char *field(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
    size_t n = z ? (size_t)(z - *p) : (size_t)(end - *p);
    char *s = malloc(n + 1);
    memcpy(s, *p, n);
    s[n] = '\0';
    *p += z ? n + 1 : n;
    return s;
}

static void fuzz_writer(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *url = field(&p, end), *name = field(&p, end), *value = field(&p, end);
    char *method = field(&p, end);
    const char *hdrs[] = {name, value, NULL};
    cm_http_client_req_t req = {.method = method,
                                .url = url,
                                .headers = name[0] ? hdrs : NULL,
                                .body = p,
                                .body_len = (size_t)(end - p)};
    cm__http_client_wire_t w;
    const char *why;

    if (cm__http_client_wire_build(&w, &req, "fuzz/1", &why) == CM_OK) {
        const char *b = w.bytes.p;
        const char *stop = memmem(b, w.bytes.len, "\r\n\r\n", 4);
        /* request line, Host, the caller's header (it may be User-Agent),
         * User-Agent, Content-Length (a body is given, if empty), Connection */
        size_t lines = 0, want = name[0] == '\0' || strcasecmp(name, "user-agent") == 0 ? 5 : 6;
        if (stop == NULL)
            abort();
        for (const char *c = b; c < stop + 2; c++) {
            if (*c == '\0' || (*c == '\r' && c[1] != '\n') ||
                (*c == '\n' && (c == b || c[-1] != '\r')))
                abort();
            lines += *c == '\n';
        }
        if (lines != want || w.port < 1 || w.port > 65535 || w.host[0] == '\0')
            abort();
        cm__http_client_wire_free(&w);
    } else if (why == NULL || why[0] == '\0') {
        abort();
    }
    free(url);
    free(name);
    free(value);
    free(method);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    if (flags & 0x80)
        fuzz_writer(data + 1, size - 1);
    else
        fuzz_parser(flags, data + 1, size - 1);
    return 0;
}
