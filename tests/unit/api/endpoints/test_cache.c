/*
 * test_cache.c - the run's cached answers (endpoints/cache.c): the value
 * kept in Redis is the time, a newline and the page as a whole object
 * (closed from the run's open page, not cut from it), and a GET's reply is
 * a hit only when it has that shape: an error, a nil, an entry of the
 * format before whole objects (members without braces) or a time too
 * long are misses, computed again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "endpoints/endpoints_int.h"

static redisReply string_reply(const char *s)
{
    redisReply r;
    memset(&r, 0, sizeof(r));
    r.type = REDIS_REPLY_STRING;
    r.str = (char *)s;
    r.len = strlen(s);
    return r;
}

/* An open page, as the run leaves it, closed into the entry. */
static void test_entry_closes_the_page(void **state)
{
    (void)state;
    cm_buf_t page = CM_BUF_INIT, entry = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &page);
    cm_json_begin_object(&w);
    cm_json_key(&w, "results");
    cm_json_begin_array(&w);
    cm_json_str_cstr(&w, "}{");
    cm_json_end_array(&w);
    cm_json_key(&w, "hasMore");
    cm_json_boolean(&w, false);
    api_endpoints__cache_entry(&entry, "2026-01-02T03:04:05.678Z", &page);
    assert_string_equal(cm_buf_cstr(&entry),
                        "2026-01-02T03:04:05.678Z\n{\"results\":[\"}{\"],\"hasMore\":false}");
    /* the run's page is left as it was: the envelope goes on after it */
    assert_int_equal(page.len, strlen("{\"results\":[\"}{\"],\"hasMore\":false"));
    /* an empty page (only the brace so far) is an empty object */
    cm_buf_reset(&page);
    cm_buf_reset(&entry);
    cm_buf_putc(&page, '{');
    api_endpoints__cache_entry(&entry, "t", &page);
    assert_string_equal(cm_buf_cstr(&entry), "t\n{}");
    cm_buf_free(&page);
    cm_buf_free(&entry);
}

/* What cache_entry keeps, cache_hit reads back: the time and the object. */
static void test_hit_round_trip(void **state)
{
    (void)state;
    cm_buf_t page = CM_BUF_INIT, entry = CM_BUF_INIT;
    cm_buf_append_cstr(&page, "{\"results\":[[1]],\"hasMore\":true");
    api_endpoints__cache_entry(&entry, "2026-01-02T03:04:05.678Z", &page);
    redisReply r = string_reply(cm_buf_cstr(&entry));
    char when[48];
    cm_slice_t got;
    assert_true(api_endpoints__cache_hit(&r, NULL, when, &got));
    assert_string_equal(when, "2026-01-02T03:04:05.678Z");
    assert_int_equal(got.len, strlen("{\"results\":[[1]],\"hasMore\":true}"));
    assert_memory_equal(got.p, "{\"results\":[[1]],\"hasMore\":true}", got.len);
    /* the object joins an open answer as its members */
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_members_raw(&w, got);
    cm_json_key(&w, "is_cached");
    cm_json_boolean(&w, true);
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&out),
                        "{\"results\":[[1]],\"hasMore\":true,\"is_cached\":true}");
    cm_buf_free(&out);
    cm_buf_free(&page);
    cm_buf_free(&entry);
}

static void test_misses(void **state)
{
    (void)state;
    char when[48];
    cm_slice_t got;
    redisReply r = string_reply("t\n{\"a\":1}");
    /* Redis away */
    assert_false(api_endpoints__cache_hit(&r, "connection lost", when, &got));
    assert_false(api_endpoints__cache_hit(NULL, NULL, when, &got));
    /* nil: nothing kept */
    redisReply nil;
    memset(&nil, 0, sizeof(nil));
    nil.type = REDIS_REPLY_NIL;
    assert_false(api_endpoints__cache_hit(&nil, NULL, when, &got));
    /* no newline */
    r = string_reply("{\"a\":1}");
    assert_false(api_endpoints__cache_hit(&r, NULL, when, &got));
    /* a time of 40 bytes or more */
    r = string_reply("0123456789012345678901234567890123456789\n{}");
    assert_false(api_endpoints__cache_hit(&r, NULL, when, &got));
    /* the format before whole objects: members only */
    r = string_reply("t\n\"results\":[],\"hasMore\":false");
    assert_false(api_endpoints__cache_hit(&r, NULL, when, &got));
    /* an object cut short */
    r = string_reply("t\n{\"results\":[]");
    assert_false(api_endpoints__cache_hit(&r, NULL, when, &got));
    r = string_reply("t\n");
    assert_false(api_endpoints__cache_hit(&r, NULL, when, &got));
    /* the smallest hit */
    r = string_reply("t\n{}");
    assert_true(api_endpoints__cache_hit(&r, NULL, when, &got));
    assert_string_equal(when, "t");
    assert_int_equal(got.len, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_closes_the_page),
        cmocka_unit_test(test_hit_round_trip),
        cmocka_unit_test(test_misses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
