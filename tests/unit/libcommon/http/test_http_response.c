/*
 * test_http_response.c - the reason phrases of status lines
 * (cm_http_status_text): the redirects the OAuth pages answer with (303),
 * the other redirects, and no code of RFC 9110 left "Unknown".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cm/http_server.h"

static void test_status_text_redirects(void **state)
{
    (void)state;
    assert_string_equal(cm_http_status_text(301), "Moved Permanently");
    assert_string_equal(cm_http_status_text(302), "Found");
    assert_string_equal(cm_http_status_text(303), "See Other");
    assert_string_equal(cm_http_status_text(307), "Temporary Redirect");
    assert_string_equal(cm_http_status_text(308), "Permanent Redirect");
}

/* Every code RFC 9110 defines (but 305 and 306, retired, and 418, unused)
 * and RFC 6585's have a phrase; codes nobody defines stay "Unknown". */
static void test_status_text_every_rfc_code(void **state)
{
    (void)state;
    static const int codes[] = {100, 101, 200, 201, 202, 203, 204, 205, 206, 300, 301, 302,
                                303, 304, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407,
                                408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422,
                                426, 428, 429, 431, 500, 501, 502, 503, 504, 505, 511};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(cm_http_status_text(codes[i]), "Unknown") == 0)
            fail_msg("%d has no reason phrase", codes[i]);
    assert_string_equal(cm_http_status_text(410), "Gone");
    assert_string_equal(cm_http_status_text(501), "Not Implemented");
    assert_string_equal(cm_http_status_text(299), "Unknown");
    assert_string_equal(cm_http_status_text(0), "Unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_text_redirects),
        cmocka_unit_test(test_status_text_every_rfc_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
