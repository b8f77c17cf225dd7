/*
 * kafka_produce.c - write messages to a Kafka topic, for tests that put
 * on the queue what no ingest would (poison messages for the writer).
 *
 * Environment:
 *   BOOTSTRAP  bootstrap servers (required)
 *   TOPIC      the topic (required)
 * Reads stdin, one JSON line per message: {"key": "k" | null, "value": "..."}
 * (value is produced byte for byte as the JSON string's text). Exits 0 once
 * every message was acknowledged, 1 on any failure. A command-line tool: it
 * blocks freely.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "cm/buf.h"
#include "cm/json.h"

static int failures;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err) {
        fprintf(stderr, "kafka_produce: %s\n", rd_kafka_err2str(m->err));
        failures++;
    }
}

int main(void)
{
    const char *bootstrap = getenv("BOOTSTRAP"), *topic = getenv("TOPIC");
    char err[512];
    if (!bootstrap || !topic) {
        fprintf(stderr, "kafka_produce: BOOTSTRAP and TOPIC are required\n");
        return 1;
    }
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof(err)) ||
        rd_kafka_conf_set(conf, "message.max.bytes", "10000000", err, sizeof(err))) {
        fprintf(stderr, "kafka_produce: %s\n", err);
        return 1;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        fprintf(stderr, "kafka_produce: %s\n", err);
        return 1;
    }
    cm_buf_t line = CM_BUF_INIT, key = CM_BUF_INIT, value = CM_BUF_INIT;
    int c;
    for (;;) {
        cm_buf_reset(&line);
        while ((c = getchar()) != EOF && c != '\n')
            cm_buf_putc(&line, (char)c);
        if (line.len > 0) {
            cm_json_doc_t *doc;
            if (cm_json_parse(line.p, line.len, NULL, &doc, NULL) != 0) {
                fprintf(stderr, "kafka_produce: a line is not JSON\n");
                return 1;
            }
            cm_buf_reset(&key);
            cm_buf_reset(&value);
            bool has_key = cm_json_str_append(cm_json_get(cm_json_root(doc), "key"), &key) == 0;
            cm_json_str_append(cm_json_get(cm_json_root(doc), "value"), &value);
            cm_json_doc_free(doc);
            rd_kafka_resp_err_t e =
                rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE(value.p, value.len),
                                  RD_KAFKA_V_KEY(has_key ? key.p : NULL, has_key ? key.len : 0),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e) {
                fprintf(stderr, "kafka_produce: %s\n", rd_kafka_err2str(e));
                return 1;
            }
            rd_kafka_poll(rk, 0);
        }
        if (c == EOF)
            break;
    }
    rd_kafka_flush(rk, 10000);
    int left = rd_kafka_outq_len(rk);
    rd_kafka_destroy(rk);
    cm_buf_free(&line);
    cm_buf_free(&key);
    cm_buf_free(&value);
    return failures || left ? 1 : 0;
}
