/*
 * evstore_ch_migrations.c - proto/event_store/clickhouse.sql cut into
 * versioned migrations (see evstore_internal.h, docs/deploy.md).
 *
 * ClickHouse has no transactions, so a migration cannot be applied and
 * recorded atomically. The argument instead: every statement of a
 * migration is idempotent (CREATE ... IF NOT EXISTS and the like), and the
 * row recording version N is inserted only after all of N's statements
 * succeeded. A starter that stops half way, or two starters racing, run a
 * step again, which changes nothing; two version rows for one N collapse in
 * the ReplacingMergeTree, and the applied version is read as max(version),
 * so duplicates never matter.
 *
 * Some statements have no idempotent spelling on 18.16 (ADD COLUMN has no
 * IF NOT EXISTS there): a line "-- done if code N" before one names the
 * ClickHouse error code that means it ran before (ADD COLUMN of a column
 * that exists: 44, checked on 18.16, one server and ON CLUSTER alike),
 * and that error counts as success.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/buf.h"
#include "cm/common.h"
#include "cm/err.h"
#include "evstore_internal.h"

const char cm__ch_migrations_table_ddl[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, "
    "applied_at DateTime('UTC') DEFAULT now()) ENGINE = ReplacingMergeTree() ORDER BY version";

const char cm__ch_migrations_table_ddl_cluster[] =
    "CREATE TABLE IF NOT EXISTS $DATABASE.schema_migrations ON CLUSTER $CLUSTER (version UInt32, "
    "applied_at DateTime('UTC') DEFAULT now()) ENGINE = ReplicatedReplacingMergeTree("
    "'/clickhouse/tables/noshard/$DATABASE.schema_migrations', '{shard}-{replica}') ORDER BY version";

const char cm__ch_migrations_applied_sql[] = "SELECT max(version) FROM schema_migrations";

static bool identifier(const char *s)
{
    if (s == NULL || *s == '\0' || strlen(s) > 128)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

char *cm__ch_ddl_expand(const char *text, const char *cluster, const char *database)
{
    if (!identifier(cluster) || !identifier(database))
        return NULL;
    cm_buf_t out = CM_BUF_INIT;
    for (const char *p = text; *p;) {
        if (strncmp(p, "$CLUSTER", 8) == 0) {
            cm_buf_append_cstr(&out, cluster);
            p += 8;
        } else if (strncmp(p, "$DATABASE", 9) == 0) {
            cm_buf_append_cstr(&out, database);
            p += 9;
        } else
            cm_buf_putc(&out, *p++);
    }
    char *s = cm_xstrdup(cm_buf_cstr(&out));
    cm_buf_free(&out);
    return s;
}

/* A "-- done if code N" line is kept in the migration's text as this
 * byte and N, up to the statement it precedes. */
#define DONE_MARK '\001'

static void add(cm__ch_ddl_t *d, const char *sql, size_t n, unsigned version)
{
    unsigned done_code = 0;
    while (n > 0 && *sql == DONE_MARK) { /* the marks before the statement */
        char *end;
        done_code = (unsigned)strtoul(sql + 1, &end, 10);
        size_t skip = (size_t)(end - sql);
        skip += strspn(end, " \t\n");
        sql += CM_MIN(skip, n);
        n -= CM_MIN(skip, n);
    }
    d->stmts = cm_xrealloc(d->stmts, (d->n + 1) * sizeof(*d->stmts));
    d->stmts[d->n].sql = cm_xmalloc(n + 1);
    memcpy(d->stmts[d->n].sql, sql, n);
    d->stmts[d->n].sql[n] = '\0';
    d->stmts[d->n].done_code = done_code;
    d->stmts[d->n++].version = version;
}

/* The statements of one migration's text (comment lines already gone),
 * cut at each ';', then the row that records it. */
static bool add_migration(cm__ch_ddl_t *d, const char *s, unsigned version)
{
    size_t before = d->n;
    while (*s) {
        size_t n = strcspn(s, ";");
        size_t lead = strspn(s, " \t\n");
        if (lead < n)
            add(d, s + lead, n - lead, version);
        s += n + (s[n] == ';');
    }
    if (d->n == before)
        return true;
    for (size_t i = before; i < d->n; i++)
        if (d->stmts[i].sql[0] == '\0' || d->stmts[i].sql[0] == DONE_MARK)
            return false; /* a mark with no statement after it */
    char row[80];
    int len =
        snprintf(row, sizeof(row), "INSERT INTO schema_migrations (version) VALUES (%u)", version);
    add(d, row, (size_t)len, version);
    return true;
}

/* A line "<tag>N..." -> N when 0 < N < below, else 0. */
static unsigned tagged_number(const char *p, size_t n, const char *tag, unsigned long below)
{
    size_t tl = strlen(tag);
    if (n <= tl || memcmp(p, tag, tl) != 0 || !isdigit((unsigned char)p[tl]))
        return 0;
    unsigned long v = strtoul(p + tl, NULL, 10);
    return v > 0 && v < below ? (unsigned)v : 0;
}

/* "-- done if code N" -> N (> 0), else 0. */
static unsigned done_marker(const char *p, size_t n)
{
    return tagged_number(p, n, "-- done if code ", 100000);
}

bool cm__ch_error_is(const char *err, unsigned code)
{
    const char *c = err ? strstr(err, "Code: ") : NULL;
    return code != 0 && c != NULL && strtoul(c + 6, NULL, 10) == code;
}

/* "-- migration N..." -> N (> 0), else 0. */
static unsigned marker(const char *p, size_t n)
{
    return tagged_number(p, n, "-- migration ", 1000000);
}

int cm__ch_ddl_parse(const char *text, cm__ch_ddl_t *out)
{
    *out = (cm__ch_ddl_t){0};
    cm_buf_t cur = CM_BUF_INIT; /* the current migration's text */
    unsigned version = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        size_t rest = n - (size_t)(q - p);
        unsigned m = marker(q, rest);
        unsigned done = done_marker(q, rest);
        if (m) {
            if (m <= version)
                goto fail; /* versions go up, one section each */
            if (!add_migration(out, cm_buf_cstr(&cur), version))
                goto fail;
            cm_buf_reset(&cur);
            version = m;
        } else if (done) {
            if (version == 0)
                goto fail;
            cm_buf_appendf(&cur, "%c%u\n", DONE_MARK, done);
        } else if (!(rest >= 2 && q[0] == '-' && q[1] == '-')) {
            if (version == 0 && rest > 0)
                goto fail; /* a statement before the first migration's marker */
            cm_buf_append(&cur, p, n);
            cm_buf_putc(&cur, '\n');
        }
        p += n + (p[n] == '\n');
    }
    if (!add_migration(out, cm_buf_cstr(&cur), version))
        goto fail;
    cm_buf_free(&cur);
    out->latest = version;
    return CM_OK;
fail:
    cm_buf_free(&cur);
    cm__ch_ddl_free(out);
    return CM_EINVAL;
}

void cm__ch_ddl_free(cm__ch_ddl_t *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->stmts[i].sql);
    free(d->stmts);
    *d = (cm__ch_ddl_t){0};
}
