/*
 * test_geoip.c - the $geoip_* properties and the client IP of a /flags
 * request (services/flags/geoip.h).
 *
 * The group setup builds the test database with
 * tests/support/make_geoip_db.pl (its header lists the records these tests
 * expect) in a fresh temporary directory, so this binary needs perl and
 * MaxMind::DB::Writer: both are installed by scripts/setup, and a missing
 * one fails the run rather than skipping it. Properties are written into a
 * JSON object exactly as the service will, then parsed back to check them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cm/buf.h"
#include "cm/client_ip.h"
#include "cm/err.h"
#include "cm/json.h"

#include "serve/geoip.h"

#define SCRIPT "tests/support/make_geoip_db.pl"

typedef struct {
    char dir[256];
    char path[300];
    flg_geoip_t *g;
} fixture_t;

/* ---- fixture ---------------------------------------------------------------- */

/* Runs perl SCRIPT path; true if it exited 0. */
static bool build_db(const char *path)
{
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        execlp("perl", "perl", SCRIPT, path, (char *)NULL);
        fprintf(stderr, "test_geoip: cannot run perl: ");
        perror("execlp");
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int teardown(void **state);

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof(f->dir), "%s/flg_geoip_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        perror("test_geoip: mkdtemp");
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/test.mmdb", f->dir);
    *state = f;
    if (!build_db(f->path)) {
        fprintf(stderr,
                "test_geoip: FAILED to build the test DB with `perl %s`; perl and "
                "MaxMind::DB::Writer (libmaxmind-db-writer-perl) must be installed "
                "(scripts/setup)\n",
                SCRIPT);
        teardown(state); /* cmocka skips the group teardown after a failed setup */
        return -1;
    }
    if (flg_geoip_open(f->path, &f->g) != 0) {
        fprintf(stderr, "test_geoip: FAILED to open %s\n", f->path);
        teardown(state);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    if (!f)
        return 0;
    flg_geoip_close(f->g);
    unlink(f->path); /* may not exist if the build failed */
    rmdir(f->dir);
    free(f);
    *state = NULL;
    return 0;
}

/* ---- helpers ---------------------------------------------------------------- */

/* What one lookup produced: the JSON text, parsed, and the count returned. */
typedef struct {
    cm_buf_t buf;
    cm_json_doc_t *doc;
    int n;
} result_t;

static void lookup(const flg_geoip_t *g, const char *ip, result_t *r)
{
    cm_json_writer_t w;
    r->buf = CM_BUF_INIT;
    cm_json_writer_init(&w, &r->buf);
    cm_json_begin_object(&w);
    r->n = flg_geoip_lookup(g, ip, &w);
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_int_equal(cm_json_parse(r->buf.p, r->buf.len, NULL, &r->doc, NULL), 0);
    /* The count must be what was written. */
    assert_int_equal(cm_json_len(cm_json_root(r->doc)), (uint32_t)r->n);
}

static void result_free(result_t *r)
{
    cm_json_doc_free(r->doc);
    cm_buf_free(&r->buf);
}

static void assert_prop(const result_t *r, const char *key, const char *want)
{
    cm_json_t v = cm_json_get(cm_json_root(r->doc), key);
    if (!want) {
        if (cm_json_exists(v))
            fail_msg("%s should be absent in %.*s", key, (int)r->buf.len, r->buf.p);
        return;
    }
    if (!cm_json_str_eq(v, cm_slice_from_cstr(want)))
        fail_msg("%s should be \"%s\" in %.*s", key, want, (int)r->buf.len, r->buf.p);
}

/* The seven properties in a fixed order; NULL = absent. */
static void assert_props(const char *ip, const flg_geoip_t *g, int n, const char *city,
                         const char *country, const char *iso, const char *continent,
                         const char *cont_code, const char *postal, const char *tz)
{
    result_t r;
    lookup(g, ip, &r);
    if (r.n != n)
        fail_msg("%s: %d properties, want %d: %.*s", ip, r.n, n, (int)r.buf.len, r.buf.p);
    assert_prop(&r, "$geoip_city_name", city);
    assert_prop(&r, "$geoip_country_name", country);
    assert_prop(&r, "$geoip_country_code", iso);
    assert_prop(&r, "$geoip_continent_name", continent);
    assert_prop(&r, "$geoip_continent_code", cont_code);
    assert_prop(&r, "$geoip_postal_code", postal);
    assert_prop(&r, "$geoip_time_zone", tz);
    result_free(&r);
}

static void assert_none(const flg_geoip_t *g, const char *ip)
{
    result_t r;
    lookup(g, ip, &r);
    if (r.n != 0)
        fail_msg("%s: want no properties, got %.*s", ip ? ip : "(null)", (int)r.buf.len, r.buf.p);
    assert_string_equal(cm_buf_cstr(&r.buf), "{}");
    result_free(&r);
}

static const flg_geoip_t *db(void **state)
{
    return ((fixture_t *)*state)->g;
}

/* ---- lookups ---------------------------------------------------------------- */

static void test_city_record(void **state)
{
    const char *ips[] = {"203.0.113.7", "203.0.113.0", "203.0.113.255", "::ffff:203.0.113.7"};
    for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
        assert_props(ips[i], db(state), 7, "Toronto", "Canada", "CA", "North America", "NA", "M5V",
                     "America/Toronto");
}

static void test_country_only_record(void **state)
{
    assert_props("198.51.100.42", db(state), 4, NULL, "Brazil", "BR", "South America", "SA", NULL,
                 NULL);
}

static void test_ipv6(void **state)
{
    const char *ips[] = {"2001:db8::1", "2001:DB8:0:0:0:0:0:ABCD", "2001:db8:ffff::"};
    for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
        assert_props(ips[i], db(state), 7, "Berlin", "Germany", "DE", "Europe", "EU", "10115",
                     "Europe/Berlin");
}

/* Non-ASCII names reach the JSON as the DB's UTF-8, unescaped. */
static void test_utf8_names(void **state)
{
    assert_props("192.0.2.5", db(state), 7, "Z\xc3\xbcrich", "Switzerland", "CH", "Europe", "EU",
                 "8001", "Europe/Zurich");
    result_t r;
    lookup(db(state), "192.0.2.5", &r);
    assert_non_null(strstr(cm_buf_cstr(&r.buf), "\"$geoip_city_name\":\"Z\xc3\xbcrich\""));
    result_free(&r);
}

/* Names only in German: no name properties, codes and time zone remain. */
static void test_english_names_only(void **state)
{
    assert_props("192.0.2.200", db(state), 3, NULL, NULL, "AT", NULL, "EU", NULL, "Europe/Vienna");
}

static void test_not_in_db(void **state)
{
    const char *ips[] = {
        "10.0.0.1",     "192.168.1.1", "172.16.5.4", "8.8.8.8", "0.0.0.0",   "255.255.255.255",
        "198.51.101.1", "2001:db9::1", "fe80::1",    "::",      "127.0.0.1", "::1"};
    for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
        assert_none(db(state), ips[i]);
}

static void test_garbage(void **state)
{
    const char *ips[] = {"not-an-ip",
                         "",
                         "999.1.1.1",
                         "203.0.113",
                         "203.0.113.7:80",
                         " 203.0.113.7",
                         "203.0.113.7 ",
                         "203.0.113.07",
                         "127.1",
                         "0xcb.0.113.7",
                         "2001:db8::1%eth0",
                         "[2001:db8::1]",
                         "2001:db8:::1",
                         "203.0.113.7, 10.0.0.1"};
    for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
        assert_none(db(state), ips[i]);
    assert_none(db(state), NULL);
    assert_none(NULL, "203.0.113.7"); /* no GEOIP_DB configured */
}

/* The properties slot into an object that already has members. */
static void test_into_open_object(void **state)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "plan");
    cm_json_str_cstr(&w, "pro");
    assert_int_equal(flg_geoip_lookup(db(state), "198.51.100.1", &w), 4);
    assert_int_equal(flg_geoip_lookup(db(state), "10.1.1.1", &w), 0);
    cm_json_key(&w, "distinct_id");
    cm_json_str_cstr(&w, "u1");
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"plan\":\"pro\",\"$geoip_country_name\":\"Brazil\","
                                         "\"$geoip_country_code\":\"BR\",\"$geoip_continent_name\":"
                                         "\"South America\",\"$geoip_continent_code\":\"SA\","
                                         "\"distinct_id\":\"u1\"}");
    cm_buf_free(&b);
}

/* ---- opening ---------------------------------------------------------------- */

static void test_open_failures(void **state)
{
    fixture_t *f = *state;
    char missing[320];
    snprintf(missing, sizeof(missing), "%s/missing.mmdb", f->dir);
    flg_geoip_t *g = (flg_geoip_t *)1;
    assert_int_equal(flg_geoip_open(missing, &g), CM_EIO);
    assert_null(g);
    /* A file that exists but is no MaxMind DB. */
    g = (flg_geoip_t *)1;
    assert_int_equal(flg_geoip_open(SCRIPT, &g), CM_EIO);
    assert_null(g);
    flg_geoip_close(NULL);
}

/* From header to properties, as the service will chain them. */
static void test_client_ip_then_lookup(void **state)
{
    char buf[CM_IP_BUFLEN];
    const char *ip = cm_client_ip(CM_SLICE_LIT(" [2001:db8:1::5]:8443 , 10.0.0.1"), "127.0.0.1",
                                  CM_TRUST_ALL_PROXIES, buf, sizeof(buf));
    assert_props(ip, db(state), 7, "Berlin", "Germany", "DE", "Europe", "EU", "10115",
                 "Europe/Berlin");
    ip = cm_client_ip(CM_SLICE_NULL, "127.0.0.1", CM_TRUST_ALL_PROXIES, buf, sizeof(buf));
    assert_none(db(state), ip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_city_record),
        cmocka_unit_test(test_country_only_record),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_utf8_names),
        cmocka_unit_test(test_english_names_only),
        cmocka_unit_test(test_not_in_db),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_into_open_object),
        cmocka_unit_test(test_open_failures),
        cmocka_unit_test(test_client_ip_then_lookup),
    };
    return cmocka_run_group_tests_name("flags_geoip", tests, setup, teardown);
}
