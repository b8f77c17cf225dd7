/*
 * password.c - `api admin password EMAIL`: sets a user's password, as Django's
 * `changepassword` does. The password comes on stdin, never in argv (argv is
 * visible to every user of the machine): one line, or asked twice without
 * echo when stdin is a terminal. The HTTP API's rules apply (8 to 128
 * bytes, http/http.h) and the hash is its argon2id (http/password.c). The
 * reading and the hashing block, so they happen before the loop starts.
 */
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "admin/admin_int.h"
#include "http/http.h"
#include "store/store.h"

/* One line of stdin into buf (the newline, and a CR before it, dropped).
 * -1 at end of input or on a line longer than buf holds. */
static int read_line(char *buf, size_t size)
{
    if (fgets(buf, (int)size, stdin) == NULL)
        return -1;
    size_t n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    else if (!feof(stdin))
        return -1; /* longer than size: not cut short silently */
    if (n > 0 && buf[n - 1] == '\r')
        buf[--n] = '\0';
    return (int)n;
}

/* Asks on stderr with echo off (a terminal), then reads the line. */
static int ask(const char *prompt, char *buf, size_t size)
{
    struct termios old, quiet;
    bool tty = tcgetattr(STDIN_FILENO, &old) == 0;
    fputs(prompt, stderr);
    fflush(stderr);
    if (tty) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    int n = read_line(buf, size);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    return n;
}

int admin_password_prepare(void)
{
    char first[API_PASSWORD_MAX_BYTES + 2], again[API_PASSWORD_MAX_BYTES + 2];
    int rc = 1, n;
    bool tty = isatty(STDIN_FILENO);
    if (tty)
        n = ask("New password: ", first, sizeof(first));
    else
        n = read_line(first, sizeof(first));
    if (n < 0 && !feof(stdin)) {
        fprintf(stderr, "api admin: the password has at most %d bytes\n", API_PASSWORD_MAX_BYTES);
        goto done;
    }
    if (n < API_PASSWORD_MIN_BYTES || n > API_PASSWORD_MAX_BYTES) {
        fprintf(stderr, "api admin: the password has %d to %d bytes, on one line of stdin\n",
                API_PASSWORD_MIN_BYTES, API_PASSWORD_MAX_BYTES);
        goto done;
    }
    if (tty &&
        (ask("New password (again): ", again, sizeof(again)) != n || strcmp(first, again) != 0)) {
        fprintf(stderr, "api admin: the two passwords differ\n");
        goto done;
    }
    if (api_password_hash(first, admin_cmd.password_hash, sizeof(admin_cmd.password_hash)) != 0) {
        fprintf(stderr, "api admin: the password could not be hashed\n");
        goto done;
    }
    rc = 0;
done:
    explicit_bzero(first, sizeof(first));
    explicit_bzero(again, sizeof(again));
    return rc;
}

static void on_set(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("password", res);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    if (admin_cmd.json) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        cm_json_begin_object(&w);
        cm_json_key(&w, "email");
        cm_json_str_cstr(&w, admin_cmd.email);
        cm_json_key(&w, "password_set");
        cm_json_boolean(&w, true);
        cm_json_end_object(&w);
    } else {
        cm_buf_appendf(&out, "the password of %s is set", admin_cmd.email);
    }
    admin_print(&out);
}

static void set_for(const char *user_id)
{
    api_store_user_update(admin_cmd.ctx->db, user_id, NULL, NULL, admin_cmd.password_hash, on_set,
                          NULL);
}

void admin_password_set(void)
{
    admin_with_user(set_for);
}
