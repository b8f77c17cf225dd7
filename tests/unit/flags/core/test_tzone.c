/*
 * test_tzone.c - project time zones: offsets across daylight-saving changes
 * (ICU's rules), unknown and malformed names refused, and the wall-clock
 * conversions evaluation does through them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cm/civil.h"
#include "core/dates.h"
#include "core/tzone.h"

#define S(x) cm_slice_from_cstr(x)

/* Unix seconds of a UTC civil time. */
static int64_t utc(int y, int m, int d, int hh, int mm)
{
    return cm_days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60;
}

static int32_t offset(const flg_tzone_t *z, int64_t t)
{
    const flg_tz_t *tz = flg_tzone_tz(z);
    return tz->utc_offset(tz, t);
}

static void test_offsets_follow_daylight_saving(void **state)
{
    (void)state;
    flg_tzone_t *berlin = flg_tzone_open(S("Europe/Berlin"));
    assert_non_null(berlin);
    assert_string_equal(flg_tzone_name(berlin), "Europe/Berlin");
    assert_int_equal(offset(berlin, utc(2024, 1, 15, 12, 0)), 3600);
    assert_int_equal(offset(berlin, utc(2024, 7, 1, 12, 0)), 7200);
    /* The change itself: 2024-03-31 01:00Z. */
    assert_int_equal(offset(berlin, utc(2024, 3, 31, 0, 59)), 3600);
    assert_int_equal(offset(berlin, utc(2024, 3, 31, 1, 0)), 7200);
    /* Far past the last transition a fat tzdata file lists (2037). */
    assert_int_equal(offset(berlin, utc(2100, 7, 1, 12, 0)), 7200);
    flg_tzone_free(berlin);

    flg_tzone_t *ny = flg_tzone_open(S("America/New_York"));
    assert_non_null(ny);
    assert_int_equal(offset(ny, utc(2024, 1, 15, 12, 0)), -5 * 3600);
    assert_int_equal(offset(ny, utc(2024, 7, 1, 12, 0)), -4 * 3600);
    flg_tzone_free(ny);

    flg_tzone_t *kolkata = flg_tzone_open(S("Asia/Kolkata"));
    assert_non_null(kolkata);
    assert_int_equal(offset(kolkata, utc(2024, 7, 1, 12, 0)), 5 * 3600 + 1800);
    flg_tzone_free(kolkata);

    flg_tzone_t *z = flg_tzone_open(S("UTC"));
    assert_non_null(z);
    assert_int_equal(offset(z, utc(2024, 7, 1, 12, 0)), 0);
    flg_tzone_free(z);
}

static void test_unknown_and_malformed_names(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "Mars/Olympus_Mons",
                         "Europe/Berlin ",
                         "Europe/Berl\xc3\xadn",
                         "europe\nberlin",
                         "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/B"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_null(flg_tzone_open(S(bad[i])));
    /* The slice is what counts, not a terminator after it. */
    assert_null(flg_tzone_open((cm_slice_t){"Europe/Berlin", 6}));
    flg_tzone_t *z = flg_tzone_open((cm_slice_t){"Asia/TokyoXX", 10});
    assert_non_null(z);
    assert_string_equal(flg_tzone_name(z), "Asia/Tokyo");
    flg_tzone_free(z);
    flg_tzone_free(NULL);
}

static void test_wall_clock_conversions(void **state)
{
    (void)state;
    flg_tzone_t *z = flg_tzone_open(S("Europe/Berlin"));
    const flg_tz_t *tz = flg_tzone_tz(z);
    /* 10:00 in Berlin in January is 09:00Z; in July, 08:00Z. */
    assert_int_equal(flg_local_to_utc_ms(utc(2024, 1, 15, 10, 0) * 1000, tz),
                     utc(2024, 1, 15, 9, 0) * 1000);
    assert_int_equal(flg_local_to_utc_ms(utc(2024, 7, 15, 10, 0) * 1000, tz),
                     utc(2024, 7, 15, 8, 0) * 1000);
    assert_int_equal(flg_utc_to_local_ms(utc(2024, 7, 15, 8, 0) * 1000, tz),
                     utc(2024, 7, 15, 10, 0) * 1000);
    flg_tzone_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_follow_daylight_saving),
        cmocka_unit_test(test_unknown_and_malformed_names),
        cmocka_unit_test(test_wall_clock_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
