/*
 * test_person_name.c - the persons list's `name` (resources/person_name.h):
 * PostHog's display-name properties in their order, their truth, then a
 * distinct id that does not look anonymous, then the first, then the id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cm/json.h"
#include "resources/person_name.h"

static const char *ANON = "0190a8e4-3f2b-7c1d-9e8f-0123456789ab";

/* The JSON the writer gives for the name. */
static void check(const char *props, const char *const *ids, size_t nids, const char *want)
{
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "name");
    api_person_name_write(&w, props, ids, nids, "person-uuid");
    cm_json_end_object(&w);
    char expect[256];
    snprintf(expect, sizeof(expect), "{\"name\":%s}", want);
    if (strcmp(cm_buf_cstr(&out), expect) != 0)
        fail_msg("properties %s: got %s, want %s", props ? props : "(none)", cm_buf_cstr(&out),
                 expect);
    cm_buf_free(&out);
}

static void test_email_before_distinct_id(void **state)
{
    (void)state;
    const char *ids[] = {"user-42", ANON};
    check("{\"email\":\"ada@example.com\",\"name\":\"Ada\"}", ids, 2, "\"ada@example.com\"");
    check("{\"name\":\"Ada\",\"username\":\"ada\"}", ids, 2, "\"Ada\"");
    check("{\"Email\":\"A@example.com\",\"name\":\"Ada\"}", ids, 2, "\"A@example.com\"");
    check("{\"UserName\":\"ada1\"}", ids, 2, "\"ada1\"");
    /* the order is the list's, not the object's */
    check("{\"username\":\"ada\",\"Name\":\"Ada L\"}", ids, 2, "\"Ada L\"");
}

/* A falsy value is skipped (Python's `if value`); a truthy non-string is
 * given as it is, as PostHog does. */
static void test_truth_of_values(void **state)
{
    (void)state;
    const char *ids[] = {"user-42"};
    check("{\"email\":\"\",\"name\":\"Ada\"}", ids, 1, "\"Ada\"");
    check("{\"email\":null,\"name\":0,\"Name\":false,\"username\":[]}", ids, 1, "\"user-42\"");
    check("{\"email\":{},\"name\":7}", ids, 1, "7");
    check("{\"email\":\"\\u00e9@x\"}", ids, 1, "\"\\u00e9@x\"");
}

static void test_distinct_ids(void **state)
{
    (void)state;
    const char *anon_first[] = {ANON, "user-42", "user-7"};
    check("{}", anon_first, 3, "\"user-42\"");
    check(NULL, anon_first, 3, "\"user-42\"");
    check("not json", anon_first, 3, "\"user-42\"");
    const char *all_anon[] = {ANON, "aaaa-bbbb-cccc-dddd-eeee"};
    check("{\"$browser\":\"Firefox\"}", all_anon, 2, "\"0190a8e4-3f2b-7c1d-9e8f-0123456789ab\"");
    check("{}", NULL, 0, "\"person-uuid\"");
}

static void test_anonymous_shape(void **state)
{
    (void)state;
    assert_true(api_person_id_looks_anonymous(ANON));
    assert_true(api_person_id_looks_anonymous("a-b-c-d-e"));
    assert_false(api_person_id_looks_anonymous("A-b-c-d-e")); /* lower case only */
    assert_false(api_person_id_looks_anonymous("a-b-c-d"));
    assert_false(api_person_id_looks_anonymous("a-b-c-d-e-f"));
    assert_false(api_person_id_looks_anonymous("a-b--c-d"));
    assert_false(api_person_id_looks_anonymous("a-b-c-d-"));
    assert_false(api_person_id_looks_anonymous("ada@example.com"));
    assert_false(api_person_id_looks_anonymous(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_email_before_distinct_id),
        cmocka_unit_test(test_truth_of_values),
        cmocka_unit_test(test_distinct_ids),
        cmocka_unit_test(test_anonymous_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
