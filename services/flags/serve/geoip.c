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

/* An address parsed from text; the sockaddr MMDB wants. */
typedef union {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
} geo_addr_t;

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
        cm_log(CM_LOG_ERROR, NULL, "cannot open GeoIP database %s: %s%s%s", path,
               MMDB_strerror(rc), io ? ": " : "", io ? strerror(saved) : "");
        free(g);
        return CM_EIO;
    }
    const char *type = g->db.metadata.database_type;
    cm_log(CM_LOG_INFO, NULL, "GeoIP database %s opened (%s, IPv%u)", path,
           type ? type : "untyped", (unsigned)g->db.metadata.ip_version);
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

/* ---- address literals ----------------------------------------------------- */

/*
 * Parses p[0..len) as a strict IPv4 or IPv6 literal (no port, no zone, no
 * surrounding spaces). False for anything else, including embedded NULs.
 */
static bool parse_literal(const char *p, size_t len, geo_addr_t *a)
{
    char tmp[FLG_IP_BUFLEN];
    if (!p || len == 0 || len >= sizeof(tmp) || memchr(p, '\0', len))
        return false;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, tmp, &a->v4.sin_addr) == 1) {
        a->v4.sin_family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, tmp, &a->v6.sin6_addr) == 1) {
        a->v6.sin6_family = AF_INET6;
        return true;
    }
    return false;
}

/* PostHog skips exactly these two (compared as canonical text there). */
static bool is_skipped_loopback(const geo_addr_t *a)
{
    if (a->sa.sa_family == AF_INET)
        return ntohl(a->v4.sin_addr.s_addr) == INADDR_LOOPBACK;
    return IN6_IS_ADDR_LOOPBACK(&a->v6.sin6_addr);
}

/* Canonical text of a into buf; false if it does not fit. */
static bool format_addr(const geo_addr_t *a, char *buf, size_t n)
{
    const void *bytes = a->sa.sa_family == AF_INET ? (const void *)&a->v4.sin_addr
                                                   : (const void *)&a->v6.sin6_addr;
    socklen_t len = (socklen_t)CM_MIN(n, (size_t)INT32_MAX);
    return buf && inet_ntop(a->sa.sa_family, bytes, buf, len) != NULL;
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
    geo_addr_t a;
    if (!g || !ip || !parse_literal(ip, strlen(ip), &a) || is_skipped_loopback(&a))
        return 0;

    int mmdb_err = MMDB_SUCCESS;
    MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&g->db, &a.sa, &mmdb_err);
    if (mmdb_err != MMDB_SUCCESS) {
        /* e.g. an IPv6 address against an IPv4-only DB: just no data. */
        cm_log(CM_LOG_DEBUG, NULL, "GeoIP lookup of %s failed: %s", ip,
               MMDB_strerror(mmdb_err));
        return 0;
    }
    if (!r.found_entry)
        return 0;

    int n = 0;
    for (size_t i = 0; i < CM_ARRAY_LEN(FIELDS); i++)
        n += write_field(&r.entry, &FIELDS[i], w);
    return n;
}

/* ---- client IP ------------------------------------------------------------ */

/*
 * Removes a port the way PostHog's extract_client_ip does: "[v6]:port" or
 * "[v6]" keeps what is inside the brackets; text with a '.' whose last ':'
 * comes after its last '.' is "v4:port"; anything else (plain IPv6, where
 * colons belong to the address) is left alone.
 */
static cm_slice_t strip_port(cm_slice_t s)
{
    if (s.len > 0 && s.p[0] == '[') {
        const char *close = memchr(s.p, ']', s.len);
        size_t end = close ? (size_t)(close - s.p) : s.len;
        return (cm_slice_t){s.p + 1, end - 1};
    }
    size_t dot = s.len, colon = s.len;
    for (size_t i = 0; i < s.len; i++) {
        if (s.p[i] == '.')
            dot = i;
        else if (s.p[i] == ':')
            colon = i;
    }
    if (dot < s.len && colon < s.len && colon > dot)
        return (cm_slice_t){s.p, colon};
    return s;
}

/* The entry of a comma-separated list that starts at *pos; advances *pos. */
static cm_slice_t next_entry(cm_slice_t list, size_t *pos)
{
    const char *start = list.p + *pos;
    size_t left = list.len - *pos;
    const char *comma = memchr(start, ',', left);
    size_t len = comma ? (size_t)(comma - start) : left;
    *pos += len + (comma ? 1 : 0);
    return cm_slice_trim((cm_slice_t){start, len});
}

const char *flg_client_ip(cm_slice_t xff, const char *peer, char *buf, size_t n)
{
    if (!xff.p || xff.len == 0)
        return peer;
    geo_addr_t a;
    size_t pos = 0;
    cm_slice_t first = next_entry(xff, &pos);
    cm_slice_t bare = strip_port(first);
    if (parse_literal(bare.p, bare.len, &a))
        return format_addr(&a, buf, n) ? buf : peer;

    /* Fallback: the leftmost entry that is a literal as written. */
    for (pos = 0; pos < xff.len;) {
        cm_slice_t e = next_entry(xff, &pos);
        if (parse_literal(e.p, e.len, &a))
            return format_addr(&a, buf, n) ? buf : peer;
    }
    return peer;
}
