/*
 * test_admin.c - the pure parts of `api admin` (services/api/admin/): how a
 * store is named (never with its password) and how the command line is
 * read (what is refused before anything is opened).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "admin/admin_int.h"

static const char *name(const char *url)
{
    static char out[512];
    api_admin_store_name(url, out, sizeof(out));
    return out;
}

static void test_store_name(void **state)
{
    (void)state;
    assert_string_equal(name("sqlite:/srv/var/meta.db"), "sqlite:/srv/var/meta.db");
    char cwd[4096], want[4200];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    snprintf(want, sizeof(want), "sqlite:%s/var/meta.db", cwd);
    assert_string_equal(name("sqlite:var/meta.db"), want);
    assert_string_equal(name("sqlite:./var/meta.db"), want);
    assert_string_equal(name("postgres://analytics:s3cret@db.internal:5432/analytics"),
                        "postgres://analytics@db.internal:5432/analytics");
    assert_string_equal(name("postgresql://u:p%40ss@h/db?sslmode=require&password=x"),
                        "postgresql://u@h/db");
    assert_string_equal(name("postgres://h:5432/db"), "postgres://h:5432/db");
    /* an '@' in the password: the last one before the path ends the user part */
    assert_string_equal(name("postgres://u:a@b@h:1/d"), "postgres://u@h:1/d");
    assert_string_equal(name("postgres://u:pw@h"), "postgres://u@h/");
    assert_null(strstr(name("host=h password=secret"), "secret"));
}

/* Parses argv (after "admin") from a clean state; its exit code. */
static int parse(const char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(&admin_cmd, 0, sizeof(admin_cmd));
    return api_admin_parse(argc, (char **)argv);
}

static void test_parse(void **state)
{
    (void)state;
    assert_int_equal(parse((const char *[]){"keys", "list", "Demo@Example.com", NULL}), 0);
    assert_int_equal(admin_cmd.kind, ADMIN_KEYS_LIST);
    assert_string_equal(admin_cmd.email, "demo@example.com");
    assert_false(admin_cmd.json);

    assert_int_equal(
        parse((const char *[]){"keys", "create", "a@example.com", "--scope", "*", "--json",
                               "--scope", "query:read", "--label", "ci", NULL}),
        0);
    assert_int_equal(admin_cmd.kind, ADMIN_KEYS_CREATE);
    assert_int_equal(admin_cmd.nscopes, 2);
    assert_string_equal(admin_cmd.scopes[1], "query:read");
    assert_string_equal(admin_cmd.label, "ci");
    assert_true(admin_cmd.json);

    assert_int_equal(parse((const char *[]){"keys", "revoke", "01a2225c", NULL}), 0);
    assert_int_equal(admin_cmd.kind, ADMIN_KEYS_REVOKE);
    assert_string_equal(admin_cmd.target, "01a2225c");

    assert_int_equal(parse((const char *[]){"org", "add-member", "Demo organization",
                                            "b@example.com", "owner", NULL}),
                     0);
    assert_int_equal(admin_cmd.kind, ADMIN_ORG_ADD_MEMBER);
    assert_string_equal(admin_cmd.level, "15");
    assert_string_equal(admin_cmd.target, "Demo organization");

    assert_int_equal(parse((const char *[]){"password", "a@example.com", NULL}), 0);
    assert_int_equal(admin_cmd.kind, ADMIN_PASSWORD);
    assert_int_equal(parse((const char *[]){"bootstrap-info", "--json", NULL}), 0);
    assert_int_equal(admin_cmd.kind, ADMIN_BOOTSTRAP_INFO);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    const char **bad[] = {
        (const char *[]){NULL},
        (const char *[]){"keys", NULL},
        (const char *[]){"keys", "list", NULL},
        (const char *[]){"keys", "list", "not an email", NULL},
        (const char *[]){"keys", "list", "a@example.com", "extra", NULL},
        (const char *[]){"keys", "rotate", "a@example.com", NULL},
        (const char *[]){"keys", "revoke", NULL},
        (const char *[]){"keys", "create", "a@example.com", "--label", NULL},
        (const char *[]){"keys", "list", "a@example.com", "--scope", "*", NULL},
        (const char *[]){"keys", "list", "a@example.com", "--verbose", NULL},
        (const char *[]){"password", "a@example.com", "the-password-in-argv", NULL},
        (const char *[]){"org", "add-member", "o", "a@example.com", "king", NULL},
        (const char *[]){"org", "add-member", "o", "a@example.com", NULL},
        (const char *[]){"org", "remove-member", "o", "a@example.com", "member", NULL},
        (const char *[]){"bootstrap-info", "x", NULL},
        (const char *[]){"frobnicate", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse(bad[i]), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_name),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refusals),
    };
    /* the refusals print the usage: not this run's output */
    if (freopen("/dev/null", "w", stderr) == NULL)
        return 1;
    return cmocka_run_group_tests_name("api admin", tests, NULL, NULL);
}
