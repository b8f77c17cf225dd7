/* admin_int.h - what the files of admin/ share: the parsed command and the
 * way a command ends (admin.c). */
#ifndef API_ADMIN_INT_H
#define API_ADMIN_INT_H

#include <stdbool.h>

#include "admin/admin.h"
#include "cm/buf.h"
#include "cm/common.h"
#include "cm/db.h"
#include "cm/json.h"

typedef enum {
    ADMIN_KEYS_LIST,
    ADMIN_KEYS_CREATE,
    ADMIN_KEYS_REVOKE,
    ADMIN_PASSWORD,
    ADMIN_ORG_ADD_MEMBER,
    ADMIN_BOOTSTRAP_INFO,
} admin_kind_t;

#define ADMIN_MAX_SCOPES 64

typedef struct {
    admin_kind_t kind;
    bool json;
    char email[256];    /* normalized, for the commands that name a user */
    const char *target; /* keys revoke: the key; org add-member: the organization (argv) */
    const char *role;   /* org add-member: member, admin or owner */
    const char *level;  /* its level: "1", "8", "15" */
    const char *label;  /* keys create (argv, or the default) */
    const char *scopes[ADMIN_MAX_SCOPES];
    size_t nscopes;
    char password_hash[128]; /* password: argon2id, made by admin_password_prepare */
    api_ctx_t *ctx;
} admin_cmd_t;

extern admin_cmd_t admin_cmd;

/* Ends the command with exit status 1 after "api admin: <why>" on stderr. */
void admin_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A store error, as admin_fail. */
void admin_fail_db(const char *what, const cm_db_res_t *res);
/* Prints out (and a newline) on stdout, frees it, ends the command. */
void admin_print(cm_buf_t *out);
/* Looks admin_cmd.email up and calls then(user_id) (the id valid during
 * the call only), or fails naming the email. */
void admin_with_user(void (*then)(const char *user_id));

/* The commands (one file per family). */
void admin_keys_list(void);
void admin_keys_create(void);
void admin_keys_revoke(void);
int admin_password_prepare(void);
void admin_password_set(void);
void admin_org_add_member(void);
void admin_bootstrap_info(void);

#endif
