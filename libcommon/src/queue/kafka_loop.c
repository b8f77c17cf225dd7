/* kafka_loop.c - librdkafka on a libuv loop: the shared glue (see kafka_loop.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "kafka_loop.h"

static const uint64_t wake_payload = 1;

void cm__kafka_set(cm__kafka_conf_t *kc, const char *name, const char *value)
{
    char errstr[256];

    if (rd_kafka_conf_set(kc->conf, name, value, errstr, sizeof(errstr)) == RD_KAFKA_CONF_OK)
        return;
    /* The value is not logged: it may be a password. */
    cm_log(CM_LOG_ERROR, NULL, "%s: property %s: %s", kc->who, name, errstr);
    kc->rc = CM_EINVAL;
}

void cm__kafka_set_int(cm__kafka_conf_t *kc, const char *name, int value)
{
    char v[24];
    snprintf(v, sizeof(v), "%d", value);
    cm__kafka_set(kc, name, v);
}

void cm__kafka_set_extra(cm__kafka_conf_t *kc, const char *const *extra, size_t nextra)
{
    for (size_t i = 0; i < nextra && kc->rc == 0; i++) {
        const char *eq = extra[i] ? strchr(extra[i], '=') : NULL;
        if (eq == NULL || eq == extra[i]) {
            cm_log(CM_LOG_ERROR, NULL, "%s: extra property #%zu is not name=value", kc->who, i);
            kc->rc = CM_EINVAL;
            return;
        }
        char *name = cm_xmemdup(extra[i], (size_t)(eq - extra[i]));
        cm__kafka_set(kc, name, eq + 1);
        free(name);
    }
}

cm_log_level_t cm__kafka_log_level(int level)
{
    return level <= 3   ? CM_LOG_ERROR
           : level == 4 ? CM_LOG_WARN
           : level <= 6 ? CM_LOG_INFO
                        : CM_LOG_DEBUG;
}

bool cm__kafka_stats_broker_up(cm_json_t root)
{
    cm_json_iter_t it = cm_json_iter(cm_json_get(root, "brokers"));
    cm_json_t name, b;
    while (cm_json_next(&it, &name, &b))
        if (cm_json_str_eq(cm_json_get(b, "state"), CM_SLICE_LIT("UP")))
            return true;
    return false;
}

int cm__kafka_wake_open(const char *who)
{
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0)
        cm_log(CM_LOG_ERROR, NULL, "%s: eventfd: %s", who, strerror(errno));
    return efd;
}

void cm__kafka_wake_drain(int efd)
{
    uint64_t n;
    while (read(efd, &n, sizeof(n)) == (ssize_t)sizeof(n))
        ; /* non-blocking: one read resets the counter, the next says EAGAIN */
}

void cm__kafka_wake_attach(rd_kafka_queue_t *q, int efd, const char *who)
{
    rd_kafka_queue_io_event_enable(q, efd, &wake_payload, sizeof(wake_payload));
    if (write(efd, &wake_payload, sizeof(wake_payload)) < 0)
        cm_log(CM_LOG_WARN, NULL, "%s: eventfd write: %s", who, strerror(errno));
}

void cm__kafka_wake_detach(rd_kafka_queue_t *q)
{
    rd_kafka_queue_io_event_enable(q, -1, NULL, 0);
}

static void on_closed(uv_handle_t *h)
{
    cm__kafka_closing_t *c = h->data;
    if (--c->open > 0)
        return;
    close(c->efd);
    c->done(c->ud);
}

void cm__kafka_close(cm__kafka_closing_t *c, int efd, uv_poll_t *poll, uv_handle_t *other,
                     void (*done)(void *ud), void *ud)
{
    *c = (cm__kafka_closing_t){.efd = efd, .open = 2, .done = done, .ud = ud};
    poll->data = c;
    other->data = c;
    uv_close((uv_handle_t *)poll, on_closed);
    uv_close(other, on_closed);
}

cm__kafka_conf_t cm__kafka_conf_begin(rd_kafka_conf_t *conf, const char *who, const char *brokers)
{
    cm__kafka_conf_t kc = {.conf = conf, .who = who};
    cm__kafka_set(&kc, "bootstrap.servers", brokers);
    return kc;
}
