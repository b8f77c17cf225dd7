/*
 * test_redis_url.c - the Redis URL forms (redis_url.c): redis://, rediss://
 * with its ssl_* query parameters, unix:// with the password and db in the
 * query as redis-py writes them, and the reasons given for bad URLs.
 * (test_redis.c keeps the older redis:// cases beside the client.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cm/common.h"
#include "cm/err.h"
#include "cm/redis.h"

static void test_rediss(void **state)
{
    cm_redis_url_t u;
    (void)state;

    assert_int_equal(cm_redis_url_parse("rediss://app:s3cret@cache.example:6380/2", &u), CM_OK);
    assert_true(u.tls);
    assert_string_equal(u.host, "cache.example");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);
    assert_string_equal(u.username, "app");
    assert_string_equal(u.password, "s3cret");
    assert_null(u.tls_ca_file);
    assert_false(u.tls_insecure);
    assert_null(u.path);
    cm_redis_url_free(&u);

    assert_int_equal(
        cm_redis_url_parse("REDISS://h?ssl_ca_certs=%2Fetc%2Fca.pem&ssl_certfile=/c/me.pem"
                           "&ssl_keyfile=/c/me.key&ssl_cert_reqs=required",
                           &u),
        CM_OK);
    assert_true(u.tls);
    assert_int_equal(u.port, 6379);
    assert_string_equal(u.tls_ca_file, "/etc/ca.pem");
    assert_string_equal(u.tls_cert_file, "/c/me.pem");
    assert_string_equal(u.tls_key_file, "/c/me.key");
    assert_false(u.tls_insecure);
    cm_redis_url_free(&u);

    /* Heroku-style: redis-py users write ssl_cert_reqs=none. */
    assert_int_equal(cm_redis_url_parse("rediss://:p@h:25061?ssl_cert_reqs=none", &u), CM_OK);
    assert_true(u.tls_insecure);
    assert_string_equal(u.password, "p");
    cm_redis_url_free(&u);

    /* The plain scheme is not TLS. */
    assert_int_equal(cm_redis_url_parse("redis://h", &u), CM_OK);
    assert_false(u.tls);
    cm_redis_url_free(&u);
}

static void test_query(void **state)
{
    cm_redis_url_t u;
    (void)state;

    /* db and password in the query, as redis-py reads them; '+' is a space. */
    assert_int_equal(cm_redis_url_parse("redis://h:7000?db=3&password=a+b%2B%26", &u), CM_OK);
    assert_int_equal(u.db, 3);
    assert_string_equal(u.password, "a b+&");
    assert_null(u.username);
    cm_redis_url_free(&u);

    /* The query's db wins over the path's, as in redis-py. */
    assert_int_equal(cm_redis_url_parse("redis://h/1?db=4", &u), CM_OK);
    assert_int_equal(u.db, 4);
    cm_redis_url_free(&u);

    /* A user in the userinfo, its password in the query. */
    assert_int_equal(cm_redis_url_parse("redis://svc@h?password=pw", &u), CM_OK);
    assert_string_equal(u.username, "svc");
    assert_string_equal(u.password, "pw");
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("redis://h?username=svc&password=pw", &u), CM_OK);
    assert_string_equal(u.username, "svc");
    assert_string_equal(u.password, "pw");
    cm_redis_url_free(&u);

    /* A '?' in the password before the '@' is the password's. */
    assert_int_equal(cm_redis_url_parse("redis://:p?w@h/2?db=5", &u), CM_OK);
    assert_string_equal(u.password, "p?w");
    assert_string_equal(u.host, "h");
    assert_int_equal(u.db, 5);
    cm_redis_url_free(&u);
}

static void test_unix(void **state)
{
    cm_redis_url_t u;
    (void)state;

    assert_int_equal(cm_redis_url_parse("unix:///run/redis/redis.sock", &u), CM_OK);
    assert_string_equal(u.path, "/run/redis/redis.sock");
    assert_null(u.host);
    assert_false(u.tls);
    assert_int_equal(u.db, 0);
    assert_null(u.password);
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("unix:///var/run/r%20s.sock?db=2&password=s3cret", &u),
                     CM_OK);
    assert_string_equal(u.path, "/var/run/r s.sock");
    assert_int_equal(u.db, 2);
    assert_string_equal(u.password, "s3cret");
    cm_redis_url_free(&u);

    assert_int_equal(cm_redis_url_parse("unix://app:pw@/tmp/r.sock", &u), CM_OK);
    assert_string_equal(u.path, "/tmp/r.sock");
    assert_string_equal(u.username, "app");
    assert_string_equal(u.password, "pw");
    cm_redis_url_free(&u);
}

static void test_bad(void **state)
{
    (void)state;
    char long_path[200] = "unix:///";
    memset(long_path + 8, 'a', 150);

    static const struct {
        const char *url, *why_part;
    } bad[] = {
        {"http://h", "scheme"},
        {"redis+sentinel://h:26379/mymaster", "scheme"}, /* Sentinel: not supported */
        {"rediss://", "no host"},
        {"redis://h?timeout=1", "unknown query parameter"},
        {"redis://h?db", "without '='"},
        {"redis://h?db=x", "db is not a number"},
        {"redis://h?db=70000", "db is not a number"},
        {"redis://h?password=", "empty query value"},
        {"redis://:a@h?password=b", "password is given twice"},
        {"redis://h?password=%4", "bad percent-escape"},
        {"redis://h?ssl_ca_certs=/ca.pem", "need a rediss:// URL"},
        {"rediss://h?ssl_cert_reqs=optional", "required or none"},
        {"rediss://h?ssl_certfile=/c.pem", "go together"},
        {"rediss://h?ssl_keyfile=/c.key", "go together"},
        {"rediss://h?ssl_ca_certs=/a&ssl_ca_certs=/b", "given twice"},
        {"redis://user@h", "without a password"},
        {"unix://redis.sock", "absolute socket path"},
        {"unix://", "absolute socket path"},
        {"unix:///r.sock?db=-1", "db is not a number"},
        {"unix:///r%0.sock", "bad percent-escape"},
        {"redis://h:0", "port"},
        {"redis://[::1", "unclosed"},
        {"redis://h/x", "database number"},
    };
    for (size_t i = 0; i < CM_ARRAY_LEN(bad); i++) {
        cm_redis_url_t u = {0};
        const char *why = NULL;
        if (cm_redis_url_parse_why(bad[i].url, &u, &why) != CM_EINVAL)
            fail_msg("accepted bad URL %s", bad[i].url);
        assert_null(u.host);
        assert_null(u.path);
        assert_non_null(why);
        if (strstr(why, bad[i].why_part) == NULL)
            fail_msg("%s: reason \"%s\" does not say \"%s\"", bad[i].url, why, bad[i].why_part);
    }

    cm_redis_url_t u = {0};
    const char *why = NULL;
    assert_int_equal(cm_redis_url_parse_why(long_path, &u, &why), CM_EINVAL);
    assert_non_null(strstr(why, "too long"));
    assert_int_equal(cm_redis_url_parse_why(NULL, &u, &why), CM_EINVAL);
    /* A reason never repeats the URL (it may hold a password). */
    assert_int_equal(cm_redis_url_parse_why("redis://:hunter2@h?bogus=1", &u, &why), CM_EINVAL);
    assert_null(strstr(why, "hunter2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rediss),
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_unix),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
