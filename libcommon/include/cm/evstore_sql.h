/*
 * evstore_sql.h - the SQL dialects of the event store and their string
 * literals, without the store itself: pure, so that the api's SQL writers
 * (services/api/query/, which may not include cm/event_store.h) are told
 * the dialect as a value and write literals for it.
 *
 *   cm_evstore_dialect(es)                  (cm/event_store.h) which one a store reads
 *   cm_evstore_sql_quote(d, &buf, slice)    a string literal of that dialect
 */
#ifndef CM_EVSTORE_SQL_H
#define CM_EVSTORE_SQL_H

#include "cm/buf.h"

/* The SQL a query for a store is printed in: the one answer to "which
 * dialect". ClickHouse from 21 on reads JSONExtract, CTEs, window
 * functions and several JOINs in one SELECT; older servers (Debian's
 * 18.16), and any server until its version is known, get the SQL 18.16
 * reads, which current ClickHouse reads too. */
typedef enum {
    CM_EVSTORE_SQL_SQLITE,
    CM_EVSTORE_SQL_CLICKHOUSE_1816,
    CM_EVSTORE_SQL_CLICKHOUSE_MODERN
} cm_evstore_dialect_t;

/* Appends s as a string literal of dialect d, quotes included. */
void cm_evstore_sql_quote(cm_evstore_dialect_t d, cm_buf_t *out, cm_slice_t s);

#endif
