/*
 * test_evstore_sql.c - the dialect of a ClickHouse server by its version()
 * and the settings a read there needs (libcommon/src/evstore/evstore_sql.c,
 * cm/evstore_sql.h; docs/endpoints.md "ClickHouse versions").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cm/evstore_sql.h"

static void test_dialect_by_version(void **state)
{
    (void)state;
    static const struct {
        const char *version;
        cm_evstore_dialect_t want;
    } cases[] = {
        {"", CM_EVSTORE_SQL_CLICKHOUSE_1816}, /* not known yet: what every server reads */
        {NULL, CM_EVSTORE_SQL_CLICKHOUSE_1816},
        {"garbage", CM_EVSTORE_SQL_CLICKHOUSE_1816},
        {"18.16.1", CM_EVSTORE_SQL_CLICKHOUSE_1816},
        {"20.3.19.4", CM_EVSTORE_SQL_CLICKHOUSE_1816},
        {"21.7.11.3", CM_EVSTORE_SQL_CLICKHOUSE_1816},
        {"21", CM_EVSTORE_SQL_CLICKHOUSE_1816}, /* no minor: 21.0 */
        {"21.8.15.7", CM_EVSTORE_SQL_CLICKHOUSE_MODERN},
        {"21.12.4.1", CM_EVSTORE_SQL_CLICKHOUSE_MODERN},
        {"22.8.21.38", CM_EVSTORE_SQL_CLICKHOUSE_MODERN},
        {"23.12.6.19", CM_EVSTORE_SQL_CLICKHOUSE_MODERN},
        {"24.1.1.2048", CM_EVSTORE_SQL_CLICKHOUSE_24},
        {"24.3.18.7", CM_EVSTORE_SQL_CLICKHOUSE_24},
        {"24.8.14.39", CM_EVSTORE_SQL_CLICKHOUSE_24},
        {"25.3.2.39", CM_EVSTORE_SQL_CLICKHOUSE_24}, /* a newer major: 24's rules */
        {"31.1", CM_EVSTORE_SQL_CLICKHOUSE_24},
        {"99999999999999999999.1", CM_EVSTORE_SQL_CLICKHOUSE_24},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_evstore_dialect_t got = cm_evstore_sql_clickhouse_dialect(cases[i].version);
        if (got != cases[i].want)
            fail_msg("%s: dialect %d, want %d", cases[i].version ? cases[i].version : "(null)",
                     (int)got, (int)cases[i].want);
    }
}

static void test_settings_by_version(void **state)
{
    (void)state;
    static const struct {
        const char *version, *want;
    } cases[] = {
        {"", ""},
        {"18.16.1", ""},
        {"21.7.11.3", ""},
        {"21.8.15.7", "&allow_experimental_window_functions=1"}, /* gone from 21.9 */
        {"21.9.2.17", ""},
        {"23.3.22.3", ""},
        {"23.4.2.11", "&formatdatetime_parsedatetime_m_is_month_name=0"},
        {"23.12.6.19", "&formatdatetime_parsedatetime_m_is_month_name=0"},
        {"24.3.18.7", ""}, /* prints %i for the minute */
        {"25.3.2.39", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(cm_evstore_sql_clickhouse_settings(cases[i].version), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dialect_by_version),
        cmocka_unit_test(test_settings_by_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
