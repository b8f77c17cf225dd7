/*
 * test_cimd.c - client metadata documents as the api reads them
 * (services/api/oauth/cimd.c): what makes one valid, what is dropped, what
 * refuses it; and Cache-Control's max-age, clamped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oauth/oauth_int.h"

#define URL "https://app.example.com/oauth/client.json"

static const char *check(const char *body, api_oauth_app_t *a, char **vtoken)
{
    return api_oauth__doc_validate(CM_SLICE_LIT(URL), cm_slice_from_cstr(body), "posthog", false, a,
                                   vtoken);
}

static void test_valid_document(void **state)
{
    (void)state;
    api_oauth_app_t a;
    char *vt = NULL;
    const char *why =
        check("{\"client_id\":\"" URL "\",\"client_name\":\"Acme\","
              "\"redirect_uris\":[\"http://localhost/cb\",\"https://a.example.com/x\"],"
              "\"logo_uri\":\"http://cdn.example.com/l.png\","
              "\"com.posthog.scopes\":[\"query:read\",\"llm_gateway:read\",\"nope:read\","
              "\"*\",\"openid\"],\"com.posthog.verification_token\":\"phvt_x\","
              "\"token_endpoint_auth_method\":\"none\",\"extra\":{\"ignored\":1}}",
              &a, &vt);
    assert_null(why);
    assert_string_equal(a.name, "Acme");
    assert_int_equal(a.nredirects, 2);
    assert_string_equal(a.redirects[1], "https://a.example.com/x");
    assert_null(a.logo_uri); /* not https: dropped */
    /* only grantable scopes make the ceiling: no privileged, unknown, "*" or always-granted */
    assert_string_equal(a.ceiling_json, "[\"query:read\"]");
    assert_string_equal(vt, "phvt_x");
    api_oauth__app_clear(&a);
    free(vt);
}

static void test_refused_documents(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "[]",
        "{\"client_id\":\"" URL
        "/\",\"client_name\":\"A\",\"redirect_uris\":[\"https://a.example.com/x\"]}",
        "{\"client_id\":\"" URL "\",\"client_name\":\"A\"}",
        "{\"client_id\":\"" URL "\",\"client_name\":\"A\",\"redirect_uris\":[]}",
        "{\"client_id\":\"" URL "\",\"client_name\":\"A\",\"redirect_uris\":[\"\"]}",
        "{\"client_id\":\"" URL "\",\"client_name\":\"A\",\"redirect_uris\":[7]}",
        "{\"client_id\":\"" URL "\",\"client_name\":\"A\",\"redirect_uris\":[\"javascript:x\"]}",
        "{\"client_id\":\"" URL
        "\",\"client_name\":\"A\",\"redirect_uris\":[\"https://a.example.com/x\"],"
        "\"token_endpoint_auth_method\":\"client_secret_post\"}",
        "{\"client_id\":\"" URL
        "\",\"client_name\":\"A\",\"redirect_uris\":[\"https://a.example.com/x\"],"
        "\"client_secret\":\"s\"}",
        "{\"client_id\":\"" URL "\",\"redirect_uris\":[\"https://a.example.com/x\"]}",
        "{\"client_id\":\"" URL
        "\",\"client_name\":\"\",\"redirect_uris\":[\"https://a.example.com/x\"]}",
        "{\"client_id\":\"" URL
        "\",\"client_name\":\"A\",\"redirect_uris\":[\"https://a.example.com/x\"]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        api_oauth_app_t a;
        char *vt = NULL;
        if (check(bad[i], &a, &vt) == NULL)
            fail_msg("accepted: %s", bad[i]);
        assert_null(vt);
    }
}

static void test_max_age(void **state)
{
    (void)state;
    assert_int_equal(api_oauth__max_age(CM_SLICE_NULL), 3600);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("public, max-age=600")), 600);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("max-age=1")), 300);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("max-age=9999999999999")), 86400);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("no-store")), 300);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("max-age=5000, no-cache")), 300);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("s-maxage=5, max-age=1000")), 1000);
    assert_int_equal(api_oauth__max_age(CM_SLICE_LIT("max-age=")), 3600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_document),
        cmocka_unit_test(test_refused_documents),
        cmocka_unit_test(test_max_age),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
