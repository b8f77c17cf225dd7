/* test_timefmt.c - ISO-8601 parse/format, round trips, HTTP dates, clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "cm/err.h"
#include "cm/timefmt.h"

#define SEC INT64_C(1000000)
#define DAY (86400 * SEC)

static int64_t parse_ok(const char *s)
{
    int64_t us = -42;
    int rc = cm_iso8601_parse(s, strlen(s), &us);
    if (rc != CM_OK)
        fail_msg("rejected valid time \"%s\"", s);
    return us;
}

static void parse_bad(const char *s)
{
    int64_t us = -42;
    if (cm_iso8601_parse(s, strlen(s), &us) != CM_EINVAL)
        fail_msg("accepted invalid time \"%s\"", s);
    assert_int_equal(us, -42); /* untouched on failure */
}

static void test_parse_valid(void **state)
{
    (void)state;
    const struct {
        const char *s;
        int64_t us;
    } cases[] = {
        {"1970-01-01", 0},
        {"1970-01-01T00:00:00Z", 0},
        {"1970-01-02", DAY},
        {"2024-02-29", INT64_C(1709164800) * SEC},
        {"2000-02-29T12:00:00Z", INT64_C(951825600) * SEC},
        {"2023-11-14T22:13:20Z", INT64_C(1700000000) * SEC},
        {"2023-11-14t22:13:20z", INT64_C(1700000000) * SEC},
        {"2023-11-14 22:13:20", INT64_C(1700000000) * SEC},
        {"2023-11-14T22:13", INT64_C(1699999980) * SEC},
        {"2023-11-14T22:13Z", INT64_C(1699999980) * SEC},
        {"2023-11-14T22:13:20.5Z", INT64_C(1700000000) * SEC + 500000},
        {"2023-11-14T22:13:20.123Z", INT64_C(1700000000) * SEC + 123000},
        {"2023-11-14T22:13:20.123456Z", INT64_C(1700000000) * SEC + 123456},
        /* Digits past microseconds are truncated, not rounded. */
        {"2023-11-14T22:13:20.123456999Z", INT64_C(1700000000) * SEC + 123456},
        {"2023-11-14T22:13:20.0000009999999999999999Z", INT64_C(1700000000) * SEC},
        /* Offsets are east of UTC: subtract them. */
        {"2023-11-15T03:43:20+05:30", INT64_C(1700000000) * SEC},
        {"2023-11-15T03:43:20+0530", INT64_C(1700000000) * SEC},
        {"2023-11-14T14:13:20-0800", INT64_C(1700000000) * SEC},
        {"2023-11-14T14:13:20-08:00", INT64_C(1700000000) * SEC},
        {"2023-11-15T01:13:20+03", INT64_C(1700000000) * SEC},
        {"2023-11-14T22:13:20+00:00", INT64_C(1700000000) * SEC},
        {"2023-11-14T22:13:20-00:00", INT64_C(1700000000) * SEC},
        {"2023-11-15T01:13:20.25+03", INT64_C(1700000000) * SEC + 250000},
        /* An offset can move the instant across a day, month and year. */
        {"2024-01-01T01:00:00+02:00", INT64_C(1704063600) * SEC},
        {"2023-12-31T23:30:00-01:00", INT64_C(1704069000) * SEC},
        /* Before 1970. */
        {"1969-12-31T23:59:59Z", -SEC},
        {"1969-12-31T23:59:59.999999Z", -1},
        {"1900-01-01", INT64_C(-2208988800) * SEC},
        {"0000-01-01", INT64_C(-62167219200) * SEC},
        {"9999-12-31T23:59:59.999999Z", INT64_C(253402300799) * SEC + 999999},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t got = parse_ok(cases[i].s);
        if (got != cases[i].us)
            fail_msg("%s: got %lld want %lld", cases[i].s, (long long)got, (long long)cases[i].us);
    }
}

static void test_parse_invalid(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "2023",
        "2023-11",
        "2023-1-14",
        "23-11-14",
        "2023/11/14",
        "2023-11-14T",
        "2023-11-14X22:13:20",
        "2023-02-29",
        "1900-02-29",
        "2024-02-30",
        "2023-04-31",
        "2023-13-01",
        "2023-00-10",
        "2023-11-00",
        "2023-11-32",
        "2023-11-14T24:00:00Z",
        "2023-11-14T23:60:00Z",
        "2023-11-14T23:59:60Z",
        "2023-11-14T22",
        "2023-11-14T22:1",
        "2023-11-14T2:13:20",
        "2023-11-14T22:13:2",
        "2023-11-14T22:13:20.",
        "2023-11-14T22:13:20.Z",
        "2023-11-14T22:13.5",
        "2023-11-14T22:13:20ZZ",
        "2023-11-14T22:13:20Z ",
        " 2023-11-14",
        "2023-11-14 ",
        "2023-11-14T22:13:20+5",
        "2023-11-14T22:13:20+05:",
        "2023-11-14T22:13:20+05:3",
        "2023-11-14T22:13:20+053",
        "2023-11-14T22:13:20+24:00",
        "2023-11-14T22:13:20+05:60",
        "2023-11-14T22:13:20+05:30:00",
        "2023-11-14T22:13:20 +05:30",
        "2023-11-14T22:13:20UTC",
        "2023-11-14Z",
        "+2023-11-14",
        "-2023-11-14",
        "2023-11-14T22:13:20,5Z",
        "2023-11-14T22:13:20.5.5Z",
        "20x3-11-14",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        parse_bad(bad[i]);
    int64_t us;
    assert_int_equal(cm_iso8601_parse(NULL, 0, &us), CM_EINVAL);
}

static void test_parse_uses_len(void **state)
{
    (void)state;
    int64_t us;
    const char *s = "2023-11-14T22:13:20Zgarbage";
    assert_int_equal(cm_iso8601_parse(s, 20, &us), CM_OK);
    assert_int_equal(us, INT64_C(1700000000) * SEC);
    assert_int_equal(cm_iso8601_parse(s, 10, &us), CM_OK);
    assert_int_equal(cm_iso8601_parse(s, 19, &us), CM_OK);
    assert_int_equal(cm_iso8601_parse(s, 21, &us), CM_EINVAL);
}

static void check_format(int64_t us, int digits, const char *want)
{
    char out[CM_ISO8601_MAX];
    size_t n = cm_iso8601_format(us, digits, out);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_format(void **state)
{
    (void)state;
    int64_t t = INT64_C(1700000000) * SEC + 123456;
    check_format(t, 0, "2023-11-14T22:13:20Z");
    check_format(t, 3, "2023-11-14T22:13:20.123Z");
    check_format(t, 6, "2023-11-14T22:13:20.123456Z");
    check_format(t + 999, 3, "2023-11-14T22:13:20.124Z"); /* .124455 truncates */
    check_format(0, 3, "1970-01-01T00:00:00.000Z");
    check_format(-1, 6, "1969-12-31T23:59:59.999999Z");
    check_format(-1, 0, "1969-12-31T23:59:59Z");
    check_format(-SEC / 2, 3, "1969-12-31T23:59:59.500Z");
    check_format(INT64_C(-2208988800) * SEC, 0, "1900-01-01T00:00:00Z");
    check_format(INT64_C(951782400) * SEC, 0, "2000-02-29T00:00:00Z");
    check_format(INT64_C(1709164800) * SEC + DAY - 1, 0, "2024-02-29T23:59:59Z");
    check_format(INT64_C(4107542400) * SEC, 0, "2100-03-01T00:00:00Z");
    /* Unknown digit counts mean none. */
    check_format(t, 2, "2023-11-14T22:13:20Z");
    /* Outside 0000..9999 clamps, so output is always fixed-width. */
    check_format(INT64_MIN, 6, "0000-01-01T00:00:00.000000Z");
    check_format(INT64_MAX, 6, "9999-12-31T23:59:59.999999Z");
}

static void test_round_trip(void **state)
{
    (void)state;
    /* Steps chosen to land on many different days, times and fractions. */
    const int64_t lo = INT64_C(-62167219200) * SEC, hi = INT64_C(253402300799) * SEC;
    const int64_t step = INT64_C(7777777777777) + 1234567;
    char out[CM_ISO8601_MAX];
    int n = 0;
    for (int64_t us = lo; us <= hi; us += step, n++) {
        int64_t back;
        size_t len = cm_iso8601_format(us, 6, out);
        assert_int_equal(cm_iso8601_parse(out, len, &back), CM_OK);
        assert_int_equal(back, us);
        len = cm_iso8601_format(us, 3, out);
        assert_int_equal(cm_iso8601_parse(out, len, &back), CM_OK);
        assert_int_equal(back, us - (((us % 1000) + 1000) % 1000));
    }
    assert_true(n > 30000);
}

/* Cross-check the calendar math against the C library for every day of a
 * wide span (gmtime_r on a 64-bit time_t is right for these years). */
static void test_against_gmtime(void **state)
{
    (void)state;
    char out[CM_ISO8601_MAX], want[CM_ISO8601_MAX];
    for (int64_t day = -800000; day <= 800000; day += 13) {
        time_t secs = (time_t)(day * 86400 + 3723);
        struct tm tm;
        gmtime_r(&secs, &tm);
        if (tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
            continue;
        strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
        cm_iso8601_format((int64_t)secs * SEC, 0, out);
        /* strftime pads %Y differently below 1000; compare from the month. */
        assert_string_equal(out + 4, want + strlen(want) - strlen(out + 4));
    }
}

static void test_http_date(void **state)
{
    (void)state;
    char out[32];
    assert_int_equal(cm_http_date(INT64_C(784111777) * SEC, out), 29);
    assert_string_equal(out, "Sun, 06 Nov 1994 08:49:37 GMT");
    cm_http_date(0, out);
    assert_string_equal(out, "Thu, 01 Jan 1970 00:00:00 GMT");
    cm_http_date(INT64_C(1700000000) * SEC + 999999, out);
    assert_string_equal(out, "Tue, 14 Nov 2023 22:13:20 GMT");
    cm_http_date(INT64_C(1709164800) * SEC, out);
    assert_string_equal(out, "Thu, 29 Feb 2024 00:00:00 GMT");
    cm_http_date(-SEC, out);
    assert_string_equal(out, "Wed, 31 Dec 1969 23:59:59 GMT");
    cm_http_date(INT64_C(-2208988800) * SEC, out);
    assert_string_equal(out, "Mon, 01 Jan 1900 00:00:00 GMT");
    /* Every weekday appears over one week. */
    const char *days[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
    for (int i = 0; i < 7; i++) {
        cm_http_date(i * DAY, out);
        assert_memory_equal(out, days[i], 3);
        cm_http_date(-7 * DAY + i * DAY, out);
        assert_memory_equal(out, days[i], 3);
    }
}

static void test_clocks(void **state)
{
    (void)state;
    int64_t now = cm_now_us();
    assert_true(now > INT64_C(1700000000) * SEC);
    assert_true((int64_t)time(NULL) - now / SEC <= 1);
    uint64_t a = cm_mono_ms();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint64_t b = cm_mono_ms();
    assert_true(b >= a + 19);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),    cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_parse_uses_len), cmocka_unit_test(test_format),
        cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_against_gmtime),
        cmocka_unit_test(test_http_date),      cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests_name("timefmt", tests, NULL, NULL);
}
