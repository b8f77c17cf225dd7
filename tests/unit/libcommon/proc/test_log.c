/* test_log.c - JSON log lines: fields, levels, escaping, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm/err.h"
#include "cm/log.h"
#include "cm/timefmt.h"

static int pipe_fd[2];
static char got[CM_LOG_LINE_MAX * 2];
static size_t got_len;

static int setup(void **state)
{
    (void)state;
    if (pipe(pipe_fd) != 0)
        return -1;
    fcntl(pipe_fd[0], F_SETFL, O_NONBLOCK);
    cm_log_set_fd(pipe_fd[1]);
    cm_log_init("ingest", CM_LOG_INFO);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cm_log_set_fd(-1);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
    return 0;
}

/* Reads whatever the last calls wrote into got (NUL-terminated). */
static const char *drain(void)
{
    got_len = 0;
    ssize_t n;
    while ((n = read(pipe_fd[0], got + got_len, sizeof(got) - 1 - got_len)) > 0)
        got_len += (size_t)n;
    got[got_len] = '\0';
    return got;
}

/* ---- a strict validator for the flat objects the logger writes ------------ */

static const char *skip_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        } else if (c < 0x80) {
            p++;
        } else {
            /* Well-formed UTF-8 (no overlong/surrogate checks needed here:
             * the inputs below only produce 2-byte sequences). */
            int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
            if (n == 0 || c > 0xf4)
                return NULL;
            for (int i = 1; i < n; i++)
                if (((unsigned char)p[i] & 0xc0) != 0x80)
                    return NULL;
            p += n;
        }
    }
    return p + 1;
}

/* A JSON number (RFC 8259 grammar), or NULL. */
static const char *skip_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

/* One line: {"k":"v"|null|true|number, ...}\n and nothing else. */
static void assert_valid_line(const char *line, size_t len)
{
    assert_true(len >= 3);
    assert_true(len <= CM_LOG_LINE_MAX);
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1));
    const char *p = line;
    assert_int_equal(*p++, '{');
    for (;;) {
        p = skip_string(p);
        assert_non_null(p);
        assert_int_equal(*p++, ':');
        if (strncmp(p, "null", 4) == 0 || strncmp(p, "true", 4) == 0)
            p += 4;
        else if (*p == '-' || (*p >= '0' && *p <= '9'))
            p = skip_number(p);
        else
            p = skip_string(p);
        assert_non_null(p);
        if (*p != ',')
            break;
        p++;
    }
    assert_int_equal(*p++, '}');
    assert_int_equal(*p++, '\n');
    assert_true((size_t)(p - line) == len);
}

static const char *one_line(void)
{
    drain();
    assert_valid_line(got, got_len);
    return got;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_basic_line(void **state)
{
    (void)state;
    int64_t before = cm_now_us();
    cm_log(CM_LOG_INFO, "req-1", "hello %d %s", 42, "world");
    const char *l = one_line();
    assert_memory_equal(l, "{\"ts\":\"", 7);
    /* 2026-11-21T12:00:00.123Z: 24 characters, UTC, milliseconds. */
    int64_t ts;
    assert_int_equal(l[7 + 23], 'Z');
    assert_int_equal(l[7 + 19], '.');
    assert_int_equal(cm_iso8601_parse(l + 7, 24, &ts), CM_OK);
    assert_true(ts >= before / 1000 * 1000 && ts <= cm_now_us());
    assert_string_equal(l + 7 + 24, "\",\"level\":\"info\",\"service\":\"ingest\","
                                    "\"request_id\":\"req-1\",\"msg\":\"hello 42 world\"}\n");
}

static void test_no_request_id(void **state)
{
    (void)state;
    cm_log(CM_LOG_ERROR, NULL, "boom");
    const char *l = one_line();
    assert_null(strstr(l, "request_id"));
    assert_non_null(strstr(l, ",\"level\":\"error\",\"service\":\"ingest\",\"msg\":\"boom\"}\n"));
}

static void test_levels(void **state)
{
    (void)state;
    int evaluated = 0;
    cm_log(CM_LOG_DEBUG, NULL, "hidden %d", ++evaluated);
    assert_int_equal(evaluated, 0); /* filtered before arguments are evaluated */
    assert_string_equal(drain(), "");
    cm_log(CM_LOG_WARN, NULL, "shown");
    assert_non_null(strstr(one_line(), "\"level\":\"warn\""));

    cm_log_init("ingest", CM_LOG_DEBUG);
    cm_log(CM_LOG_DEBUG, NULL, "now shown");
    assert_non_null(strstr(one_line(), "\"level\":\"debug\""));

    cm_log_init("ingest", CM_LOG_OFF);
    cm_log(CM_LOG_ERROR, NULL, "never");
    assert_string_equal(drain(), "");
    cm_log_init("ingest", CM_LOG_INFO);
}

static void test_level_parse(void **state)
{
    (void)state;
    cm_log_level_t lv;
    assert_int_equal(cm_log_level_parse("debug", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_DEBUG);
    assert_int_equal(cm_log_level_parse("INFO", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_INFO);
    assert_int_equal(cm_log_level_parse("warn", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_WARN);
    assert_int_equal(cm_log_level_parse("Warning", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_WARN);
    assert_int_equal(cm_log_level_parse("error", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_ERROR);
    assert_int_equal(cm_log_level_parse("off", &lv), CM_OK);
    assert_int_equal(lv, CM_LOG_OFF);
    assert_int_equal(cm_log_level_parse("verbose", &lv), CM_EINVAL);
    assert_int_equal(cm_log_level_parse("", &lv), CM_EINVAL);
    assert_int_equal(cm_log_level_parse(NULL, &lv), CM_EINVAL);
}

static void test_escaping(void **state)
{
    (void)state;
    cm_log(CM_LOG_INFO, "r\"1", "q\" b\\ n\n r\r t\t c\x01\x1f d\x7f \xc3\xa9 bad\xff\xc3 end");
    const char *l = one_line();
    assert_non_null(strstr(l, "\"request_id\":\"r\\\"1\""));
    assert_non_null(strstr(l, "\"msg\":\"q\\\" b\\\\ n\\n r\\r t\\t c\\u0001\\u001f d\\u007f "
                              "\xc3\xa9 bad\\ufffd\\ufffd end\"}"));
    /* Overlong encodings and UTF-16 surrogates are not UTF-8 either. */
    cm_log(CM_LOG_INFO, NULL, "%s", "\xc0\xaf \xed\xa0\x80 \xf0\x9f\x98\x80");
    l = one_line();
    assert_non_null(
        strstr(l, "\"msg\":\"\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80\"}"));
}

static void test_fields(void **state)
{
    (void)state;
    const cm_log_field_t f[] = {
        {"status", "200"},
        {"path", "/e/?x=\"1\""},
        {"we\"ird", "a\nb"},
        {"missing", NULL},
    };
    cm_log_fields(CM_LOG_INFO, "abc", f, 4, "done");
    const char *l = one_line();
    assert_non_null(strstr(l, "\"msg\":\"done\",\"status\":\"200\",\"path\":\"/e/?x=\\\"1\\\"\","
                              "\"we\\\"ird\":\"a\\nb\",\"missing\":null}\n"));
    cm_log_fields(CM_LOG_DEBUG, "abc", f, 4, "filtered");
    assert_string_equal(drain(), "");
}

/* Numeric fields are written unquoted, before the text fields; text that
 * is not a JSON number (a client's, say) becomes null, never raw JSON. */
static void test_number_fields(void **state)
{
    (void)state;
    const cm_log_field_t f[] = {{"route", "/batch/"}};
    const cm_log_field_t n[] = {
        {"status", "401"}, {"duration_ms", "0.125"}, {"big", "-1.5e+10"},
        {"bad", "1}"},     {"lead", "007"},          {"empty", ""},
        {"dot", "1."},     {"none", NULL},
    };
    cm_log_record(CM_LOG_INFO, "abc", f, 1, n, 8, "access");
    const char *l = one_line();
    assert_non_null(strstr(l, "\"msg\":\"access\",\"status\":401,\"duration_ms\":0.125,"
                              "\"big\":-1.5e+10,\"bad\":null,\"lead\":null,\"empty\":null,"
                              "\"dot\":null,\"none\":null,\"route\":\"/batch/\"}\n"));
    cm_log_record(CM_LOG_DEBUG, "abc", f, 1, n, 8, "filtered");
    assert_string_equal(drain(), "");
}

static void test_service_name(void **state)
{
    (void)state;
    cm_log_init("cap\"ture", CM_LOG_INFO);
    cm_log(CM_LOG_INFO, NULL, "x");
    assert_non_null(strstr(one_line(), "\"service\":\"cap\\\"ture\""));
    cm_log_init("ingest", CM_LOG_INFO);
}

static void test_truncate_message(void **state)
{
    (void)state;
    char *big = malloc(20000);
    memset(big, 'a', 19999);
    big[19999] = '\0';
    cm_log(CM_LOG_INFO, "rid", "%s", big);
    const char *l = one_line();
    assert_true(got_len <= CM_LOG_LINE_MAX);
    assert_true(got_len > CM_LOG_LINE_MAX - 64); /* cut near the limit, not early */
    assert_string_equal(l + got_len - 21, "a\",\"truncated\":true}\n");
    free(big);
}

/* Sweeps lengths across the limit so every boundary case is hit. */
static void test_truncate_boundaries(void **state)
{
    (void)state;
    const char *unit[] = {"a", "\xc3\xa9", "\"", "\x01", "\xff"};
    char *buf = malloc(CM_LOG_LINE_MAX + 16);
    for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++) {
        size_t ulen = strlen(unit[u]);
        for (size_t total = CM_LOG_LINE_MAX - 200; total < CM_LOG_LINE_MAX + 8; total++) {
            size_t n = 0;
            while (n + ulen <= total / (u == 3 || u == 4 ? 6 : 1)) {
                memcpy(buf + n, unit[u], ulen);
                n += ulen;
            }
            buf[n] = '\0';
            cm_log(CM_LOG_INFO, NULL, "%s", buf);
            one_line();
            const cm_log_field_t f[] = {{"k1", buf}, {"k2", "v"}, {"k3", NULL}};
            cm_log_fields(CM_LOG_INFO, NULL, f, 3, "m");
            one_line();
        }
    }
    free(buf);
}

static void test_truncate_drops_whole_fields(void **state)
{
    (void)state;
    char *big = malloc(CM_LOG_LINE_MAX);
    memset(big, 'v', CM_LOG_LINE_MAX - 150);
    big[CM_LOG_LINE_MAX - 150] = '\0';
    const cm_log_field_t f[] = {{"first", big}, {"second", big}, {"third", "x"}};
    cm_log_fields(CM_LOG_INFO, NULL, f, 3, "m");
    const char *l = one_line();
    assert_non_null(strstr(l, "\"first\":\"vvv"));
    assert_null(strstr(l, "\"third\""));
    assert_non_null(strstr(l, ",\"truncated\":true}\n"));
    free(big);
}

static void test_restore_stderr(void **state)
{
    (void)state;
    int saved = dup(STDERR_FILENO);
    dup2(pipe_fd[1], STDERR_FILENO);
    cm_log_set_fd(-1);
    cm_log(CM_LOG_INFO, NULL, "to stderr");
    dup2(saved, STDERR_FILENO);
    close(saved);
    cm_log_set_fd(pipe_fd[1]);
    assert_non_null(strstr(one_line(), "\"msg\":\"to stderr\""));
}

/* At most one line per interval; the line after a quiet spell carries the
 * count of those held back. */
static void test_limit(void **state)
{
    (void)state;
    cm_log_limit_t l = {0};
    uint64_t skipped = 99;
    assert_true(cm_log_limit(&l, 5000, 1000, &skipped));
    assert_int_equal(skipped, 0);
    for (int i = 0; i < 500; i++)
        assert_false(cm_log_limit(&l, 5000 + (uint64_t)i, 1000, &skipped));
    assert_false(cm_log_limit(&l, 5999, 1000, &skipped));
    assert_true(cm_log_limit(&l, 6000, 1000, &skipped));
    assert_int_equal(skipped, 501);
    assert_true(cm_log_limit(&l, 9000, 1000, &skipped));
    assert_int_equal(skipped, 0);
    /* A clock at 0 is a valid first time, not "never logged". */
    cm_log_limit_t z = {0};
    assert_true(cm_log_limit(&z, 0, 1000, &skipped));
    assert_false(cm_log_limit(&z, 0, 1000, &skipped));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_line),
        cmocka_unit_test(test_no_request_id),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_level_parse),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_number_fields),
        cmocka_unit_test(test_service_name),
        cmocka_unit_test(test_truncate_message),
        cmocka_unit_test(test_truncate_boundaries),
        cmocka_unit_test(test_truncate_drops_whole_fields),
        cmocka_unit_test(test_restore_stderr),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests_name("log", tests, setup, teardown);
}
