/*
 * evstore_internal.h - what evstore.c (dispatch, rows, literals, the
 * embedded DDL) shares with the backends evstore_sqlite.c and
 * evstore_clickhouse.c. Not public.
 *
 * A backend embeds struct cm_evstore first and supplies an ops table; the
 * common code only dispatches and checks for a closed store.
 */
#ifndef CM_EVSTORE_INTERNAL_H
#define CM_EVSTORE_INTERNAL_H

#include "cm/db.h"
#include "cm/event_store.h"
#include "cm/json.h"

typedef struct cm__evstore_ops cm__evstore_ops_t;
struct cm__evstore_ops {
    const char *name;
    cm_evstore_kind_t kind;
    void (*write)(cm_evstore_t *es, const cm_evstore_rows_in_t *rows, cm_evstore_write_cb cb,
                  void *ud);
    void (*query)(cm_evstore_t *es, const cm_evstore_select_t *q, cm_evstore_query_cb cb, void *ud);
    bool (*ready)(cm_evstore_t *es, cm_buf_t *why);
    const char *(*server_version)(const cm_evstore_t *es); /* NULL: "" */
    /* cluster mode's cluster and the tables' database; NULL: one server */
    const char *(*cluster)(const cm_evstore_t *es, const char **database);
    /* Finish what was submitted, release everything, then done(ud). */
    void (*close)(cm_evstore_t *es, cm_evstore_closed_cb done, void *ud);
};

struct cm_evstore {
    const cm__evstore_ops_t *ops;
    uv_loop_t *loop;
    char *name;
    bool closing;
    /* ClickHouse 19.6+: the events' TTL (days) this store set (0: none
     * yet; evstore_retention.c) */
    unsigned ttl_days;
    /* store_operation_duration_seconds{store=name,op=query|insert} (evstore.c);
     * NULL without opts.metrics */
    cm_histogram_t *lat_query, *lat_insert;
};

/* A query's rows: ncols names, then nrows * ncols values, row-major. */
struct cm_evstore_rows {
    size_t ncols, nrows;
    const char *const *cells;
};

/* The DDL of proto/event_store/<backend>.sql, embedded at build time. */
extern const char cm__evstore_ddl_sqlite[];
extern const char cm__evstore_ddl_clickhouse[];
extern const char cm__evstore_ddl_clickhouse_cluster[];

void cm__evstore_init(cm_evstore_t *es, const cm__evstore_ops_t *ops, uv_loop_t *loop,
                      const char *name);
void cm__evstore_fini(cm_evstore_t *es);

/* epoch ms -> "YYYY-MM-DD HH:MM:SS" (UTC), the text both stores use. */
void cm__evstore_datetime(int64_t ms, char out[20]);

/* evstore_quantile.c: cm_db_opts_t.on_connect of the store's SQLite
 * connections (cm_quantile). */
int cm__evstore_on_connect(cm_db_conn_t *conn, void *ud);
/* evstore_tz.c: cm_tz_local and cm_tz_utc, added by the same hook. */
int cm__evstore_add_tz(cm_db_conn_t *conn);
/* evstore_stats.c: cm_variance(x, kind), added by the hook above. */
int cm__evstore_add_stats(cm_db_conn_t *conn);

int cm__evstore_open_sqlite(uv_loop_t *loop, const cm_evstore_opts_t *opts, const char *path,
                            cm_evstore_t **out);
int cm__evstore_open_clickhouse(uv_loop_t *loop, const cm_evstore_opts_t *opts, cm_evstore_t **out);

/* evstore_array.c: an Array(T) value (JSON or ClickHouse's literal text)
 * written as a JSON array, each element by T; text that does not parse is
 * written as a string. */
void cm_evstore__write_array(cm_json_writer_t *w, const char *type, const char *v);

/* A quoted string at *p ("..." JSON, '...' ClickHouse) decoded into out
 * (its length reset); *p moves past it. False when it does not end. */
bool cm_evstore__unquote(const char **p, cm_buf_t *out);
/* evstore_arrayfns.c: cm_array_agg for SQLite connections (the printer's
 * groupArray, groupUniqArray and topK: docs/endpoints.md). */
int cm__evstore_add_array_fns(cm_db_conn_t *conn);
/* evstore_summap.c: cm_sum_map, the printer's sumMap on SQLite. */
int cm__evstore_add_sum_map(cm_db_conn_t *conn);

/* evstore_ch_migrations.c: clickhouse.sql's "-- migration N" sections as
 * statements, each migration followed by the INSERT of its version row
 * into schema_migrations. Versions rise; a statement before the first
 * marker is an error (CM_EINVAL). */
typedef struct {
    char *sql;
    unsigned version;   /* the migration it belongs to */
    unsigned done_code; /* "-- done if code N" before it: error N means it ran before (0: none) */
} cm__ch_stmt_t;
typedef struct {
    cm__ch_stmt_t *stmts;
    size_t n;
    unsigned latest; /* the highest version */
} cm__ch_ddl_t;
int cm__ch_ddl_parse(const char *text, cm__ch_ddl_t *out);
/* err is ClickHouse's error text (or the store's, holding it) of code,
 * read from its first "Code: N" (on a cluster the DDL's own, which quotes
 * the node's). */
bool cm__ch_error_is(const char *err, unsigned code);
void cm__ch_ddl_free(cm__ch_ddl_t *d);
/* Run first at start: the table of applied versions (one server; the
 * cluster's, with $CLUSTER and $DATABASE), then its max. */
extern const char cm__ch_migrations_table_ddl[];
extern const char cm__ch_migrations_table_ddl_cluster[];
/* text with $CLUSTER and $DATABASE replaced (owned by the caller); NULL
 * when a name is not a plain identifier ([A-Za-z0-9_]+). */
char *cm__ch_ddl_expand(const char *text, const char *cluster, const char *database);
extern const char cm__ch_migrations_applied_sql[];

/* The times a ClickHouse DateTime holds exactly as the text the JSON path
 * writes means them: 1970-01-02 to 2099-12-31 (either end of UInt32's
 * range is left to the server's own reading of the text). The dedup
 * SELECT narrows by day, and RowBinary is used, only within them. */
static inline bool cm__ch_time_exact(int64_t ms)
{
    return ms >= INT64_C(86400000) && ms <= INT64_C(4102358400000);
}

/* An element of the key and value arrays a JSON object's top-level member
 * (k, v) gives (value: false for the keys' array): a key's text; a string
 * value's text, any other value its JSON; "" for a string that does not
 * decode. The caller leaves null members out. The text may be in scratch. */
static inline cm_slice_t cm__ch_kv_text(cm_json_t k, cm_json_t v, bool value, cm_buf_t *scratch)
{
    cm_slice_t text;
    if (value && cm_json_type(v) != CM_JSON_STRING)
        return cm_json_raw(v);
    cm_buf_reset(scratch);
    if (cm_json_as_str(value ? v : k, scratch, &text) != 0)
        return (cm_slice_t){"", 0};
    return text;
}

/* evstore_ch_rowbinary.c: events as RowBinary, for the INSERT statement
 * cm__ch_rowbinary_events_insert names the columns of. An event fits when
 * both its uuids are in the 36-character text form and its times
 * cm__ch_time_exact; a batch with
 * one that does not goes as JSONEachRow. The scratch is reused across
 * events (init it zeroed, free it once). */
typedef struct {
    cm_json_doc_t doc;
    cm_buf_t text;
} cm__ch_rb_scratch_t;
extern const char cm__ch_rowbinary_events_insert[];
bool cm__ch_rowbinary_fits(const cm_evstore_event_t *e);
void cm__ch_rowbinary_event(cm_buf_t *out, const cm_evstore_event_t *e, cm__ch_rb_scratch_t *s);
void cm__ch_rb_scratch_free(cm__ch_rb_scratch_t *s);

/* evstore_retention.c: the statement deleting events matching `where`
 * (one server: ALTER TABLE events DELETE; a cluster: the shards' local
 * tables ON CLUSTER, since a Distributed table takes no mutation), and the
 * count of the mutations on events still pending (a cluster: each shard's,
 * through cluster(), one replica per shard, which lists the replicated
 * mutations of its shard). cluster NULL: one server. */
void cm__ch_delete_events_sql(cm_buf_t *out, const char *cluster, const char *database,
                              const char *where);
void cm__ch_pending_deletes_sql(cm_buf_t *out, const char *cluster, const char *database);
/* version() ("18.16.1", "19.6.2.11", "24.3.1") has table TTL: 19.6 or later. */
bool cm__ch_has_ttl(const char *version);
/* The retention of `days` on a server of `version`: 19.6+, the TTL
 * statement (returns true); else the DELETE of rows before before_ms
 * (cm__ch_delete_events_sql's; returns false). Golden-tested. */
bool cm__ch_retention_sql(cm_buf_t *out, const char *version, const char *cluster,
                          const char *database, unsigned days, const char *where);

#endif
