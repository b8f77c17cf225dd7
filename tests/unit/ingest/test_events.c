/* test_events.c - capture payload -> CapturedEvent messages (services/ingest/events.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "cm/json.h"
#include "cm/timefmt.h"

/* 2026-11-21T12:00:00Z */
#define NOW_US (1795262400LL * 1000000)

static ing_request_t req(void)
{
    return (ing_request_t){.now_us = NOW_US, .ip = "10.1.2.3", .max_event_bytes = 1000000};
}

static int build(const char *json, ing_request_t r, ing_batch_t *b, cm_api_error_t *e)
{
    memset(e, 0, sizeof(*e));
    return ing_events_build(json, strlen(json), &r, b, e);
}

/* Parses event i's message and returns the string member as a C string (static). */
static const char *msg_str(const ing_batch_t *b, size_t i, const char *key)
{
    static char out[4096];
    cm_json_doc_t *doc = NULL;
    assert_int_equal(
        cm_json_parse(b->events[i].message.p, b->events[i].message.len, NULL, &doc, NULL), 0);
    cm_json_t v = cm_json_get(cm_json_root(doc), key);
    cm_buf_t s = CM_BUF_INIT;
    if (cm_json_type(v) == CM_JSON_STRING)
        cm_json_str_append(v, &s);
    else if (cm_json_exists(v))
        cm_buf_append_slice(&s, cm_json_raw(v));
    else
        cm_buf_append_cstr(&s, "<absent>");
    snprintf(out, sizeof(out), "%s", cm_buf_cstr(&s));
    cm_buf_free(&s);
    cm_json_doc_free(doc);
    return out;
}

static void test_single_event(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    assert_int_equal(
        build("{\"api_key\":\"phc_x\",\"event\":\"$pageview\",\"properties\":"
              "{\"distinct_id\":\"u1\",\"a\":1},\"timestamp\":\"2026-11-21T11:00:00Z\"}",
              req(), &b, &e),
        0);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.token, "phc_x");
    assert_false(b.historical);
    assert_string_equal(msg_str(&b, 0, "distinct_id"), "u1");
    assert_string_equal(msg_str(&b, 0, "event"), "$pageview");
    assert_string_equal(msg_str(&b, 0, "token"), "phc_x");
    assert_string_equal(msg_str(&b, 0, "ip"), "10.1.2.3");
    assert_string_equal(msg_str(&b, 0, "now"), "2026-11-21T12:00:00.000000Z");
    /* No sent_at: the event's own timestamp is used. */
    assert_string_equal(msg_str(&b, 0, "timestamp"), "2026-11-21T11:00:00.000Z");
    assert_string_equal(msg_str(&b, 0, "sent_at"), "<absent>");
    assert_string_equal(msg_str(&b, 0, "historical_migration"), "<absent>");
    /* data: the event re-serialized; the api_key is the event's own token. */
    const char *data = msg_str(&b, 0, "data");
    assert_non_null(strstr(data, "\"token\":\"phc_x\""));
    assert_non_null(strstr(data, "\"event\":\"$pageview\""));
    assert_non_null(strstr(data, "\"properties\":{\"distinct_id\":\"u1\",\"a\":1}"));
    assert_non_null(strstr(data, "\"timestamp\":\"2026-11-21T11:00:00Z\""));
    ing_batch_free(&b);
}

static void test_batch_envelope_skew_and_uuid(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    /* Client clock 1 h ahead: timestamp - sent_at = -10 s, so ts = now - 10 s. */
    const char *json =
        "{\"api_key\":\"phc_b\",\"sent_at\":\"2026-11-21T13:00:00.000Z\",\"batch\":["
        "{\"event\":\"a\",\"distinct_id\":\"d\",\"timestamp\":\"2026-11-21T12:59:50Z\","
        "\"uuid\":\"0190A1F2-0000-7000-8000-000000000001\"},"
        "{\"event\":\"b\",\"properties\":{\"distinct_id\":42},\"uuid\":\"not-a-uuid\"}]}";
    assert_int_equal(build(json, req(), &b, &e), 0);
    assert_int_equal(b.n, 2);
    assert_string_equal(msg_str(&b, 0, "timestamp"), "2026-11-21T11:59:50.000Z");
    assert_string_equal(msg_str(&b, 0, "sent_at"), "2026-11-21T13:00:00.000Z");
    assert_string_equal(b.events[0].uuid, "0190a1f2-0000-7000-8000-000000000001");
    /* An invalid uuid is replaced by a v7 one. */
    assert_true(cm_uuid_valid(b.events[1].uuid, strlen(b.events[1].uuid)));
    assert_int_equal(b.events[1].uuid[14], '7');
    /* Numbers are stringified; the envelope token is not injected into data. */
    assert_string_equal(msg_str(&b, 1, "distinct_id"), "42");
    assert_null(strstr(msg_str(&b, 1, "data"), "\"token\""));
    ing_batch_free(&b);
}

static void test_offset_and_future_clamp(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    assert_int_equal(
        build("[{\"token\":\"t\",\"event\":\"a\",\"distinct_id\":\"d\",\"offset\":1500},"
              "{\"token\":\"t\",\"event\":\"b\",\"distinct_id\":\"d\",\"timestamp\":\"2026-11-"
              "23T00:00:00Z\"},"
              "{\"token\":\"t\",\"event\":\"c\",\"distinct_id\":\"d\",\"timestamp\":\"2026-11-"
              "22T10:00:00Z\"}]",
              req(), &b, &e),
        0);
    assert_string_equal(msg_str(&b, 0, "timestamp"), "2026-11-21T11:59:58.500Z");
    assert_string_equal(msg_str(&b, 1, "timestamp"), "2026-11-21T12:00:00.000Z"); /* 36 h ahead */
    assert_string_equal(msg_str(&b, 2, "timestamp"), "2026-11-22T10:00:00.000Z"); /* 22 h: kept */
    ing_batch_free(&b);
    /* Offsets whose arithmetic overflows int64 (found by fuzz_capture). */
    assert_int_equal(build("[{\"token\":\"t\",\"event\":\"a\",\"distinct_id\":\"d\",\"offset\":"
                           "2444440000007527266},"
                           "{\"token\":\"t\",\"event\":\"b\",\"distinct_id\":\"d\",\"offset\":-"
                           "9223372036854775807}]",
                           req(), &b, &e),
                     0);
    assert_string_equal(msg_str(&b, 0, "timestamp"), "1970-01-01T00:00:00.000Z");
    assert_string_equal(msg_str(&b, 1, "timestamp"), "2026-11-21T12:00:00.000Z");
    ing_batch_free(&b);
}

static void test_distinct_id_forms(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    char long_id[400];
    memset(long_id, 'x', 300);
    long_id[300] = 0;
    char json[1024];
    snprintf(
        json, sizeof(json),
        "{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\",\"distinct_id\":{\"b\": [1, 2]}},"
        "{\"event\":\"a\",\"distinct_id\":\"%s\"},{\"event\":\"a\",\"distinct_id\":\"a\\u0000b\"},"
        "{\"event\":\"a\",\"distinct_id\":null,\"properties\":{\"distinct_id\":\"p\"}}]}",
        long_id);
    assert_int_equal(build(json, req(), &b, &e), 0);
    assert_string_equal(msg_str(&b, 0, "distinct_id"), "{\"b\":[1,2]}");
    assert_int_equal(strlen(msg_str(&b, 1, "distinct_id")), 200);
    assert_string_equal(msg_str(&b, 2, "distinct_id"), "a\xef\xbf\xbd"
                                                       "b");
    assert_string_equal(msg_str(&b, 3, "distinct_id"), "p");
    ing_batch_free(&b);
}

/* A NUL in an event's name: U+FFFD in the message and its data, the rest
 * of the name kept (not cut at the NUL, which made "a\0b" the event "a"). */
static void test_event_name_with_nul(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    assert_int_equal(build("{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\\u0000b\","
                           "\"distinct_id\":\"d\"},{\"event\":\"\\u0000\",\"distinct_id\":\"d\"}]}",
                           req(), &b, &e),
                     0);
    assert_int_equal(b.n, 2);
    assert_string_equal(msg_str(&b, 0, "event"), "a\xef\xbf\xbd"
                                                 "b");
    assert_non_null(strstr(msg_str(&b, 0, "data"), "\"event\":\"a\xef\xbf\xbd"
                                                   "b\""));
    assert_string_equal(msg_str(&b, 1, "event"), "\xef\xbf\xbd");
    ing_batch_free(&b);
}

static void test_engage_becomes_identify(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    ing_request_t r = req();
    const char *json = "{\"$token\":\"t\",\"$distinct_id\":\"d\",\"$set\":{\"name\":\"n\"}}";
    assert_int_equal(build(json, r, &b, &e), -1);
    assert_string_equal(e.code, "missing_event_name");
    r.engage = true;
    assert_int_equal(build(json, r, &b, &e), 0);
    assert_string_equal(msg_str(&b, 0, "event"), "$identify");
    assert_non_null(strstr(msg_str(&b, 0, "data"), "\"$set\":{\"name\":\"n\"}"));
    ing_batch_free(&b);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int status;
        const char *code;
        const char *attr;
    } cases[] = {
        {"{not json", 400, "invalid_json", ""},
        {"\"a string\"", 400, "invalid_payload", ""},
        {"[]", 400, "no_events", "batch"},
        {"{\"api_key\":\"t\",\"batch\":[]}", 400, "no_events", "batch"},
        {"{\"api_key\":\"t\",\"batch\":{}}", 400, "invalid_payload", "batch"},
        {"{\"event\":\"a\",\"distinct_id\":\"d\"}", 401, "missing_token", "api_key"},
        {"[{\"token\":\"a\",\"event\":\"e\",\"distinct_id\":\"d\"},{\"token\":\"b\",\"event\":"
         "\"e\",\"distinct_id\":\"d\"}]",
         401, "inconsistent_tokens", "api_key"},
        {"{\"api_key\":\"phx_personal\",\"event\":\"a\",\"distinct_id\":\"d\"}", 401,
         "invalid_token", "api_key"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\"}]}", 400, "missing_distinct_id",
         "batch[0].distinct_id"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"\"}]}", 400,
         "missing_distinct_id", "batch[0].distinct_id"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"d\"},{\"distinct_id\":"
         "\"d\"}]}",
         400, "missing_event_name", "batch[1].event"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":\"\",\"distinct_id\":\"d\"}]}", 400,
         "missing_event_name", "batch[0].event"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":7,\"distinct_id\":\"d\"}]}", 400,
         "invalid_payload", "batch[0].event"},
        {"{\"api_key\":\"t\",\"batch\":[1]}", 400, "invalid_payload", "batch[0]"},
        {"{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"d\",\"properties\":[]}]"
         "}",
         400, "invalid_payload", "batch[0].properties"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ing_batch_t b;
        cm_api_error_t e;
        assert_int_equal(build(cases[i].json, req(), &b, &e), -1);
        if (e.status != cases[i].status || strcmp(e.code, cases[i].code) != 0 ||
            strcmp(e.attr, cases[i].attr) != 0)
            fail_msg("case %zu (%s): got %d %s attr=%s", i, cases[i].json, e.status, e.code,
                     e.attr);
        assert_true(strlen(e.detail) > 0);
        assert_null(b.events);
    }
}

static void test_token_sources(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    /* properties.token (posthog-js), trimmed; same token twice is fine. */
    assert_int_equal(
        build("[{\"event\":\"a\",\"properties\":{\"token\":\" phc_js \",\"distinct_id\":\"d\"}},"
              "{\"event\":\"b\",\"api_key\":\"phc_js\",\"distinct_id\":\"d\"}]",
              req(), &b, &e),
        0);
    assert_string_equal(b.token, "phc_js");
    ing_batch_free(&b);
    char json[256];
    snprintf(json, sizeof(json), "{\"api_key\":\"%065d\",\"event\":\"a\",\"distinct_id\":\"d\"}",
             0);
    assert_int_equal(build(json, req(), &b, &e), -1);
    assert_string_equal(e.code, "invalid_token");
    assert_non_null(strstr(e.detail, "too_long"));
}

static void test_historical(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    assert_int_equal(
        build("{\"api_key\":\"t\",\"historical_migration\":true,\"batch\":["
              "{\"event\":\"a\",\"distinct_id\":\"d\",\"timestamp\":\"2026-11-19T11:59:59Z\"}]}",
              req(), &b, &e),
        0);
    assert_true(b.historical);
    assert_string_equal(msg_str(&b, 0, "historical_migration"), "true");
    ing_batch_free(&b);
    /* 47 h 59 m old: too recent, and the error names the index. */
    assert_int_equal(
        build("{\"api_key\":\"t\",\"historical_migration\":true,\"batch\":["
              "{\"event\":\"a\",\"distinct_id\":\"d\",\"timestamp\":\"2020-01-01T00:00:00Z\"},"
              "{\"event\":\"a\",\"distinct_id\":\"d\",\"timestamp\":\"2026-11-19T12:01:00Z\"}]}",
              req(), &b, &e),
        -1);
    assert_string_equal(e.code, "historical_timestamp_too_recent");
    assert_string_equal(e.attr, "batch[1].timestamp");
    assert_non_null(strstr(e.detail, "index 1"));
    assert_int_equal(build("{\"api_key\":\"t\",\"historical_migration\":true,\"batch\":["
                           "{\"event\":\"a\",\"distinct_id\":\"d\"}]}",
                           req(), &b, &e),
                     -1);
    assert_string_equal(e.code, "historical_timestamp_required");
    /* historical_migration false: a normal batch, no age rule. */
    assert_int_equal(build("{\"api_key\":\"t\",\"historical_migration\":false,\"batch\":["
                           "{\"event\":\"a\",\"distinct_id\":\"d\"}]}",
                           req(), &b, &e),
                     0);
    assert_false(b.historical);
    ing_batch_free(&b);
}

static void test_size_limit_and_filter(void **state)
{
    (void)state;
    ing_batch_t b;
    cm_api_error_t e;
    ing_request_t r = req();
    r.max_event_bytes = 400;
    char json[2048];
    char big[700];
    memset(big, 'p', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    snprintf(json, sizeof(json),
             "{\"api_key\":\"t\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"d\"},"
             "{\"event\":\"a\",\"distinct_id\":\"d\",\"properties\":{\"x\":\"%s\"}}]}",
             big);
    assert_int_equal(build(json, r, &b, &e), -1);
    assert_int_equal(e.status, 413);
    assert_string_equal(e.code, "event_too_large");
    assert_string_equal(e.attr, "batch[1]");
    assert_int_equal(build("{\"api_key\":\"t\",\"batch\":[{\"event\":\"$performance_event\","
                           "\"distinct_id\":\"d\"},"
                           "{\"event\":\"a\",\"distinct_id\":\"d\"}]}",
                           req(), &b, &e),
                     0);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.dropped, 1);
    ing_batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_event),
        cmocka_unit_test(test_batch_envelope_skew_and_uuid),
        cmocka_unit_test(test_offset_and_future_clamp),
        cmocka_unit_test(test_distinct_id_forms),
        cmocka_unit_test(test_event_name_with_nul),
        cmocka_unit_test(test_engage_becomes_identify),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_token_sources),
        cmocka_unit_test(test_historical),
        cmocka_unit_test(test_size_limit_and_filter),
    };
    return cmocka_run_group_tests_name("ingest_events", tests, NULL, NULL);
}
