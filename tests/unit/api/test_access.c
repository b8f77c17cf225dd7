/*
 * test_access.c - the rules of personal API keys (services/api/access/):
 * scopes, write implying read, and the narrowing of a key to organizations
 * and projects, which the api's authentication and the fleet's key table
 * both apply.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "access/access.h"

static void test_scopes(void **state)
{
    (void)state;
    assert_true(api_access_allows("[\"*\"]", "feature_flag", true));
    assert_true(api_access_allows("[\"feature_flag:read\"]", "feature_flag", false));
    assert_false(api_access_allows("[\"feature_flag:read\"]", "feature_flag", true));
    assert_true(
        api_access_allows("[\"cohort:read\",\"feature_flag:write\"]", "feature_flag", false));
    assert_false(api_access_allows("[\"feature_flags:read\"]", "feature_flag", false));
    assert_false(api_access_allows("[\"feature_flag\"]", "feature_flag", false));
    assert_false(api_access_allows("[]", "feature_flag", false));
    assert_false(api_access_allows("not json", "feature_flag", false));
    assert_false(api_access_allows(NULL, "feature_flag", false));
    assert_false(api_access_allows("\"*\"", "feature_flag", false)); /* not an array */
}

static void test_reach(void **state)
{
    (void)state;
    const char *org = "0199aaaa-0000-7000-8000-000000000001";
    assert_true(api_access_reaches(NULL, NULL, "7", org));
    assert_true(api_access_reaches("[7, 9]", NULL, "7", org));
    assert_true(api_access_reaches("[\"7\"]", NULL, "7", org)); /* ids as strings too */
    assert_false(api_access_reaches("[70]", NULL, "7", org));
    assert_false(api_access_reaches("[]", NULL, "7", org));
    assert_true(api_access_reaches(NULL, "[\"0199aaaa-0000-7000-8000-000000000001\"]", "7", org));
    assert_false(api_access_reaches(NULL, "[\"0199aaaa-0000-7000-8000-000000000002\"]", "7", org));
    assert_false(api_access_reaches("[7]", "[\"other\"]", "7", org)); /* both limits apply */
    assert_false(api_access_reaches(NULL, NULL, "7", NULL));          /* not a member */
    assert_false(api_access_reaches(NULL, NULL, NULL, org));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_reach),
    };
    return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
