/* test_config.c - env-table config: defaults, overrides, types, bounds, printing, freeing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/config.h"
#include "cm/err.h"

typedef struct {
    char *host;
    char *password;
    char *optional;
    long long port;
    bool debug;
    size_t max_body;
    long long timeout_ms;
    long long offset;
} cfg_t;

static const cm_cfg_key_t keys[] = {
    {"T_HOST", CM_CFG_STR, offsetof(cfg_t, host), "localhost", 0, 0, "bind address", 0},
    {"T_PASSWORD", CM_CFG_STR, offsetof(cfg_t, password), NULL, 0, 0, "redis password",
     CM_CFG_SECRET},
    {"T_OPTIONAL", CM_CFG_STR, offsetof(cfg_t, optional), NULL, 0, 0, NULL, 0},
    {"INGEST_PORT", CM_CFG_INT, offsetof(cfg_t, port), "8000", 1, 65535, "listen port", 0},
    {"T_DEBUG", CM_CFG_BOOL, offsetof(cfg_t, debug), "false", 0, 0, "verbose output", 0},
    {"T_MAX_BODY", CM_CFG_SIZE, offsetof(cfg_t, max_body), "20MiB", 1024, 1LL << 30,
     "largest request body", 0},
    {"T_TIMEOUT", CM_CFG_DURATION, offsetof(cfg_t, timeout_ms), "30s", 1, 3600000,
     "upstream timeout", 0},
    {"T_OFFSET", CM_CFG_INT, offsetof(cfg_t, offset), "-5", 0, 0, "unbounded integer", 0},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* A NULL-terminated list of "NAME=value" strings stands in for the environment. */
static const char *table_lookup(const char *name, void *ud)
{
    size_t n = strlen(name);
    for (const char *const *e = ud; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int load(const char *const *env, cfg_t *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    return cm_config_load_with(keys, NKEYS, c, table_lookup, (void *)env, err, errlen);
}

static void test_defaults(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    cfg_t c;
    char err[128];
    assert_int_equal(load(env, &c, err, sizeof(err)), CM_OK);
    assert_string_equal(err, "");
    assert_string_equal(c.host, "localhost");
    assert_null(c.password);
    assert_null(c.optional);
    assert_int_equal(c.port, 8000);
    assert_false(c.debug);
    assert_int_equal(c.max_body, 20 << 20);
    assert_int_equal(c.timeout_ms, 30000);
    assert_int_equal(c.offset, -5);
    cm_config_free(keys, NKEYS, &c);
    assert_null(c.host);
}

static void test_overrides(void **state)
{
    (void)state;
    const char *env[] = {"T_HOST=0.0.0.0",    "T_PASSWORD=hunter2",
                         "INGEST_PORT=65535", "T_DEBUG=YES",
                         "T_MAX_BODY=1g",     "T_TIMEOUT=250ms",
                         "T_OFFSET=+7",       "UNRELATED=1",
                         "T_HOSTX=no",        NULL};
    cfg_t c;
    char err[128];
    assert_int_equal(load(env, &c, err, sizeof(err)), CM_OK);
    assert_string_equal(c.host, "0.0.0.0");
    assert_string_equal(c.password, "hunter2");
    assert_int_equal(c.port, 65535);
    assert_true(c.debug);
    assert_int_equal(c.max_body, 1 << 30);
    assert_int_equal(c.timeout_ms, 250);
    assert_int_equal(c.offset, 7);
    cm_config_free(keys, NKEYS, &c);
}

static void test_empty_means_unset(void **state)
{
    (void)state;
    const char *env[] = {"T_HOST=", "INGEST_PORT=", "T_TIMEOUT=", NULL};
    cfg_t c;
    assert_int_equal(load(env, &c, NULL, 0), CM_OK);
    assert_string_equal(c.host, "localhost");
    assert_int_equal(c.port, 8000);
    assert_int_equal(c.timeout_ms, 30000);
    cm_config_free(keys, NKEYS, &c);
}

static void expect_error(const char *setting, const char *want)
{
    const char *env[] = {setting, "T_HOST=leaks-if-not-freed", NULL};
    cfg_t c;
    char err[160];
    assert_int_equal(load(env, &c, err, sizeof(err)), CM_EINVAL);
    if (strcmp(err, want) != 0)
        fail_msg("%s: got \"%s\" want \"%s\"", setting, err, want);
    /* A failed load frees what it loaded; freeing again is harmless. */
    assert_null(c.host);
    cm_config_free(keys, NKEYS, &c);
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_error("INGEST_PORT=0", "INGEST_PORT: must be between 1 and 65535");
    expect_error("INGEST_PORT=65536", "INGEST_PORT: must be between 1 and 65535");
    expect_error("INGEST_PORT=-1", "INGEST_PORT: must be between 1 and 65535");
    expect_error("INGEST_PORT=80x", "INGEST_PORT: must be an integer (got \"80x\")");
    expect_error("INGEST_PORT= 80", "INGEST_PORT: must be an integer (got \" 80\")");
    expect_error("INGEST_PORT=99999999999999999999",
                 "INGEST_PORT: must be an integer (got \"99999999999999999999\")");
    expect_error("T_DEBUG=maybe",
                 "T_DEBUG: must be one of 1/0, true/false, yes/no, on/off (got \"maybe\")");
    expect_error("T_MAX_BODY=1023", "T_MAX_BODY: must be between 1024 and 1073741824");
    expect_error("T_MAX_BODY=2g", "T_MAX_BODY: must be between 1024 and 1073741824");
    expect_error("T_MAX_BODY=20q",
                 "T_MAX_BODY: must be a byte size like 512, 64k, 16MiB or 1g (got \"20q\")");
    expect_error("T_TIMEOUT=2h", "T_TIMEOUT: must be between 1 and 3600000");
    expect_error("T_TIMEOUT=0", "T_TIMEOUT: must be between 1 and 3600000");
    expect_error("T_TIMEOUT=1.5s", "T_TIMEOUT: must be a duration like 250ms, 30s, 5m, 1h or 30d "
                                   "(bare number = ms) (got \"1.5s\")");
}

static void test_error_buffer_small(void **state)
{
    (void)state;
    const char *env[] = {"INGEST_PORT=0", NULL};
    cfg_t c;
    char err[8];
    assert_int_equal(load(env, &c, err, sizeof(err)), CM_EINVAL);
    assert_string_equal(err, "INGEST_");
    assert_int_equal(load(env, &c, NULL, 0), CM_EINVAL);
}

static void test_bad_default(void **state)
{
    (void)state;
    static const cm_cfg_key_t bad[] = {
        {"T_NAME", CM_CFG_STR, offsetof(cfg_t, host), "x", 0, 0, "", 0},
        {"T_N", CM_CFG_INT, offsetof(cfg_t, port), "ten", 0, 0, "", 0},
    };
    cfg_t c = {0};
    char err[128];
    const char *env[] = {NULL};
    assert_int_equal(cm_config_load_with(bad, 2, &c, table_lookup, (void *)env, err, sizeof(err)),
                     CM_EINVAL);
    assert_string_equal(err, "T_N: must be an integer (got \"ten\")");
    assert_null(c.host);
}

static void test_old_spelling(void **state)
{
    (void)state;
    static const cm_cfg_key_t k[] = {
        {"T_NEW_BODY", CM_CFG_SIZE, offsetof(cfg_t, max_body), "1KiB", 0, 0, "", 0, "T_OLD_BODY"},
    };
    cfg_t c = {0};
    const char *old_only[] = {"T_OLD_BODY=2KiB", NULL};
    assert_int_equal(cm_config_load_with(k, 1, &c, table_lookup, (void *)old_only, NULL, 0), CM_OK);
    assert_int_equal(c.max_body, 2048);
    const char *both[] = {"T_OLD_BODY=2KiB", "T_NEW_BODY=3KiB", NULL};
    assert_int_equal(cm_config_load_with(k, 1, &c, table_lookup, (void *)both, NULL, 0), CM_OK);
    assert_int_equal(c.max_body, 3072); /* the current name wins */
    const char *neither[] = {"T_NEW_BODY=", NULL};
    assert_int_equal(cm_config_load_with(k, 1, &c, table_lookup, (void *)neither, NULL, 0), CM_OK);
    assert_int_equal(c.max_body, 1024);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cm_config_print(k, 1, &c, f);
    fclose(f);
    assert_non_null(strstr(text, "formerly T_OLD_BODY"));
    free(text);
}

static void test_secret_not_echoed(void **state)
{
    (void)state;
    static const cm_cfg_key_t k[] = {
        {"T_KEY", CM_CFG_INT, offsetof(cfg_t, port), NULL, 0, 0, "", CM_CFG_SECRET},
    };
    cfg_t c = {0};
    char err[128];
    const char *env[] = {"T_KEY=s3cr3t", NULL};
    assert_int_equal(cm_config_load_with(k, 1, &c, table_lookup, (void *)env, err, sizeof(err)),
                     CM_EINVAL);
    assert_string_equal(err, "T_KEY: must be an integer");
}

static void test_setenv(void **state)
{
    (void)state;
    setenv("T_HOST", "from-env", 1);
    setenv("INGEST_PORT", "9090", 1);
    cfg_t c = {0};
    char err[128];
    assert_int_equal(cm_config_load(keys, NKEYS, &c, err, sizeof(err)), CM_OK);
    assert_string_equal(c.host, "from-env");
    assert_int_equal(c.port, 9090);
    cm_config_free(keys, NKEYS, &c);
    setenv("INGEST_PORT", "70000", 1);
    assert_int_equal(cm_config_load(keys, NKEYS, &c, err, sizeof(err)), CM_EINVAL);
    assert_string_equal(err, "INGEST_PORT: must be between 1 and 65535");
    unsetenv("T_HOST");
    unsetenv("INGEST_PORT");
}

static void test_parse_bool(void **state)
{
    (void)state;
    const char *yes[] = {"1", "true", "TRUE", "True", "yes", "YES", "on", "On"};
    const char *no[] = {"0", "false", "FALSE", "no", "No", "off", "OFF"};
    const char *bad[] = {"", "2", "y", "n", "truee", " true", "true ", "enabled", "-1"};
    bool b;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        b = false;
        assert_int_equal(cm_parse_bool(yes[i], &b), CM_OK);
        assert_true(b);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        b = true;
        assert_int_equal(cm_parse_bool(no[i], &b), CM_OK);
        assert_false(b);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(cm_parse_bool(bad[i], &b), CM_EINVAL);
    assert_int_equal(cm_parse_bool(NULL, &b), CM_EINVAL);
}

static void test_parse_size(void **state)
{
    (void)state;
    const struct {
        const char *s;
        size_t v;
    } ok[] = {
        {"0", 0},
        {"512", 512},
        {"512b", 512},
        {"1k", 1024},
        {"1K", 1024},
        {"2kb", 2048},
        {"3KiB", 3072},
        {"1m", 1 << 20},
        {"16MiB", 16 << 20},
        {"5MB", 5 << 20},
        {"1g", 1 << 30},
        {"2GiB", 2ull << 30},
        {"18446744073709551615", SIZE_MAX},
    };
    const char *bad[] = {"",
                         "k",
                         "-1",
                         "+1",
                         "1.5m",
                         "1 m",
                         " 1",
                         "1t",
                         "1kk",
                         "1mi",
                         "0x10",
                         "18446744073709551616",
                         "17179869184g"};
    size_t v;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(cm_parse_size(ok[i].s, &v), CM_OK);
        assert_int_equal(v, ok[i].v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cm_parse_size(bad[i], &v) != CM_EINVAL)
            fail_msg("accepted size \"%s\"", bad[i]);
}

static void test_parse_duration(void **state)
{
    (void)state;
    const struct {
        const char *s;
        long long v;
    } ok[] = {
        {"0", 0},
        {"250", 250},
        {"250ms", 250},
        {"2s", 2000},
        {"2S", 2000},
        {"5m", 300000},
        {"1h", 3600000},
        {"48h", 172800000},
        {"30d", 2592000000LL},
        {"10MS", 10},
        {"9223372036854775807", 9223372036854775807LL},
    };
    const char *bad[] = {"",
                         "s",
                         "-1s",
                         "1.5s",
                         "1w",
                         "1 s",
                         "1sec",
                         "1hm",
                         "9223372036854775808",
                         "3000000000000000h"};
    long long v;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(cm_parse_duration_ms(ok[i].s, &v), CM_OK);
        assert_int_equal(v, ok[i].v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cm_parse_duration_ms(bad[i], &v) != CM_EINVAL)
            fail_msg("accepted duration \"%s\"", bad[i]);
}

static char *print_to_string(const cfg_t *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    cm_config_print(keys, NKEYS, c, f);
    fclose(f);
    return text;
}

static void test_print(void **state)
{
    (void)state;
    const char *env[] = {"T_PASSWORD=hunter2", "T_MAX_BODY=1536", "T_TIMEOUT=90s", NULL};
    cfg_t c;
    assert_int_equal(load(env, &c, NULL, 0), CM_OK);
    char *text = print_to_string(&c);
    assert_string_equal(text, "T_HOST=localhost  # bind address (default: localhost)\n"
                              "T_PASSWORD=***  # redis password (default: unset)\n"
                              "T_OPTIONAL=  # (default: unset)\n"
                              "INGEST_PORT=8000  # listen port (default: 8000)\n"
                              "T_DEBUG=false  # verbose output (default: false)\n"
                              "T_MAX_BODY=1536  # largest request body (default: 20MiB)\n"
                              "T_TIMEOUT=90s  # upstream timeout (default: 30s)\n"
                              "T_OFFSET=-5  # unbounded integer (default: -5)\n");
    assert_null(strstr(text, "hunter2"));
    free(text);
    cm_config_free(keys, NKEYS, &c);
}

/* Printed values read back as the same value (sizes and durations are
 * shown in the largest exact unit). */
static void test_print_round_trip(void **state)
{
    (void)state;
    const char *env[] = {"T_DEBUG=on", "T_MAX_BODY=3072", "T_TIMEOUT=3600000", NULL};
    cfg_t c;
    assert_int_equal(load(env, &c, NULL, 0), CM_OK);
    char *text = print_to_string(&c);
    assert_non_null(strstr(text, "\nT_DEBUG=true  #"));
    assert_non_null(strstr(text, "\nT_MAX_BODY=3KiB  #"));
    assert_non_null(strstr(text, "\nT_TIMEOUT=1h  #"));
    free(text);
    cm_config_free(keys, NKEYS, &c);

    const char *env2[] = {"T_MAX_BODY=3KiB", "T_TIMEOUT=1h", "T_PASSWORD=", NULL};
    assert_int_equal(load(env2, &c, NULL, 0), CM_OK);
    assert_int_equal(c.max_body, 3072);
    assert_int_equal(c.timeout_ms, 3600000);
    text = print_to_string(&c);
    /* An unset secret prints empty, so operators see it is missing. */
    assert_non_null(strstr(text, "\nT_PASSWORD=  #"));
    free(text);
    cm_config_free(keys, NKEYS, &c);
}

static void test_print_secret_default(void **state)
{
    (void)state;
    static const cm_cfg_key_t k[] = {
        {"T_TOKEN", CM_CFG_STR, offsetof(cfg_t, password), "dev-token", 0, 0, "api token",
         CM_CFG_SECRET},
    };
    cfg_t c = {0};
    const char *env[] = {NULL};
    assert_int_equal(cm_config_load_with(k, 1, &c, table_lookup, (void *)env, NULL, 0), CM_OK);
    assert_string_equal(c.password, "dev-token");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cm_config_print(k, 1, &c, f);
    fclose(f);
    assert_string_equal(text, "T_TOKEN=***  # api token (default: ***)\n");
    free(text);
    cm_config_free(k, 1, &c);
}

/* KAFKA_*_PROPERTIES: items in order, empty ones skipped, at most max. */
static void test_split_list(void **state)
{
    (void)state;
    char a[] = "acks=all,,linger.ms=5,";
    const char *out[4];
    assert_int_equal(cm_config_split_list(a, out, 4), 2);
    assert_string_equal(out[0], "acks=all");
    assert_string_equal(out[1], "linger.ms=5");
    char b[] = "a,b,c";
    assert_int_equal(cm_config_split_list(b, out, 2), 2);
    assert_string_equal(out[1], "b");
    char c[] = "";
    assert_int_equal(cm_config_split_list(c, out, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_empty_means_unset),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_error_buffer_small),
        cmocka_unit_test(test_bad_default),
        cmocka_unit_test(test_old_spelling),
        cmocka_unit_test(test_secret_not_echoed),
        cmocka_unit_test(test_setenv),
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_print_round_trip),
        cmocka_unit_test(test_print_secret_default),
        cmocka_unit_test(test_split_list),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
