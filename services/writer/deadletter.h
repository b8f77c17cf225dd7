/*
 * deadletter.h - messages that fail proto/captured_event.schema.json go to
 * the dead-letter stream / topic (DEAD_LETTER_TOPIC) with their reason, so
 * they never block the partition and can be looked at later. The message
 * keeps its key and value (cut to DEAD_LETTER_MAX_VALUE bytes, with a
 * `truncated` header); headers `error` (the reason), `source_topic`,
 * `source_id` and `writer_time` (epoch ms) say what happened.
 */
#ifndef WR_DEADLETTER_H
#define WR_DEADLETTER_H

#include <stddef.h>

#include "cm/queue_consumer.h"
#include "event.h"
#include "writer.h"

#define DEAD_LETTER_MAX_VALUE (512 * 1024)

/* Produces one dead letter per event whose fate is WR_EVENT_DEAD (msgs[i]
 * is events[i]'s message); done(status) once every one is acknowledged (0)
 * or one failed. Runs done later even when there is nothing to send. */
void wr_dead_letters(wr_ctx_t *ctx, const cm_consumer_batch_t *b, const wr_event_t *events,
                     size_t n, void (*done)(int status, void *ud), void *ud);

#endif
