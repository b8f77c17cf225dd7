/*
 * persons.h - person and group state for one batch, and PostHog's rules
 * applied to it event by event: a first event makes a person, $set /
 * $set_once / $unset change it, $identify / $create_alias /
 * $merge_dangerously join two distinct ids into one person, $groupidentify
 * sets group properties. Pure: persons_store.c loads the state from the
 * persons store, this file changes it in memory, persons_store.c writes
 * back what changed, in the same transaction (docs/persons.md).
 */
#ifndef WR_PERSONS_H
#define WR_PERSONS_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/strset.h"
#include "cm/uuid.h"
#include "event.h"
#include "props.h"
#include "props_memo.h"

/* PostHog's namespace for person uuids: v5 of "<project>:<distinct id>". */
#define WR_PERSON_UUID_NAMESPACE "932979b4-65c3-4424-8467-0b66ec27bc22"

typedef struct wr_person wr_person_t;
struct wr_person {
    char uuid[CM_UUID_STR_LEN + 1];
    long long project_id;
    wr_props_t props;
    bool is_identified;
    long long version; /* after this batch's change, when dirty */
    int64_t created_at_ms;
    bool is_new;  /* not in the store yet */
    bool dirty;   /* changed in this batch */
    bool deleted; /* merged into another one */
    bool resend;  /* unchanged, but its copies are written again (see wr_persons_apply) */
    char **dids;  /* every distinct id pointing at it */
    size_t ndids, cap;
};

typedef struct {
    char *distinct_id;
    long long project_id;
    wr_person_t *person;
    long long version;
    bool is_new, moved, resend;
} wr_pdi_t;

typedef struct {
    long long project_id;
    char *type, *key;
    wr_props_t props;
    long long version;
    int64_t created_at_ms;
    bool is_new, dirty, resend;
} wr_group_t;

typedef struct {
    cm_strset_t *pdis;    /* "<project>:<distinct id>" -> wr_pdi_t */
    cm_strset_t *groups;  /* "<project>:<type>:<key>" -> wr_group_t */
    cm_strset_t *by_uuid; /* person uuid -> wr_person_t */
    wr_person_t **persons;
    size_t npersons, cap;
    wr_pdi_t **pdi_list; /* in the order they were added */
    size_t npdis, pdi_cap;
    wr_group_t **group_list;
    size_t ngroups, group_cap;
    unsigned long changes; /* grows with every change an event makes */
    cm_arena_t arena;      /* the persons' and groups' property bytes, freed with the state */
    wr_props_memo_t *memo; /* borrowed, may be NULL: stored persons already parsed */
} wr_state_t;

void wr_state_init(wr_state_t *st);
void wr_state_free(wr_state_t *st);

/* Loading what the store holds. */
/* times: the properties' change times (wr_props_write_times), may be empty. */
wr_person_t *wr_state_person(wr_state_t *st, long long project_id, const char *uuid,
                             cm_slice_t properties, cm_slice_t times, bool is_identified,
                             long long version, int64_t created_at_ms);
/* person must have been added first (by uuid); false when it was not. */
bool wr_state_distinct_id(wr_state_t *st, long long project_id, const char *distinct_id,
                          const char *person_uuid, long long version);
void wr_state_group(wr_state_t *st, long long project_id, const char *type, const char *key,
                    cm_slice_t properties, cm_slice_t times, long long version,
                    int64_t created_at_ms);

/* Applies one event (ev->project_id set). Fills ev->person_id,
 * ev->person_properties and ev->warning. seen: the event was processed
 * before (a redelivery): it only looks its person up, and marks that
 * person, its distinct ids and its group `resend`: the writer that
 * processed it may have died before its copies reached the event store
 * and Redis, so they are written again from the stored state. */
void wr_persons_apply(wr_state_t *st, wr_event_t *ev, bool seen);

#endif
