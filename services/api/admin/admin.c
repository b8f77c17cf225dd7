/*
 * admin.c - `api admin ...` (admin.h): the command line read into
 * admin_cmd, the dispatch to the command's file, and how a command ends.
 * Errors go to stderr with exit status 1; a usage error exits 2 before
 * anything is opened.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"
#include "http/http.h"
#include "store/store.h"

admin_cmd_t admin_cmd;

static int status;
static void (*finish_fn)(void *);
static void (*user_then)(const char *user_id);

static const char usage[] =
    "usage: api admin COMMAND [--json]   (the store of DATABASE_URL; docs/admin.md)\n"
    "  keys list EMAIL                   the user's personal API keys (never their values)\n"
    "  keys create EMAIL [--scope SCOPE]... [--label LABEL]\n"
    "                                    a new personal API key (scope * unless given),\n"
    "                                    printed this once\n"
    "  keys revoke KEY                   KEY: the key's id, the start of its id (8+\n"
    "                                    characters), or the key itself (phx_...)\n"
    "  password EMAIL                    sets the user's password, read from stdin\n"
    "                                    (asked twice on a terminal)\n"
    "  org add-member ORG EMAIL ROLE     ORG: the organization's id or name;\n"
    "                                    ROLE: member, admin or owner\n"
    "  bootstrap-info                    the first organization, project, project token\n"
    "                                    and user again\n";

static int bad_usage(const char *why, const char *what)
{
    if (why)
        fprintf(stderr, "api admin: %s%s%s\n", why, what ? ": " : "", what ? what : "");
    fputs(usage, stderr);
    return 2;
}

/* PostHog's OrganizationMembership levels. */
static const char *role_level(const char *role)
{
    if (strcmp(role, "member") == 0)
        return "1";
    if (strcmp(role, "admin") == 0)
        return "8";
    if (strcmp(role, "owner") == 0)
        return "15";
    return NULL;
}

static bool set_email(const char *arg)
{
    return api_email_normalize((cm_slice_t){arg, strlen(arg)}, admin_cmd.email,
                               sizeof(admin_cmd.email));
}

/* --scope and --label of keys create; the positional words into pos. */
static int read_options(int argc, char **argv, const char **pos, int *npos)
{
    *npos = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool scope = strcmp(a, "--scope") == 0, label = strcmp(a, "--label") == 0;
        if (strcmp(a, "--json") == 0) {
            admin_cmd.json = true;
        } else if (scope || label) {
            if (i + 1 >= argc)
                return bad_usage("a value is missing after", a);
            const char *v = argv[++i];
            if (label) {
                admin_cmd.label = v;
            } else {
                if (admin_cmd.nscopes == ADMIN_MAX_SCOPES)
                    return bad_usage("too many --scope options", NULL);
                admin_cmd.scopes[admin_cmd.nscopes++] = v;
            }
        } else if (a[0] == '-' && a[1] == '-') {
            return bad_usage("unknown option", a);
        } else if (*npos < 5) {
            pos[(*npos)++] = a;
        } else {
            return bad_usage("too many arguments", NULL);
        }
    }
    return 0;
}

static int parse_keys(const char **pos, int npos)
{
    if (npos < 2)
        return bad_usage("keys: list, create or revoke, and its argument", NULL);
    if (strcmp(pos[1], "revoke") == 0) {
        if (npos != 3)
            return bad_usage("keys revoke needs the key (its id, the start of its id or the key)",
                             NULL);
        admin_cmd.kind = ADMIN_KEYS_REVOKE;
        admin_cmd.target = pos[2];
        return 0;
    }
    if (strcmp(pos[1], "list") == 0)
        admin_cmd.kind = ADMIN_KEYS_LIST;
    else if (strcmp(pos[1], "create") == 0)
        admin_cmd.kind = ADMIN_KEYS_CREATE;
    else
        return bad_usage("unknown keys command", pos[1]);
    if (npos != 3)
        return bad_usage("the user's email is missing", NULL);
    if (!set_email(pos[2]))
        return bad_usage("not an email address", pos[2]);
    return 0;
}

int api_admin_parse(int argc, char **argv)
{
    const char *pos[5];
    int npos, rc = read_options(argc, argv, pos, &npos);
    if (rc != 0)
        return rc;
    if (npos == 0)
        return bad_usage(NULL, NULL);
    if ((admin_cmd.label || admin_cmd.nscopes) &&
        !(npos >= 2 && strcmp(pos[0], "keys") == 0 && strcmp(pos[1], "create") == 0))
        return bad_usage("--scope and --label belong to keys create", NULL);
    if (strcmp(pos[0], "keys") == 0)
        return parse_keys(pos, npos);
    if (strcmp(pos[0], "password") == 0) {
        if (npos != 2)
            return bad_usage("password takes the user's email (the password comes on stdin)", NULL);
        if (!set_email(pos[1]))
            return bad_usage("not an email address", pos[1]);
        admin_cmd.kind = ADMIN_PASSWORD;
        return 0;
    }
    if (strcmp(pos[0], "org") == 0) {
        if (npos < 2 || strcmp(pos[1], "add-member") != 0)
            return bad_usage("unknown org command", npos < 2 ? NULL : pos[1]);
        if (npos != 5)
            return bad_usage("org add-member takes ORG EMAIL ROLE", NULL);
        admin_cmd.kind = ADMIN_ORG_ADD_MEMBER;
        admin_cmd.target = pos[2];
        if (!set_email(pos[3]))
            return bad_usage("not an email address", pos[3]);
        admin_cmd.role = pos[4];
        admin_cmd.level = role_level(pos[4]);
        if (admin_cmd.level == NULL)
            return bad_usage("the role is member, admin or owner, not", pos[4]);
        return 0;
    }
    if (strcmp(pos[0], "bootstrap-info") == 0) {
        if (npos != 1)
            return bad_usage("bootstrap-info takes no argument", NULL);
        admin_cmd.kind = ADMIN_BOOTSTRAP_INFO;
        return 0;
    }
    return bad_usage("unknown command", pos[0]);
}

int api_admin_prepare(void)
{
    return admin_cmd.kind == ADMIN_PASSWORD ? admin_password_prepare() : 0;
}

int api_admin_status(void)
{
    return status;
}

void admin_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("api admin: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    status = 1;
    finish_fn(NULL);
}

void admin_fail_db(const char *what, const cm_db_res_t *res)
{
    admin_fail("%s: the store answered: %s", what, cm_db_error(res));
}

void admin_print(cm_buf_t *out)
{
    fwrite(out->p, 1, out->len, stdout);
    if (out->len == 0 || out->p[out->len - 1] != '\n')
        fputc('\n', stdout);
    fflush(stdout);
    cm_buf_free(out);
    finish_fn(NULL);
}

static void on_user(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0)
        admin_fail_db("looking the user up", res);
    else if (cm_db_nrows(res, 0) == 0)
        admin_fail("no user has the email %s (`api adduser %s` makes one)", admin_cmd.email,
                   admin_cmd.email);
    else
        user_then(cm_db_value(res, 0, 0, 0));
}

void admin_with_user(void (*then)(const char *user_id))
{
    user_then = then;
    api_store_user_by_email(admin_cmd.ctx->db, admin_cmd.email, on_user, NULL);
}

void api_admin_run(api_ctx_t *ctx, void (*finish)(void *ud))
{
    char store[512];
    admin_cmd.ctx = ctx;
    finish_fn = finish;
    /* the operator sees which store the command changes (stdout stays the answer's) */
    api_admin_store_name(ctx->cfg.database_url, store, sizeof(store));
    fprintf(stderr, "api admin: store %s\n", store);
    switch (admin_cmd.kind) {
    case ADMIN_KEYS_LIST: admin_keys_list(); break;
    case ADMIN_KEYS_CREATE: admin_keys_create(); break;
    case ADMIN_KEYS_REVOKE: admin_keys_revoke(); break;
    case ADMIN_PASSWORD: admin_password_set(); break;
    case ADMIN_ORG_ADD_MEMBER: admin_org_add_member(); break;
    case ADMIN_BOOTSTRAP_INFO: admin_bootstrap_info(); break;
    }
}
