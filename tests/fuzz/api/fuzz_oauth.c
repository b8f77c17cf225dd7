/*
 * fuzz_oauth.c - what the OAuth server reads from the network (services/
 * api/oauth/): URLs from authorization requests (redirect URIs, client_ids,
 * resources), client metadata documents fetched from anywhere, and their
 * Cache-Control header. The input is split at its first NUL: a URL, then a
 * document. Invariants: a redirect URI always matches itself when it is
 * allowed at all; a client_id that passes the shape check parses, is https,
 * and its normal form (verification tokens' binding) is a fixed point; a document accepted keeps
 * its client_id equal to the URL and at least one redirect URI of an allowed shape; max-age stays
 * in [300, 86400].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "oauth/oauth_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    cm_slice_t url = {text, nul ? (size_t)(nul - text) : size};
    cm_slice_t body = nul ? (cm_slice_t){nul + 1, size - url.len - 1} : (cm_slice_t){"", 0};

    api_oauth_uri_t u;
    if (api_oauth__uri_parse(url, &u) == 0 && api_oauth__redirect_shape(&u) == NULL &&
        !api_oauth__redirect_allowed(url, &url, 1))
        abort(); /* an allowed redirect URI must match itself */

    for (int loopback = 0; loopback < 2; loopback++) {
        if (api_oauth__client_id_check(url, &u, loopback) != NULL)
            continue;
        if (u.scheme.len != 5 || strncasecmp(u.scheme.p, "https", 5) != 0)
            abort();
        /* the normal form is a fixed point: normalising it again changes nothing */
        cm_buf_t c = CM_BUF_INIT, c2 = CM_BUF_INIT;
        api_oauth__canonical(url, &c);
        api_oauth__canonical(cm_buf_slice(&c), &c2);
        if (c.len != c2.len || memcmp(c.p, c2.p, c.len) != 0) {
            fprintf(stderr, "not idempotent: %.*s -> %.*s -> %.*s\n", (int)url.len, url.p,
                    (int)c.len, c.p, (int)c2.len, c2.p);
            abort();
        }
        cm_buf_free(&c);
        cm_buf_free(&c2);
    }

    api_oauth_app_t app;
    char *vtoken = NULL;
    if (api_oauth__doc_validate(url, body, "posthog", size % 2, &app, &vtoken) == NULL) {
        if (strlen(app.client_id) != url.len || memcmp(app.client_id, url.p, url.len) != 0 ||
            app.nredirects == 0 || app.name == NULL)
            abort();
        for (size_t i = 0; i < app.nredirects; i++) {
            api_oauth_uri_t r;
            if (api_oauth__uri_parse(cm_slice_from_cstr(app.redirects[i]), &r) != 0 ||
                api_oauth__redirect_shape(&r) != NULL)
                abort();
        }
        api_oauth__app_clear(&app);
        free(vtoken);
    }

    int64_t age = api_oauth__max_age(body);
    if (age < 300 || age > 86400)
        abort();
    return 0;
}
