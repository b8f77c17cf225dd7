/*
 * kafka_loop.h - what the Kafka producer (queue_kafka.c) and the Kafka
 * consumer (queue_consumer_kafka.c) share to drive librdkafka from a libuv
 * loop. Not public.
 *
 *   - Settings: librdkafka properties set one by one, each failure logged
 *     (without the value: it may be a password), then the caller's
 *     "name=value" extras, applied last.
 *   - Wake-ups: an eventfd that librdkafka writes to when an op arrives in
 *     one of its queues (rd_kafka_queue_io_event_enable); the caller
 *     watches it with a uv_poll_t, drains it, then serves the queue with a
 *     zero timeout, so every callback runs on the loop thread and nothing
 *     ever waits. An eventfd rather than a pipe, because a pipe can fill up
 *     and librdkafka turns the IO event off for good after a failed write.
 *     Several queues may share one eventfd.
 *   - Logs (log.queue=true) mapped to cm_log levels; the statistics'
 *     broker states.
 */
#ifndef CM_KAFKA_LOOP_H
#define CM_KAFKA_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>
#include <uv.h>

#include "cm/json.h"
#include "cm/log.h"

typedef struct {
    rd_kafka_conf_t *conf;
    const char *who; /* log prefix: "queue kafka" */
    int rc;          /* CM_EINVAL once any setting failed, else 0 */
} cm__kafka_conf_t;

/* The settings of a side that talks to brokers ("host:port,..."): its
 * bootstrap.servers set first. */
cm__kafka_conf_t cm__kafka_conf_begin(rd_kafka_conf_t *conf, const char *who, const char *brokers);
/* Sets one property; a failure is logged and remembered in kc->rc. */
void cm__kafka_set(cm__kafka_conf_t *kc, const char *name, const char *value);
void cm__kafka_set_int(cm__kafka_conf_t *kc, const char *name, int value);
/* "name=value" properties in order, only while every setting so far
 * succeeded; stops at the first failure. */
void cm__kafka_set_extra(cm__kafka_conf_t *kc, const char *const *extra, size_t nextra);

/* librdkafka's syslog-style level as a cm_log level. */
cm_log_level_t cm__kafka_log_level(int level);

/* True when the statistics JSON lists some broker connection in state UP. */
bool cm__kafka_stats_broker_up(cm_json_t root);

/* A non-blocking eventfd, or -1 (logged). */
int cm__kafka_wake_open(const char *who);
/* Resets the counter (non-blocking). Drain BEFORE serving the queues: an op
 * that arrives after the serve writes a new wake-up. */
void cm__kafka_wake_drain(int efd);
/* Makes q write to efd when an op arrives while it is empty, and wakes the
 * loop once for the ops queued before (they would otherwise wait for the
 * next empty -> non-empty transition). */
void cm__kafka_wake_attach(rd_kafka_queue_t *q, int efd, const char *who);
/* No more writes from q (before the eventfd is closed). */
void cm__kafka_wake_detach(rd_kafka_queue_t *q);

/* The end of a side on the loop, once librdkafka is destroyed: its eventfd
 * watcher and its other handle closed, then the eventfd, then done(ud).
 * c lives in the side's struct until done. */
typedef struct {
    int efd;
    int open;
    void (*done)(void *ud);
    void *ud;
} cm__kafka_closing_t;
void cm__kafka_close(cm__kafka_closing_t *c, int efd, uv_poll_t *poll, uv_handle_t *other,
                     void (*done)(void *ud), void *ud);

#endif
