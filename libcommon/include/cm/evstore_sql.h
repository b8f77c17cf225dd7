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
 * dialect". ClickHouse from 21.8 on reads JSONExtract, CTEs, window
 * functions and several JOINs in one SELECT (CLICKHOUSE_MODERN: 21.8 to
 * 23.x, the old analyzer); 24.x and any later major get the new
 * analyzer's rules (CLICKHOUSE_24); older servers (Debian's 18.16), and
 * any server until its version is known, get the SQL 18.16 reads, which
 * current ClickHouse reads too. */
typedef enum {
    CM_EVSTORE_SQL_SQLITE,
    CM_EVSTORE_SQL_CLICKHOUSE_1816,
    CM_EVSTORE_SQL_CLICKHOUSE_MODERN,
    CM_EVSTORE_SQL_CLICKHOUSE_24
} cm_evstore_dialect_t;

/* The dialect of a ClickHouse server by what its version() answered
 * ("21.8.15.7"; "" while not known): see above. */
cm_evstore_dialect_t cm_evstore_sql_clickhouse_dialect(const char *version);

/* The settings (URL parameters, "&name=value...", maybe "") a read on a
 * server of that version needs so that it runs its dialect's SQL as the
 * newer servers do: 21.8's window functions are behind
 * allow_experimental_window_functions (gone in 21.9, where they are
 * general), and 23.4 to 23.x read formatDateTime's %M as the month's name
 * unless formatdatetime_parsedatetime_m_is_month_name = 0 (CLICKHOUSE_MODERN
 * prints the minute as %M, which 21.8 to 23.1 read). */
const char *cm_evstore_sql_clickhouse_settings(const char *version);

/* Appends s as a string literal of dialect d, quotes included. */
void cm_evstore_sql_quote(cm_evstore_dialect_t d, cm_buf_t *out, cm_slice_t s);

#endif
