/*
 * main.c - the api service: configuration, wiring, the loop, the drain.
 *
 *   api              serve (API_PORT): migrate the store, republish every
 *                    project to Redis, then answer routes.c's table
 *   api bootstrap    on an empty store, make a demo organization, user,
 *                    project and personal API key and print them (the key
 *                    and password only this once); on a populated store,
 *                    print what exists. No HTTP. Used by `make run`.
 *   api adduser EMAIL
 *                    a new organization owned by a new user EMAIL, with a
 *                    project and a personal API key (scope *), printed as
 *                    bootstrap prints; the serving api publishes them
 *                    within PUBLISH_RETRY. No HTTP.
 *   api admin ...    an operator's commands on the store: personal API keys,
 *                    a password, a membership, bootstrap's answer again
 *                    (admin/admin.h, docs/admin.md). No HTTP.
 * The one-shot commands (all but serving) refuse to run on the default
 * store: DATABASE_URL must be set, or --store-default given (docs/admin.md).
 *
 * SIGTERM: stop accepting, finish requests in progress, let the publisher
 * finish the project it is writing, close the store and Redis, exit 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "admin/admin.h"
#include "api.h"
#include "bootstrap.h"
#include "cm/cli.h"
#include "metrics.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/service.h"
#include "cm/signals.h"
#include "endpoints/endpoints.h"
#include "oauth/oauth.h"
#include "publish/publish.h"
#include "http/admit.h"
#include "http/page_cache.h"
#include "store/store.h"

static api_ctx_t ctx;
static cm_signals_t *signals;
static uv_timer_t migrate_retry;
static int exit_code;
/* `api bootstrap`, `adduser`, `oauth-verify`: no HTTP; seed, summarise or mark, then exit */
static bool bootstrap;
static api_bootstrap_args_t boot_args;
static bool admin;         /* `api admin ...` (one-shot as well) */
static bool store_default; /* --store-default: the default DATABASE_URL is meant */

static bool ready(void *ud, cm_buf_t *why)
{
    api_ctx_t *c = ud;
    if (!cm_db_ready(c->db, why))
        return false;
    if (!c->migrated) {
        cm_buf_append_cstr(why, "store: migrating");
        return false;
    }
    if (!cm_redis_connected(c->redis)) {
        cm_buf_append_cstr(why, "redis: not connected");
        return false;
    }
    return true;
}

static void redis_closed(void *ud)
{
    (void)ud;
    cm_signals_close(signals);
}

static void db_closed(void *ud)
{
    (void)ud;
    if (ctx.redis)
        cm_redis_close(ctx.redis, redis_closed, NULL);
    else
        redis_closed(NULL);
}

static void events_closed(void *ud)
{
    (void)ud;
    cm_db_close(ctx.db, db_closed, NULL);
}

static void retry_closed(uv_handle_t *h)
{
    (void)h;
    if (ctx.events)
        cm_evstore_close(ctx.events, events_closed, NULL);
    else
        events_closed(NULL);
}

static void publisher_closed(void *ud)
{
    (void)ud;
    uv_close((uv_handle_t *)&migrate_retry, retry_closed);
}

static void oauth_closed(void *ud)
{
    (void)ud;
    ctx.oauth = NULL;
    api_publisher_close(ctx.publisher, publisher_closed, NULL);
}

static void materializer_closed(void *ud)
{
    (void)ud;
    ctx.materializer = NULL;
    if (ctx.oauth)
        api_oauth_close(ctx.oauth, oauth_closed, NULL);
    else
        oauth_closed(NULL);
}

static void http_drained(void *ud)
{
    (void)ud;
    if (ctx.admit) /* freed by itself once its running reads end */
        api_admit_close(ctx.admit);
    if (ctx.http)
        cm_http_server_free(ctx.http);
    api_endpoints_memo_free();
    if (ctx.materializer)
        api_materializer_close(ctx.materializer, materializer_closed, NULL);
    else
        materializer_closed(NULL);
}

static void on_term(void *ud)
{
    (void)ud;
    uv_timer_stop(&migrate_retry);
    if (ctx.http)
        cm_http_server_drain(ctx.http, (uint64_t)ctx.cfg.svc.drain_timeout_ms, http_drained, NULL);
    else
        http_drained(NULL);
}

static void migrate(void);

static void on_migrate_retry(uv_timer_t *t)
{
    (void)t;
    migrate();
}

static void on_migrated(int status, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (status == CM_EUNAVAIL) { /* the database is not up yet: keep trying */
        cm_log(CM_LOG_WARN, NULL, "store: %s; retrying", cm_db_error(res));
        uv_timer_start(&migrate_retry, on_migrate_retry, 1000, 0);
        return;
    }
    if (status != 0) {
        cm_log(CM_LOG_ERROR, NULL, "store: migration failed: %s", cm_db_error(res));
        exit_code = 1;
        on_term(NULL);
        return;
    }
    ctx.migrated = true;
    if (admin) {
        api_admin_run(&ctx, on_term);
        return;
    }
    if (bootstrap) {
        api_bootstrap_run(&ctx, &boot_args, on_term);
        return;
    }
    api_publisher_republish_all(ctx.publisher);
}

static void migrate(void)
{
    cm_db_migrate(ctx.db, api_store_migrations, api_store_nmigrations, on_migrated, NULL);
}

static int start(void)
{
    if (cm_db_open(
            ctx.loop,
            &(cm_db_opts_t){.url = ctx.cfg.database_url, .name = "store", .metrics = ctx.metrics},
            &ctx.db) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "DATABASE_URL: use sqlite:<path> or postgres://...");
        return CM_EINVAL;
    }
    cm_redis_opts_t ro = {
        .url = ctx.cfg.svc.redis_url, .name = "redis", .command_timeout_ms = 5000};
    if (!bootstrap &&
        cm_redis_new(ctx.loop, &ro, &ctx.redis) != 0) { /* bootstrap publishes nothing */
        cm_log(CM_LOG_ERROR, NULL, "REDIS_URL is not a valid redis:// URL");
        return CM_EINVAL;
    }
    char events_url[4096];
    if (ctx.cfg.clickhouse_url[0])
        snprintf(events_url, sizeof(events_url), "%s", ctx.cfg.clickhouse_url);
    else
        snprintf(events_url, sizeof(events_url), "sqlite:%s", ctx.cfg.events_sqlite);
    if (!bootstrap &&
        cm_evstore_open(ctx.loop,
                        &(cm_evstore_opts_t){.url = events_url,
                                             .name = "events",
                                             .cluster = ctx.cfg.clickhouse_cluster,
                                             .readers = (unsigned)ctx.cfg.events_readers,
                                             .metrics = ctx.metrics},
                        &ctx.events) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "cannot open the event store (CLICKHOUSE_URL / EVENTS_DB)");
        return CM_EINVAL;
    }
    ctx.publisher = api_publisher_new(&ctx);
    uv_timer_init(ctx.loop, &migrate_retry);
    migrate();
    if (bootstrap)
        return CM_OK;
    ctx.admit = api_admit_new(&ctx);
    ctx.materializer = api_materializer_new(&ctx, (uint64_t)ctx.cfg.materialize_check_ms);
    ctx.oauth = api_oauth_new(&ctx);
    ctx.pages = api_page_cache_new(ctx.cfg.page_cache_bytes);
    ctx.http = cm_service_http_new(ctx.loop, "api", &ctx.cfg.svc, ctx.metrics, ready, &ctx);
    api_routes(&ctx);
    return cm_service_http_listen(ctx.http, &ctx.cfg.svc);
}

/* --help's text; the commands themselves are dispatched in main(). */
static const cm_cli_t api_cli = {
    "api", "the application API (organizations, projects, flags, queries, insights, OAuth)",
    "  bootstrap        the first organization, user, project and personal API key\n"
    "  adduser EMAIL    another user, in an organization of their own\n"
    "  oauth-verify CLIENT_ID, oauth-unverify CLIENT_ID\n"
    "                   mark an OAuth app verified or not on the consent page\n"
    "  admin ...        keys list|create|revoke, password, org add-member,\n"
    "                   bootstrap-info (docs/admin.md)\n",
    "The commands use the store the configuration names (DATABASE_URL) and exit;\n"
    "they refuse to run without one unless --store-default is given.\n"};

/* Takes --store-default out of a one-shot command's arguments. */
static int take_store_default(int argc, char **argv)
{
    if (argc <= 2)
        return argc;
    int n = 2;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--store-default") == 0)
            store_default = true;
        else
            argv[n++] = argv[i];
    }
    argv[n] = NULL; /* n <= argc: within argv */
    return n;
}

int main(int argc, char **argv)
{
    bool printed;
    int rc = cm_cli_handle(&api_cli, argc, argv); /* --help, --version, unknown options */
    if (rc >= 0)
        return rc;
    argc = take_store_default(argc, argv);
    bootstrap = argc > 1 && strcmp(argv[1], "bootstrap") == 0;
    if (argc == 3 && strcmp(argv[1], "adduser") == 0) {
        bootstrap = true;
        boot_args.new_user_email = argv[2];
    }
    if (argc == 3 &&
        (strcmp(argv[1], "oauth-verify") == 0 || strcmp(argv[1], "oauth-unverify") == 0)) {
        bootstrap = true;
        boot_args.verify_client = argv[2];
        boot_args.verify_value = strcmp(argv[1], "oauth-verify") == 0;
    }
    if (argc > 1 && strcmp(argv[1], "admin") == 0) {
        rc = api_admin_parse(argc - 2, argv + 2);
        if (rc != 0)
            return rc;
        admin = bootstrap = true;
    }
    if (cm_service_config("api", argc, argv, api_config_keys, api_config_nkeys, &ctx.cfg,
                          &ctx.cfg.svc, &printed) != CM_OK)
        return 2; /* bad configuration, reported */
    if (printed)
        return 0;
    if (argc > 1 && !bootstrap) {
        fprintf(stderr, "usage: api [bootstrap | adduser EMAIL | oauth-verify CLIENT_ID |"
                        " oauth-unverify CLIENT_ID | admin ... | --print-config]"
                        " [--store-default]\n");
        return 2;
    }
    if (bootstrap && !store_default && !api_config_store_explicit()) {
        fprintf(stderr,
                "api %s: DATABASE_URL is not set, so this would use the default store %s, which "
                "the serving api may not read. Set DATABASE_URL as the api's environment has it "
                "(postgres://user:password@host:port/db or sqlite:<path>), or add "
                "--store-default if the default is meant (make run sets DATABASE_URL).\n",
                argv[1], ctx.cfg.database_url);
        return 2;
    }
    if (admin && api_admin_prepare() != 0)
        return 1;
    ctx.loop = uv_default_loop();
    ctx.metrics = cm_metrics_new();
    static api_metrics_t api_metrics; /* lives as long as the process: routes point at it */
    api_metrics_init(&api_metrics, ctx.metrics);
    ctx.m = &api_metrics;
    signals = cm_signals_start(ctx.loop, on_term, NULL); /* runs only once the loop does */
    if (start() != 0)
        return 1;
    uv_run(ctx.loop, UV_RUN_DEFAULT);
    rc = cm_service_finish(ctx.loop, api_config_keys, api_config_nkeys, &ctx.cfg);
    api_page_cache_free(ctx.pages);
    cm_metrics_free(ctx.metrics);
    if (rc == 0 && bootstrap)
        rc = admin ? api_admin_status() : api_bootstrap_status();
    return rc ? rc : exit_code;
}
