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
#include <stdio.h>
#include <string.h>
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

/* A key never gives a new key a scope it lacks itself. */
static void test_covers(void **state)
{
    (void)state;
    assert_true(api_access_covers("[\"*\"]", "*"));
    assert_true(api_access_covers("[\"*\"]", "project:write"));
    assert_false(api_access_covers("[\"user:write\"]", "*"));
    assert_false(api_access_covers("[\"user:write\"]", "project:write"));
    assert_true(api_access_covers("[\"user:write\"]", "user:read"));
    assert_true(api_access_covers("[\"user:write\"]", "user:write"));
    assert_false(api_access_covers("[\"user:read\"]", "user:write"));
    assert_false(api_access_covers("[\"user:read\"]", "user"));
    assert_false(api_access_covers(NULL, "user:read"));
}

#define ORG1 "0199aaaa-0000-7000-8000-000000000001"
#define ORG2 "0199aaaa-0000-7000-8000-000000000002"

/* The user's projects: 7 and 9 in ORG1, 8 in ORG2. */
static const char *org_of(void *ud, const char *team)
{
    (void)ud;
    if (strcmp(team, "7") == 0 || strcmp(team, "9") == 0)
        return ORG1;
    return strcmp(team, "8") == 0 ? ORG2 : NULL;
}

static int within(const char *ht, const char *ho, const char *wt, const char *wo)
{
    char why[256] = "";
    int rc = api_access_within(ht, ho, wt, wo, org_of, NULL, why, sizeof(why));
    assert_true(rc == API_ACCESS_WITHIN ? why[0] == '\0' : why[0] != '\0');
    return rc;
}

static void test_within(void **state)
{
    (void)state;
    const char *o1 = "[\"" ORG1 "\"]", *o2 = "[\"" ORG2 "\"]";
    const char *o12 = "[\"" ORG1 "\",\"" ORG2 "\"]";
    /* unscoped: anything */
    assert_int_equal(within(NULL, NULL, NULL, NULL), API_ACCESS_WITHIN);
    assert_int_equal(within(NULL, NULL, "[8]", o2), API_ACCESS_WITHIN);
    /* teams: a non-empty subset of them */
    assert_int_equal(within("[7,9]", NULL, "[9]", NULL), API_ACCESS_WITHIN);
    assert_int_equal(within("[7,9]", NULL, "[7,9]", o2), API_ACCESS_WITHIN); /* narrower still */
    assert_int_equal(within("[7]", NULL, NULL, NULL), API_ACCESS_WIDER_TEAMS);
    assert_int_equal(within("[7]", NULL, "[]", NULL), API_ACCESS_WIDER_TEAMS);
    assert_int_equal(within("[7]", NULL, "[7,8]", NULL), API_ACCESS_WIDER_TEAMS);
    assert_int_equal(within("[7]", NULL, NULL, o1), API_ACCESS_WIDER_TEAMS);
    /* organizations: a non-empty subset, or teams of them */
    assert_int_equal(within(NULL, o1, NULL, o1), API_ACCESS_WITHIN);
    assert_int_equal(within(NULL, o12, NULL, o2), API_ACCESS_WITHIN);
    assert_int_equal(within(NULL, o1, "[7,9]", NULL), API_ACCESS_WITHIN);
    assert_int_equal(within(NULL, o1, "[8]", o1), API_ACCESS_WITHIN); /* reaches nothing more */
    assert_int_equal(within(NULL, o1, NULL, NULL), API_ACCESS_WIDER_ORGS);
    assert_int_equal(within(NULL, o1, NULL, "[]"), API_ACCESS_WIDER_ORGS);
    assert_int_equal(within(NULL, o1, NULL, o12), API_ACCESS_WIDER_ORGS);
    assert_int_equal(within(NULL, o1, NULL, o2), API_ACCESS_WIDER_ORGS);
    assert_int_equal(within(NULL, o1, "[7,8]", NULL), API_ACCESS_WIDER_TEAMS);
    assert_int_equal(within(NULL, o1, "[99]", NULL), API_ACCESS_WIDER_TEAMS); /* not the user's */
    assert_int_equal(within(NULL, o1, "[]", NULL), API_ACCESS_WIDER_ORGS);
    /* both: both apply */
    assert_int_equal(within("[7,8]", o1, "[7]", NULL), API_ACCESS_WITHIN);
    assert_int_equal(within("[7,8]", o1, "[8]", NULL), API_ACCESS_WIDER_TEAMS);
    /* a long item is nothing of ours, and is not cut to match */
    char long_orgs[200];
    snprintf(long_orgs, sizeof(long_orgs), "[\"%s%s\"]", ORG1, ORG1);
    assert_int_equal(within(NULL, o1, NULL, long_orgs), API_ACCESS_WIDER_ORGS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_reach),
        cmocka_unit_test(test_covers),
        cmocka_unit_test(test_within),
    };
    return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
