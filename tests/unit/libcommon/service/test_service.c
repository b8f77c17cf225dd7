/* test_service.c - the shared service settings' parsers: ACCESS_LOG_SAMPLE
 * and <SVC>_TRUSTED_PROXIES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cm/client_ip.h"
#include "cm/err.h"
#include "cm/service.h"

static void test_sample_rates(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double want;
    } good[] = {{"0", 0}, {"1", 1}, {"0.01", 0.01}, {"1.0", 1}, {"0.5", 0.5}, {"", 1}, {NULL, 1}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        double v = -1;
        assert_int_equal(cm_service_parse_sample(good[i].text, &v), CM_OK);
        assert_true(v == good[i].want);
    }
    static const char *bad[] = {"1.5", "-0.1", "abc", "0.5x", "nan", "inf", " ", "1e9"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v = 7;
        assert_int_equal(cm_service_parse_sample(bad[i], &v), CM_EINVAL);
        assert_true(v == 7); /* untouched on failure */
    }
}

static void test_trusted_proxies(void **state)
{
    (void)state;
    int n = -5;
    assert_int_equal(cm_service_parse_trusted_proxies("all", &n), CM_OK);
    assert_int_equal(n, CM_TRUST_ALL_PROXIES);
    assert_int_equal(cm_service_parse_trusted_proxies("2", &n), CM_OK);
    assert_int_equal(n, 2);
    assert_int_equal(cm_service_parse_trusted_proxies("false", &n), CM_OK);
    assert_int_equal(n, 0);
    assert_int_equal(cm_service_parse_trusted_proxies("65", &n), CM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_rates),
        cmocka_unit_test(test_trusted_proxies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
