/*
 * queue_consumer_kafka.c - the Kafka backend of the queue consumer
 * (queue_consumer.h; batches, delivery and the close sequence are
 * queue_consumer.c's). librdkafka 2.0.
 *
 * One librdkafka consumer (rd_kafka_t) per topic of opts.topics, all in the
 * group opts.group (a group may hold members with different
 * subscriptions), each subscribed to its one topic. Separate consumers
 * give each topic its own queue, so a batch is taken from one topic at a
 * time and the topics' priority is simply the order their queues are
 * looked at.
 *
 * Threads. librdkafka works on its own threads and hands everything over
 * as ops on two queues per consumer:
 *   - the consumer queue: messages, consumer errors and rebalances;
 *   - the main queue: logs (log.queue=true), errors, statistics and the
 *     results of our commits (rd_kafka_commit_queue() names it).
 * Every queue of every topic writes to one eventfd when an op arrives
 * while it is empty (kafka_loop.h); a uv_poll_t watches it. Each wake-up
 * serves the main queues at once (rd_kafka_consume_batch_queue() with a
 * zero timeout, which runs the callbacks), so logs, statistics and commit
 * results never wait. The consumer queues are served only by a fetch, so
 * their callbacks (rebalances) run there, on the loop thread, between
 * deliveries. With a depth of one (no batch held while fetching) a
 * rebalance never revokes the partitions of a batch the caller holds
 * (only a lost assignment can: see Commit). With a deeper consumer it
 * can: see Depth.
 *
 * Fetch (ops->fetch). The topics are tried in priority order; the first
 * whose queue holds messages gives up to max_batch of them, about
 * max_batch_bytes of values at most (taken one by one with
 * rd_kafka_consume_queue(), zero timeout, until the batch is full or the
 * queue empty: see gather() for why not in batches, and for the byte cap)
 * and they are delivered. With nothing anywhere the fetch parks: the next wake-up (or a
 * 100 ms backstop timer, which also notices a close) tries again. A topic
 * holds the next ones back while it is catching up, even though its queue
 * is momentarily empty: it has not joined the group yet, or some partition
 * it was assigned has messages on their way (no fetch response seen since
 * the assignment, or our position below the high watermark of the last
 * response, as after a rewind). So a consumer started on a backlog of both
 * topics takes the main one's first, although the other topic's member
 * may join first or its fetch response come first. A partition holds back
 * for at most 1 s after its assignment or its last message, a topic not
 * joined for at most 10 s after the start, so a stuck one cannot starve
 * the others. Consumer errors are logged (once a second at most) and
 * skipped; partition EOF events are disabled. Messages of a partition
 * revoked while a batch was being gathered are dropped: they were never
 * delivered and their new owner reads them from the committed offset.
 *
 * Commit (ops->commit): per partition of the batch, its highest offset + 1,
 * sent asynchronously; the result comes back on the main queue, where a
 * failure is logged and counted (cm__consumer_commit_failed). An offset is
 * only ever one after a message delivered in the batch the caller just
 * stored, and every earlier message of that partition was stored before
 * (its batches were committed) or is re-read (a retry seeks back, a new
 * owner starts at the committed offset): nothing is skipped. A partition
 * no longer assigned, or an assignment librdkafka reports lost (session
 * timed out), is not committed (counted as a failure): its new owner
 * starts from the last committed offset, so those messages come again,
 * and a stale commit cannot move the new owner's offset backwards.
 *
 * Retry (ops->rewind): each partition of the batch is seeked back to the
 * batch's lowest offset in it (rd_kafka_seek_partitions(), zero timeout:
 * asynchronous). The seek bumps the partition's version at once, so what
 * librdkafka had already prefetched behind the batch is discarded unread
 * and fetched again from the new position. So each partition of the batch
 * delivers its messages again, in order, before any later message of that
 * partition, and lower-priority topics wait for them (the catching-up rule
 * above). Messages of other partitions already prefetched may be delivered
 * in between: Kafka orders messages within a partition only.
 *
 * Rebalance. partition.assignment.strategy is range, an eager protocol:
 * on every rebalance each member gives up all its partitions and starts
 * again from the committed offsets. The cooperative protocol would only
 * move the partitions that must move, but librdkafka 2.0 (Debian's) pauses
 * and resumes a member's partitions during a cooperative rebalance and
 * resumes them past messages it had prefetched and not yet handed over:
 * the durability test saw 294 of 20,000 messages never delivered, with the
 * group's offsets committed past them, when a writer's historical-topic
 * member joined while its main-topic member had a backlog. Eager costs a
 * pause of the group per rebalance and re-reads what was in flight (the
 * store drops the copies); it never skips. The callback follows the
 * protocol librdkafka reports, so cooperative-sticky given in `extra` still
 * works. A jump forward in a partition's offsets (the symptom) is counted
 * (queue_consumer_offset_gaps_total) and logged.
 *
 * Depth (opts.depth above one). A fetch while the caller holds a batch
 * may run a rebalance that revokes that batch's partitions. Nothing is
 * lost: the batch's commit skips the partitions this member no longer
 * holds (Commit), so their next owner (perhaps this member again, from
 * the committed offset) reads those messages again and the store drops
 * the copies. What it costs is those copies, on a rebalance only. A
 * batch handed back seeks its partitions back to its first offsets; the
 * newer batch is handed back first, so where both hold a partition the
 * older batch's offset is the one that stays. A fetch parked across a
 * hand-back delivers messages read after the seek (the seek discards what
 * was prefetched before it at once), and the common code rewinds and
 * drops that batch anyway.
 *
 * Readiness (ops->ready): every topic's consumer has joined the group
 * (received its first assignment, possibly empty: a member may get no
 * partition when the group has more members than partitions) and the last
 * news says it is connected: the statistics (every second) list a broker
 * connection UP and the group coordinator "up", with no _ALL_BROKERS_DOWN
 * error since. So a new consumer is ready once the group is joined, not
 * ready within a second of the broker going away, and ready again within a
 * second of it coming back.
 *
 * Close (ops->shutdown). rd_kafka_consumer_close_queue() closes each
 * consumer in the background (revoke, commits in flight, leave the
 * group) and forwards the consumer queue to the main queue, which the loop
 * keeps serving (the rebalance callbacks run on the loop thread as ever)
 * until rd_kafka_consumer_closed(). A thread-pool close would run those
 * callbacks on another thread, racing the loop's state. Then
 * rd_kafka_destroy(), which joins librdkafka's threads, runs on the thread
 * pool; callbacks librdkafka might still make meanwhile see `destroying`
 * and touch nothing. A close not done within CLOSE_DEADLINE_MS (a group
 * stuck waiting on a coordinator, or librdkafka 2.0's close racing a
 * rebalance: queue_consumer_kafka_group.c) is abandoned with an error
 * line: the handles are left to the process's exit instead of an
 * rd_kafka_destroy() that would wait on the same state. Nothing is lost:
 * offsets are committed only for stored batches, so the group's next
 * owner reads again what was not committed.
 *
 * Settings (then opts `extra`, applied last, may override any):
 *   group.id                       opts.group
 *   enable.auto.commit             false: offsets are committed in cm_consumer_commit() only
 *   enable.auto.offset.store       false: nothing is stored behind our back
 *   auto.offset.reset              earliest: a new group reads what was queued before it existed
 *   partition.assignment.strategy  range: eager (see Rebalance)
 *   session.timeout.ms             10000: a dead member's partitions move after 10 s
 *   heartbeat.interval.ms          1000: a member learns of a rebalance within 1 s
 *   enable.partition.eof           false
 *   socket.nagle.disable           true, as the producer (proto/queue.md)
 *   reconnect.backoff.max.ms       1000: back within a second after an outage
 *   statistics.interval.ms         1000: readiness
 *   log.queue                      true: logs on the loop thread
 * max.poll.interval.ms stays librdkafka's (300 s). In librdkafka 2.0,
 * serving the main queue (every statistics tick) counts as polling, so
 * only a loop stuck that long leaves the group; from 2.1 only the consumer
 * queue counts, so a topic not fetched for that long (a lower-priority one
 * behind a longer backlog of the first, or a batch held that long) leaves
 * the group and joins again at its next fetch: a rebalance, nothing lost.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "kafka_loop.h"
#include "queue_consumer_kafka_internal.h"

/* ---- fetch ---------------------------------------------------------------------- */

/* Serves a main queue: the callbacks run; a message returned (an error,
 * or, while closing, one forwarded from the consumer queue) is dropped. */
static void serve_main(ktopic_t *t)
{
    rd_kafka_message_t *ms[SERVE_CHUNK];
    for (int round = 0; round < 64; round++) {
        ssize_t n = rd_kafka_consume_batch_queue(t->mq, 0, ms, SERVE_CHUNK);
        for (ssize_t i = 0; i < n; i++) {
            if (ms[i]->err)
                cm__kc_log_consumer_error(t, ms[i]);
            rd_kafka_message_destroy(ms[i]);
        }
        /* Fewer than asked and nothing left: served. (A TERMINATE op ends
         * a call early, with ops left behind.) */
        if (n < SERVE_CHUNK && rd_kafka_queue_length(t->mq) == 0)
            break;
    }
}

static void serve_mains(kc_t *k)
{
    for (size_t i = 0; i < k->nt; i++)
        serve_main(&k->t[i]);
}

static void drop_carry(ktopic_t *t)
{
    if (t->carry != NULL)
        rd_kafka_message_destroy(t->carry);
    t->carry = NULL;
}

/* Drops gathered messages of partitions not assigned (any more). */
static void prune(kc_t *k, ktopic_t *t)
{
    size_t w = 0, dropped = 0;
    if (t->carry != NULL && !cm__kc_is_assigned(t, t->carry->partition)) {
        drop_carry(t);
        dropped++;
    }
    for (size_t i = 0; i < k->nmsgs; i++) {
        rd_kafka_message_t *m = k->msgs[i];
        if (cm__kc_is_assigned(t, m->partition)) {
            k->msgs[w++] = m;
        } else {
            rd_kafka_message_destroy(m);
            dropped++;
        }
    }
    k->nmsgs = w;
    if (dropped > 0)
        cm_log(CM_LOG_DEBUG, NULL, WHO " %s: %zu message(s) of revoked partitions dropped", t->name,
               dropped);
}

/*
 * Takes t's queued messages into k->msgs, up to max_batch messages and
 * about max_batch_bytes of values: the message that would pass the byte
 * cap is kept (t->carry) as the first of the next batch, and one message
 * always goes, however big.
 * One message per call: librdkafka 2.0's batch call
 * (rd_kafka_consume_batch_queue) may drop messages it had already taken
 * from its result, after moving the partition's position past them, when a
 * pause, resume or seek barrier arrives during the call, and a cooperative
 * rebalance pauses and resumes every assigned partition from librdkafka's
 * own thread: those messages would be skipped (its 2.0 "known issue",
 * fixed in 2.1). A single message is never taken back.
 */
/* A message past the one expected in its partition (since its assignment
 * or the last rewind) means messages were skipped before us: counted and
 * logged, the symptom of librdkafka 2.0's cooperative-rebalance bug (see
 * Rebalance). Offsets of a topic no transactional producer writes have no
 * holes, so this never fires on ours. */
static void note_offset(kc_t *k, ktopic_t *t, const rd_kafka_message_t *m)
{
    kpart_t *s = cm__kc_part_of(t, m->partition, false);
    if (s == NULL)
        return;
    if (s->seen >= 0 && m->offset > s->seen) {
        cm__consumer_offset_gap(&k->base);
        cm_log(CM_LOG_ERROR, NULL,
               WHO " %s: partition %" PRId32 " jumped from offset %" PRId64 " to %" PRId64
                   ": messages skipped",
               t->name, m->partition, s->seen, m->offset);
    }
    s->seen = m->offset + 1;
}

static void gather(kc_t *k, ktopic_t *t)
{
    size_t max = k->base.max_batch, cap = k->base.max_batch_bytes, bytes = 0;
    if (t->carry != NULL) {
        k->msgs[k->nmsgs++] = t->carry;
        bytes = t->carry->len;
        t->carry = NULL;
    }
    while (k->nmsgs < max) {
        rd_kafka_message_t *m = rd_kafka_consume_queue(t->cq, 0);
        if (m == NULL)
            break; /* empty (or a callback yielded: the next fetch goes on) */
        if (m->err) {
            cm__kc_log_consumer_error(t, m);
            rd_kafka_message_destroy(m);
            continue;
        }
        note_offset(k, t, m);
        if (k->nmsgs > 0 && bytes + m->len > cap) {
            t->carry = m; /* one message always goes: the next batch's first */
            break;
        }
        bytes += m->len;
        k->msgs[k->nmsgs++] = m;
    }
    /* A rebalance served meanwhile may have revoked partitions whose
     * messages were taken before it. */
    prune(k, t);
    uint64_t now = uv_now(k->base.loop);
    for (size_t i = 0; i <= k->nmsgs; i++) {
        const rd_kafka_message_t *m = i < k->nmsgs ? k->msgs[i] : t->carry;
        if (m == NULL)
            break;
        kpart_t *s = cm__kc_part_of(t, m->partition, false);
        s->next = m->offset + 1;
        s->since = now;
    }
}

/* librdkafka tells a null key or header value apart from an empty one; the
 * queue has no nulls. */
static cm_slice_t slice_of(const void *p, size_t len)
{
    return p != NULL ? (cm_slice_t){p, len} : CM_SLICE_LIT("");
}

/* The gathered messages as a batch; they are released. */
static cm_consumer_batch_t *build_batch(kc_t *k, ktopic_t *t)
{
    cm_consumer_batch_t *b = cm__consumer_batch_new(&k->base, t->index);
    cm_queue_header_t on_stack[HEADERS_ON_STACK];

    for (size_t i = 0; i < k->nmsgs; i++) {
        rd_kafka_message_t *m = k->msgs[i];
        char id[48];
        snprintf(id, sizeof(id), "%" PRId32 ":%" PRId64, m->partition, m->offset);
        rd_kafka_headers_t *hdrs = NULL;
        size_t nh = 0;
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR)
            nh = rd_kafka_header_cnt(hdrs);
        cm_queue_header_t *hs = nh <= HEADERS_ON_STACK ? on_stack : cm_xmalloc(nh * sizeof(*hs));
        for (size_t j = 0; j < nh; j++) {
            const char *name = "";
            const void *value = NULL;
            size_t size = 0;
            if (rd_kafka_header_get_all(hdrs, j, &name, &value, &size) != 0)
                name = "";
            hs[j] = (cm_queue_header_t){cm_slice_from_cstr(name), slice_of(value, size)};
        }
        cm__consumer_batch_add(b, id, slice_of(m->key, m->key_len), slice_of(m->payload, m->len),
                               hs, nh, false);
        if (hs != on_stack)
            free(hs);
        rd_kafka_message_destroy(m);
    }
    k->nmsgs = 0;
    return b;
}

/* True while t has not joined its group yet (JOIN_WAIT_MS at most), or
 * some partition assigned to it may have messages on their way: no fetch
 * response yet, or our position below its high watermark (each for
 * CATCH_UP_MS at most after its assignment or its last message). */
static bool catching_up(ktopic_t *t, uint64_t now)
{
    if (!t->joined)
        return now - t->created < JOIN_WAIT_MS;
    for (size_t p = 0; p < t->nparts; p++) {
        const kpart_t *s = &t->parts[p];
        if (!s->assigned || now - s->since >= CATCH_UP_MS)
            continue;
        int64_t lo = -1, hi = -1;
        if (rd_kafka_get_watermark_offsets(t->rk, t->name, (int32_t)p, &lo, &hi) !=
                RD_KAFKA_RESP_ERR_NO_ERROR ||
            hi < 0)
            return true;
        /* Nothing taken yet: a partition that is not empty may still be
         * delivering from wherever the group's offset left it. */
        if (s->next >= 0 ? s->next < hi : lo < 0 || hi > lo)
            return true;
    }
    return false;
}

static void on_backstop(uv_timer_t *h);

static void try_fetch(kc_t *k)
{
    uint64_t now = uv_now(k->base.loop);
    for (size_t i = 0; i < k->nt; i++) {
        ktopic_t *t = &k->t[i];
        gather(k, t);
        if (k->nmsgs > 0) {
            cm__consumer_deliver(&k->base, build_batch(k, t));
            return;
        }
        if (catching_up(t, now))
            break;
    }
    k->parked = true;
    uv_timer_start(&k->backstop, on_backstop, BACKSTOP_MS, 0);
}

/* A parked fetch tries again; a close ends it. */
static void unpark(kc_t *k)
{
    if (!k->parked)
        return;
    k->parked = false;
    uv_timer_stop(&k->backstop);
    if (k->base.closing)
        cm__consumer_idle(&k->base, 0);
    else
        try_fetch(k);
}

static void kc_fetch(cm_consumer_t *c)
{
    try_fetch((kc_t *)c);
}

/* ---- commit, rewind, ready ------------------------------------------------------ */

static void kc_commit(cm_consumer_t *c, cm_consumer_batch_t *b)
{
    kc_t *k = (kc_t *)c;
    ktopic_t *t = &k->t[b->source];
    span_t *s;
    size_t n = cm__kc_batch_spans(b, &s);
    bool lost = rd_kafka_assignment_lost(t->rk) != 0;
    size_t skipped = 0;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);

    for (size_t j = 0; j < n; j++) {
        if (lost || !cm__kc_is_assigned(t, s[j].partition))
            skipped++;
        else
            rd_kafka_topic_partition_list_add(l, t->name, s[j].partition)->offset = s[j].hi + 1;
    }
    free(s);
    if (skipped > 0) {
        cm_log(CM_LOG_WARN, NULL,
               WHO " %s: %zu partition(s) of a batch no longer assigned%s: not committed, their "
                   "messages come again",
               t->name, skipped, lost ? " (assignment lost)" : "");
        cm__consumer_commit_failed(c);
    }
    if (l->cnt > 0) {
        rd_kafka_resp_err_t err = rd_kafka_commit_queue(t->rk, l, t->mq, cm__kc_on_commit, t);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            cm_log(CM_LOG_WARN, NULL, WHO " %s: commit: %s", t->name, rd_kafka_err2str(err));
            cm__consumer_commit_failed(c);
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
}

static void kc_rewind(cm_consumer_t *c, cm_consumer_batch_t *b)
{
    kc_t *k = (kc_t *)c;
    ktopic_t *t = &k->t[b->source];
    span_t *s;
    size_t n = cm__kc_batch_spans(b, &s);
    uint64_t now = uv_now(c->loop);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);

    /* A partition no longer assigned is read again by its new owner. */
    for (size_t j = 0; j < n; j++) {
        kpart_t *p =
            cm__kc_is_assigned(t, s[j].partition) ? cm__kc_part_of(t, s[j].partition, false) : NULL;
        if (p == NULL)
            continue;
        rd_kafka_topic_partition_list_add(l, t->name, s[j].partition)->offset = s[j].lo;
        p->next = s[j].lo;
        p->seen = s[j].lo;
        p->since = now;
        if (t->carry != NULL && t->carry->partition == s[j].partition)
            drop_carry(t); /* it follows the batch there: fetched again */
    }
    free(s);
    rd_kafka_error_t *e = l->cnt > 0 ? rd_kafka_seek_partitions(t->rk, l, 0) : NULL;
    if (e != NULL) {
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: seek: %s", t->name, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
    for (int i = 0; i < l->cnt; i++)
        if (l->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR &&
            l->elems[i].err != RD_KAFKA_RESP_ERR__IN_PROGRESS)
            cm_log(CM_LOG_ERROR, NULL, WHO " %s: seek partition %" PRId32 ": %s", t->name,
                   l->elems[i].partition, rd_kafka_err2str(l->elems[i].err));
    rd_kafka_topic_partition_list_destroy(l);
}

static bool kc_ready(cm_consumer_t *c, cm_buf_t *why)
{
    kc_t *k = (kc_t *)c;
    for (size_t i = 0; i < k->nt; i++) {
        const ktopic_t *t = &k->t[i];
        const char *reason = t->fatal      ? t->fatal_reason
                             : !t->conn_up ? t->down_why
                             : !t->joined  ? "the consumer group is not joined yet"
                                           : NULL;
        if (reason != NULL) {
            if (why != NULL)
                cm_buf_appendf(why, "kafka consumer %s: %s%s", t->name,
                               t->fatal ? "fatal error: " : "", reason);
            return false;
        }
    }
    return true;
}

/* ---- shutdown (see the top) ------------------------------------------------------ */

/* Thread pool. */
static void destroy_work(uv_work_t *w)
{
    kc_t *k = w->data;
    for (size_t i = 0; i < k->nt; i++) {
        ktopic_t *t = &k->t[i];
        rd_kafka_queue_destroy(t->cq);
        rd_kafka_queue_destroy(t->mq);
        rd_kafka_destroy_flags(t->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    }
}

static void shutdown_done(void *ud)
{
    kc_t *k = ud;
    cm__consumer_shutdown_done(&k->base);
}

static void after_destroy(uv_work_t *w, int status)
{
    kc_t *k = w->data;
    (void)status; /* never cancelled */
    cm__kafka_close(&k->handles, k->efd, &k->poll, (uv_handle_t *)&k->backstop, shutdown_done, k);
}

static void check_closed(kc_t *k)
{
    if (k->destroy_queued)
        return;
    bool late = uv_now(k->base.loop) - k->closing_since >= CLOSE_DEADLINE_MS;
    for (size_t i = 0; i < k->nt; i++) {
        ktopic_t *t = &k->t[i];
        if (!t->closed && rd_kafka_consumer_closed(t->rk))
            t->closed = true;
        if (!t->closed && !late)
            return;
    }
    if (late) {
        for (size_t i = 0; i < k->nt; i++)
            if (!k->t[i].closed) {
                cm_log(CM_LOG_ERROR, NULL,
                       WHO " %s: close not done after %d ms: abandoned (uncommitted "
                           "batches are read again by the group)",
                       k->t[i].name, CLOSE_DEADLINE_MS);
                k->abandoned = true;
            }
    }
    /* The last results (commits answered before the close ended). */
    serve_mains(k);
    k->destroy_queued = true;
    uv_timer_stop(&k->backstop);
    uv_poll_stop(&k->poll);
    for (size_t i = 0; i < k->nt; i++) {
        cm__kafka_wake_detach(k->t[i].cq);
        cm__kafka_wake_detach(k->t[i].mq);
    }
    k->destroying = true;
    if (k->abandoned) {
        cm__kafka_close(&k->handles, k->efd, &k->poll, (uv_handle_t *)&k->backstop, shutdown_done,
                        k);
        return;
    }
    k->destroy_work.data = k;
    uv_queue_work(k->base.loop, &k->destroy_work, destroy_work, after_destroy);
}

static void kc_shutdown(cm_consumer_t *c)
{
    kc_t *k = (kc_t *)c;

    k->closing = true;
    k->closing_since = uv_now(k->base.loop);
    k->parked = false;
    for (size_t i = 0; i < k->nt; i++) {
        ktopic_t *t = &k->t[i];
        drop_carry(t); /* never delivered: the next owner reads it */
        rd_kafka_error_t *e = rd_kafka_consumer_close_queue(t->rk, t->mq);
        if (e != NULL) {
            cm_log(CM_LOG_WARN, NULL, WHO " %s: close: %s", t->name, rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
            t->closed = true;
        }
    }
    uv_timer_start(&k->backstop, on_backstop, BACKSTOP_MS, BACKSTOP_MS);
}

static void kc_free(cm_consumer_t *c)
{
    kc_t *k = (kc_t *)c;
    for (size_t i = 0; i < k->nt; i++)
        free(k->t[i].parts);
    free(k->t);
    free(k->msgs);
    free(k);
}

/* ---- the loop side ---------------------------------------------------------------- */

static void on_poll(uv_poll_t *h, int status, int events)
{
    kc_t *k = h->data;

    (void)events;
    if (status < 0)
        cm_log(CM_LOG_ERROR, NULL, WHO ": eventfd poll: %s", uv_strerror(status));
    cm__kafka_wake_drain(k->efd);
    serve_mains(k);
    if (k->closing)
        check_closed(k);
    else
        unpark(k);
}

static void on_backstop(uv_timer_t *h)
{
    kc_t *k = h->data;

    serve_mains(k);
    if (k->closing)
        check_closed(k);
    else
        unpark(k);
}

static const cm__consumer_ops_t kafka_ops = {
    .name = "kafka",
    .fetch = kc_fetch,
    .commit = kc_commit,
    .rewind = kc_rewind,
    .ready = kc_ready,
    .shutdown = kc_shutdown,
    .free = kc_free,
};

/* ---- construction --------------------------------------------------------------- */

static int build_conf(rd_kafka_conf_t *conf, const char *group, const cm_consumer_kafka_opts_t *o)
{
    cm__kafka_conf_t kc = cm__kafka_conf_begin(conf, WHO, o->brokers);

    cm__kafka_set(&kc, "group.id", group);
    cm__kafka_set(&kc, "enable.auto.commit", "false");
    cm__kafka_set(&kc, "enable.auto.offset.store", "false");
    cm__kafka_set(&kc, "auto.offset.reset", "earliest");
    cm__kafka_set(&kc, "partition.assignment.strategy", "range");
    cm__kafka_set(&kc, "session.timeout.ms", SESSION_TIMEOUT_MS);
    cm__kafka_set(&kc, "heartbeat.interval.ms", HEARTBEAT_INTERVAL_MS);
    cm__kafka_set(&kc, "enable.partition.eof", "false");
    cm__kafka_set(&kc, "socket.nagle.disable", "true");
    cm__kafka_set(&kc, "reconnect.backoff.max.ms", RECONNECT_BACKOFF_MAX_MS);
    cm__kafka_set(&kc, "statistics.interval.ms", STATS_INTERVAL_MS);
    cm__kafka_set(&kc, "log.queue", "true");
    cm__kafka_set_extra(&kc, o->extra, o->nextra);
    return kc.rc != 0 ? CM_EINVAL : 0;
}

/* The consumer of one topic, subscribed; its queues not yet attached. */
static int open_topic(kc_t *k, ktopic_t *t, const cm_consumer_kafka_opts_t *o)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();

    if (build_conf(conf, k->base.group, o) != 0) {
        rd_kafka_conf_destroy(conf);
        return CM_EINVAL;
    }
    rd_kafka_conf_set_opaque(conf, t);
    rd_kafka_conf_set_rebalance_cb(conf, cm__kc_on_rebalance);
    rd_kafka_conf_set_error_cb(conf, cm__kc_on_error);
    rd_kafka_conf_set_stats_cb(conf, cm__kc_on_stats);
    rd_kafka_conf_set_log_cb(conf, cm__kc_on_log);
    t->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (t->rk == NULL) { /* conf is still ours on failure */
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: cannot create the consumer: %s", t->name, errstr);
        rd_kafka_conf_destroy(conf);
        return CM_EINVAL;
    }
    rd_kafka_set_log_queue(t->rk, NULL); /* logs join the main queue */
    t->mq = rd_kafka_queue_get_main(t->rk);
    t->cq = rd_kafka_queue_get_consumer(t->rk);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, t->name, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(t->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cm_log(CM_LOG_ERROR, NULL, WHO " %s: subscribe: %s", t->name, rd_kafka_err2str(err));
        return CM_EINVAL;
    }
    return 0;
}

/* Startup failures only: blocking is acceptable (nothing was consumed). */
static void destroy_now(kc_t *k)
{
    k->destroying = true;
    for (size_t i = 0; i < k->nt; i++) {
        ktopic_t *t = &k->t[i];
        if (t->cq)
            rd_kafka_queue_destroy(t->cq);
        if (t->mq)
            rd_kafka_queue_destroy(t->mq);
        if (t->rk)
            rd_kafka_destroy_flags(t->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        free(t->parts);
    }
    cm__consumer_fini(&k->base);
    free(k->t);
    free(k->msgs);
    free(k);
}

int cm_consumer_kafka_new(uv_loop_t *loop, const cm_consumer_opts_t *opts,
                          const cm_consumer_kafka_opts_t *kopts, cm_consumer_batch_cb on_batch,
                          void *ud, cm_consumer_t **out)
{
    if (loop == NULL || opts == NULL || kopts == NULL || kopts->brokers == NULL ||
        kopts->brokers[0] == '\0' || (kopts->nextra > 0 && kopts->extra == NULL) || out == NULL) {
        cm_log(CM_LOG_ERROR, NULL, WHO ": loop, options, brokers and out are required");
        return CM_EINVAL;
    }
    kc_t *k = cm_xcalloc(1, sizeof(*k));
    int rc = cm__consumer_init(&k->base, &kafka_ops, loop, opts, on_batch, ud);
    if (rc != 0) {
        free(k);
        return rc;
    }
    k->nt = k->base.ntopics;
    k->t = cm_xcalloc(k->nt, sizeof(*k->t));
    k->msgs = cm_xcalloc(k->base.max_batch, sizeof(*k->msgs));
    for (size_t i = 0; i < k->nt && rc == 0; i++) {
        ktopic_t *t = &k->t[i];
        t->k = k;
        t->index = i;
        t->name = k->base.topics[i];
        t->down_why = "no broker reached yet";
        t->created = uv_now(loop);
        rc = open_topic(k, t, kopts);
    }
    if (rc == 0 && (k->efd = cm__kafka_wake_open(WHO)) < 0)
        rc = CM_EIO;
    if (rc == 0 && (rc = uv_poll_init(loop, &k->poll, k->efd)) != 0) {
        cm_log(CM_LOG_ERROR, NULL, WHO ": uv_poll_init: %s", uv_strerror(rc));
        close(k->efd);
        rc = CM_EIO;
    }
    if (rc != 0) {
        destroy_now(k);
        return rc;
    }
    k->poll.data = k;
    uv_timer_init(loop, &k->backstop);
    k->backstop.data = k;
    uv_poll_start(&k->poll, UV_READABLE, on_poll);
    for (size_t i = 0; i < k->nt; i++) {
        cm__kafka_wake_attach(k->t[i].mq, k->efd, WHO);
        cm__kafka_wake_attach(k->t[i].cq, k->efd, WHO);
    }
    cm__consumer_start(&k->base);
    *out = &k->base;
    return 0;
}
