/*
 * geoip.c - see geoip.h.
 *
 * Address literals are validated with inet_pton and looked up with
 * MMDB_lookup_sockaddr rather than MMDB_lookup_string: the latter goes
 * through getaddrinfo, which also takes inet_aton's loose forms ("127.1",
 * "0x7f.0.0.1", a bare "3"), and PostHog (Rust's IpAddr parser) rejects
 * those. inet_pton accepts exactly the dotted-quad and RFC 4291 forms.
 *
 * Property values come from the DB file, which we do not control, so they
 * are written with the lossy JSON string writer: a damaged DB can at worst
 * produce U+FFFD, never an invalid response.
 */
#include "serve/geoip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <maxminddb.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"

struct flg_geoip {
    MMDB_s db;
};

/* Property name and the path to its string in a City-schema record. */
typedef struct {
    const char *prop;
    const char *const path[4]; /* NULL-terminated */
} geo_field_t;

/* PostHog's order (rust feature-flags client/geoip.rs). */
static const geo_field_t FIELDS[] = {
    {"$geoip_country_name", {"country", "names", "en", NULL}},
    {"$geoip_city_name", {"city", "names", "en", NULL}},
    {"$geoip_country_code", {"country", "iso_code", NULL}},
    {"$geoip_continent_name", {"continent", "names", "en", NULL}},
    {"$geoip_continent_code", {"continent", "code", NULL}},
    {"$geoip_postal_code", {"postal", "code", NULL}},
    {"$geoip_time_zone", {"location", "time_zone", NULL}},
};

/* ---- opening -------------------------------------------------------------- */

int flg_geoip_open(const char *path, flg_geoip_t **out)
{
    *out = NULL;
    flg_geoip_t *g = cm_xcalloc(1, sizeof(*g));
    int rc = MMDB_open(path, MMDB_MODE_MMAP, &g->db);
    if (rc != MMDB_SUCCESS) {
        /* For open and read failures the useful part ("No such file") is errno. */
        int saved = errno;
        bool io = rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR;
        cm_log(CM_LOG_ERROR, NULL, "cannot open GeoIP database %s: %s%s%s", path, MMDB_strerror(rc),
               io ? ": " : "", io ? strerror(saved) : "");
        free(g);
        return CM_EIO;
    }
    const char *type = g->db.metadata.database_type;
    cm_log(CM_LOG_INFO, NULL, "GeoIP database %s opened (%s, IPv%u)", path, type ? type : "untyped",
           (unsigned)g->db.metadata.ip_version);
    *out = g;
    return 0;
}

void flg_geoip_close(flg_geoip_t *g)
{
    if (!g)
        return;
    MMDB_close(&g->db);
    free(g);
}

/* PostHog skips exactly these two (compared as canonical text there). */
static bool is_skipped_loopback(const cm_ip_addr_t *a)
{
    if (a->sa.sa_family == AF_INET)
        return ntohl(a->v4.sin_addr.s_addr) == INADDR_LOOPBACK;
    return IN6_IS_ADDR_LOOPBACK(&a->v6.sin6_addr);
}

/* ---- lookup ----------------------------------------------------------------- */

/* Writes one property if the record holds a string at its path. */
static int write_field(MMDB_entry_s *entry, const geo_field_t *f, cm_json_writer_t *w)
{
    MMDB_entry_data_s d;
    if (MMDB_aget_value(entry, &d, f->path) != MMDB_SUCCESS)
        return 0; /* the path is absent or runs into a non-map */
    if (!d.has_data || d.type != MMDB_DATA_TYPE_UTF8_STRING)
        return 0; /* PostHog takes strings only */
    cm_json_key(w, f->prop);
    cm_json_str_lossy(w, (cm_slice_t){d.utf8_string, d.data_size});
    return 1;
}

int flg_geoip_lookup(const flg_geoip_t *g, const char *ip, cm_json_writer_t *w)
{
    cm_ip_addr_t a;
    if (!g || !ip || !cm_ip_parse(ip, strlen(ip), &a) || is_skipped_loopback(&a))
        return 0;

    int mmdb_err = MMDB_SUCCESS;
    MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&g->db, &a.sa, &mmdb_err);
    if (mmdb_err != MMDB_SUCCESS) {
        /* e.g. an IPv6 address against an IPv4-only DB: just no data. */
        cm_log(CM_LOG_DEBUG, NULL, "GeoIP lookup of %s failed: %s", ip, MMDB_strerror(mmdb_err));
        return 0;
    }
    if (!r.found_entry)
        return 0;

    int n = 0;
    for (size_t i = 0; i < CM_ARRAY_LEN(FIELDS); i++)
        n += write_field(&r.entry, &FIELDS[i], w);
    return n;
}
