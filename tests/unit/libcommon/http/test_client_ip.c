/*
 * test_client_ip.c - the client-address policy (cm/client_ip.h): every hop
 * trusted (PostHog's flags reading: first entry, ports, fallbacks), none
 * trusted, and a counted chain of proxies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cm/client_ip.h"

/* ---- client IP ------------------------------------------------------------------ */

static void check_ip(const char *xff, const char *want)
{
    char buf[CM_IP_BUFLEN];
    const char *peer = "192.0.2.77";
    cm_slice_t s = xff ? cm_slice_from_cstr(xff) : CM_SLICE_NULL;
    const char *got = cm_client_ip(s, peer, CM_TRUST_ALL_PROXIES, buf, sizeof(buf));
    if (!got || strcmp(got, want) != 0)
        fail_msg("XFF \"%s\": got %s, want %s", xff ? xff : "(none)", got ? got : "(null)", want);
    /* Addresses from the header land in buf; the fallback is peer itself. */
    if (strcmp(want, peer) == 0)
        assert_ptr_equal(got, peer);
    else
        assert_ptr_equal(got, buf);
}

static void test_client_ip_first_entry(void **state)
{
    (void)state;
    check_ip("203.0.113.7", "203.0.113.7");
    check_ip("203.0.113.7, 10.0.0.1, 172.16.0.1", "203.0.113.7");
    check_ip("203.0.113.7,10.0.0.1", "203.0.113.7");
    check_ip("  203.0.113.7  ,  10.0.0.1 ", "203.0.113.7");
    check_ip("\t198.51.100.9\t", "198.51.100.9");
    check_ip("2001:db8::1, 203.0.113.7", "2001:db8::1");
    check_ip(" 2001:DB8:0:0::0001 ", "2001:db8::1"); /* canonical form */
    check_ip("::ffff:203.0.113.7", "::ffff:203.0.113.7");
    check_ip("127.0.0.1, 203.0.113.7", "127.0.0.1"); /* taken; lookup skips it */
}

static void test_client_ip_ports(void **state)
{
    (void)state;
    check_ip("203.0.113.7:5678", "203.0.113.7");
    check_ip("203.0.113.7:5678, 10.0.0.1", "203.0.113.7");
    check_ip("[2001:db8::1]:443", "2001:db8::1");
    check_ip("[2001:db8::1]", "2001:db8::1");
    check_ip("::ffff:203.0.113.7:80", "::ffff:203.0.113.7");
    check_ip("[2001:db8::1", "2001:db8::1"); /* PostHog tolerates the missing ']' */
}

static void test_client_ip_fallbacks(void **state)
{
    (void)state;
    /* An invalid first entry: the leftmost valid literal, else the peer. */
    check_ip("not-an-ip, 198.51.100.9", "198.51.100.9");
    check_ip(", 203.0.113.7", "203.0.113.7");
    check_ip("unknown, 10.0.0.1:80, 2001:db8::2", "2001:db8::2"); /* no port removal here */
    check_ip("unknown", "192.0.2.77");
    check_ip("999.1.1.1", "192.0.2.77");
    check_ip("203.0.113", "192.0.2.77");
    check_ip("", "192.0.2.77");
    check_ip("   ", "192.0.2.77");
    check_ip(",,,", "192.0.2.77");
    check_ip(NULL, "192.0.2.77");
}

static void test_client_ip_edges(void **state)
{
    (void)state;
    char buf[CM_IP_BUFLEN];
    /* No header and no peer. */
    assert_null(cm_client_ip(CM_SLICE_NULL, NULL, CM_TRUST_ALL_PROXIES, buf, sizeof(buf)));
    /* A buffer too small for the address falls back rather than truncating. */
    char small[4];
    assert_string_equal(cm_client_ip(CM_SLICE_LIT("203.0.113.7"), "peer", CM_TRUST_ALL_PROXIES,
                                     small, sizeof(small)),
                        "peer");
    /* A slice is not NUL-terminated: only its bytes count. */
    const char raw[] = "203.0.113.7, 10.0.0.1";
    cm_slice_t part = {raw, 8}; /* "203.0.11" */
    assert_string_equal(cm_client_ip(part, "peer", CM_TRUST_ALL_PROXIES, buf, sizeof(buf)), "peer");
    /* Embedded NUL is not an address. */
    cm_slice_t nul = {"203.0.113.7\0", 12};
    assert_string_equal(cm_client_ip(nul, "peer", CM_TRUST_ALL_PROXIES, buf, sizeof(buf)), "peer");
}

/* trusted proxies counted: the address the outermost trusted one saw. */
static const char *counted(const char *xff, int trusted, char *buf)
{
    return cm_client_ip(xff ? cm_slice_from_cstr(xff) : CM_SLICE_NULL, "192.0.2.77", trusted, buf,
                        CM_IP_BUFLEN);
}

static void test_client_ip_counted(void **state)
{
    (void)state;
    char buf[CM_IP_BUFLEN];
    /* none trusted: the peer, whatever the header says */
    assert_string_equal(counted("203.0.113.7", 0, buf), "192.0.2.77");
    assert_string_equal(counted(NULL, 2, buf), "192.0.2.77");
    /* one: the last entry (what our proxy saw); a spoofed prefix is ignored */
    assert_string_equal(counted("6.6.6.6, 203.0.113.7", 1, buf), "203.0.113.7");
    assert_string_equal(counted("203.0.113.7:5678", 1, buf), "203.0.113.7");
    /* two: one from the right */
    assert_string_equal(counted("6.6.6.6, 203.0.113.7, 10.0.0.1", 2, buf), "203.0.113.7");
    /* more trusted than entries: the leftmost */
    assert_string_equal(counted("203.0.113.7, 10.0.0.1", 5, buf), "203.0.113.7");
    /* the chosen entry is no address: the peer, never another entry */
    assert_string_equal(counted("203.0.113.7, unknown", 1, buf), "192.0.2.77");
    assert_string_equal(counted("[2001:db8::1]:443", 1, buf), "2001:db8::1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_ip_first_entry), cmocka_unit_test(test_client_ip_ports),
        cmocka_unit_test(test_client_ip_fallbacks),   cmocka_unit_test(test_client_ip_edges),
        cmocka_unit_test(test_client_ip_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
