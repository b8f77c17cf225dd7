/*
 * evstore_clickhouse.c - the event store on ClickHouse's HTTP interface
 * (see event_store.h), through cm/http_client.h.
 *
 * Written for ClickHouse 18.16 (Debian's, which the tests run) and current
 * releases alike: the DDL of proto/event_store/clickhouse.sql uses the
 * spelling both accept; every request carries the user in X-ClickHouse-User
 * / X-ClickHouse-Key (the only credentials form both take without
 * conflict) and wait_end_of_query=1, so an error during a query is an HTTP
 * error rather than text appended to a 200. The server's version() is read
 * once at start and logged; it picks the dialect the api prints for
 * (cm_evstore_dialect) and the settings a read there needs
 * (cm_evstore_sql_clickhouse_settings, cm/evstore_sql.h).
 *
 * A write: one SELECT of the batch's (project, uuid) pairs already stored
 * (deduplication before the fact, per project), then one JSONEachRow
 * INSERT per table with rows, the events' last. Copies that slip through
 * (two writers racing on a redelivery) collapse in the ReplacingMergeTree
 * (proto/event-store.md). Not atomic across tables: after a failure the
 * whole write is repeated, and the uuid check keeps events single.
 *
 * Reads append FORMAT TabSeparatedWithNames and unescape it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/http_client.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/strset.h"
#include "cm/uuid.h"
#include "evstore_internal.h"

#define SETUP_RETRY_MS 1000
#define QUERY_GRACE_MS 1000 /* past a query's limit before the request is given up */

typedef struct ch_store ch_store_t;

/* One request of a write or a query, and what to do with its answer. */
typedef struct ch_op ch_op_t;
struct ch_op {
    ch_op_t *next;
    ch_store_t *st;
    int kind;          /* OP_* */
    unsigned limit_ms; /* a query's own time limit (0: the store's timeout_ms) */
    cm_buf_t sql;      /* the query (in the URL for inserts, else the body) */
    cm_buf_t body;     /* insert rows */
    cm_buf_t settings; /* "&name=value..." for the URL */
    ch_op_t *chain;    /* the write's next insert */
    struct ch_write *w;
    cm_evstore_query_cb qcb;
    void *ud;
    size_t max_bytes;                   /* a query's answer bound (0: the client's) */
    char query_id[CM_UUID_STR_LEN + 1]; /* a read's, to stop it when given up */
};

enum { OP_SETUP, OP_QUERY, OP_DEDUP, OP_INSERT, OP_KILL };

/* Start: the server's version, the table of applied migrations, the
 * highest applied version, then the statements of the later migrations. */
enum { SETUP_VERSION, SETUP_TABLE, SETUP_APPLIED, SETUP_MIGRATE };

typedef struct ch_write {
    ch_store_t *st;
    cm_evstore_rows_in_t rows; /* deep copy of the events' text (see copy_events) */
    cm_buf_t *texts;
    size_t inserted;
    cm_evstore_write_cb cb;
    void *ud;
} ch_write_t;

struct ch_store {
    struct cm_evstore base; /* first */
    cm_http_client_t *http;
    char *url; /* scheme://host:port/?database=... (no credentials) */
    char *user, *password;
    char *database;       /* the URL's (default "default") */
    char *cluster;        /* cluster mode: its name; NULL: one server */
    char *migrations_ddl; /* schema_migrations' CREATE (cluster mode: expanded) */
    int timeout_ms;
    cm__ch_ddl_t ddl; /* the migrations (evstore_ch_migrations.c) */
    size_t ddl_next;  /* the next statement to run */
    int setup_phase;  /* SETUP_* */
    unsigned applied; /* the highest version schema_migrations records */
    bool ready;
    /* the recorded schema is newer than this binary's migrations: the
     * reason, and every read and write fails at once with it (NULL: not) */
    char *refused;
    bool shut; /* the close sequence started */
    char version[64];
    uv_timer_t retry;
    ch_op_t *waiting, *waiting_tail; /* until the tables exist */
    size_t in_flight;
    cm_evstore_closed_cb done;
    void *done_ud;
};

static void send_op(ch_op_t *op);
static void maybe_finish_close(ch_store_t *st);

/* ---- URL ------------------------------------------------------------------------- */

static void url_encode(cm_buf_t *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~')
            cm_buf_putc(out, (char)c);
        else
            cm_buf_appendf(out, "%%%02X", c);
    }
}

/* http://user:password@host:port/?database=db&user=u&password=p: credentials
 * move to headers, the rest stays in the URL (database=). */
static int parse_url(ch_store_t *st, const char *url)
{
    const char *scheme_end = strstr(url, "://");
    if (scheme_end == NULL)
        return CM_EINVAL;
    const char *auth = scheme_end + 3;
    const char *host = auth;
    const char *at = strchr(auth, '@');
    const char *slash = strchr(auth, '/');
    cm_buf_t u = CM_BUF_INIT, params = CM_BUF_INIT, v = CM_BUF_INIT;
    if (at && (slash == NULL || at < slash)) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        size_t ulen = colon ? (size_t)(colon - auth) : (size_t)(at - auth);
        cm_url_decode(auth, ulen, false, &v);
        st->user = cm_xstrdup(cm_buf_cstr(&v));
        if (colon) {
            cm_buf_reset(&v);
            cm_url_decode(colon + 1, (size_t)(at - colon - 1), false, &v);
            st->password = cm_xstrdup(cm_buf_cstr(&v));
        }
        host = at + 1;
    }
    size_t hostlen = slash ? (size_t)(slash - host) : strlen(host);
    cm_buf_append(&u, url, (size_t)(auth - url));
    cm_buf_append(&u, host, hostlen);
    cm_buf_append_cstr(&u, "/?");
    const char *q = slash ? strchr(slash, '?') : NULL;
    if (q) {
        cm_form_iter_t it;
        cm_slice_t name, value;
        cm_form_iter_init(&it, q + 1, strlen(q + 1));
        while (cm_form_next(&it, &name, &value)) {
            cm_buf_reset(&v);
            cm_url_decode(value.p, value.len, true, &v);
            if (cm_slice_eq_cstr(name, "user")) {
                free(st->user);
                st->user = cm_xstrdup(cm_buf_cstr(&v));
            } else if (cm_slice_eq_cstr(name, "password")) {
                free(st->password);
                st->password = cm_xstrdup(cm_buf_cstr(&v));
            } else {
                if (cm_slice_eq_cstr(name, "database")) {
                    free(st->database);
                    st->database = cm_xstrdup(cm_buf_cstr(&v));
                }
                if (params.len)
                    cm_buf_putc(&params, '&');
                cm_buf_append(&params, name.p, name.len);
                cm_buf_putc(&params, '=');
                url_encode(&params, v.p, v.len);
            }
        }
    }
    if (params.len) {
        cm_buf_append(&u, params.p, params.len);
        cm_buf_putc(&u, '&');
    }
    cm_buf_append_cstr(&u, "wait_end_of_query=1&date_time_input_format=best_effort"
                           "&input_format_skip_unknown_fields=1");
    st->url = cm_xstrdup(cm_buf_cstr(&u));
    cm_buf_free(&u);
    cm_buf_free(&params);
    cm_buf_free(&v);
    return CM_OK;
}

/* ---- requests ------------------------------------------------------------------------ */

static ch_op_t *op_new(ch_store_t *st, int kind)
{
    ch_op_t *op = cm_xcalloc(1, sizeof(*op));
    op->st = st;
    op->kind = kind;
    cm_buf_init(&op->sql);
    cm_buf_init(&op->body);
    cm_buf_init(&op->settings);
    return op;
}

static void op_free(ch_op_t *op)
{
    cm_buf_free(&op->sql);
    cm_buf_free(&op->body);
    cm_buf_free(&op->settings);
    free(op);
}

static void write_free(ch_write_t *w)
{
    for (size_t i = 0; w->texts && i < w->rows.nevents * 3 + w->rows.npersons * 2 +
                                           w->rows.ndistinct_ids * 2 + w->rows.ngroups * 3;
         i++)
        cm_buf_free(&w->texts[i]);
    free(w->texts);
    free((void *)w->rows.events);
    free((void *)w->rows.persons);
    free((void *)w->rows.distinct_ids);
    free((void *)w->rows.groups);
    free(w);
}

/* The first line's length (the body is not NUL-terminated). */
static size_t line_len(cm_slice_t body)
{
    const char *nl = body.p ? memchr(body.p, '\n', body.len) : NULL;
    return nl ? (size_t)(nl - body.p) : body.len;
}

/* "Code: 60. DB::Exception: Table default.x doesn't exist..." -> the first line. */
static void error_text(char *out, size_t cap, const cm_http_client_res_t *res, int status)
{
    if (status != 0) {
        snprintf(out, cap, "%s",
                 res && res->error && *res->error ? res->error : cm_strerror(status));
        return;
    }
    snprintf(out, cap, "HTTP %d: %.*s", res->status, (int)line_len(res->body),
             res->body.p ? res->body.p : "");
}

/* ---- reading TabSeparatedWithNames ------------------------------------------------------ */

typedef struct {
    cm_buf_t text;   /* every cell, unescaped, NUL-terminated */
    size_t *offsets; /* per cell: offset + 1 into text, 0 for NULL (\N) */
    size_t ncells, cap;
    size_t ncols;
} tsv_t;

static void tsv_cell(tsv_t *t, const char *p, size_t n)
{
    if (t->ncells == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->offsets = cm_xrealloc(t->offsets, t->cap * sizeof(*t->offsets));
    }
    if (n == 2 && p[0] == '\\' && p[1] == 'N') {
        t->offsets[t->ncells++] = 0;
        return;
    }
    t->offsets[t->ncells++] = t->text.len + 1;
    for (size_t i = 0; i < n;) {
        /* the run up to the next escape at once (most cells have none) */
        const char *bs = memchr(p + i, '\\', n - i);
        size_t run = bs ? (size_t)(bs - (p + i)) : n - i;
        cm_buf_append(&t->text, p + i, run);
        i += run;
        if (i == n)
            break;
        char c = '\\';
        if (i + 1 < n) {
            char e = p[++i];
            c = e == 'n'   ? '\n'
                : e == 't' ? '\t'
                : e == 'r' ? '\r'
                : e == 'b' ? '\b'
                : e == 'f' ? '\f'
                : e == '0' ? '\0'
                           : e;
        }
        cm_buf_putc(&t->text, c);
        i++;
    }
    cm_buf_putc(&t->text, '\0');
}

static void tsv_parse(tsv_t *t, cm_slice_t body)
{
    const char *p = body.p, *end = body.p + body.len;
    bool first_line = true;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        size_t cells = 0;
        for (const char *c = p;;) {
            const char *tab = memchr(c, '\t', (size_t)(eol - c));
            const char *stop = tab ? tab : eol;
            tsv_cell(t, c, (size_t)(stop - c));
            cells++;
            if (tab == NULL)
                break;
            c = tab + 1;
        }
        if (first_line)
            t->ncols = cells;
        first_line = false;
        p = eol + 1;
    }
}

static void answer_parsed(ch_op_t *op, int status, const char *err, tsv_t t);

static void answer_query(ch_op_t *op, int status, const char *err, cm_slice_t body)
{
    tsv_t t = {CM_BUF_INIT, NULL, 0, 0, 0};
    if (status == 0)
        tsv_parse(&t, body);
    answer_parsed(op, status, err, t);
}

static void answer_parsed(ch_op_t *op, int status, const char *err, tsv_t t)
{
    const char **cells = cm_xcalloc(t.ncells + 1, sizeof(char *));
    for (size_t i = 0; i < t.ncells; i++)
        cells[i] = t.offsets[i] ? t.text.p + t.offsets[i] - 1 : NULL;
    size_t nrows = t.ncols ? t.ncells / t.ncols - 1 : 0;
    cm_evstore_rows_t rows = {status ? 0 : t.ncols, status ? 0 : nrows, cells};
    op->qcb(status, err, &rows, op->ud);
    free(cells);
    free(t.offsets);
    cm_buf_free(&t.text);
}

/* A big answer is parsed on libuv's thread pool: unescaping tens of MiB
 * would hold the loop for tens of milliseconds. The body is copied first
 * (the client's is valid during its callback only): one memcpy. */
#define PARSE_ON_LOOP_MAX (256u << 10)

typedef struct {
    uv_work_t req;
    ch_op_t *op;
    char *body;
    size_t len;
    tsv_t t;
} parse_work_t;

static void on_parse_work(uv_work_t *req)
{
    parse_work_t *pw = req->data;
    tsv_parse(&pw->t, (cm_slice_t){pw->body, pw->len});
}

static void on_parsed(uv_work_t *req, int status)
{
    parse_work_t *pw = req->data;
    ch_op_t *op = pw->op;
    ch_store_t *st = op->st;
    (void)status; /* never cancelled */
    free(pw->body);
    st->in_flight--;
    answer_parsed(op, 0, NULL, pw->t);
    op_free(op);
    free(pw);
    maybe_finish_close(st);
}

static void parse_later(ch_op_t *op, cm_slice_t body)
{
    parse_work_t *pw = cm_xcalloc(1, sizeof(*pw));
    pw->op = op;
    pw->body = cm_xmalloc(body.len + 1);
    memcpy(pw->body, body.p, body.len);
    pw->len = body.len;
    pw->t = (tsv_t){CM_BUF_INIT, NULL, 0, 0, 0};
    pw->req.data = pw;
    op->st->in_flight++; /* the store's close waits for it */
    uv_queue_work(op->st->base.loop, &pw->req, on_parse_work, on_parsed);
}

/* ---- the write: dedup, then the inserts ------------------------------------------------- */

/* "<name>_keys": [...], "<name>_values": [...]: a JSON object's top-level
 * members as two arrays, each value in HogQL's string form (a string's
 * text, anything else its JSON; null members left out), which is how
 * queries read properties.<key> on every ClickHouse version
 * (proto/event-store.md). */
static void json_kv_arrays(cm_json_writer_t *w, const char *name, cm_slice_t obj)
{
    char key[64];
    cm_json_doc_t doc = CM_JSON_DOC_INIT;
    cm_buf_t scratch = CM_BUF_INIT;
    bool ok = cm_json_parse_into(&doc, obj.p, obj.len, NULL, NULL) == 0 &&
              cm_json_type(cm_json_root(&doc)) == CM_JSON_OBJECT;
    for (int half = 0; half < 2; half++) {
        snprintf(key, sizeof(key), "%s_%s", name, half ? "values" : "keys");
        cm_json_key(w, key);
        cm_json_begin_array(w);
        cm_json_iter_t it = ok ? cm_json_iter(cm_json_root(&doc)) : (cm_json_iter_t){0};
        cm_json_t k, v;
        while (ok && cm_json_next(&it, &k, &v))
            if (!cm_json_is_null(v))
                cm_json_str_s(w, cm__ch_kv_text(k, v, half == 1, &scratch));
        cm_json_end_array(w);
    }
    cm_buf_free(&scratch);
    cm_json_doc_clear(&doc);
}

static void json_event(cm_json_writer_t *w, const cm_evstore_event_t *e)
{
    char t[20];
    cm_json_begin_object(w);
    cm_json_key(w, "uuid");
    cm_json_str_cstr(w, e->uuid);
    cm_json_key(w, "project_id");
    cm_json_int(w, e->project_id);
    cm_json_key(w, "event");
    cm_json_str_s(w, e->event);
    cm_json_key(w, "distinct_id");
    cm_json_str_s(w, e->distinct_id);
    cm_json_key(w, "person_id");
    cm_json_str_cstr(w, e->person_id);
    cm_json_key(w, "properties");
    cm_json_str_s(w, e->properties);
    cm_json_key(w, "person_properties");
    cm_json_str_s(w, e->person_properties);
    json_kv_arrays(w, "properties", e->properties);
    json_kv_arrays(w, "person_properties", e->person_properties);
    cm__evstore_datetime(e->timestamp_ms, t);
    cm_json_key(w, "timestamp");
    cm_json_str_cstr(w, t);
    cm_json_key(w, "timestamp_ms");
    cm_json_int(w, e->timestamp_ms);
    cm__evstore_datetime(e->created_at_ms, t);
    cm_json_key(w, "created_at");
    cm_json_str_cstr(w, t);
    cm_json_key(w, "session_id");
    cm_json_str_s(w, e->session_id);
    cm_json_end_object(w);
}

/* An insert of w's with the statement sql; its rows go in op->body. */
static ch_op_t *insert_stmt(ch_store_t *st, ch_write_t *w, const char *sql)
{
    ch_op_t *op = op_new(st, OP_INSERT);
    op->w = w;
    cm_buf_append_cstr(&op->sql, sql);
    /* through the Distributed table: acknowledged once on the shards, not
     * when queued on the node the URL reached (a kill -9 there loses it) */
    if (st->cluster)
        cm_buf_append_cstr(&op->settings, "&insert_distributed_sync=1");
    return op;
}

/* The same as JSONEachRow into table. */
static ch_op_t *insert_op(ch_store_t *st, ch_write_t *w, const char *table)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT JSONEachRow", table);
    return insert_stmt(st, w, sql);
}

/* An event's key in the dedup answer: "<project id>:<uuid>", as the
 * SELECT prints it. Uuids are unique per project only: the same uuid in
 * another project is another event (proto/event-store.md). */
static cm_slice_t dedup_key(const cm_evstore_event_t *e, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%lld:%s", e->project_id, e->uuid);
    return (cm_slice_t){buf, n < 0 ? 0 : CM_MIN((size_t)n, size - 1)};
}

/*
 * What narrows the dedup SELECT to the parts and granules that can hold a
 * copy: the batch's projects and the days of its timestamps, the first two
 * columns of the events' ORDER BY (and the month partitions follow from the
 * days). Without it every batch read the uuid column of the whole table, a
 * cost that grew with the table. A copy has the same project and the same
 * timestamp (both come from the queued message), so nothing is missed. A
 * batch with a timestamp outside the years DateTime holds exactly, or with
 * many projects, is not narrowed on that column.
 */
#define DEDUP_PROJECTS_MAX 64

static void dedup_range(cm_buf_t *sql, const cm_evstore_event_t *ev, size_t n)
{
    long long projects[DEDUP_PROJECTS_MAX];
    size_t np = 0;
    bool many = false, days = n > 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < np && projects[j] != ev[i].project_id)
            j++;
        if (j == np && !many) {
            if (np == DEDUP_PROJECTS_MAX)
                many = true;
            else
                projects[np++] = ev[i].project_id;
        }
        int64_t ms = ev[i].timestamp_ms;
        if (!cm__ch_time_exact(ms))
            days = false;
        lo = CM_MIN(lo, ms);
        hi = CM_MAX(hi, ms);
    }
    if (!many && np > 0) {
        cm_buf_append_cstr(sql, "project_id IN (");
        for (size_t j = 0; j < np; j++)
            cm_buf_appendf(sql, "%s%lld", j ? "," : "", projects[j]);
        cm_buf_append_cstr(sql, ") AND ");
    }
    if (days) {
        char a[20], b[20];
        cm__evstore_datetime(lo, a);
        cm__evstore_datetime(hi, b);
        a[10] = b[10] = '\0'; /* the days */
        cm_buf_appendf(
            sql, "toDate(timestamp) >= toDate('%s') AND toDate(timestamp) <= toDate('%s') AND ", a,
            b);
    }
}

/* The inserts for rows, chained; events skips those in `stored`. The
 * person, distinct-id and group rows go first and the events last, so a
 * reader that sees an event also sees the person rows it was written with
 * (the write is not atomic across tables). */
static ch_op_t *build_inserts(ch_store_t *st, ch_write_t *w, const cm_strset_t *stored)
{
    const cm_evstore_rows_in_t *r = &w->rows;
    ch_op_t *head = NULL, **tail = &head;
    cm_json_writer_t jw;
    char t[20];
    if (r->npersons) {
        ch_op_t *op = insert_op(st, w, "persons");
        for (size_t i = 0; i < r->npersons; i++) {
            const cm_evstore_person_t *p = &r->persons[i];
            cm_json_writer_init(&jw, &op->body);
            cm_json_begin_object(&jw);
            cm_json_key(&jw, "id");
            cm_json_str_cstr(&jw, p->id);
            cm_json_key(&jw, "project_id");
            cm_json_int(&jw, p->project_id);
            cm_json_key(&jw, "properties");
            cm_json_str_s(&jw, p->properties);
            json_kv_arrays(&jw, "properties", p->properties);
            cm_json_key(&jw, "is_identified");
            cm_json_int(&jw, p->is_identified);
            cm_json_key(&jw, "is_deleted");
            cm_json_int(&jw, p->is_deleted);
            cm__evstore_datetime(p->created_at_ms, t);
            cm_json_key(&jw, "created_at");
            cm_json_str_cstr(&jw, t);
            cm_json_key(&jw, "version");
            cm_json_int(&jw, p->version);
            cm_json_end_object(&jw);
            cm_buf_putc(&op->body, '\n');
        }
        *tail = op;
        tail = &op->chain;
    }
    if (r->ndistinct_ids) {
        ch_op_t *op = insert_op(st, w, "person_distinct_ids");
        for (size_t i = 0; i < r->ndistinct_ids; i++) {
            const cm_evstore_distinct_id_t *d = &r->distinct_ids[i];
            cm_json_writer_init(&jw, &op->body);
            cm_json_begin_object(&jw);
            cm_json_key(&jw, "project_id");
            cm_json_int(&jw, d->project_id);
            cm_json_key(&jw, "distinct_id");
            cm_json_str_s(&jw, d->distinct_id);
            cm_json_key(&jw, "person_id");
            cm_json_str_cstr(&jw, d->person_id);
            cm_json_key(&jw, "version");
            cm_json_int(&jw, d->version);
            cm_json_key(&jw, "is_deleted");
            cm_json_int(&jw, d->is_deleted);
            cm_json_end_object(&jw);
            cm_buf_putc(&op->body, '\n');
        }
        *tail = op;
        tail = &op->chain;
    }
    if (r->ngroups) {
        ch_op_t *op = insert_op(st, w, "groups");
        for (size_t i = 0; i < r->ngroups; i++) {
            const cm_evstore_group_t *g = &r->groups[i];
            cm_json_writer_init(&jw, &op->body);
            cm_json_begin_object(&jw);
            cm_json_key(&jw, "project_id");
            cm_json_int(&jw, g->project_id);
            cm_json_key(&jw, "group_type");
            cm_json_str_s(&jw, g->group_type);
            cm_json_key(&jw, "group_key");
            cm_json_str_s(&jw, g->group_key);
            cm_json_key(&jw, "properties");
            cm_json_str_s(&jw, g->properties);
            json_kv_arrays(&jw, "properties", g->properties);
            cm__evstore_datetime(g->created_at_ms, t);
            cm_json_key(&jw, "created_at");
            cm_json_str_cstr(&jw, t);
            cm_json_key(&jw, "version");
            cm_json_int(&jw, g->version);
            cm_json_end_object(&jw);
            cm_buf_putc(&op->body, '\n');
        }
        *tail = op;
        tail = &op->chain;
    }
    if (r->nevents) {
        bool binary = true; /* RowBinary when every event fits it */
        for (size_t i = 0; i < r->nevents && binary; i++)
            binary = cm__ch_rowbinary_fits(&r->events[i]);
        ch_op_t *op = binary ? insert_stmt(st, w, cm__ch_rowbinary_events_insert)
                             : insert_op(st, w, "events");
        cm__ch_rb_scratch_t scratch = {CM_JSON_DOC_INIT, CM_BUF_INIT};
        for (size_t i = 0; i < r->nevents; i++) {
            char key[80]; /* 20 digits, a colon, 36 characters */
            if (cm_strset_has(stored, dedup_key(&r->events[i], key, sizeof(key))))
                continue;
            if (binary) {
                cm__ch_rowbinary_event(&op->body, &r->events[i], &scratch);
            } else {
                cm_json_writer_init(&jw, &op->body);
                json_event(&jw, &r->events[i]);
                cm_buf_putc(&op->body, '\n');
            }
            w->inserted++;
        }
        cm__ch_rb_scratch_free(&scratch);
        if (op->body.len)
            *tail = op;
        else
            op_free(op);
    }
    return head;
}

static void finish_write(ch_write_t *w, int status, const char *err)
{
    ch_store_t *st = w->st;
    w->cb(status, err, status ? 0 : w->inserted, w->ud);
    write_free(w);
    maybe_finish_close(st);
}

static void dedup_answer(ch_op_t *op, cm_slice_t body)
{
    ch_write_t *w = op->w;
    cm_strset_t *stored = cm_strset_new(16);
    const char *p = body.p, *end = body.p + body.len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        if (eol > p)
            cm_strset_add(stored, (cm_slice_t){p, (size_t)(eol - p)});
        p = eol + 1;
    }
    ch_op_t *first = build_inserts(op->st, w, stored);
    cm_strset_free(stored);
    if (first == NULL) {
        finish_write(w, 0, NULL);
        return;
    }
    send_op(first);
}

/* ---- sending --------------------------------------------------------------------------- */

static void on_setup_answer(ch_store_t *st, int status, const char *err, cm_slice_t body);

/* A failed query's status. The server's exceptions ("Code: 47. DB::Exception:
 * ..."; any HTTP status, 500 included) are the query's fault: refused
 * (CM_EINVAL), out of time (159 TIMEOUT_EXCEEDED) or too big (158, 307,
 * 396: rows or bytes past max_result_bytes), and so is a Poco::Exception
 * (18.16's unknown time zone); so is any other 4xx but the
 * credentials' and a proxy's time-outs. The credentials (HTTP 401, codes
 * 192-194 and 516), a 503 and a 5xx without an exception (a proxy, a
 * server going away), and a failed exchange are the store's. */
static int query_status(int status, const cm_http_client_res_t *res, int rc)
{
    if (status == CM_ETOOBIG)
        return CM_ETOOBIG; /* past the answer's bound while reading */
    if (status != 0 || res->status == 401 || res->status == 503)
        return rc;
    cm_slice_t b = res->body;
    size_t skip = 0;
    while (skip < b.len && (b.p[skip] == ' ' || b.p[skip] == '\n' || b.p[skip] == '\r'))
        skip++;
    if (b.len - skip > 6 && memcmp(b.p + skip, "Code: ", 6) == 0) {
        int code = 0; /* the body is not NUL-terminated: read the digits by hand */
        for (size_t i = skip + 6; i < b.len && i < skip + 12 && b.p[i] >= '0' && b.p[i] <= '9'; i++)
            code = code * 10 + (b.p[i] - '0');
        if ((code >= 192 && code <= 194) || code == 516)
            return rc;
        return code == 159                                 ? CM_ETIMEDOUT
               : code == 158 || code == 307 || code == 396 ? CM_ETOOBIG
                                                           : CM_EINVAL;
    }
    /* 18.16 prints some of the query's faults (an unknown time zone) as
     * "Poco::Exception. Code: 1000, ...": the server answered, it is up */
    if (b.len > 0 && (memmem(b.p, b.len, "DB::Exception", 13) != NULL ||
                      memmem(b.p, b.len, "Poco::Exception", 15) != NULL))
        return CM_EINVAL;
    int h = res->status;
    if (h >= 400 && h < 500 && h != 401 && h != 403 && h != 407 && h != 408 && h != 429)
        return CM_EINVAL;
    return rc;
}

/* A read given up on its limit goes on in the server (ClickHouse does not
 * stop an HTTP query whose client went away, and checks its own limit only
 * between blocks): stop it, or a tenant retrying a heavy query would stack
 * copies of it there, each holding a core, after the api freed its slot. */
static void kill_query(ch_store_t *st, const char *query_id)
{
    if (st->base.closing || query_id[0] == '\0')
        return;
    ch_op_t *op = op_new(st, OP_KILL);
    cm_buf_appendf(&op->sql, "KILL QUERY WHERE query_id = '%s' ASYNC FORMAT TabSeparated",
                   query_id);
    send_op(op);
}

static void on_http(int status, const cm_http_client_res_t *res, void *ud)
{
    ch_op_t *op = ud;
    ch_store_t *st = op->st;
    char err[300] = "";
    int rc = 0;
    st->in_flight--;
    if (status != 0 || res->status != 200) {
        error_text(err, sizeof(err), res, status);
        rc = status != 0 || res->status >= 500 || res->status == 401 || res->status == 403
                 ? CM_EUNAVAIL
                 : CM_EINVAL;
        if (op->kind == OP_QUERY)
            rc = query_status(status, res, rc);
        if (status == CM_ETIMEDOUT && op->kind == OP_QUERY && op->limit_ms)
            rc = CM_ETIMEDOUT; /* the query's limit (send_op), not the store away */
        if (status != 0 && op->kind == OP_QUERY)
            kill_query(st, op->query_id); /* the request failed, not the query: it may run on */
    }
    cm_slice_t body = rc == 0 ? res->body : CM_SLICE_NULL;
    switch (op->kind) {
    case OP_SETUP: on_setup_answer(st, rc, err, body); break;
    case OP_QUERY:
        if (rc == 0 && body.len > PARSE_ON_LOOP_MAX) {
            parse_later(op, body); /* op is freed once it is answered */
            return;
        }
        answer_query(op, rc, rc ? err : NULL, body);
        maybe_finish_close(st);
        break;
    case OP_KILL:
        if (rc)
            cm_log(CM_LOG_WARN, NULL, "%s: stopping a query given up: %s", st->base.name, err);
        maybe_finish_close(st);
        break;
    case OP_DEDUP:
        if (rc)
            finish_write(op->w, rc, err);
        else
            dedup_answer(op, body);
        break;
    case OP_INSERT:
        if (rc) {
            for (ch_op_t *n = op->chain; n;) { /* the rest is not sent */
                ch_op_t *next = n->chain;
                op_free(n);
                n = next;
            }
            finish_write(op->w, rc, err);
        } else if (op->chain)
            send_op(op->chain);
        else
            finish_write(op->w, 0, NULL);
        break;
    }
    op_free(op);
}

static void send_op(ch_op_t *op)
{
    ch_store_t *st = op->st;
    cm_buf_t url = CM_BUF_INIT;
    cm_buf_append_cstr(&url, st->url);
    const char *headers[7] = {"X-ClickHouse-User", st->user ? st->user : "default", NULL};
    size_t nh = 2;
    if (st->password && st->password[0]) {
        headers[nh++] = "X-ClickHouse-Key";
        headers[nh++] = st->password;
    }
    headers[nh++] = "Content-Type";
    headers[nh++] = "text/plain; charset=utf-8";
    headers[nh] = NULL;
    cm_http_client_req_t req = {
        .method = "POST", .url = NULL, .headers = headers, .timeout_ms = st->timeout_ms};
    /* ClickHouse checks max_execution_time between blocks only, and a cross
     * join's block can take long: the caller's limit holds regardless */
    if (op->limit_ms && op->limit_ms + QUERY_GRACE_MS < (unsigned)st->timeout_ms)
        req.timeout_ms = (int)(op->limit_ms + QUERY_GRACE_MS);
    cm_buf_append(&url, op->settings.p, op->settings.len);
    if (op->kind == OP_INSERT) { /* the statement in the URL, the rows in the body */
        cm_buf_append_cstr(&url, "&query=");
        url_encode(&url, op->sql.p, op->sql.len);
        req.body = op->body.p;
        req.body_len = op->body.len;
    } else {
        req.body = op->sql.p;
        req.body_len = op->sql.len;
    }
    /* Sent again on a fresh connection if a pooled one turns out closed:
     * reads and CREATE IF NOT EXISTS are harmless twice, and a repeated
     * insert is a copy the uuid check or the merge removes. */
    req.idempotent = true;
    /* a bounded answer: the client stops reading past it (the header
     * section has its own 64 KiB bound) */
    if (op->max_bytes != 0)
        req.max_response_bytes = op->max_bytes + (64u << 10);
    req.url = cm_buf_cstr(&url);
    st->in_flight++;
    cm_http_client_request(st->http, &req, on_http, op);
    cm_buf_free(&url);
}

static void on_refused(uv_timer_t *t);

/* Before the tables exist, work waits; afterwards it is sent at once. On
 * a refused schema it fails, from the loop (never inside the caller's
 * call). */
static void submit(ch_store_t *st, ch_op_t *op)
{
    if (st->ready) {
        send_op(op);
        return;
    }
    if (st->waiting_tail)
        st->waiting_tail->next = op;
    else
        st->waiting = op;
    st->waiting_tail = op;
    if (st->refused && !st->base.closing)
        uv_timer_start(&st->retry, on_refused, 0, 0);
}

/* Every waiting read and write fails with the reason the schema was
 * refused; they would otherwise wait for tables this binary cannot know. */
static void on_refused(uv_timer_t *t)
{
    ch_store_t *st = t->data;
    ch_op_t *op = st->waiting;
    st->waiting = st->waiting_tail = NULL;
    while (op) {
        ch_op_t *next = op->next;
        if (op->kind == OP_QUERY)
            answer_query(op, CM_EUNAVAIL, st->refused, CM_SLICE_NULL);
        else
            finish_write(op->w, CM_EUNAVAIL, st->refused);
        op_free(op);
        op = next;
    }
}

/* ---- start: version(), then the DDL one statement at a time ------------------------------ */

static void setup_step(ch_store_t *st);

static void on_retry(uv_timer_t *t)
{
    setup_step(t->data);
}

static void on_setup_answer(ch_store_t *st, int status, const char *err, cm_slice_t body)
{
    if (st->base.closing) {
        maybe_finish_close(st);
        return;
    }
    if (status != 0 && st->setup_phase == SETUP_MIGRATE &&
        cm__ch_error_is(err, st->ddl.stmts[st->ddl_next].done_code)) {
        /* "-- done if code N": this step ran before (evstore_ch_migrations.c) */
        cm_log(CM_LOG_INFO, NULL, "%s: ClickHouse migration %u: a step had run before (code %u)",
               st->base.name, st->ddl.stmts[st->ddl_next].version,
               st->ddl.stmts[st->ddl_next].done_code);
        status = 0;
    }
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "%s: setting up ClickHouse: %s; retrying", st->base.name, err);
        uv_timer_start(&st->retry, on_retry, SETUP_RETRY_MS, 0);
        return;
    }
    switch (st->setup_phase) {
    case SETUP_VERSION:
        snprintf(st->version, sizeof(st->version), "%.*s", (int)line_len(body),
                 body.p ? body.p : "");
        cm_log(CM_LOG_INFO, NULL, "%s: ClickHouse %s", st->base.name, st->version);
        st->setup_phase = SETUP_TABLE;
        break;
    case SETUP_TABLE: st->setup_phase = SETUP_APPLIED; break;
    case SETUP_APPLIED:
        /* max() of no rows is 0: a new database, or one from before the
         * migrations, whose tables migration 1 finds as they are */
        st->applied = (unsigned)strtoul(body.p ? body.p : "0", NULL, 10);
        cm_log(CM_LOG_INFO, NULL, "%s: ClickHouse schema at version %u of %u", st->base.name,
               st->applied, st->ddl.latest);
        if (st->applied > st->ddl.latest) {
            /* a newer binary migrated it: this one's SQL may not fit its
             * tables, and no step of it may run on them */
            cm_buf_t why = CM_BUF_INIT;
            cm_buf_appendf(&why,
                           "ClickHouse schema version %u is newer than this binary's latest "
                           "migration %u: upgrade this service",
                           st->applied, st->ddl.latest);
            st->refused = cm_xstrdup(cm_buf_cstr(&why));
            cm_buf_free(&why);
            cm_log(CM_LOG_ERROR, NULL, "%s: %s", st->base.name, st->refused);
            uv_timer_start(&st->retry, on_refused, 0, 0);
            return;
        }
        st->setup_phase = SETUP_MIGRATE;
        break;
    default: st->ddl_next++; break;
    }
    setup_step(st);
}

static void setup_step(ch_store_t *st)
{
    while (st->setup_phase == SETUP_MIGRATE && st->ddl_next < st->ddl.n &&
           st->ddl.stmts[st->ddl_next].version <= st->applied)
        st->ddl_next++;
    if (st->setup_phase == SETUP_MIGRATE && st->ddl_next == st->ddl.n) {
        st->ready = true;
        while (st->waiting) {
            ch_op_t *op = st->waiting;
            st->waiting = op->next;
            send_op(op);
        }
        st->waiting_tail = NULL;
        return;
    }
    ch_op_t *op = op_new(st, OP_SETUP);
    switch (st->setup_phase) {
    case SETUP_VERSION: cm_buf_append_cstr(&op->sql, "SELECT version()"); break;
    case SETUP_TABLE: cm_buf_append_cstr(&op->sql, st->migrations_ddl); break;
    case SETUP_APPLIED: cm_buf_append_cstr(&op->sql, cm__ch_migrations_applied_sql); break;
    default: cm_buf_append_cstr(&op->sql, st->ddl.stmts[st->ddl_next].sql); break;
    }
    send_op(op);
}

/* ---- the ops ----------------------------------------------------------------------------- */

static void ch_write(cm_evstore_t *es, const cm_evstore_rows_in_t *rows, cm_evstore_write_cb cb,
                     void *ud)
{
    ch_store_t *st = (ch_store_t *)es;
    ch_write_t *w = cm_xcalloc(1, sizeof(*w));
    w->st = st;
    w->cb = cb;
    w->ud = ud;
    /* Copy the rows: every slice into an owned buffer. */
    size_t ntexts =
        rows->nevents * 3 + rows->npersons * 2 + rows->ndistinct_ids * 2 + rows->ngroups * 3;
    w->texts = cm_xcalloc(ntexts + 1, sizeof(cm_buf_t));
    size_t k = 0;
#define KEEP(field)                                                                                \
    do {                                                                                           \
        cm_buf_init(&w->texts[k]);                                                                 \
        cm_buf_append(&w->texts[k], (field).p ? (field).p : "", (field).len);                      \
        cm_buf_putc(&w->texts[k], '\0');                                                           \
        (field) = (cm_slice_t){w->texts[k].p, w->texts[k].len - 1};                                \
        k++;                                                                                       \
    } while (0)
    cm_evstore_event_t *ev = cm_xcalloc(rows->nevents + 1, sizeof(*ev));
    cm_buf_t ids = CM_BUF_INIT; /* uuid and person ids live in one more text */
    for (size_t i = 0; i < rows->nevents; i++) {
        ev[i] = rows->events[i];
        KEEP(ev[i].event);
        cm_slice_t joined = {0};
        cm_buf_reset(&ids);
        cm_buf_appendf(&ids, "%s%c%s", ev[i].uuid, '\0', ev[i].person_id);
        joined = (cm_slice_t){ids.p, ids.len};
        KEEP(joined);
        ev[i].uuid = joined.p;
        ev[i].person_id = joined.p + strlen(joined.p) + 1;
        cm_slice_t both[3] = {ev[i].distinct_id, ev[i].properties, ev[i].person_properties};
        cm_buf_t all = CM_BUF_INIT;
        for (int j = 0; j < 3; j++) {
            cm_buf_append(&all, both[j].p ? both[j].p : "", both[j].len);
            cm_buf_putc(&all, '\0');
        }
        cm_buf_append(&all, ev[i].session_id.p ? ev[i].session_id.p : "", ev[i].session_id.len);
        cm_slice_t a = {all.p, all.len};
        KEEP(a);
        cm_buf_free(&all);
        ev[i].distinct_id = (cm_slice_t){a.p, both[0].len};
        ev[i].properties = (cm_slice_t){a.p + both[0].len + 1, both[1].len};
        ev[i].person_properties = (cm_slice_t){a.p + both[0].len + both[1].len + 2, both[2].len};
        ev[i].session_id =
            (cm_slice_t){a.p + both[0].len + both[1].len + both[2].len + 3, ev[i].session_id.len};
    }
    cm_buf_free(&ids);
    cm_evstore_person_t *ps = cm_xcalloc(rows->npersons + 1, sizeof(*ps));
    for (size_t i = 0; i < rows->npersons; i++) {
        ps[i] = rows->persons[i];
        KEEP(ps[i].properties);
        cm_slice_t id = cm_slice_from_cstr(ps[i].id);
        KEEP(id);
        ps[i].id = id.p;
    }
    cm_evstore_distinct_id_t *ds = cm_xcalloc(rows->ndistinct_ids + 1, sizeof(*ds));
    for (size_t i = 0; i < rows->ndistinct_ids; i++) {
        ds[i] = rows->distinct_ids[i];
        KEEP(ds[i].distinct_id);
        cm_slice_t pid = cm_slice_from_cstr(ds[i].person_id);
        KEEP(pid);
        ds[i].person_id = pid.p;
    }
    cm_evstore_group_t *gs = cm_xcalloc(rows->ngroups + 1, sizeof(*gs));
    for (size_t i = 0; i < rows->ngroups; i++) {
        gs[i] = rows->groups[i];
        KEEP(gs[i].group_type);
        KEEP(gs[i].group_key);
        KEEP(gs[i].properties);
    }
#undef KEEP
    w->rows = (cm_evstore_rows_in_t){ev, rows->nevents,       ps, rows->npersons,
                                     ds, rows->ndistinct_ids, gs, rows->ngroups};
    ch_op_t *op = op_new(st, OP_DEDUP);
    op->w = w;
    cm_buf_append_cstr(&op->sql, "SELECT concat(toString(project_id), ':', toString(uuid))"
                                 " FROM events WHERE ");
    dedup_range(&op->sql, ev, rows->nevents);
    cm_buf_append_cstr(&op->sql, "uuid IN (");
    for (size_t i = 0; i < rows->nevents; i++)
        cm_buf_appendf(&op->sql, "%s'%s'", i ? "," : "", ev[i].uuid);
    if (rows->nevents == 0)
        cm_buf_append_cstr(&op->sql, "'00000000-0000-0000-0000-000000000000'");
    cm_buf_append_cstr(&op->sql, ") FORMAT TabSeparated");
    submit(st, op);
}

static void ch_query(cm_evstore_t *es, const cm_evstore_select_t *q, cm_evstore_query_cb cb,
                     void *ud)
{
    ch_store_t *st = (ch_store_t *)es;
    ch_op_t *op = op_new(st, OP_QUERY);
    op->qcb = cb;
    op->ud = ud;
    /* reads only (settings may change: 2), SQL's NULLs for a JOIN's misses,
     * one core per read (a tenant's heavy reads leave cores to the others);
     * the api's materialized tables are written without readonly */
    cm_buf_append_cstr(&op->settings,
                       q->ddl ? "&join_use_nulls=1" : "&readonly=2&join_use_nulls=1&max_threads=1");
    /* what this server's version needs to read its dialect's SQL (cm/evstore_sql.h) */
    cm_buf_append_cstr(&op->settings, cm_evstore_sql_clickhouse_settings(st->version));
    if (q->replicated && st->cluster != NULL)
        cm_buf_append_cstr(&op->settings,
                           q->ddl ? "&insert_quorum=2" : "&select_sequential_consistency=1");
    op->limit_ms = q->timeout_ms;
    if (!q->ddl) { /* named, so that a read given up can be stopped (kill_query) */
        cm_uuid_v4(op->query_id);
        cm_buf_appendf(&op->settings, "&query_id=%s", op->query_id);
    }
    if (q->timeout_ms > 0)
        cm_buf_appendf(&op->settings, "&max_execution_time=%u&timeout_overflow_mode=throw",
                       (q->timeout_ms + 999) / 1000);
    /* the server stops too (its count is of its blocks in memory, close
     * to the text's size; the client's count above is the exact one) */
    op->max_bytes = q->ddl ? 0 : q->max_bytes;
    if (op->max_bytes != 0)
        cm_buf_appendf(&op->settings, "&max_result_bytes=%zu&result_overflow_mode=throw",
                       op->max_bytes);
    if (q->ddl)
        cm_buf_append_cstr(&op->sql, q->sql);
    else
        cm_buf_appendf(&op->sql, "%s FORMAT TabSeparatedWithNames", q->sql);
    submit(st, op);
}

static const char *ch_cluster(const cm_evstore_t *es, const char **database)
{
    const ch_store_t *st = (const ch_store_t *)es;
    if (st->cluster != NULL && database != NULL)
        *database = st->database ? st->database : "default";
    return st->cluster;
}

static const char *ch_server_version(const cm_evstore_t *es)
{
    return ((const ch_store_t *)es)->version;
}

static bool ch_ready(cm_evstore_t *es, cm_buf_t *why)
{
    ch_store_t *st = (ch_store_t *)es;
    if (st->refused)
        cm_buf_appendf(why, "%s: %s", es->name, st->refused);
    else if (!st->ready)
        cm_buf_appendf(why, "%s: ClickHouse not reached or tables not created yet", es->name);
    return st->ready;
}

/* ---- close ------------------------------------------------------------------------------- */

static void on_http_closed(void *ud)
{
    ch_store_t *st = ud;
    cm_evstore_closed_cb done = st->done;
    void *done_ud = st->done_ud;
    cm__ch_ddl_free(&st->ddl);
    free(st->database);
    free(st->cluster);
    free(st->migrations_ddl);
    free(st->refused);
    free(st->url);
    free(st->user);
    free(st->password);
    cm__evstore_fini(&st->base);
    free(st);
    if (done)
        done(done_ud);
}

static void on_retry_closed(uv_handle_t *h)
{
    ch_store_t *st = h->data;
    cm_http_client_close(st->http, on_http_closed, st);
}

static void maybe_finish_close(ch_store_t *st)
{
    if (!st->base.closing || st->in_flight || st->shut)
        return;
    st->shut = true; /* the callbacks below may come back here: they return at once */
    ch_op_t *op = st->waiting;
    st->waiting = st->waiting_tail = NULL;
    while (op) { /* never sent: the tables never came */
        ch_op_t *next = op->next;
        if (op->kind == OP_QUERY)
            answer_query(op, CM_EUNAVAIL, "closed", CM_SLICE_NULL);
        else
            finish_write(op->w, CM_EUNAVAIL, "closed");
        op_free(op);
        op = next;
    }
    uv_timer_stop(&st->retry);
    uv_close((uv_handle_t *)&st->retry, on_retry_closed);
}

static void ch_close(cm_evstore_t *es, cm_evstore_closed_cb done, void *ud)
{
    ch_store_t *st = (ch_store_t *)es;
    st->done = done;
    st->done_ud = ud;
    maybe_finish_close(st);
}

static const cm__evstore_ops_t clickhouse_ops = {
    .name = "clickhouse",
    .kind = CM_EVSTORE_CLICKHOUSE,
    .write = ch_write,
    .query = ch_query,
    .ready = ch_ready,
    .server_version = ch_server_version,
    .cluster = ch_cluster,
    .close = ch_close,
};

/* The migrations of one server, or of the cluster with its names filled
 * in (a cluster or database name that is not a plain identifier: EINVAL).
 * A parse error means a broken build: the integration tests run both. */
static int setup_ddl(ch_store_t *st, const char *cluster)
{
    if (cluster == NULL || cluster[0] == '\0') {
        st->migrations_ddl = cm_xstrdup(cm__ch_migrations_table_ddl);
        return cm__ch_ddl_parse(cm__evstore_ddl_clickhouse, &st->ddl);
    }
    const char *db = st->database ? st->database : "default";
    char *text = cm__ch_ddl_expand(cm__evstore_ddl_clickhouse_cluster, cluster, db);
    st->migrations_ddl = cm__ch_ddl_expand(cm__ch_migrations_table_ddl_cluster, cluster, db);
    if (text == NULL || st->migrations_ddl == NULL) {
        free(text);
        return CM_EINVAL;
    }
    st->cluster = cm_xstrdup(cluster);
    int rc = cm__ch_ddl_parse(text, &st->ddl);
    free(text);
    return rc;
}

int cm__evstore_open_clickhouse(uv_loop_t *loop, const cm_evstore_opts_t *opts, cm_evstore_t **out)
{
    ch_store_t *st = cm_xcalloc(1, sizeof(*st));
    if (parse_url(st, opts->url) != CM_OK) {
        free(st);
        return CM_EINVAL;
    }
    if (setup_ddl(st, opts->cluster) != CM_OK) {
        cm__ch_ddl_free(&st->ddl);
        free(st->database);
        free(st->cluster);
        free(st->migrations_ddl);
        free(st->url);
        free(st->user);
        free(st->password);
        free(st);
        return CM_EINVAL;
    }
    st->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 30000;
    /* ClickHouse closes idle connections after 3 s (18.16's default):
     * keep them for less, so a pooled one is rarely stale. */
    cm_http_client_opts_t ho = {.timeout_ms = st->timeout_ms,
                                .idle_timeout_ms = 2000,
                                .max_response_bytes = 256u << 20,
                                .name = "clickhouse"};
    if (cm_http_client_new(loop, &ho, &st->http) != CM_OK) {
        cm__ch_ddl_free(&st->ddl);
        free(st->database);
        free(st->cluster);
        free(st->migrations_ddl);
        free(st->url);
        free(st->user);
        free(st->password);
        free(st);
        return CM_EINVAL;
    }
    cm__evstore_init(&st->base, &clickhouse_ops, loop, opts->name);
    uv_timer_init(loop, &st->retry);
    st->retry.data = st;
    setup_step(st);
    *out = &st->base;
    return CM_OK;
}
