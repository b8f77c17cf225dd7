/*
 * test_rediskeys.c - cm/rediskeys.h against the contract, proto/redis-keys.md:
 * every name the header spells is a row of the contract's table, and every
 * row is a name the header spells or a key its builders make.
 * Runs from the repository root (as scripts/test does), or with
 * CM_PROTO_DIR pointing at proto/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rediskeys.h"

#define MAX_ROWS 64

typedef struct {
    char *names[MAX_ROWS];
    size_t n;
} rows_t;

/* The first column of each table row: "| `name` | ..." -> name. */
static void read_rows(rows_t *rows)
{
    const char *dir = getenv("CM_PROTO_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/redis-keys.md", dir ? dir : "proto");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    char line[4096];
    rows->n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `", 3) != 0)
            continue;
        char *start = line + 3, *end = strchr(start, '`');
        assert_non_null(end);
        assert_true(rows->n < MAX_ROWS);
        rows->names[rows->n++] = strndup(start, (size_t)(end - start));
    }
    fclose(f);
    assert_true(rows->n > 0);
}

static void free_rows(rows_t *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        free(rows->names[i]);
}

static bool has_row(const rows_t *rows, const char *name)
{
    for (size_t i = 0; i < rows->n; i++)
        if (strcmp(rows->names[i], name) == 0)
            return true;
    return false;
}

/* The builders with the contract's placeholders as arguments. */
static void templates(char person[128], char group[128], char cache[128])
{
    cm_buf_t b = CM_BUF_INIT;
    cm_rediskeys_endpoint_cache(&b, CM_SLICE_LIT("<project id>"), CM_SLICE_LIT("<key hash>"));
    snprintf(cache, 128, "%s", cm_buf_cstr(&b));
    cm_rediskeys_person(&b, CM_SLICE_LIT("<project id>"), CM_SLICE_LIT("<distinct id>"));
    snprintf(person, 128, "%s", cm_buf_cstr(&b));
    cm_rediskeys_group(&b, CM_SLICE_LIT("<project id>"), CM_SLICE_LIT("<group type>"),
                       CM_SLICE_LIT("<group key>"));
    snprintf(group, 128, "%s", cm_buf_cstr(&b));
    cm_buf_free(&b);
}

static void test_header_names_are_in_the_contract(void **state)
{
    (void)state;
    rows_t rows;
    read_rows(&rows);
    char person[128], group[128], cache[128];
    templates(person, group, cache);
    assert_true(has_row(&rows, cache));
    for (size_t i = 0; cm_rediskeys_fixed[i]; i++)
        if (!has_row(&rows, cm_rediskeys_fixed[i]))
            fail_msg("%s is not in proto/redis-keys.md", cm_rediskeys_fixed[i]);
    assert_true(has_row(&rows, person));
    assert_true(has_row(&rows, group));
    free_rows(&rows);
}

static void test_contract_rows_are_in_the_header(void **state)
{
    (void)state;
    rows_t rows;
    read_rows(&rows);
    char person[128], group[128], cache[128];
    templates(person, group, cache);
    for (size_t i = 0; i < rows.n; i++) {
        bool known = strcmp(rows.names[i], person) == 0 || strcmp(rows.names[i], group) == 0 ||
                     strcmp(rows.names[i], cache) == 0;
        for (size_t j = 0; !known && cm_rediskeys_fixed[j]; j++)
            known = strcmp(rows.names[i], cm_rediskeys_fixed[j]) == 0;
        if (!known)
            fail_msg("proto/redis-keys.md row %s has no name in cm/rediskeys.h", rows.names[i]);
    }
    free_rows(&rows);
}

static void test_builders(void **state)
{
    (void)state;
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "left over");
    cm_rediskeys_person(&b, CM_SLICE_LIT("42"), CM_SLICE_LIT("user:1"));
    assert_string_equal(cm_buf_cstr(&b), "persons:42:user:1");
    cm_rediskeys_group(&b, CM_SLICE_LIT("42"), CM_SLICE_LIT("company"), CM_SLICE_LIT("acme"));
    assert_string_equal(cm_buf_cstr(&b), "groups:42:company:acme");
    cm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_names_are_in_the_contract),
        cmocka_unit_test(test_contract_rows_are_in_the_header),
        cmocka_unit_test(test_builders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
