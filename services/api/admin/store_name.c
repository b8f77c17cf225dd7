/*
 * store_name.c - DATABASE_URL as `api bootstrap` and `api admin` show it, so
 * that an operator sees which store a command changed: a SQLite file by its
 * absolute path (a relative one depends on the directory the command ran
 * in), PostgreSQL as postgres://user@host:port/database. The password and
 * the query string (libpq takes a password there too) are left out.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "admin/admin.h"

static void sqlite_name(const char *path, char *out, size_t size)
{
    char cwd[4096];
    if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL) {
        const char *rest = strncmp(path, "./", 2) == 0 ? path + 2 : path;
        snprintf(out, size, "sqlite:%s/%s", cwd, rest);
    } else {
        snprintf(out, size, "sqlite:%s", path);
    }
}

void api_admin_store_name(const char *url, char *out, size_t size)
{
    if (strncmp(url, "sqlite:", 7) == 0) {
        sqlite_name(url + 7, out, size);
        return;
    }
    const char *scheme_end = strstr(url, "://");
    if (scheme_end == NULL) { /* not a URL cm_db opens: nothing of it is shown */
        snprintf(out, size, "(not a sqlite: or postgres:// URL)");
        return;
    }
    const char *auth = scheme_end + 3;
    size_t auth_len = strcspn(auth, "/?#");
    /* user[:password]@host: the last '@' before the path ends the user part */
    const char *host = auth;
    size_t user_len = 0;
    for (size_t i = 0; i < auth_len; i++)
        if (auth[i] == '@')
            host = auth + i + 1;
    if (host != auth)
        user_len = strcspn(auth, ":@");
    size_t host_len = auth_len - (size_t)(host - auth);
    const char *db = auth + auth_len;
    size_t db_len = 0;
    if (*db == '/') {
        db++;
        db_len = strcspn(db, "?#");
    }
    snprintf(out, size, "%.*s://%.*s%s%.*s/%.*s", (int)(scheme_end - url), url, (int)user_len, auth,
             user_len ? "@" : "", (int)host_len, host, (int)db_len, db);
}
