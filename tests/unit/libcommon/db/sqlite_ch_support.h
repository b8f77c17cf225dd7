/*
 * sqlite_ch_support.h - a SQLite connection in memory with
 * cm_db_conn_add_clickhouse_fns's functions, and one-value queries, for
 * the unit tests of db_sqlite_ch.c, db_sqlite_url.c and db_sqlite_re.c.
 */
#ifndef TESTS_SQLITE_CH_SUPPORT_H
#define TESTS_SQLITE_CH_SUPPORT_H

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cm/db.h"

static sqlite3 *ch_open(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(cm_db_conn_add_clickhouse_fns((cm_db_conn_t *)db), 0);
    return db;
}

/* The first column of the first row of sql as text ("NULL" for a SQL
 * NULL, "error: ..." when it fails), in out. */
static const char *ch_one(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(out, cap, "error: %s", sqlite3_errmsg(db));
        return out;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL)
        snprintf(out, cap, "NULL");
    else if (rc == SQLITE_ROW)
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    else
        snprintf(out, cap, "error: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return out;
}

#define EXPECT_ONE(db, sql, want)                                                                  \
    do {                                                                                           \
        char got_[512];                                                                            \
        ch_one((db), (sql), got_, sizeof(got_));                                                   \
        if (strcmp(got_, (want)) != 0)                                                             \
            fail_msg("%s\n  want: %s\n  got:  %s", (sql), (want), got_);                           \
    } while (0)

#endif
