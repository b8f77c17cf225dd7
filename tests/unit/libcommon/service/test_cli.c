/* test_cli.c - cm_cli_handle: --help and --version answered (0), --print-config
 * and a command left to the caller (-1), anything else refused (2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/cli.h"

static const cm_cli_t plain = {"svc", "a test service", NULL, NULL};
static const cm_cli_t with_commands = {"tool", "a test tool", "  go NAME        does it\n",
                                       "A note.\n"};

/* One call with the arguments after the name; out and err collected. */
typedef struct {
    int rc;
    char *out;
    char *err;
} outcome_t;

static outcome_t call(const cm_cli_t *cli, const char *a1, const char *a2)
{
    char *argv[] = {(char *)cli->name, (char *)a1, (char *)a2, NULL};
    int argc = a2 ? 3 : a1 ? 2 : 1;
    outcome_t o = {0};
    size_t n1, n2;
    FILE *out = open_memstream(&o.out, &n1);
    FILE *err = open_memstream(&o.err, &n2);
    assert_non_null(out);
    assert_non_null(err);
    o.rc = cm_cli_handle_to(cli, argc, argv, out, err);
    fclose(out);
    fclose(err);
    return o;
}

static void done(outcome_t *o)
{
    free(o->out);
    free(o->err);
}

static void test_no_argument_goes_on(void **state)
{
    (void)state;
    outcome_t o = call(&plain, NULL, NULL);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.out, "");
    assert_string_equal(o.err, "");
    done(&o);
}

static void test_help(void **state)
{
    (void)state;
    const char *forms[] = {"--help", "-h"};
    for (size_t i = 0; i < 2; i++) {
        outcome_t o = call(&plain, forms[i], NULL);
        assert_int_equal(o.rc, 0);
        assert_non_null(strstr(o.out, "svc "));
        assert_non_null(strstr(o.out, "a test service"));
        assert_non_null(strstr(o.out, "usage: svc [--print-config | --help | --version]"));
        assert_non_null(strstr(o.out, "docs/configuration.md"));
        assert_non_null(strstr(o.out, cm_version()));
        assert_string_equal(o.err, "");
        done(&o);
    }
    outcome_t o = call(&with_commands, "--help", NULL);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "usage: tool [COMMAND]"));
    assert_non_null(strstr(o.out, "  go NAME        does it\n"));
    assert_non_null(strstr(o.out, "A note.\n"));
    done(&o);
}

static void test_version(void **state)
{
    (void)state;
    outcome_t o = call(&plain, "--version", NULL);
    assert_int_equal(o.rc, 0);
    char want[128];
    snprintf(want, sizeof(want), "svc %s\n", cm_version());
    assert_string_equal(o.out, want);
    /* The Makefile's version: digits and dots, not the fallback. */
    assert_true(strspn(cm_version(), "0123456789.") == strlen(cm_version()));
    assert_true(strlen(cm_version()) >= 3);
    done(&o);
}

static void test_print_config_is_the_callers(void **state)
{
    (void)state;
    outcome_t o = call(&plain, "--print-config", NULL);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.err, "");
    done(&o);
    o = call(&plain, "--print-config", "extra");
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "svc: unknown argument 'extra'"));
    done(&o);
}

static void test_unknown_refused(void **state)
{
    (void)state;
    const char *bad[] = {"serve", "--verbose", "-x", "", "--help=1", "--versions"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        outcome_t o = call(&plain, bad[i], NULL);
        assert_int_equal(o.rc, 2);
        char want[64];
        snprintf(want, sizeof(want), "svc: unknown argument '%s'\n", bad[i]);
        assert_true(strncmp(o.err, want, strlen(want)) == 0);
        assert_non_null(strstr(o.err, "usage: svc"));
        assert_string_equal(o.out, "");
        done(&o);
    }
    outcome_t o = call(&plain, "--help", "more");
    assert_int_equal(o.rc, 2);
    assert_string_equal(o.out, "");
    done(&o);
    o = call(&plain, "--version", "more");
    assert_int_equal(o.rc, 2);
    done(&o);
}

static void test_commands_are_the_callers(void **state)
{
    (void)state;
    outcome_t o = call(&with_commands, "go", "x");
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.out, "");
    assert_string_equal(o.err, "");
    done(&o);
    /* An option is still checked when the binary has commands. */
    o = call(&with_commands, "--go", NULL);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "tool: unknown argument '--go'"));
    done(&o);
    /* Without commands, a word is refused. */
    o = call(&plain, "go", NULL);
    assert_int_equal(o.rc, 2);
    done(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_argument_goes_on),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_print_config_is_the_callers),
        cmocka_unit_test(test_unknown_refused),
        cmocka_unit_test(test_commands_are_the_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
