/*
 * db_sqlite_ch.h - the parts of db_sqlite_ch.c's ClickHouse functions
 * kept in files of their own (db_sqlite_url.c, db_sqlite_re.c, db_sqlite_text.c,
 * db_sqlite_cityhash.c, db_sqlite_week.c). Not part of the public API.
 */
#ifndef CM_DB_SQLITE_CH_H
#define CM_DB_SQLITE_CH_H

#include <sqlite3.h>

/* SQLite's order of two non-NULL values as ClickHouse compares them:
 * numbers by value, before text; text and blobs byte by byte. */
int cm__sqlite_value_cmp(sqlite3_value *a, sqlite3_value *b);

/* db_sqlite_url.c: cm_domain, cm_path, cm_url_param, cm_cut_query. */
int cm__sqlite_add_url_fns(sqlite3 *db);

/* db_sqlite_re.c: cm_match, cm_extract, cm_replace_one, cm_replace_all. */
int cm__sqlite_add_re_fns(sqlite3 *db);

/* db_sqlite_text.c: cm_lower_utf8, cm_upper_utf8, cm_encode_url. */
int cm__sqlite_add_text_fns(sqlite3 *db);

/* db_sqlite_cityhash.c: cm_city_hash64 (ClickHouse's cityHash64 of strings). */
int cm__sqlite_add_city_hash(sqlite3 *db);

/* db_sqlite_week.c: cm_to_week (ClickHouse's toWeek, modes 0 to 7). */
int cm__sqlite_add_week(sqlite3 *db);

#endif
