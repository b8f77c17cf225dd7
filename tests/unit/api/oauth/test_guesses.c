/*
 * test_guesses.c - sign-in guesses as services/api/oauth/guesses.c
 * counts them: free failures, then a wait; per account whatever the
 * address, per address whatever the account (an IPv6 /64 as one); a
 * success clears the account, an attempt that checked nothing is taken
 * back; the tables stay bounded. (The waits' growth over time is
 * oauth_limits.test.mjs's.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oauth/oauth_int.h"

typedef struct {
    api_ctx_t ctx;
    api_oauth_t o;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->ctx.cfg.login_free_failures = 5;
    f->ctx.cfg.login_address_free_failures = 20;
    f->ctx.cfg.login_max_delay_ms = 300000;
    f->o.ctx = &f->ctx;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    api_oauth__guesses_free(&f->o);
    free(f);
    return 0;
}

/* n attempts of email, each from its own IPv4 address, each wrong. */
static void wrong(api_oauth_t *o, const char *email, int n, int *next_addr)
{
    for (int i = 0; i < n; i++) {
        char ip[32];
        snprintf(ip, sizeof(ip), "192.0.2.%d", (*next_addr)++ % 250);
        assert_int_equal(api_oauth__guess_begin(o, email, ip), 0);
        api_oauth__guess_end(o, email, ip, API_OAUTH_GUESS_WRONG);
    }
}

static void test_account(void **state)
{
    fixture_t *f = *state;
    int a = 1;
    wrong(&f->o, "a@example.com", 5, &a);
    int64_t w = api_oauth__guess_begin(&f->o, "a@example.com", "198.51.100.1");
    assert_true(w > 0 && w <= 1000);
    /* another account from the same addresses is free */
    assert_int_equal(api_oauth__guess_begin(&f->o, "b@example.com", "192.0.2.1"), 0);
    api_oauth__guess_end(&f->o, "b@example.com", "192.0.2.1", API_OAUTH_GUESS_RIGHT);
}

static void test_success_clears_and_none_is_taken_back(void **state)
{
    fixture_t *f = *state;
    int a = 1;
    wrong(&f->o, "c@example.com", 4, &a);
    assert_int_equal(api_oauth__guess_begin(&f->o, "c@example.com", "192.0.2.200"), 0);
    api_oauth__guess_end(&f->o, "c@example.com", "192.0.2.200", API_OAUTH_GUESS_RIGHT);
    wrong(&f->o, "c@example.com", 4, &a); /* cleared: four more are free */
    /* an attempt that checked nothing (a full queue) does not count */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(api_oauth__guess_begin(&f->o, "c@example.com", "192.0.2.201"), 0);
        api_oauth__guess_end(&f->o, "c@example.com", "192.0.2.201", API_OAUTH_GUESS_NONE);
    }
    wrong(&f->o, "c@example.com", 1, &a);
    assert_true(api_oauth__guess_begin(&f->o, "c@example.com", "192.0.2.202") > 0);
}

static void test_in_flight_count(void **state)
{
    fixture_t *f = *state;
    /* five begun and not ended: the sixth waits (a burst at once) */
    for (int i = 0; i < 5; i++)
        assert_int_equal(api_oauth__guess_begin(&f->o, "d@example.com", "203.0.113.9"), 0);
    assert_true(api_oauth__guess_begin(&f->o, "d@example.com", "203.0.113.9") > 0);
}

static void test_address_and_ipv6_prefix(void **state)
{
    fixture_t *f = *state;
    char email[64], ip[64];
    for (int i = 0; i < 20; i++) {
        snprintf(email, sizeof(email), "u%d@example.com", i);
        snprintf(ip, sizeof(ip), "2001:db8:0:1::%x", i + 1); /* one /64 */
        assert_int_equal(api_oauth__guess_begin(&f->o, email, ip), 0);
    }
    assert_true(api_oauth__guess_begin(&f->o, "new@example.com", "2001:db8:0:1:ffff::1") > 0);
    assert_int_equal(api_oauth__guess_begin(&f->o, "new@example.com", "2001:db8:0:2::1"), 0);
    /* IPv4 addresses are each their own */
    for (int i = 0; i < 20; i++) {
        snprintf(email, sizeof(email), "v%d@example.com", i);
        assert_int_equal(api_oauth__guess_begin(&f->o, email, "198.51.100.20"), 0);
    }
    assert_true(api_oauth__guess_begin(&f->o, "w@example.com", "198.51.100.20") > 0);
    assert_int_equal(api_oauth__guess_begin(&f->o, "w@example.com", "198.51.100.21"), 0);
}

static void test_bounded(void **state)
{
    fixture_t *f = *state;
    char email[64], ip[64];
    /* far more accounts and addresses than a table keeps: no growth past
     * its bound, and the newest still counted */
    for (int i = 0; i < 25000; i++) {
        snprintf(email, sizeof(email), "flood%d@example.com", i);
        snprintf(ip, sizeof(ip), "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        api_oauth__guess_begin(&f->o, email, ip);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(api_oauth__guess_begin(&f->o, "flood24999@example.com", "10.0.97.167"), 0);
    assert_true(api_oauth__guess_begin(&f->o, "flood24999@example.com", "10.0.97.167") > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_account, setup, teardown),
        cmocka_unit_test_setup_teardown(test_success_clears_and_none_is_taken_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_in_flight_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_address_and_ipv6_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
