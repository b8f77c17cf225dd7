/*
 * test_freshness.c - reading INFO replication's text (serve/freshness.h):
 * which servers the flags service trusts as in sync with their primary. The
 * texts are shaped as redis-server 7 prints them (CRLF lines, a header).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "serve/freshness.h"

static bool in_sync(const char *text, cm_slice_t *link)
{
    return flg_info_in_sync(text, strlen(text), link);
}

static void primary_is_in_sync(void **state)
{
    (void)state;
    assert_true(in_sync("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n", NULL));
    /* Not INFO's text at all (a proxy's answer): nothing says replica. */
    assert_true(in_sync("", NULL));
}

static void replica_with_link_up_is_in_sync(void **state)
{
    (void)state;
    cm_slice_t link = {NULL, 0};
    assert_true(in_sync("# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"
                        "master_link_status:up\r\nmaster_last_io_seconds_ago:9\r\n",
                        &link));
    assert_true(cm_slice_eq_cstr(link, "up"));
}

static void replica_with_link_down_is_not(void **state)
{
    (void)state;
    cm_slice_t link = {NULL, 0};
    assert_false(in_sync("# Replication\r\nrole:slave\r\nmaster_link_status:down\r\n"
                         "master_link_down_since_seconds:3\r\n",
                         &link));
    assert_true(cm_slice_eq_cstr(link, "down"));
    /* A replica without the field (cut short) is not trusted either. */
    assert_false(in_sync("role:slave\r\n", &link));
    assert_int_equal(link.len, 0);
}

static void fields_match_whole_names(void **state)
{
    (void)state;
    /* "role" must not match "roles:" nor a value mentioning it, and the
     * last line may end without CRLF. */
    assert_true(in_sync("roles:slave\r\nx:role:slave\r\nrole:master", NULL));
    /* The first "role" line decides: a later one is not read. */
    assert_true(in_sync("role:master\r\nrole:slave\r\n", NULL));
    assert_false(in_sync("role:slave\nmaster_link_status:upx", NULL));
    assert_true(in_sync("role:slave\nmaster_link_status:up", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(primary_is_in_sync),
        cmocka_unit_test(replica_with_link_up_is_in_sync),
        cmocka_unit_test(replica_with_link_down_is_not),
        cmocka_unit_test(fields_match_whole_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
