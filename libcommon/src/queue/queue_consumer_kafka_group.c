/* queue_consumer_kafka_group.c - the Kafka consumer's partitions and librdkafka's callbacks
 * (see queue_consumer_kafka_internal.h and the top of queue_consumer_kafka.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/json.h"
#include "cm/log.h"
#include "kafka_loop.h"
#include "queue_consumer_kafka_internal.h"

/* ---- partitions ----------------------------------------------------------------- */

kpart_t *cm__kc_part_of(ktopic_t *t, int32_t p, bool grow)
{
    if (p < 0)
        return NULL;
    if ((size_t)p >= t->nparts) {
        if (!grow)
            return NULL;
        size_t n = t->nparts ? t->nparts : 8;
        while (n <= (size_t)p)
            n *= 2;
        t->parts = cm_xrealloc(t->parts, n * sizeof(*t->parts));
        memset(t->parts + t->nparts, 0, (n - t->nparts) * sizeof(*t->parts));
        t->nparts = n;
    }
    return &t->parts[p];
}

bool cm__kc_is_assigned(ktopic_t *t, int32_t p)
{
    kpart_t *s = cm__kc_part_of(t, p, false);
    return s != NULL && s->assigned;
}

void cm__kc_set_assigned(ktopic_t *t, const rd_kafka_topic_partition_list_t *parts, bool on)
{
    uint64_t now = uv_now(t->k->base.loop);
    for (int i = 0; i < parts->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &parts->elems[i];
        if (strcmp(tp->topic, t->name) != 0)
            continue;
        kpart_t *s = cm__kc_part_of(t, tp->partition, on);
        if (s == NULL || s->assigned == on)
            continue;
        *s = (kpart_t){.next = -1, .seen = -1, .since = now, .assigned = on};
        if (on)
            t->nassigned++;
        else
            t->nassigned--;
    }
}

void cm__kc_unassign_all(ktopic_t *t)
{
    for (size_t p = 0; p < t->nparts; p++)
        t->parts[p].assigned = false;
    t->nassigned = 0;
}

/* From the messages' ids, "partition:offset"; *out is malloc'd. */
size_t cm__kc_batch_spans(const cm_consumer_batch_t *b, span_t **out)
{
    span_t *s = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < b->n; i++) {
        char *end;
        long p = strtol(b->msgs[i].id, &end, 10);
        if (*end != ':')
            continue;
        int64_t off = strtoll(end + 1, NULL, 10);
        size_t j = 0;
        while (j < n && s[j].partition != p)
            j++;
        if (j == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                s = cm_xrealloc(s, cap * sizeof(*s));
            }
            s[n++] = (span_t){(int32_t)p, off, off};
        } else {
            if (off < s[j].lo)
                s[j].lo = off;
            if (off > s[j].hi)
                s[j].hi = off;
        }
    }
    *out = s;
    return n;
}

/* ---- librdkafka callbacks (loop thread, from the queues we serve) ------------- */

/* why: static text, kept for cm_consumer_ready(). */
void cm__kc_set_conn(ktopic_t *t, bool up, const char *why)
{
    if (!up)
        t->down_why = why;
    if (up == t->conn_up)
        return;
    t->conn_up = up;
    if (up)
        cm_log(CM_LOG_INFO, NULL, WHO " %s: connected", t->name);
    else
        cm_log(CM_LOG_WARN, NULL, WHO " %s: not connected: %s", t->name, why);
}

void cm__kc_on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    ktopic_t *t = opaque;
    const char *proto = rd_kafka_rebalance_protocol(rk);
    bool coop = proto != NULL && strcmp(proto, "COOPERATIVE") == 0;
    bool assign = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
    bool lost = !assign && rd_kafka_assignment_lost(rk);
    rd_kafka_error_t *e = NULL;
    rd_kafka_resp_err_t re = RD_KAFKA_RESP_ERR_NO_ERROR;

    /* A second eager revoke while closing, with nothing assigned, is one
     * the close already answered (the group was mid-rebalance when the
     * close began): librdkafka 2.0's cgrp may finish terminating while
     * such an unassign is on its way and purge it unanswered, leaving
     * rd_kafka_assign() waiting forever on the loop thread. Nothing to
     * unassign, so no call; should librdkafka wait for one after all, the
     * close deadline ends the wait (queue_consumer_kafka.c). */
    if (t->k->closing && !assign && !coop && t->nassigned == 0) {
        if (!t->k->destroying) /* else from librdkafka's threads: no cm_log */
            cm_log(CM_LOG_INFO, NULL,
                   WHO " %s: revoke while closing with nothing assigned: skipped", t->name);
        return;
    }
    if (assign && coop)
        e = rd_kafka_incremental_assign(rk, parts);
    else if (assign)
        re = rd_kafka_assign(rk, parts);
    else if (coop && err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
        e = rd_kafka_incremental_unassign(rk, parts);
    else
        re = rd_kafka_assign(rk, NULL); /* revoke (eager), or an error: start over */
    if (t->k->destroying) {
        if (e)
            rd_kafka_error_destroy(e);
        return;
    }
    const char *failed = e ? rd_kafka_error_string(e) : re ? rd_kafka_err2str(re) : NULL;
    if (failed != NULL)
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: %s of %d partition(s) failed: %s", t->name,
               assign ? "assignment" : "revocation", parts ? parts->cnt : 0, failed);
    if (assign && failed == NULL) {
        cm__kc_set_assigned(t, parts, true);
        t->joined = true;
        cm__kc_set_conn(t, true, NULL); /* the group protocol just went through */
    } else if (!assign) {
        if (coop && err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && parts != NULL)
            cm__kc_set_assigned(t, parts, false);
        else
            cm__kc_unassign_all(t);
    }
    cm__consumer_note_assigned(&t->k->base, t->name, t->nassigned);
    if (err != RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS && err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: rebalance error: %s", t->name, rd_kafka_err2str(err));
    else
        cm_log(CM_LOG_INFO, NULL, WHO " %s: %s %d partition(s)%s (%s), %zu assigned", t->name,
               assign ? "assigned" : "revoked", parts ? parts->cnt : 0,
               lost ? " (assignment lost)" : "", coop ? "cooperative" : "eager", t->nassigned);
    if (e != NULL)
        rd_kafka_error_destroy(e);
}

void cm__kc_on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    ktopic_t *t = opaque;
    int32_t partition = -1;

    (void)rk;
    if (t->k->destroying)
        return;
    for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && offsets != NULL && i < offsets->cnt; i++)
        if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            err = offsets->elems[i].err;
            partition = offsets->elems[i].partition;
        }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
        return;
    if (partition >= 0)
        cm_log(CM_LOG_WARN, NULL, WHO " %s: commit failed (partition %" PRId32 "): %s", t->name,
               partition, rd_kafka_err2str(err));
    else
        cm_log(CM_LOG_WARN, NULL, WHO " %s: commit failed: %s", t->name, rd_kafka_err2str(err));
    cm__consumer_commit_failed(&t->k->base);
}

void cm__kc_on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    ktopic_t *t = opaque;

    if (t->k->destroying)
        return;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char why[160];
        rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof(why));
        t->fatal = true;
        snprintf(t->fatal_reason, sizeof(t->fatal_reason), "%.64s: %s", rd_kafka_err2name(orig),
                 why);
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: fatal error: %s", t->name, t->fatal_reason);
        return;
    }
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        cm__kc_set_conn(t, false, "all brokers are down");
    cm_log(CM_LOG_WARN, NULL, WHO " %s: %s: %s", t->name, rd_kafka_err2name(err), reason);
}

/* Connected: some broker connection UP and the group coordinator "up"
 * (cgrp.state); joined once cgrp.join_state is "steady" (the rebalance
 * callback usually says so first). */
/* Per partition of t's topic, for the lag gauges: assigned here, its
 * consumer_lag (the high watermark less the group's committed offset; -1
 * while unknown: left as it was); assigned elsewhere, 0, so that a
 * partition's owner is the only writer reporting it and the fleet's
 * max by partition is the group's lag (docs/operations.md).
 * librdkafka's internal partition -1 is skipped. */
static void note_lag(ktopic_t *t, cm_json_t root)
{
    cm_json_t parts = cm_json_get(cm_json_get(cm_json_get(root, "topics"), t->name), "partitions");
    cm_json_iter_t it = cm_json_iter(parts);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        int64_t p, lag;
        if (cm_json_as_int64(cm_json_get(v, "partition"), &p) != 0 || p < 0 || p > INT32_MAX)
            continue;
        if (!cm__kc_is_assigned(t, (int32_t)p))
            cm__consumer_note_lag(&t->k->base, t->name, (int32_t)p, 0);
        else if (cm_json_as_int64(cm_json_get(v, "consumer_lag"), &lag) == 0 && lag >= 0)
            cm__consumer_note_lag(&t->k->base, t->name, (int32_t)p, (double)lag);
    }
}

int cm__kc_on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    ktopic_t *t = opaque;
    cm_json_doc_t *doc = NULL;

    (void)rk;
    if (t->k->destroying || cm_json_parse(json, len, NULL, &doc, NULL) != 0)
        return 0;
    cm_json_t root = cm_json_root(doc);
    bool any_up = cm__kafka_stats_broker_up(root);
    cm_json_t g = cm_json_get(root, "cgrp");
    bool coord_up = cm_json_str_eq(cm_json_get(g, "state"), CM_SLICE_LIT("up"));
    bool steady = cm_json_str_eq(cm_json_get(g, "join_state"), CM_SLICE_LIT("steady"));
    note_lag(t, root);
    cm_json_doc_free(doc);
    if (coord_up && steady)
        t->joined = true;
    if (!any_up)
        cm__kc_set_conn(t, false, "no broker connection is up");
    else if (!coord_up)
        cm__kc_set_conn(t, false, "the group coordinator is not reachable");
    else
        cm__kc_set_conn(t, true, NULL);
    return 0; /* librdkafka frees json */
}

void cm__kc_on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    ktopic_t *t = rd_kafka_opaque(rk);

    /* Queued logs only (log.queue=true), except while destroying, from
     * librdkafka's threads: cm_log is not thread-safe. */
    if (t == NULL || t->k->destroying) {
        fprintf(stderr, "librdkafka %s: %s\n", fac, buf);
        return;
    }
    cm_log(cm__kafka_log_level(level), NULL, WHO " %s: %s: %s", t->name, fac, buf);
}

void cm__kc_log_consumer_error(ktopic_t *t, const rd_kafka_message_t *m)
{
    uint64_t skipped;
    if (!cm_log_limit(&t->error_log, uv_now(t->k->base.loop), ERROR_LOG_INTERVAL_MS, &skipped))
        return;
    cm_log(CM_LOG_WARN, NULL, WHO " %s: %s: %s (%" PRIu64 " more since the last line)", t->name,
           rd_kafka_err2name(m->err), rd_kafka_message_errstr(m), skipped);
}
