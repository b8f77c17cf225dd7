/*
 * test_props_memo.c - wr_props_clone (props.c) and the memo of stored
 * persons' parsed properties (props_memo.c): a clone writes the same
 * properties and times as its source and changes apart from it; the memo
 * answers a load with the same texts from what it parsed before, parses
 * again when either text differs, and gives the same map as a parse
 * through both generations and with a budget so small that every entry
 * pushes the last one out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "props_memo.h"

#define PROPS "{\"email\":\"a@x.io\",\"k\\\"q\":1,\"o\":{\"x\":[1,2]},\"gone\":null}"
#define TIMES "{\"email\":[5,\"s\"],\"k\\\"q\":[7,\"o\"],\"was\":[9,\"u\"]}"

/* What a map says about itself: its JSON and its times. */
static void dump(const wr_props_t *p, cm_buf_t *out)
{
    cm_buf_reset(out);
    wr_props_write(p, out);
    cm_buf_putc(out, '|');
    wr_props_write_times(p, out);
}

static void parsed(wr_props_t *p, const char *props, const char *times)
{
    wr_props_load(p, cm_slice_from_cstr(props));
    if (times[0])
        wr_props_load_times(p, cm_slice_from_cstr(times));
}

static void test_clone_is_exact_and_apart(void **state)
{
    (void)state;
    wr_props_t src, copy;
    cm_arena_t arena = CM_ARENA_INIT;
    wr_props_init(&src);
    parsed(&src, PROPS, TIMES);
    wr_props_unset_at(&src, CM_SLICE_LIT("o"), 11);
    wr_props_init_in(&copy, &arena);
    wr_props_clone(&copy, &src);

    cm_buf_t a = CM_BUF_INIT, b = CM_BUF_INIT;
    dump(&src, &a);
    dump(&copy, &b);
    assert_string_equal(cm_buf_cstr(&a), cm_buf_cstr(&b));
    assert_int_equal(copy.n, src.n);
    assert_int_equal(copy.live, src.live);
    cm_slice_t v = wr_props_get(&copy, CM_SLICE_LIT("k\"q"));
    assert_int_equal(v.len, 1);
    assert_memory_equal(v.p, "1", 1);
    assert_null(wr_props_get(&copy, CM_SLICE_LIT("o")).p);

    /* the copy grows and changes; the source stays */
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof(k), "n%d", i);
        assert_true(wr_props_set_at(&copy, cm_slice_from_cstr(k), CM_SLICE_LIT("true"), 20));
    }
    assert_true(wr_props_set_at(&copy, CM_SLICE_LIT("email"), CM_SLICE_LIT("\"b@x.io\""), 30));
    dump(&src, &b);
    assert_string_equal(cm_buf_cstr(&a), cm_buf_cstr(&b));
    v = wr_props_get(&copy, CM_SLICE_LIT("email"));
    assert_memory_equal(v.p, "\"b@x.io\"", v.len);
    assert_memory_equal(wr_props_get(&copy, CM_SLICE_LIT("n39")).p, "true", 4);

    wr_props_t empty, none;
    wr_props_init(&empty);
    wr_props_init_in(&none, &arena);
    wr_props_clone(&none, &empty);
    assert_int_equal(none.n, 0);
    assert_null(wr_props_get(&none, CM_SLICE_LIT("email")).p);

    cm_buf_free(&a);
    cm_buf_free(&b);
    wr_props_free(&src);
    wr_props_free(&copy);
    cm_arena_free(&arena);
}

/* A load through the memo, compared with a parse of the same texts. */
static void load_and_check(wr_props_memo_t *m, const char *key, const char *props,
                           const char *times)
{
    cm_arena_t arena = CM_ARENA_INIT;
    wr_props_t got, want;
    wr_props_init_in(&got, &arena);
    wr_props_init(&want);
    wr_props_memo_load(m, cm_slice_from_cstr(key), cm_slice_from_cstr(props),
                       cm_slice_from_cstr(times), &got);
    parsed(&want, props, times);
    cm_buf_t a = CM_BUF_INIT, b = CM_BUF_INIT;
    dump(&want, &a);
    dump(&got, &b);
    assert_string_equal(cm_buf_cstr(&a), cm_buf_cstr(&b));
    /* a caller changes its copy: the memo's stays as parsed */
    wr_props_set_at(&got, CM_SLICE_LIT("email"), CM_SLICE_LIT("\"changed\""), 99);
    cm_buf_free(&a);
    cm_buf_free(&b);
    wr_props_free(&want);
    wr_props_free(&got);
    cm_arena_free(&arena);
}

static void counts(wr_props_memo_t *m, unsigned long long hits, unsigned long long misses)
{
    unsigned long long h, mi;
    wr_props_memo_counts(m, &h, &mi);
    assert_int_equal(h, hits);
    assert_int_equal(mi, misses);
}

static void test_memo_reuses_only_the_same_text(void **state)
{
    (void)state;
    wr_props_memo_t *m = wr_props_memo_new(WR_PROPS_MEMO_BYTES);
    load_and_check(m, "1:p", PROPS, TIMES);
    counts(m, 0, 1);
    load_and_check(m, "1:p", PROPS, TIMES);
    counts(m, 1, 1);
    /* another text for the same person (changed since): parsed again */
    load_and_check(m, "1:p", "{\"email\":\"new@x.io\"}", TIMES);
    counts(m, 1, 2);
    load_and_check(m, "1:p", "{\"email\":\"new@x.io\"}", "");
    counts(m, 1, 3);
    load_and_check(m, "1:p", "{\"email\":\"new@x.io\"}", "");
    counts(m, 2, 3);
    /* the same text under another person is that person's own entry */
    load_and_check(m, "2:p", "{\"email\":\"new@x.io\"}", "");
    counts(m, 2, 4);
    /* text that is not an object, kept as its parse leaves it */
    load_and_check(m, "3:p", "not json", "");
    load_and_check(m, "3:p", "not json", "");
    counts(m, 3, 5);
    wr_props_memo_free(m);
    wr_props_memo_free(NULL);
}

static void test_memo_generations(void **state)
{
    (void)state;
    /* room for a few entries a generation: the older ones go, a hit in the
     * older generation brings its entry forward */
    wr_props_memo_t *m = wr_props_memo_new(4 * 1024);
    char key[24];
    for (int i = 0; i < 50; i++) {
        snprintf(key, sizeof(key), "1:%d", i);
        load_and_check(m, key, PROPS, TIMES);
        load_and_check(m, "1:hot", PROPS, TIMES); /* seen every time: stays */
    }
    unsigned long long hits, misses;
    wr_props_memo_counts(m, &hits, &misses);
    assert_int_equal(hits + misses, 100);
    assert_int_equal(misses, 51);           /* the 50 others once each, the hot one once */
    load_and_check(m, "1:0", PROPS, TIMES); /* long gone: parsed again */
    counts(m, 49, 52);
    wr_props_memo_free(m);

    /* a budget smaller than any entry: nothing is reused, every answer right */
    m = wr_props_memo_new(1);
    load_and_check(m, "1:p", PROPS, TIMES);
    load_and_check(m, "1:p", PROPS, TIMES);
    load_and_check(m, "1:q", PROPS, "");
    unsigned long long h2, m2;
    wr_props_memo_counts(m, &h2, &m2);
    assert_int_equal(h2 + m2, 3);
    wr_props_memo_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clone_is_exact_and_apart),
        cmocka_unit_test(test_memo_reuses_only_the_same_text),
        cmocka_unit_test(test_memo_generations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
