/*
 * test_persons.c - the writer's person rules (services/writer/event.c and
 * persons.c, docs/persons.md) on batches built in the test: creation,
 * $set / $set_once / $unset order, the automatic properties, merges and
 * the merges PostHog refuses, personless events, groups, redeliveries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "event.h"
#include "persons.h"
#include "persons_store.h"

#define MAX_EVENTS 16

typedef struct {
    wr_state_t st;
    wr_event_t ev[MAX_EVENTS];
    size_t n;
} batch_t;

static int next_second = -1; /* the next event's time; -1: its index */

/* One queue message as ingest writes it; props and top are JSON text. */
static void add(batch_t *b, const char *event, const char *distinct_id, const char *props,
                const char *top)
{
    size_t second = next_second >= 0 ? (size_t)next_second : b->n;
    next_second = -1;
    char uuid[40], data[4096], msg[8192];
    snprintf(uuid, sizeof(uuid), "0190aaaa-0000-7000-8000-%012zu", b->n + 1);
    snprintf(data, sizeof(data), "{\"uuid\":\"%s\",\"event\":\"%s\",\"properties\":%s%s%s}", uuid,
             event, props, top ? "," : "", top ? top : "");
    cm_buf_t quoted = CM_BUF_INIT;
    cm_json_quote(&quoted, cm_slice_from_cstr(data));
    snprintf(msg, sizeof(msg),
             "{\"uuid\":\"%s\",\"distinct_id\":\"%s\",\"ip\":\"10.0.0.1\",\"data\":%s,"
             "\"now\":\"2026-01-01T00:00:10.000000Z\",\"token\":\"phc_t\",\"event\":\"%s\","
             "\"timestamp\":\"2026-01-01T00:00:%02zu.000Z\"}",
             uuid, distinct_id, cm_buf_cstr(&quoted), event, second);
    cm_buf_free(&quoted);
    wr_event_t *e = &b->ev[b->n++];
    wr_event_parse(e, msg, strlen(msg), 1 << 20);
    assert_int_equal(e->fate, WR_EVENT_OK);
    e->project_id = 1;
}

static void apply(batch_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->ev[i].person_properties == NULL)
            wr_persons_apply(&b->st, &b->ev[i], false);
}

static int setup(void **state)
{
    batch_t *b = calloc(1, sizeof(*b));
    wr_state_init(&b->st);
    *state = b;
    return 0;
}

static int teardown(void **state)
{
    batch_t *b = *state;
    for (size_t i = 0; i < b->n; i++)
        wr_event_free(&b->ev[i]);
    wr_state_free(&b->st);
    free(b);
    return 0;
}

/* The raw JSON of key in an event's person properties ("" when absent). */
static const char *pp(const wr_event_t *e, const char *key)
{
    static char out[256];
    cm_json_doc_t *doc;
    out[0] = '\0';
    assert_int_equal(
        cm_json_parse(e->person_properties, strlen(e->person_properties), NULL, &doc, NULL), 0);
    cm_slice_t raw = cm_json_raw(cm_json_get(cm_json_root(doc), key));
    snprintf(out, sizeof(out), "%.*s", (int)raw.len, raw.p ? raw.p : "");
    cm_json_doc_free(doc);
    return out;
}

static void test_first_event_and_update_order(void **state)
{
    batch_t *b = *state;
    add(b, "page", "u1", "{\"$set\":{\"a\":1,\"b\":1},\"$set_once\":{\"a\":0,\"c\":1}}", NULL);
    add(b, "page", "u1", "{\"$set_once\":{\"c\":2,\"d\":2},\"$set\":{\"b\":2},\"$unset\":[\"b\"]}",
        NULL);
    add(b, "page", "u1", "{\"$set\":{\"n\":null}}", "\"$set\":{\"n\":\"top\"}");
    apply(b);
    /* a new person: $set over $set_once; uuid v5 of "1:u1" */
    assert_string_equal(pp(&b->ev[0], "a"), "1");
    assert_string_equal(pp(&b->ev[0], "c"), "1");
    assert_string_equal(b->ev[0].person_id, b->ev[1].person_id);
    char expect[40];
    cm_uuid_v5(WR_PERSON_UUID_NAMESPACE, "1:u1", 4, expect);
    assert_string_equal(b->ev[0].person_id, expect);
    /* set_once keeps c, adds d; $unset beats $set in one event */
    assert_string_equal(pp(&b->ev[1], "c"), "1");
    assert_string_equal(pp(&b->ev[1], "d"), "2");
    assert_string_equal(pp(&b->ev[1], "b"), "");
    /* the top-level $set wins over properties.$set */
    assert_string_equal(pp(&b->ev[2], "n"), "\"top\"");
    assert_int_equal(b->st.npersons, 1);
    assert_true(b->st.persons[0]->is_new);
    assert_false(b->st.persons[0]->is_identified);
}

static void test_automatic_properties(void **state)
{
    batch_t *b = *state;
    add(b, "$pageview", "u1",
        "{\"$browser\":\"Firefox\",\"utm_source\":\"news\",\"$os\":\"Linux\"}", NULL);
    add(b, "$pageview", "u1", "{\"$browser\":\"Chrome\",\"$referrer\":null}", NULL);
    add(b, "e", "srv",
        "{\"$is_server\":true,\"$os\":\"Linux\",\"$set\":{\"$browser\":\"mine\"},"
        "\"$browser\":\"x\"}",
        NULL);
    apply(b);
    assert_string_equal(pp(&b->ev[1], "$browser"), "\"Chrome\"");
    assert_string_equal(pp(&b->ev[1], "$initial_browser"), "\"Firefox\"");
    assert_string_equal(pp(&b->ev[1], "$initial_utm_source"), "\"news\"");
    assert_string_equal(pp(&b->ev[1], "$referrer"), "null");
    assert_string_equal(pp(&b->ev[1], "$initial_referrer"), ""); /* no initial from null */
    assert_string_equal(pp(&b->ev[2], "$os"), "");               /* server SDKs */
    assert_string_equal(pp(&b->ev[2], "$browser"), "\"mine\"");  /* an explicit $set wins */
    /* the merged $set is written back into the stored event */
    cm_buf_t out = CM_BUF_INIT;
    wr_event_properties_json(&b->ev[0], &out);
    assert_non_null(strstr(cm_buf_cstr(&out), "\"$set\":{\"$browser\":\"Firefox\""));
    assert_non_null(strstr(cm_buf_cstr(&out), "\"$ip\":\"10.0.0.1\""));
    cm_buf_free(&out);
}

static void test_identify_cases(void **state)
{
    batch_t *b = *state;
    add(b, "$identify", "n1", "{\"$anon_distinct_id\":\"a1\"}", NULL); /* neither: one person */
    add(b, "page", "a2", "{\"$set\":{\"k\":\"anon\",\"only_anon\":1}}", NULL);
    add(b, "$identify", "n2", "{\"$anon_distinct_id\":\"a2\"}", NULL); /* only the anon one */
    add(b, "page", "n3", "{\"$set\":{\"k\":\"known\"}}", NULL);
    add(b, "page", "a3", "{\"$set\":{\"k\":\"anon\",\"only_anon\":1}}", NULL);
    add(b, "$identify", "n3", "{\"$anon_distinct_id\":\"a3\"}", NULL); /* different: merge */
    apply(b);
    wr_pdi_t *n1 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:n1"));
    wr_pdi_t *a1 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:a1"));
    assert_ptr_equal(n1->person, a1->person);
    assert_true(n1->person->is_identified);
    wr_pdi_t *n2 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:n2"));
    wr_pdi_t *a2 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:a2"));
    assert_ptr_equal(n2->person, a2->person); /* n2 joined the anonymous person */
    wr_pdi_t *n3 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:n3"));
    wr_pdi_t *a3 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:a3"));
    assert_ptr_equal(n3->person, a3->person);
    assert_true(a3->moved);
    assert_string_equal(pp(&b->ev[5], "k"), "\"known\""); /* the identified person wins */
    assert_string_equal(pp(&b->ev[5], "only_anon"), "1"); /* the other's keys are kept */
    size_t deleted = 0;
    for (size_t i = 0; i < b->st.npersons; i++)
        deleted += b->st.persons[i]->deleted;
    assert_int_equal(deleted, 1);
    assert_null(b->ev[5].warning);
}

static void test_refused_merges(void **state)
{
    batch_t *b = *state;
    add(b, "$identify", "x1", "{\"$anon_distinct_id\":\"y1\"}", NULL);
    add(b, "$identify", "x2", "{\"$anon_distinct_id\":\"y2\"}", NULL);
    add(b, "$create_alias", "x1", "{\"alias\":\"x2\"}", NULL); /* x2 is identified: refused */
    add(b, "$identify", "x3", "{\"$anon_distinct_id\":\"anonymous\"}", NULL);
    add(b, "$identify", "x4", "{\"$anon_distinct_id\":\"\\\"null\\\"\"}", NULL);
    add(b, "$merge_dangerously", "x1", "{\"alias\":\"x2\"}", NULL); /* allowed */
    apply(b);
    assert_string_equal(b->ev[2].warning, "cannot_merge_already_identified");
    assert_string_equal(b->ev[3].warning, "cannot_merge_with_illegal_distinct_id");
    assert_string_equal(b->ev[4].warning, "cannot_merge_with_illegal_distinct_id");
    assert_null(cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:anonymous")));
    assert_null(b->ev[5].warning);
    wr_pdi_t *x1 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:x1"));
    wr_pdi_t *y2 = cm_strset_get(b->st.pdis, CM_SLICE_LIT("1:y2"));
    assert_ptr_equal(x1->person, y2->person);
    /* the refused merges are recorded as seen with the rest: redelivered (a
     * rebalance), they are not warned about a second time */
    bool seen[MAX_EVENTS] = {false};
    wr_stmts_t save;
    wr_persons_save_stmts(CM_DB_SQLITE, &b->st, b->ev, b->n, seen, 1000, &save);
    size_t recorded = 0;
    for (size_t i = 0; i < save.n; i++)
        if (strncmp(save.stmts[i].sql, "INSERT INTO events_seen", 23) == 0)
            for (size_t k = 2; k <= 4; k++)
                recorded += strcmp(save.stmts[i].params[0], b->ev[k].uuid) == 0;
    assert_int_equal(recorded, 3);
    wr_stmts_free(&save);
    assert_true(wr_distinct_id_illegal("NaN"));
    assert_false(wr_distinct_id_illegal("nan"));
    assert_true(wr_distinct_id_illegal("GUEST"));
    assert_true(wr_distinct_id_illegal("  "));
    assert_false(wr_distinct_id_illegal("NULL"));
}

/* A uuid is unique within its project only: the seen record carries the
 * project, and the key that recognises a seen event includes it. */
static void test_seen_key_per_project(void **state)
{
    batch_t *b = *state;
    char k1[WR_SEEN_KEY_MAX], k2[WR_SEEN_KEY_MAX];
    cm_slice_t a = wr_seen_key(1, "0190aaaa-0000-7000-8000-000000000001", k1);
    cm_slice_t c = wr_seen_key(2, "0190aaaa-0000-7000-8000-000000000001", k2);
    assert_false(cm_slice_eq(a, c));
    assert_true(cm_slice_eq_cstr(a, "1:0190aaaa-0000-7000-8000-000000000001"));

    add(b, "$identify", "u1", "{\"$set\":{\"plan\":\"pro\"}}", NULL);
    add(b, "$identify", "u1", "{\"$set\":{\"plan\":\"free\"}}", NULL);
    snprintf(b->ev[1].uuid, sizeof(b->ev[1].uuid), "%s", b->ev[0].uuid); /* same uuid */
    b->ev[1].project_id = 2;
    apply(b);
    bool seen[MAX_EVENTS] = {false};
    wr_stmts_t save;
    wr_persons_save_stmts(CM_DB_SQLITE, &b->st, b->ev, b->n, seen, 1000, &save);
    bool project[3] = {false};
    for (size_t i = 0; i < save.n; i++)
        if (strncmp(save.stmts[i].sql, "INSERT INTO events_seen", 23) == 0) {
            assert_int_equal(save.stmts[i].nparams, 3);
            assert_string_equal(save.stmts[i].params[0], b->ev[0].uuid);
            long long p = atoll(save.stmts[i].params[1]);
            assert_true(p == 1 || p == 2);
            project[p] = true;
        }
    assert_true(project[1] && project[2]); /* one record per project */
    wr_stmts_free(&save);
}

static void test_personless_and_groups(void **state)
{
    batch_t *b = *state;
    add(b, "e", "ghost", "{\"$process_person_profile\":false,\"$set\":{\"a\":1}}", NULL);
    add(b, "$groupidentify", "u1",
        "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"size\":3}}", NULL);
    add(b, "$groupidentify", "u1",
        "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"plan\":\"x\"}}",
        NULL);
    apply(b);
    assert_int_equal(b->st.npersons, 0);
    assert_string_equal(b->ev[0].person_properties, "{}");
    char expect[40];
    cm_uuid_v5(WR_PERSON_UUID_NAMESPACE, "1:ghost", 7, expect);
    assert_string_equal(b->ev[0].person_id, expect);
    assert_int_equal(b->st.ngroups, 1);
    cm_buf_t out = CM_BUF_INIT;
    wr_props_write(&b->st.group_list[0]->props, &out);
    assert_string_equal(cm_buf_cstr(&out), "{\"size\":3,\"plan\":\"x\"}");
    cm_buf_free(&out);
    /* $identify sent personless is dropped */
    wr_event_t e;
    const char *msg =
        "{\"uuid\":\"0190aaaa-0000-7000-8000-000000000099\",\"distinct_id\":\"d\",\"ip\":\"1\","
        "\"data\":\"{\\\"properties\\\":{\\\"$process_person_profile\\\":false,"
        "\\\"$anon_distinct_id\\\":\\\"x\\\"}}\",\"now\":\"2026-01-01T00:00:00.000000Z\","
        "\"token\":\"t\",\"event\":\"$identify\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}";
    wr_event_parse(&e, msg, strlen(msg), 1 << 20);
    assert_int_equal(e.fate, WR_EVENT_DROP);
    wr_event_free(&e);
}

static void test_loaded_state_and_versions(void **state)
{
    batch_t *b = *state;
    wr_state_person(&b->st, 1, "11111111-1111-5111-8111-111111111111", CM_SLICE_LIT("{\"a\":1}"),
                    CM_SLICE_NULL, false, 4, 1000);
    wr_state_distinct_id(&b->st, 1, "old", "11111111-1111-5111-8111-111111111111", 0);
    add(b, "page", "old", "{\"$set\":{\"a\":1}}", NULL); /* no change: no new version */
    apply(b);
    assert_false(b->st.persons[0]->dirty);
    assert_int_equal(b->st.persons[0]->version, 4);
    add(b, "page", "old", "{\"$set\":{\"a\":2}}", NULL);
    add(b, "page", "old", "{\"$set\":{\"a\":3}}", NULL);
    apply(b);
    assert_true(b->st.persons[0]->dirty);
    assert_int_equal(b->st.persons[0]->version, 5); /* once per batch */
    /* a redelivery only looks its person up */
    add(b, "page", "old", "{\"$set\":{\"a\":99}}", NULL);
    wr_persons_apply(&b->st, &b->ev[3], true);
    assert_string_equal(pp(&b->ev[3], "a"), "3");
}

/* Events taken in any order end as in time order (several writers on one
 * stream, Kafka partitions): the latest $set, the earliest $set_once, and
 * an $unset that an older $set cannot undo. */
static void test_out_of_order(void **state)
{
    batch_t *b = *state;
    next_second = 30;
    add(b, "page", "u1", "{\"$set\":{\"plan\":\"new\"},\"$set_once\":{\"first\":\"late\"}}", NULL);
    next_second = 10;
    add(b, "page", "u1", "{\"$set\":{\"plan\":\"old\"},\"$set_once\":{\"first\":\"early\"}}", NULL);
    next_second = 40;
    add(b, "page", "u1", "{\"$unset\":[\"gone\"],\"$set\":{\"x\":1}}", NULL);
    next_second = 20;
    add(b, "page", "u1", "{\"$set\":{\"gone\":\"back?\"}}", NULL);
    apply(b);
    assert_string_equal(pp(&b->ev[3], "plan"), "\"new\"");
    assert_string_equal(pp(&b->ev[3], "first"), "\"early\"");
    assert_string_equal(pp(&b->ev[3], "gone"), "");
    /* and the times survive a round trip through the store's text */
    cm_buf_t t = CM_BUF_INIT;
    wr_props_write_times(&b->st.persons[0]->props, &t);
    wr_props_t back;
    wr_props_init(&back);
    wr_props_load_times(&back, (cm_slice_t){t.p, t.len});
    assert_false(
        wr_props_set_at(&back, CM_SLICE_LIT("gone"), CM_SLICE_LIT("1"), 1767225600000LL + 20000));
    assert_true(
        wr_props_set_at(&back, CM_SLICE_LIT("gone"), CM_SLICE_LIT("1"), 1767225600000LL + 50000));
    wr_props_free(&back);
    cm_buf_free(&t);
}

static void test_dead_messages(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *reason;
    } cases[] = {
        {"{", "invalid_json"},
        {"[]", "not_an_object"},
        {"{\"uuid\":\"nope\"}", "invalid_uuid"},
        {"{\"uuid\":\"0190aaaa-0000-7000-8000-000000000001\",\"distinct_id\":\"\"}",
         "invalid_distinct_id"},
        {"{\"uuid\":\"0190aaaa-0000-7000-8000-000000000001\",\"distinct_id\":\"d\",\"token\":7}",
         "invalid_token"},
        {"{\"uuid\":\"0190aaaa-0000-7000-8000-000000000001\",\"distinct_id\":\"d\",\"token\":\"t\","
         "\"event\":\"e\",\"ip\":\"1\",\"timestamp\":\"yesterday\"}",
         "invalid_timestamp"},
        {"{\"uuid\":\"0190aaaa-0000-7000-8000-000000000001\",\"distinct_id\":\"d\",\"token\":\"t\","
         "\"event\":\"e\",\"ip\":\"1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"now\":"
         "\"2026-01-01T00:00:00Z\",\"data\":\"{\\\"properties\\\":[]}\"}",
         "invalid_properties"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wr_event_t e;
        wr_event_parse(&e, cases[i].msg, strlen(cases[i].msg), 1 << 20);
        assert_int_equal(e.fate, WR_EVENT_DEAD);
        assert_string_equal(e.reason, cases[i].reason);
        wr_event_free(&e);
    }
    wr_event_t e;
    wr_event_parse(&e, "{}", 2, 1);
    assert_string_equal(e.reason, "too_large");
    wr_event_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_event_and_update_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_automatic_properties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identify_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_merges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seen_key_per_project, setup, teardown),
        cmocka_unit_test_setup_teardown(test_personless_and_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loaded_state_and_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order, setup, teardown),
        cmocka_unit_test(test_dead_messages),
    };
    return cmocka_run_group_tests_name("writer_persons", tests, NULL, NULL);
}
