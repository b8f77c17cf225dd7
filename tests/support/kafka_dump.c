/*
 * kafka_dump.c - print every message of some Kafka topics as JSON lines.
 *
 * Environment:
 *   BOOTSTRAP  bootstrap servers (required)
 *   TOPICS     comma list of topics (required)
 *   IDLE_MS    stop after this long without a new message (default 1500)
 *   COUNT      stop as soon as this many messages were printed (optional)
 *   SUMMARY    when set (to anything), print no message but one line at
 *              the end: {"messages":N,"distinct_uuids":D,"by_prefix":{...}}
 *              D counts distinct "uuid" header values; by_prefix counts the
 *              messages by the uuid's first 8 characters. For batches of
 *              100,000s, where printing every message would dwarf the test.
 *   GROUP      when set: print no message but the group's committed offsets,
 *              one line {"committed":{"<topic>:<partition>":offset,...}}
 *              (-1001: none yet). Only an offset fetch: the group is not
 *              joined, so its members are not disturbed.
 *
 * One line per message on stdout:
 *   {"topic":"t","partition":0,"offset":12,"key":"k" | null,
 *    "headers":{"name":"value" | null, ...},"value":"..." | null}
 * Keys, header values and values are written as JSON strings; bytes that
 * are not valid UTF-8 become U+FFFD (this is a test tool for text payloads).
 *
 * No consumer group membership: the partitions are looked up in the
 * metadata and assigned explicitly from the beginning, and nothing is
 * committed, so the tool can be run any number of times against the same
 * topics. (librdkafka 2.0 still insists on a group.id for assign(); it is
 * only a name here, no group is ever joined.) It blocks
 * freely; it is a command-line tool, not a loop-thread component.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "cm/buf.h"
#include "cm/json.h"
#include "cm/strset.h"

#define METADATA_TIMEOUT_MS 5000
#define POLL_MS             100

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "kafka_dump: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtol(v, NULL, 10) : def;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static rd_kafka_t *consumer_new(const char *bootstrap, const char *group)
{
    static const char *const props[][2] = {
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
        {"enable.partition.eof", "false"},
        /* The mock broker and tests care about every record, aborted or not. */
        {"isolation.level", "read_uncommitted"},
        {"log_level", "3"},
    };
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();

    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "group.id", group, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
        die("bad BOOTSTRAP", errstr);
    for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++)
        if (rd_kafka_conf_set(conf, props[i][0], props[i][1], errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
            die("bad property", errstr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (rk == NULL)
        die("cannot create the consumer", errstr);
    return rk;
}

/* Adds every partition of topic, from its first offset, to the list. */
static void add_partitions(rd_kafka_t *rk, const char *topic,
                           rd_kafka_topic_partition_list_t *parts)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, METADATA_TIMEOUT_MS);

    if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        die("metadata", rd_kafka_err2str(err));
    for (int i = 0; i < md->topic_cnt; i++) {
        const struct rd_kafka_metadata_topic *t = &md->topics[i];
        if (t->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            /* An absent topic simply has nothing to print. */
            fprintf(stderr, "kafka_dump: topic %s: %s\n", t->topic, rd_kafka_err2str(t->err));
            continue;
        }
        for (int p = 0; p < t->partition_cnt; p++)
            rd_kafka_topic_partition_list_add(parts, t->topic, t->partitions[p].id)->offset =
                RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
}

static void write_bytes_or_null(cm_json_writer_t *w, const void *p, size_t len)
{
    if (p == NULL)
        cm_json_null(w);
    else
        cm_json_str_lossy(w, (cm_slice_t){p, len});
}

static void print_message(const rd_kafka_message_t *m, cm_buf_t *out)
{
    cm_json_writer_t w;
    rd_kafka_headers_t *hdrs = NULL;

    cm_buf_reset(out);
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "topic");
    cm_json_str_lossy(&w, cm_slice_from_cstr(rd_kafka_topic_name(m->rkt)));
    cm_json_key(&w, "partition");
    cm_json_int(&w, m->partition);
    cm_json_key(&w, "offset");
    cm_json_int(&w, m->offset);
    cm_json_key(&w, "key");
    write_bytes_or_null(&w, m->key, m->key_len);
    cm_json_key(&w, "headers");
    cm_json_begin_object(&w);
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char *name;
        const void *val;
        size_t size;
        for (size_t i = 0;
             rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             i++) {
            cm_json_key_lossy(&w, cm_slice_from_cstr(name));
            write_bytes_or_null(&w, val, size);
        }
    }
    cm_json_end_object(&w);
    cm_json_key(&w, "value");
    write_bytes_or_null(&w, m->payload, m->len);
    cm_json_end_object(&w);
    if (cm_json_writer_finish(&w) != 0)
        die("cannot encode a message", NULL);
    cm_buf_putc(out, '\n');
    fwrite(out->p, 1, out->len, stdout);
    fflush(stdout);
}

typedef struct {
    cm_strset_t *uuids;
    cm_strset_t *prefixes; /* value: the count, as a pointer-sized integer */
    long messages;
} summary_t;

static void summarize(const rd_kafka_message_t *m, summary_t *s)
{
    rd_kafka_headers_t *hdrs = NULL;
    const void *val;
    size_t size;
    s->messages++;
    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_get_last(hdrs, "uuid", &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        val == NULL)
        return;
    cm_strset_add(s->uuids, (cm_slice_t){val, size});
    cm_slice_t p = {val, size < 8 ? size : 8};
    uintptr_t n = (uintptr_t)cm_strset_get(s->prefixes, p);
    cm_strset_put(s->prefixes, p, (void *)(n + 1));
}

static void print_prefix(cm_slice_t key, void *value, void *ud)
{
    cm_json_writer_t *w = ud;
    cm_json_key_lossy(w, key);
    cm_json_int(w, (int64_t)(uintptr_t)value);
}

static void print_summary(const summary_t *s, cm_buf_t *out)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "messages");
    cm_json_int(&w, s->messages);
    cm_json_key(&w, "distinct_uuids");
    cm_json_int(&w, (int64_t)cm_strset_count(s->uuids));
    cm_json_key(&w, "by_prefix");
    cm_json_begin_object(&w);
    cm_strset_each(s->prefixes, print_prefix, &w);
    cm_json_end_object(&w);
    cm_json_end_object(&w);
    if (cm_json_writer_finish(&w) != 0)
        die("cannot encode the summary", NULL);
    printf("%.*s\n", (int)out->len, out->p);
}

int main(void)
{
    const char *bootstrap = getenv("BOOTSTRAP"), *topics = getenv("TOPICS");
    long idle_ms = env_long("IDLE_MS", 1500), want = env_long("COUNT", 0), printed = 0;

    if (bootstrap == NULL || topics == NULL)
        die("BOOTSTRAP and TOPICS are required", NULL);
    const char *group = getenv("GROUP");
    rd_kafka_t *rk = consumer_new(bootstrap, group ? group : "kafka_dump");
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(4);
    char *copy = strdup(topics), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
        if (*t != '\0')
            add_partitions(rk, t, parts);
    free(copy);
    if (group != NULL) {
        rd_kafka_resp_err_t cerr = rd_kafka_committed(rk, parts, METADATA_TIMEOUT_MS);
        if (cerr != RD_KAFKA_RESP_ERR_NO_ERROR)
            die("committed", rd_kafka_err2str(cerr));
        printf("{\"committed\":{");
        for (int i = 0; i < parts->cnt; i++)
            printf("%s\"%s:%d\":%lld", i ? "," : "", parts->elems[i].topic,
                   (int)parts->elems[i].partition, (long long)parts->elems[i].offset);
        printf("}}\n");
        rd_kafka_topic_partition_list_destroy(parts);
        rd_kafka_destroy(rk);
        return 0;
    }
    rd_kafka_resp_err_t err = rd_kafka_assign(rk, parts);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        die("assign", rd_kafka_err2str(err));

    cm_buf_t out = CM_BUF_INIT;
    summary_t sum = {0};
    if (getenv("SUMMARY") != NULL) {
        sum.uuids = cm_strset_new(1024);
        sum.prefixes = cm_strset_new(16);
    }
    long last = now_ms(); /* when the last message (or the start) was seen */
    while (now_ms() - last < idle_ms && (want <= 0 || printed < want)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, POLL_MS);
        if (m == NULL)
            continue;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (sum.uuids != NULL)
                summarize(m, &sum);
            else
                print_message(m, &out);
            printed++;
            last = now_ms();
        } else {
            fprintf(stderr, "kafka_dump: %s\n", rd_kafka_message_errstr(m));
        }
        rd_kafka_message_destroy(m);
    }
    if (sum.uuids != NULL) {
        print_summary(&sum, &out);
        cm_strset_free(sum.uuids);
        cm_strset_free(sum.prefixes);
    }
    cm_buf_free(&out);
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return 0;
}
