/*
 * persons_store.h - the persons store (SQLite or PostgreSQL through cm_db):
 * the tables, loading a batch's state inside a strict transaction, and
 * writing back what persons.c changed in the same transaction. The events
 * whose person work was done are recorded there too (events_seen), so a
 * redelivered message never applies its $set twice (per project: the
 * same uuid in two projects is two events).
 */
#ifndef WR_PERSONS_STORE_H
#define WR_PERSONS_STORE_H

#include <stddef.h>

#include "cm/db.h"
#include "event.h"
#include "persons.h"

extern const cm_db_migration_t wr_persons_migrations[];
extern const size_t wr_persons_nmigrations;

/* Statements a load needs, and where their answers are. */
typedef struct {
    cm_db_stmt_t *stmts;
    size_t n, cap;
    cm_buf_t text;
    size_t *offsets; /* parameters, as offsets into text until finished */
    size_t nparams, pcap;
    const char **params;
    /* which table answers what */
    size_t seen_table;
    size_t *person_tables; /* one per project */
    long long *projects;
    size_t nprojects;
    size_t first_group_table;
} wr_stmts_t;

void wr_stmts_free(wr_stmts_t *s);

/* Every statement that loads the state the events need (their projects'
 * distinct ids, the persons behind them, the groups, the seen uuids). */
void wr_persons_load_stmts(cm_db_dialect_t d, wr_event_t *events, size_t n, wr_stmts_t *out);
/* Fills st from a load's result; seen[i] tells whether events[i] was
 * processed before. */
void wr_persons_load_result(const cm_db_res_t *res, const wr_stmts_t *s, wr_event_t *events,
                            size_t n, wr_state_t *st, bool *seen);
/* The writes for what st changed, and the events to record as seen. */
void wr_persons_save_stmts(cm_db_dialect_t d, const wr_state_t *st, const wr_event_t *events,
                           size_t n, const bool *seen, int64_t now_ms, wr_stmts_t *out);
/* An event's identity in events_seen: "<project id>:<uuid>". A uuid is
 * unique within its project only: project B's event must not pass for
 * project A's event with the same uuid (whose $set would be skipped).
 * Project 0 stands for records made before the table had the project. */
#define WR_SEEN_KEY_MAX 160
cm_slice_t wr_seen_key(long long project_id, const char *uuid, char out[WR_SEEN_KEY_MAX]);
/* Deletes seen-event records older than before_ms. */
void wr_persons_prune_stmt(int64_t before_ms, wr_stmts_t *out);
/* Deletes a person and its distinct ids (an erasure request), one job. */
void wr_persons_erase_stmts(long long project_id, const char *person_uuid, wr_stmts_t *out);

#endif
