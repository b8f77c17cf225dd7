/*
 * geoip.h - the client IP of a /flags request and the $geoip_* person
 * properties PostHog derives from it (docs: notes on flags, section 6.5).
 *
 * With GEOIP_DB pointing at a MaxMind DB in the GeoIP2/GeoLite2 City
 * schema, the service looks the client address up and produces up to seven
 * string properties, each only when the DB record has that field as a
 * string:
 *
 *   $geoip_country_name    country.names.en
 *   $geoip_city_name       city.names.en
 *   $geoip_country_code    country.iso_code
 *   $geoip_continent_name  continent.names.en
 *   $geoip_continent_code  continent.code
 *   $geoip_postal_code     postal.code
 *   $geoip_time_zone       location.time_zone
 *
 * Only English names are used: a record whose names lack "en" gives no
 * name property. 127.0.0.1 and ::1 are never looked up; an address that is
 * not in the DB (private ranges, unknown space) or is not an IP literal
 * gives nothing. None of this is an error: GeoIP can only add properties,
 * never fail a request.
 *
 * The DB is mmap'd (MMDB_MODE_MMAP), so a lookup is a walk over mapped
 * memory with no system calls: cheap enough for the event loop. The handle
 * is read-only after flg_geoip_open and may be shared by every request.
 */
#ifndef FLG_GEOIP_H
#define FLG_GEOIP_H

#include <stddef.h>

#include "cm/buf.h"
#include "cm/json.h"

typedef struct flg_geoip flg_geoip_t;

/* Room for any textual address flg_client_ip writes (INET6_ADDRSTRLEN). */
#define FLG_IP_BUFLEN 46

/*
 * Opens the MaxMind DB at path. 0 and *out set on success; CM_EIO (with
 * the reason logged) if the file is missing, unreadable or not a MaxMind
 * DB, and *out = NULL.
 */
int flg_geoip_open(const char *path, flg_geoip_t **out);
void flg_geoip_close(flg_geoip_t *g); /* NULL is fine */

/*
 * Looks up ip (an IPv4 or IPv6 literal, as flg_client_ip returns it) and
 * writes each property found as a key and a string value into the object
 * the caller has already opened on w. Returns how many it wrote, 0..7.
 * g == NULL (no GEOIP_DB), ip == NULL, an invalid literal, loopback and
 * addresses not in the DB all give 0 and write nothing.
 */
int flg_geoip_lookup(const flg_geoip_t *g, const char *ip, cm_json_writer_t *w);

/*
 * The client address of a request, as PostHog's flags service picks it:
 *   1. the first X-Forwarded-For entry, trimmed, with a port removed
 *      ("1.2.3.4:5678", "[2001:db8::1]:443"; Azure's gateway adds them),
 *      if it is then a valid IPv4/IPv6 literal;
 *   2. else the leftmost entry that is a valid literal as it stands (no
 *      port removal) - the "insecure client IP" extractor PostHog falls
 *      back on;
 *   3. else peer, the TCP peer's address.
 * xff is the header's value (several header lines joined with ","), or an
 * empty/NULL slice when absent. An address taken from the header is
 * written in canonical form ("2001:DB8::0001" -> "2001:db8::1") into buf,
 * which needs FLG_IP_BUFLEN bytes, and buf is returned; otherwise peer
 * itself is returned (it may be NULL).
 */
const char *flg_client_ip(cm_slice_t xff, const char *peer, char *buf, size_t n);

#endif
