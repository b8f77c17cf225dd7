/*
 * test_page_cache.c - rendered list pages by key and version
 * (services/api/http/page_cache.c): a page is served only at exactly the
 * version it was kept under, an older render never replaces a newer one,
 * and the byte bound holds (past it the cache starts over).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "http/page_cache.h"

static cm_slice_t S(const char *s)
{
    return (cm_slice_t){s, strlen(s)};
}

static void test_exact_version_only(void **state)
{
    (void)state;
    api_page_cache_t *c = api_page_cache_new(1 << 20);
    cm_slice_t out;
    assert_false(api_page_cache_get(c, S("/p/1?100&0"), 3, &out));
    api_page_cache_put(c, S("/p/1?100&0"), 3, S("{\"count\":1}"));
    assert_true(api_page_cache_get(c, S("/p/1?100&0"), 3, &out));
    assert_int_equal(out.len, 11);
    assert_memory_equal(out.p, "{\"count\":1}", 11);
    assert_false(api_page_cache_get(c, S("/p/1?100&0"), 4, &out)); /* changed since */
    assert_false(api_page_cache_get(c, S("/p/1?100&0"), 2, &out));
    assert_false(api_page_cache_get(c, S("/p/1?100&100"), 3, &out)); /* another page */
    assert_false(api_page_cache_get(c, S("/p/2?100&0"), 3, &out));   /* another project */
    /* a newer render replaces it; an older one that ends later does not */
    api_page_cache_put(c, S("/p/1?100&0"), 5, S("{\"count\":2}"));
    api_page_cache_put(c, S("/p/1?100&0"), 4, S("{\"count\":9}"));
    assert_false(api_page_cache_get(c, S("/p/1?100&0"), 4, &out));
    assert_true(api_page_cache_get(c, S("/p/1?100&0"), 5, &out));
    assert_memory_equal(out.p, "{\"count\":2}", 11);
    size_t one = api_page_cache_bytes(c); /* one page: its key, body and overhead */
    assert_true(one >= strlen("/p/1?100&0") + 11);
    api_page_cache_put(c, S("/p/1?100&0"), 6, S("{\"count\":3}"));
    assert_int_equal(api_page_cache_bytes(c), one); /* replaced, not added */
    api_page_cache_free(c);
}

static void test_bound(void **state)
{
    (void)state;
    char body[100];
    memset(body, 'x', sizeof(body));
    api_page_cache_t *c = api_page_cache_new(400);
    cm_slice_t out;
    api_page_cache_put(c, S("a"), 1, (cm_slice_t){body, 100});
    api_page_cache_put(c, S("b"), 1, (cm_slice_t){body, 100});
    assert_true(api_page_cache_get(c, S("a"), 1, &out));
    assert_true(api_page_cache_get(c, S("b"), 1, &out));
    api_page_cache_put(c, S("c"), 1,
                       (cm_slice_t){body, 100}); /* 3 x (101 + overhead) > 400: start over */
    assert_false(api_page_cache_get(c, S("a"), 1, &out));
    assert_true(api_page_cache_get(c, S("c"), 1, &out));
    assert_true(api_page_cache_bytes(c) <= 400);
    api_page_cache_put(c, S("big"), 1, (cm_slice_t){body, 100});
    api_page_cache_put(c, S("huge"), 1, (cm_slice_t){body, 0});
    assert_true(api_page_cache_bytes(c) <= 400);
    api_page_cache_free(c);
    /* 0 bytes: nothing is kept */
    c = api_page_cache_new(0);
    api_page_cache_put(c, S("a"), 1, S("{}"));
    assert_false(api_page_cache_get(c, S("a"), 1, &out));
    api_page_cache_free(c);
    api_page_cache_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_version_only),
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests_name("page_cache", tests, NULL, NULL);
}
