/* test_digest.c - SHA-256, HMAC (published test vectors), compare, tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cm/digest.h"
#include "cm/hex.h"
#include "cm/token.h"

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[CM_SHA256_HEX_LEN + 1];
    cm_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cm_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* RFC 4231 test case 2. */
static void test_hmac_rfc4231(void **state)
{
    (void)state;
    uint8_t mac[CM_SHA256_LEN];
    char hex[2 * CM_SHA256_LEN + 1];
    const char *data = "what do ya want for nothing?";
    cm_hmac_sha256("Jefe", 4, data, strlen(data), mac);
    cm_hex_encode(mac, sizeof(mac), hex);
    assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

static void test_ct_equal(void **state)
{
    (void)state;
    assert_true(cm_ct_equal("abcd", "abcd", 4));
    assert_false(cm_ct_equal("abcd", "abce", 4));
    assert_false(cm_ct_equal("xbcd", "abcd", 4));
    assert_true(cm_ct_equal("", "", 0));
}

static void test_tokens(void **state)
{
    (void)state;
    char a[CM_TOKEN_MAX], b[CM_TOKEN_MAX], mask[32];
    for (int i = 0; i < 200; i++) {
        cm_token_new("phx_", a);
        assert_int_equal(strlen(a), 4 + CM_TOKEN_BODY_LEN);
        assert_memory_equal(a, "phx_", 4);
        assert_int_equal(strspn(a + 4, "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"),
                         CM_TOKEN_BODY_LEN);
    }
    cm_token_new("phx_", b);
    assert_string_not_equal(a, b);
    cm_token_mask(a, mask, sizeof(mask));
    assert_memory_equal(mask, "phx_...", 7);
    assert_string_equal(mask + 7, a + strlen(a) - 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_hmac_rfc4231),
        cmocka_unit_test(test_ct_equal),
        cmocka_unit_test(test_tokens),
    };
    return cmocka_run_group_tests_name("digest", tests, NULL, NULL);
}
