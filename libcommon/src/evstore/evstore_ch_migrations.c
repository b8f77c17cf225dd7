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
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/buf.h"
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

static void add(cm__ch_ddl_t *d, const char *sql, size_t n, unsigned version)
{
    d->stmts = cm_xrealloc(d->stmts, (d->n + 1) * sizeof(*d->stmts));
    d->stmts[d->n].sql = cm_xmalloc(n + 1);
    memcpy(d->stmts[d->n].sql, sql, n);
    d->stmts[d->n].sql[n] = '\0';
    d->stmts[d->n++].version = version;
}

/* The statements of one migration's text (comment lines already gone),
 * cut at each ';', then the row that records it. */
static void add_migration(cm__ch_ddl_t *d, const char *s, unsigned version)
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
        return;
    char row[80];
    int len =
        snprintf(row, sizeof(row), "INSERT INTO schema_migrations (version) VALUES (%u)", version);
    add(d, row, (size_t)len, version);
}

/* "-- migration N..." -> N (> 0), else 0. */
static unsigned marker(const char *p, size_t n)
{
    static const char tag[] = "-- migration ";
    size_t tl = sizeof(tag) - 1;
    if (n <= tl || memcmp(p, tag, tl) != 0 || !isdigit((unsigned char)p[tl]))
        return 0;
    unsigned long v = strtoul(p + tl, NULL, 10);
    return v > 0 && v < 1000000 ? (unsigned)v : 0;
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
        if (m) {
            if (m <= version)
                goto fail; /* versions go up, one section each */
            add_migration(out, cm_buf_cstr(&cur), version);
            cm_buf_reset(&cur);
            version = m;
        } else if (!(rest >= 2 && q[0] == '-' && q[1] == '-')) {
            if (version == 0 && rest > 0)
                goto fail; /* a statement before the first migration's marker */
            cm_buf_append(&cur, p, n);
            cm_buf_putc(&cur, '\n');
        }
        p += n + (p[n] == '\n');
    }
    add_migration(out, cm_buf_cstr(&cur), version);
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
