/* test_request.c - which Accept-Encoding values get a gzipped /flags
 * answer (flg_accepts_gzip, services/flags/serve/request.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cm/buf.h"
#include "serve/request.h"

static bool accepts(const char *v)
{
    return flg_accepts_gzip(cm_slice_from_cstr(v));
}

static void test_accepted(void **state)
{
    (void)state;
    assert_true(accepts("gzip"));
    assert_true(accepts("gzip, deflate"));      /* undici's fetch: posthog-node */
    assert_true(accepts("gzip, deflate, br"));  /* browsers: posthog-js */
    assert_true(accepts("deflate,GZIP;q=0.5")); /* any case, any q above 0 */
    assert_true(accepts(" br ; q=1 , x-gzip "));
    assert_true(accepts("*"));
    assert_true(accepts("gzip;q=0.001"));
}

static void test_refused(void **state)
{
    (void)state;
    assert_false(accepts(""));
    assert_false(accepts("identity"));
    assert_false(accepts("deflate, br"));
    assert_false(accepts("gzip;q=0"));
    assert_false(accepts("gzip; q=0.000"));
    assert_false(accepts("*, gzip;q=0")); /* named gzip decides over * */
    assert_false(accepts("gzip;q=0, *"));
    assert_false(accepts("*;q=0"));
    assert_false(accepts("gzipx, xgzip"));
    assert_false(accepts(",,;;,"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
