/*
 * test_evstore_ch_rowbinary.c - the events' RowBinary (evstore_ch_rowbinary.c):
 * which events fit it (both uuids in text form, times DateTime holds), and
 * a row's exact bytes: the uuid's halves reversed, little-endian integers,
 * LEB128 lengths (a 200-byte string takes two), the arrays' counts, null
 * members left out. What the server makes of them is checked against the
 * real one in clickhouse_write.test.mjs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "../../../../libcommon/src/evstore/evstore_internal.h"

#define U1 "00112233-4455-6677-8899-aabbccddeeff"
#define U2 "0190A8F0-0000-7000-8000-0000000000AA"

static cm_evstore_event_t event(void)
{
    cm_evstore_event_t e = {0};
    e.uuid = U1;
    e.project_id = 7;
    e.event = cm_slice_from_cstr("e");
    e.distinct_id = cm_slice_from_cstr("d");
    e.person_id = U2;
    e.properties = cm_slice_from_cstr("{\"a\":\"x\",\"n\":null,\"b\":[1, 2]}");
    e.person_properties = cm_slice_from_cstr("{}");
    e.timestamp_ms = INT64_C(1700000000999);
    e.created_at_ms = INT64_C(1700000001000);
    return e;
}

static void test_fits(void **state)
{
    (void)state;
    cm_evstore_event_t e = event();
    assert_true(cm__ch_rowbinary_fits(&e));
    e.uuid = "00112233445566778899aabbccddeeff"; /* no dashes: the JSON path's */
    assert_false(cm__ch_rowbinary_fits(&e));
    e = event();
    e.person_id = "0190a8f0-0000-7000-8000-0000000000ag";
    assert_false(cm__ch_rowbinary_fits(&e));
    e = event();
    e.timestamp_ms = -1; /* before 1970: the server reads the text its own way */
    assert_false(cm__ch_rowbinary_fits(&e));
    e = event();
    e.created_at_ms = INT64_C(4200000000000); /* past 2099 */
    assert_false(cm__ch_rowbinary_fits(&e));
}

static void test_row_bytes(void **state)
{
    (void)state;
    cm_evstore_event_t e = event();
    char long_id[201];
    memset(long_id, 'z', 200);
    long_id[200] = '\0';
    e.distinct_id = cm_slice_from_cstr(long_id);
    cm_buf_t out = CM_BUF_INIT;
    cm__ch_rb_scratch_t s = {CM_JSON_DOC_INIT, CM_BUF_INIT};
    cm__ch_rowbinary_event(&out, &e, &s);
    cm__ch_rb_scratch_free(&s);

    const unsigned char *p = (const unsigned char *)out.p;
    const unsigned char uuid[16] = {0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00,
                                    0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88};
    assert_memory_equal(p, uuid, 16);
    p += 16;
    const unsigned char seven[8] = {7, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(p, seven, 8);
    p += 8;
    assert_int_equal(p[0], 1); /* event */
    assert_int_equal(p[1], 'e');
    p += 2;
    assert_int_equal(p[0], 0xc8); /* 200 = 0x48 | 0x80, then 1 */
    assert_int_equal(p[1], 0x01);
    assert_int_equal(p[2], 'z');
    p += 2 + 200;
    const unsigned char person[16] = {0x00, 0x70, 0x00, 0x00, 0xf0, 0xa8, 0x90, 0x01,
                                      0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80};
    assert_memory_equal(p, person, 16);
    p += 16;
    assert_int_equal(p[0], e.properties.len);
    assert_memory_equal(p + 1, e.properties.p, e.properties.len);
    p += 1 + e.properties.len;
    assert_int_equal(p[0], 2);
    assert_memory_equal(p + 1, "{}", 2);
    p += 3;
    /* keys ["a", "b"], values ["x", "[1, 2]"]: n is null, left out */
    const unsigned char arrays[] = {2,   1,   'a', 1,   'b', 2,   1, 'x', 6,
                                    '[', '1', ',', ' ', '2', ']', 0, 0};
    assert_memory_equal(p, arrays, sizeof(arrays));
    p += sizeof(arrays);
    const unsigned char ts[4] = {0x00, 0xf1, 0x53, 0x65}; /* 1700000000, floored */
    assert_memory_equal(p, ts, 4);
    p += 4;
    int64_t ms = 0;
    for (int i = 7; i >= 0; i--)
        ms = ms << 8 | p[i];
    assert_int_equal(ms, INT64_C(1700000000999));
    p += 8;
    const unsigned char created[4] = {0x01, 0xf1, 0x53, 0x65};
    assert_memory_equal(p, created, 4);
    p += 4;
    assert_int_equal(p[0], 0); /* no session */
    p += 1;
    assert_int_equal((size_t)(p - (const unsigned char *)out.p), out.len);
    cm_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_row_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
