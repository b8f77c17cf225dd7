/*
 * event.h - one queue message made into an event the writer can store:
 * checked against proto/captured_event.schema.json, its properties
 * normalised the way PostHog's ingestion does (docs/persons.md), its person
 * updates pulled out. Pure: no I/O.
 */
#ifndef WR_EVENT_H
#define WR_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/uuid.h"
#include "props.h"

typedef enum {
    WR_EVENT_OK = 0,
    WR_EVENT_DEAD, /* fails the message schema: to the dead-letter queue */
    WR_EVENT_DROP, /* valid, but not stored (counted): see reason */
} wr_fate_t;

typedef enum {
    WR_KIND_PLAIN = 0,
    WR_KIND_IDENTIFY,          /* $identify with $anon_distinct_id */
    WR_KIND_ALIAS,             /* $create_alias with alias */
    WR_KIND_MERGE_DANGEROUSLY, /* $merge_dangerously with alias */
    WR_KIND_GROUP_IDENTIFY,    /* $groupidentify with $group_type and $group_key */
} wr_kind_t;

typedef struct {
    wr_fate_t fate;
    const char *reason; /* static: why DEAD or DROP */
    char uuid[CM_UUID_STR_LEN + 1];
    char *token;
    char *distinct_id;
    char *event;
    char *session_id; /* "" when none */
    int64_t timestamp_ms;
    int64_t now_ms;
    bool process_person;
    wr_kind_t kind;
    char *other_id; /* the $anon_distinct_id or alias (merges), else NULL */
    char *group_type, *group_key;
    wr_props_t props;    /* the event's properties as they will be stored */
    wr_props_t set;      /* person updates: $set (with the automatic ones) */
    wr_props_t set_once; /* $set_once (with the $initial_ ones) */
    wr_props_t unset;    /* $unset: keys only (values "null") */
    wr_props_t group_set;
    long long project_id; /* 0 until the token is resolved */
    /* Set by persons.c: the person the event belongs to, as stored on it. */
    char person_id[CM_UUID_STR_LEN + 1];
    char *person_properties; /* JSON object text */
    const char *warning;     /* static: an ingestion warning (a refused merge) */
    bool changed;            /* it changed a person or a group (then it is recorded as seen) */
} wr_event_t;

/* Parses one message's value. Always fills ev (free it with wr_event_free):
 * check ev->fate. max_bytes: a larger message is dead ("too large"). */
void wr_event_parse(wr_event_t *ev, const char *value, size_t len, size_t max_bytes);
/* The same with the batch's arena: the event's property maps keep their
 * bytes there and borrow the decoded data document's values (one copy of
 * them, no allocation per property). arena must outlive the event. */
void wr_event_parse_in(wr_event_t *ev, cm_arena_t *arena, const char *value, size_t len,
                       size_t max_bytes);
void wr_event_free(wr_event_t *ev);
/* The stored properties as JSON text. */
void wr_event_properties_json(const wr_event_t *ev, cm_buf_t *out);

/* Whether PostHog refuses to merge a person through this distinct id. */
bool wr_distinct_id_illegal(const char *id);

#endif
