/*
 * test_uri.c - the URLs OAuth trusts (services/api/oauth/uri.c): the
 * redirect rules (docs/oauth.md "Redirect URIs") as a table, one case per
 * row, and the shape of a CIMD client_id, hostile forms included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "oauth/oauth_int.h"

static bool allowed(const char *requested, const char *registered)
{
    cm_slice_t g = cm_slice_from_cstr(registered);
    return api_oauth__redirect_allowed(cm_slice_from_cstr(requested), &g, 1);
}

static const struct {
    const char *registered, *requested;
    bool ok;
    const char *why;
} redirect_table[] = {
    /* rule 5: exact scheme, host, port and path; another domain is fine */
    {"https://app.example.com/cb", "https://app.example.com/cb", true, "exact"},
    {"https://app.example.com/cb", "https://app.example.com/cb/", false, "path differs"},
    {"https://app.example.com/cb", "https://app.example.com/CB", false, "path is case-sensitive"},
    {"https://app.example.com/cb", "https://APP.example.com/cb", true, "host is not"},
    {"https://app.example.com/cb", "https://evil.example.com/cb", false, "host differs"},
    {"https://app.example.com/cb", "https://app.example.com.evil.io/cb", false, "suffix host"},
    {"https://app.example.com/cb", "http://app.example.com/cb", false, "scheme differs"},
    {"https://app.example.com/cb", "https://app.example.com:8443/cb", false, "port differs"},
    {"https://app.example.com/cb", "https://app.example.com:443/cb", true, "default port"},
    {"https://other.org/cb", "https://other.org/cb", true, "not client_id's domain"},
    {"https://app.example.com/cb?x=1", "https://app.example.com/cb?x=1", true, "same query"},
    {"https://app.example.com/cb", "https://app.example.com/cb?x=1", false, "extra query"},
    {"https://app.example.com/cb", "https://app.example.com/cb#f", false, "fragment"},
    /* https unless loopback */
    {"http://app.example.com/cb", "http://app.example.com/cb", false, "http off loopback"},
    {"http://localhost/cb", "http://localhost/cb", true, "http on localhost"},
    {"http://127.0.0.1/cb", "http://127.0.0.1/cb", true, "http on 127.0.0.1"},
    {"http://[::1]/cb", "http://[::1]/cb", true, "http on ::1"},
    {"http://10.0.0.1/cb", "http://10.0.0.1/cb", false, "http on a private address"},
    /* rule 6: loopback without a port takes any port */
    {"http://localhost/callback", "http://localhost:53682/callback", true, "localhost any port"},
    {"http://127.0.0.1/callback", "http://127.0.0.1:1234/callback", true, "127 any port"},
    {"http://localhost:8080/callback", "http://localhost:8080/callback", true, "localhost port"},
    {"http://localhost:8080/callback", "http://localhost:9090/callback", false, "other port"},
    {"http://localhost:8080/callback", "http://localhost/callback", false, "port needed"},
    {"http://127.0.0.1:8080/callback", "http://127.0.0.1:9090/callback", true, "127 any"},
    {"http://[::1]:8080/callback", "http://[::1]:7000/callback", true, "::1 any"},
    {"http://localhost/callback", "http://127.0.0.1:5000/callback", false, "not the same host"},
    {"http://127.0.0.1/callback", "http://localhost:5000/callback", false, "nor this way"},
    {"http://localhost/callback", "http://localhost:5000/other", false, "path still exact"},
    /* shapes a registered list must not make allowed */
    {"https://app.example.com/cb", "https://app.example.com\\@evil.io/cb", false, "backslash"},
    {"https://app.example.com/cb", "https://user@app.example.com/cb", false, "userinfo"},
    {"https://app.example.com/cb", "https://app.example.com%2f@evil.io/cb", false, "%2f"},
    {"https://app.example.com/cb", "javascript:alert(1)", false, "javascript"},
    {"com.example.app:/cb", "com.example.app:/cb", false, "private-use scheme"},
    {"https://app.example.com/cb", " https://app.example.com/cb", false, "space"},
};

static void test_redirect_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(redirect_table) / sizeof(redirect_table[0]); i++) {
        bool got = allowed(redirect_table[i].requested, redirect_table[i].registered);
        if (got != redirect_table[i].ok)
            fail_msg("%s: %s against %s gave %d", redirect_table[i].why,
                     redirect_table[i].requested, redirect_table[i].registered, got);
    }
    /* any one of several registered */
    cm_slice_t many[] = {CM_SLICE_LIT("https://a.example.com/x"),
                         CM_SLICE_LIT("http://localhost/cb")};
    assert_true(api_oauth__redirect_allowed(CM_SLICE_LIT("http://localhost:9/cb"), many, 2));
    assert_false(api_oauth__redirect_allowed(CM_SLICE_LIT("https://a.example.com/y"), many, 2));
}

static const char *check(const char *id, bool loopback)
{
    api_oauth_uri_t u;
    return api_oauth__client_id_check(cm_slice_from_cstr(id), &u, loopback);
}

static void test_client_id_shape(void **state)
{
    (void)state;
    assert_null(check("https://app.example.com/oauth/client.json", false));
    assert_null(check("https://app.example.com:8443/client", false));
    assert_null(check("https://93.184.216.34/client", false)); /* the filter judges addresses */
    static const char *const refused[] = {
        "http://app.example.com/client.json",      /* not https */
        "https://app.example.com",                 /* no path */
        "https://app.example.com/",                /* "/" only */
        "https://app.example.com/a/../client",     /* dot segments */
        "https://app.example.com/./client",        /* dot segments */
        "https://app.example.com/client/..",       /* dot segments */
        "https://app.example.com/client?x=1",      /* query */
        "https://app.example.com/client#f",        /* fragment */
        "https://u:p@app.example.com/client",      /* userinfo */
        "https://app.example.com\\evil/client",    /* backslash */
        "https://app.example.com/%5cclient",       /* encoded backslash */
        "https://app.example.com/%2e%2e/client",   /* encoded dot segment */
        "https://app.example.com/a/%2E%2e/client", /* and deeper */
        "https://localhost/client",                /* by name */
        "https://LOCALHOST./client",               /* by name, any case, root dot */
        "https://printer.local/client",            /* .local */
        "https://metadata.google.internal/x",      /* .internal */
        "https://db.svc.cluster.local/x",          /* kubernetes */
        "https://vault.consul/x",                  /* .consul */
        "https://router.home.arpa/x",              /* .home.arpa */
        "https://intranet/x",                      /* one label */
        "https://2130706433/client",               /* 127.0.0.1 as a number */
        "https://0177.0.0.1/client",               /* octal */
        "https://0x7f.0.0.1/client",               /* hex */
        "https://127.1/client",                    /* short form */
        "https://127.0.0.1/client",                /* loopback without the switch */
        "https://[::1]/client",                    /* the same */
        "https://app.ex\xc3\xa4mple.com/client",   /* not the punycode form */
        "https://app.example.com/cl ient",         /* space */
        "",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        if (check(refused[i], false) == NULL)
            fail_msg("accepted: %s", refused[i]);
    /* the test switch: loopback IP literals only, never names */
    assert_null(check("https://127.0.0.1:8443/client.json", true));
    assert_null(check("https://[::1]:8443/client.json", true));
    assert_non_null(check("https://localhost:8443/client.json", true));
    assert_non_null(check("http://127.0.0.1:8443/client.json", true));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redirect_table),
        cmocka_unit_test(test_client_id_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
